"""`wgb run` end to end on the tiny profile and a small real subset of the benchmark."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from wgb.cli import cli

SIZES = {"train": 40, "validation": 10, "male_test": 8, "female_test": 8}


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory):
    import wikigenderbias
    from wikigenderbias.export import write_benchmark
    from wikigenderbias.schema import GENDERS

    ents = wikigenderbias.load("entities")
    out = {}
    for split, k in SIZES.items():
        rows = ents[split].select(range(k)).to_list()
        for r in rows:
            r["gender"] = GENDERS[r["gender"]]
        out[split] = rows
    return write_benchmark(tmp_path_factory.mktemp("bench") / "small", out, description="subset", progress=False)


@pytest.fixture(scope="module")
def tiny_run(small_benchmark, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    args = ["run", "--profile", "tiny", "--dataset", str(small_benchmark), "--out", str(out), "--quiet",
            "--threads", "1"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return out, args


def test_report_structure_and_consistency(tiny_run, small_benchmark):
    import wikigenderbias
    from wgb.pipeline import gold_triples
    from wikigenderbias.schema import POSITIVE_RELATIONS

    out, _ = tiny_run
    for name in ("report.html", "report.md", "report.json", "propagation.png"):
        assert (out / "report" / name).stat().st_size > 0
    rep = json.loads((out / "report" / "report.json").read_text())
    assert set(rep["extraction"]) == {"baseline", "cda"}
    assert "seed 0" in rep["provenance"] and "tiny" in rep["provenance"]
    gold = [json.loads(line) for line in (out / "triples" / "gold.jsonl").read_text().splitlines()]
    assert len(gold) == len(gold_triples(wikigenderbias.load(path=small_benchmark)))
    assert {t["head_gender"] for t in gold} == {"male", "female"}
    for variant, cov in rep["coverage"].items():
        extracted = [json.loads(line) for line in (out / "triples" / f"{variant}.jsonl").read_text().splitlines()]
        assert all(t["relation"] in POSITIVE_RELATIONS for t in extracted)
        for rel in POSITIVE_RELATIONS:
            for g in ("male", "female"):
                c = cov[rel][g]
                assert c["gold"] == sum(1 for t in gold if t["relation"] == rel and t["head_gender"] == g)
                assert c["extracted"] == len({(t["head"], t["tail"]) for t in extracted
                                              if t["relation"] == rel and t["head_gender"] == g})
                assert 0 <= c["correct"] <= min(c["gold"], c["extracted"])
    for graph in ("gold", "baseline", "cda"):
        measures = {r["measure"] for r in rep["bias"][graph]}
        skipped = out / "bias" / f"{graph}.skipped.json"
        if skipped.exists():  # an extractor that extracted no hypernym triple: reported, not measured
            assert graph != "gold" and measures == set()
            assert "hypernym" in json.loads(skipped.read_text())["missing_relations"]
        else:
            assert measures == {"data", "fisher", "bourli_projection"}
    gold_data = next(r for r in rep["bias"]["gold"] if r["measure"] == "data")
    assert gold_data["rows"], "the gold graph has hypernym values of both genders"
    html = (out / "report" / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table>" in html


def test_rerun_resumes_without_redoing_work(tiny_run):
    out, args = tiny_run
    before = json.loads((out / "stages" / "timings.json").read_text())
    r = CliRunner().invoke(cli, [a for a in args if a != "--quiet"])
    assert r.exit_code == 0, r.output
    assert "[run " not in r.output and "[skip] train/baseline" in r.output
    assert json.loads((out / "stages" / "timings.json").read_text()) == before


def test_another_config_into_the_same_folder_is_refused(tiny_run):
    out, args = tiny_run
    r = CliRunner().invoke(cli, [*args, "--seed", "7"])
    assert r.exit_code == 1 and "another configuration" in r.output


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
