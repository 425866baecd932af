"""`wgb run` end to end on the tiny profile and a small real subset of the benchmark."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from wgb.cli import cli

SIZES = {"train": 40, "validation": 10, "male_test": 8, "female_test": 8}


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory):
    from support.propagation_data import release_subset

    return release_subset(tmp_path_factory.mktemp("bench") / "small", SIZES)


SEEDS = (0, 1)


@pytest.fixture(scope="module")
def tiny_run(small_benchmark, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    args = ["run", "--profile", "tiny", "--dataset", str(small_benchmark), "--out", str(out), "--quiet",
            "--threads", "1", "--seeds", ",".join(map(str, SEEDS)), "--min-count", "1"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return out, args


def test_every_seed_runs_in_its_own_folder(tiny_run, small_benchmark):
    import wikigenderbias
    from wgb.pipeline import gold_triples, seed_dir
    from wikigenderbias.schema import POSITIVE_RELATIONS

    out, _ = tiny_run
    gold_n = len(gold_triples(wikigenderbias.load(path=small_benchmark)))
    for seed in SEEDS:
        d = seed_dir(out, seed)
        assert json.loads((d / "config.json").read_text())["config"]["seed"] == seed
        assert (d / "extractors" / "baseline" / "entity_counts.npz").exists()
        gold = [json.loads(line) for line in (d / "triples" / "gold.jsonl").read_text().splitlines()]
        assert len(gold) == gold_n and {t["head_gender"] for t in gold} == {"male", "female"}
        for variant in ("baseline", "cda"):
            extracted = [json.loads(line) for line in (d / "triples" / f"{variant}.jsonl").read_text().splitlines()]
            assert all(t["relation"] in POSITIVE_RELATIONS for t in extracted)
        for graph in ("gold", "baseline", "cda"):
            skipped = d / "bias" / f"{graph}.skipped.json"
            if skipped.exists():  # an extractor that extracted no hypernym triple: reported, not measured
                assert graph != "gold"
                assert "hypernym" in json.loads(skipped.read_text())["missing_relations"]
    assert "seed" not in json.loads((out / "config.json").read_text())["study"]


def test_report_leads_with_verdicts_and_pools_the_seeds(tiny_run):
    from wikigenderbias.schema import POSITIVE_RELATIONS

    out, _ = tiny_run
    for name in ("report.html", "report.md", "report.json", "propagation.png", "bias_added.png"):
        assert (out / "report" / name).stat().st_size > 0
    rep = json.loads((out / "report" / "report.json").read_text())
    a = rep["analysis"]
    assert a["seeds"] == list(SEEDS) and rep["provenance"]["profile"] == "tiny"
    assert set(rep["extraction"]) == {"baseline", "cda"}
    assert a["verdicts"] and all(v["verdict"] in ("undecided", "not applicable") for v in a["verdicts"])  # 2 seeds < 3
    assert not any("recall gap" in v["claim"] for v in a["verdicts"])  # a tautology: never a claim
    assert all(v["n_seeds"] <= len(SEEDS) for v in a["verdicts"])
    rel = [r for r in a["relations"] if r["extractor"] == "baseline"]
    assert [r["relation"] for r in rel] == list(POSITIVE_RELATIONS)
    for r in rel:
        e = r["graph_recall_gap"]
        assert e["ci"][0] <= e["value"] <= e["ci"][1] and e["over"] == "seeds × entities"
    data = [r for r in a["bias_added"] if r["measure"] == "data"]
    assert {r["extractor"] for r in data} == {"baseline", "cda"}
    for r in data:  # the decomposition is exact: added = shared + error-born - missed
        assert r["added"]["value"] == pytest.approx(r["shared"]["value"] + r["error_born"]["value"]
                                                    - r["missed"]["value"], abs=1e-9)
    # the exposure-matched nulls (issue #38): every extracted triple is one of the candidate pairs
    # the extractor scored; every person has one gold fact per relation, so the gold difference is 0
    assert not [k for k in a["unmapped"] if "candidate pair" in k]
    assert {r["extractor"] for r in a["exposure"]} == {"baseline", "cda"}
    for r in (r for r in a["facts"] if r["relation"] == "all"):
        assert r["gold"]["value"] == pytest.approx(0.0, abs=1e-12)
        assert r["widening"]["value"] == pytest.approx(r["spurious"]["value"] - r["missed"]["value"], abs=1e-12)
    md = (out / "report" / "report.md").read_text()
    assert md.index("## Answer") < md.index("## How to read it") < md.index("## 1. Facts per person")
    html = (out / "report" / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table" in html and html.count("<ul>") >= 1
    assert html.index('id="answer"') < html.index('id="graph"') and "undecided" in html


def test_rerun_resumes_without_redoing_work(tiny_run):
    from wgb.pipeline import seed_dir

    out, args = tiny_run
    before = [json.loads((seed_dir(out, s) / "stages" / "timings.json").read_text()) for s in SEEDS]
    r = CliRunner().invoke(cli, [a for a in args if a != "--quiet"])
    assert r.exit_code == 0, r.output
    assert "[run " not in r.output and "[skip] train/baseline" in r.output and "== seed 1" in r.output
    assert [json.loads((seed_dir(out, s) / "stages" / "timings.json").read_text()) for s in SEEDS] == before


def test_one_seed_of_the_study_reruns_alone(tiny_run):
    """--seed picks one seed of the folder: its stages are done, only its report is new."""
    out, args = tiny_run
    i = args.index("--seeds")
    r = CliRunner().invoke(cli, [*args[:i], *args[i + 2:], "--seed", "1"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report" / "report.json").read_text())
    assert rep["analysis"]["seeds"] == [1]
    # the whole study again: its report is written anew, not skipped as done over the one-seed report
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report" / "report.json").read_text())
    assert rep["analysis"]["seeds"] == list(SEEDS)


def test_another_config_into_the_same_folder_is_refused(tiny_run):
    out, args = tiny_run
    r = CliRunner().invoke(cli, [*args, "--set", "kge_epochs=6"])
    assert r.exit_code == 1 and "another configuration" in r.output


def test_seed_options(tmp_path):
    runner = CliRunner()
    r = runner.invoke(cli, ["run", "--seed", "1", "--seeds", "0,1", "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "not both" in r.output
    # --seeds is parsed by the type every command shares (wgb.cli_types.SEEDS): a usage error, exit 2
    r = runner.invoke(cli, ["run", "--seeds", "0,zero", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "'zero' in '0,zero' is not a seed" in r.output
    r = runner.invoke(cli, ["run", "--seeds", "1,1", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "seeds repeat" in r.output
    assert not (tmp_path / "x").exists()


def test_bad_config_is_an_error_before_any_work(tmp_path):
    runner = CliRunner()
    r = runner.invoke(cli, ["run", "--measures", "nope", "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "unknown bias measure 'nope'" in r.output
    r = runner.invoke(cli, ["run", "--debias", "magic", "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "magic" in r.output
    r = runner.invoke(cli, ["run", "--dataset", str(tmp_path / "missing"), "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "benchmark folder not found" in r.output
    r = runner.invoke(cli, ["run", "--set", "kge_epochz=3", "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "unknown profile setting(s) ['kge_epochz']" in r.output
    r = runner.invoke(cli, ["run", "--set", "oops", "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "KEY=VALUE" in r.output
    assert not (tmp_path / "x").exists()


def test_link_to_fb13_merges_people_and_places_by_name():
    import numpy as np

    from kge.graph import KnowledgeGraph
    from wgb.pipeline import link_to_fb13

    fb = KnowledgeGraph(["marie_curie", "warsaw", "female", "pierre_curie", "physicist"],
                        ["gender", "place_of_birth", "spouse", "profession"],
                        np.array([[0, 0, 2], [0, 1, 1], [0, 2, 3], [3, 3, 4]]), name="fb")
    ours = KnowledgeGraph(["Marie Curie", "Warsaw, Poland", "Pierre Curie", "Physicist", "female", "Nobody Known"],
                          ["spouse", "birthPlace", "hypernym", "gender"],
                          np.array([[0, 0, 2], [0, 1, 1], [0, 2, 3], [0, 3, 4], [5, 0, 0]]), name="gold")
    union, rep = link_to_fb13(ours, fb)
    # people: heads and spouses (Marie and Pierre Curie linked, Nobody Known not); Warsaw (first comma
    # component) is a place; "female" is linked
    assert rep["linked"] == {"people": 2, "places": 1, "other": 1}
    assert rep["relation_map"] == {"spouse": "spouse", "birthPlace": "place_of_birth", "hypernym": "hypernym",
                                   "gender": "gender"}
    labelled = {(union.entities[h], union.relations[r], union.entities[t]) for h, r, t in union.train}
    assert ("marie_curie", "place_of_birth", "warsaw") in labelled      # merged into FB13's entities
    assert ("marie_curie", "hypernym", "wgb:Physicist") in labelled     # unlinked tails stay ours
    assert ("wgb:Nobody Known", "spouse", "marie_curie") in labelled
    assert ("marie_curie", "spouse", "pierre_curie") in labelled
    assert len(union.train) == len(fb.train) + len(ours.train)


def test_seeds_on_the_run_executor_give_the_serial_numbers(tiny_run, tmp_path):
    """`wgb run --seeds ... --executor processes --workers 2`: each seed a task on its own process,
    the same files as the serial run (triples, per-entity counts, bias results)."""
    from wgb.pipeline import seed_dir

    out, args = tiny_run
    par = tmp_path / "par"
    i = args.index("--out")
    r = CliRunner().invoke(cli, [*args[:i], "--out", str(par), *args[i + 2:], "--executor", "processes",
                                 "--workers", "2"])
    assert r.exit_code == 0, r.output
    for s in SEEDS:
        a, b = seed_dir(out, s), seed_dir(par, s)
        assert (b / "stages" / "SEED.done").exists()
        for rel in ("triples/gold.jsonl", "triples/baseline.jsonl", "triples/cda.jsonl",
                    "extractors/baseline/entity_counts.npz", "extractors/cda/entity_counts.npz"):
            assert (a / rel).read_bytes() == (b / rel).read_bytes(), (s, rel)
        for g in ("gold", "baseline", "cda"):
            ra, rb = (json.loads((d / "bias" / f"{g}.json").read_text()) for d in (a, b))
            assert [(row["item"], row["score"]) for row in ra["rows"]] == \
                   [(row["item"], row["score"]) for row in rb["rows"]], (s, g)
    rep = json.loads((par / "report" / "report.json").read_text())
    assert rep["analysis"]["seeds"] == list(SEEDS)


def test_report_shows_items_over_embedding_seeds(tiny_run):
    """Each seed trains its own embeddings: the report gives every item's interval over them
    (issue #42); with 2 seeds no test (< 3) and no claim across graphs."""
    out, args = tiny_run
    # the report of the whole study (an earlier test may have left a one-seed report: --seed 1)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    es = json.loads((out / "report" / "report.json").read_text())["analysis"]["embedding_seeds"]
    assert es["tables"] and {t["measure"] for t in es["tables"]} <= {"fisher", "bourli_projection"}
    gold = [t for t in es["tables"] if t["graph"] == "gold"]
    assert gold and all(t["seeds"] == list(SEEDS) for t in gold)
    assert all(x["degenerate"] and len(x["seed_scores"]) == len(SEEDS) for t in gold for x in t["male"] + t["female"])
    assert es["claims"] == []
    md = (out / "report" / "report.md").read_text()
    assert md.index("## 4. Items") < md.index("### Items over embedding seeds") < md.index("## 5. Runs")
    assert "no test (< 3 seeds)" in md and "no test with fewer than 3 seeds" in md and 'id="items-seeds"' in (out / "report" / "report.html").read_text()
