"""Issue 40, what a newcomer hits first, in the reports: a one-seed design shows "too few seeds
(1 < 3)" where a p-value would stand, person and item counts print as whole numbers, and a
"towards female" list says why it holds items no woman holds."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from wgbcore.render import count, environment

sys.path.insert(0, str(Path(__file__).resolve().parent / "kge"))


@pytest.mark.parametrize("x,text", [(35.0, "35"), (0.0, "0"), (7, "7"), (2.5, "2.5"), (None, "–"),
                                     (float("nan"), "–"), (1 / 3, "0.3")])
def test_counts_print_as_whole_numbers_when_they_are(x, text):
    assert count(x) == text


def _verdict_rows(n_seeds):
    return {"verdicts": [{"verdict": "undecided", "claim": "c", "note": "", "value": 0.03, "ci": [0.01, 0.05],
                          "over": "seeds × items", "n_seeds": n_seeds, "p_adjusted": 1.0}]}


@pytest.mark.parametrize("template", ["run_report.md", "run_report.html"])
def test_a_one_seed_verdict_says_too_few_seeds_not_a_p_value(template):
    """The verdict table's p cell, rendered alone from the template's own line."""
    from wgbstats.design import MIN_SEEDS

    env = environment("wgb")
    src = env.loader.get_source(env, template)[0]
    line = next(ln for ln in src.splitlines() if "p_adjusted" in ln)
    start = line.index("{% if v.n_seeds")
    cell = line[start:line.index("{% endif %}", start) + len("{% endif %}")]
    one = env.from_string("{% for v in a.verdicts %}" + cell + "{% endfor %}").render(
        a=_verdict_rows(1), min_seeds=MIN_SEEDS)
    assert one.replace("&lt;", "<") == f"too few seeds (1 < {MIN_SEEDS})"
    three = env.from_string("{% for v in a.verdicts %}" + cell + "{% endfor %}").render(
        a=_verdict_rows(MIN_SEEDS), min_seeds=MIN_SEEDS)
    assert three == "1.000"


def test_towards_female_list_says_why_items_no_woman_holds_are_in_it(tmp_path):
    from bias_fixtures import planted_graph, planted_model
    from kge.bias import BiasSpec, run_measure
    from kge.report import render

    g = planted_graph(n=300, occupations=6)
    r = run_measure("fisher", g, planted_model("transe", g), BiasSpec("gender", "male", "female"))
    md = render([r], tmp_path / "held", top=50, min_count=0)["markdown"].read_text()
    assert "held by no female person" not in md      # every listed item has women holding it
    r2 = copy.deepcopy(r)
    towards_b = [row for row in r2.rows if row.score is not None and row.score < 0]
    towards_b[0].count_b = 0
    md = render([r2], tmp_path / "unheld", top=50, min_count=0)["markdown"].read_text()
    assert f"1 of these {min(50, len(towards_b))} items are held by no female person ({towards_b[0].item})" in md
    assert "scores an item from the embeddings" in md
