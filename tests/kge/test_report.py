"""kge.report: markdown + HTML + PNG for every kind of result."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bias_fixtures import planted_graph, planted_model  # noqa: E402
from kge.bias import BiasSpec, run_measure  # noqa: E402
from kge.report import render  # noqa: E402

NAMES = ["data", "fisher", "bourli_projection", "bourli_topk", "bourli_debias", "keidar_tlb"]


@pytest.fixture(scope="module")
def results():
    g = planted_graph(n=300, occupations=6)
    m = planted_model("transe", g)
    spec = BiasSpec("gender", "male", "female")
    return [run_measure(n, g, None if n == "data" else m, spec) for n in NAMES]


def test_render_writes_tables_plots_and_done(results, tmp_path):
    paths = render(results, tmp_path / "rep", top=3)
    md = paths["markdown"].read_text()
    for n in NAMES:
        assert f"{n} ·" in md
    assert md.count("Top 3 towards male") == 4  # the per-item measures
    assert "neutral" in md and "Hits@10" in md.replace("hits@10", "Hits@10")
    html = paths["html"].read_text()
    assert html.count("<table>") >= len(NAMES) and "<img" in html
    pngs = list((tmp_path / "rep" / "plots").glob("*.png"))
    assert len(pngs) >= 5 and all(p.stat().st_size > 1000 for p in pngs)
    assert (tmp_path / "rep" / "DONE").exists()


def test_min_count_filters_rare_items(results, tmp_path):
    md = render(results[1:2], tmp_path / "r2", top=50, min_count=10**6)["markdown"].read_text()
    assert "No item with at least 1000000 holders leans towards male" in md


def test_sides_hold_only_items_leaning_that_way(results, tmp_path):
    """'Top k towards female' lists only negative scores: an all-positive result has none there."""
    import copy

    r = copy.deepcopy(results[0])
    for row in r.rows:
        if row.score is not None:
            row.score = abs(row.score) + 0.01
    assert not r.signed()
    md = render([r], tmp_path / "pos", top=3, min_count=0)["markdown"].read_text()
    assert "towards female" not in md and "not signed" in md
    signed = results[0]
    assert signed.signed()
    md = render([signed], tmp_path / "signed", top=50, min_count=0)["markdown"].read_text()
    fem = md.split("towards female")[1]
    assert "towards male" in md
    top_f = signed.top(50, towards="b")
    assert all(x.score < 0 for x in top_f) and all(x.score > 0 for x in signed.top(50, towards="a"))
    assert fem  # the female section exists and lists only its own items
