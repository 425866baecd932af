"""`wgb run --groups`: the per-cell part of the main job (wgb.pipeline.groups), on the tiny profile
and a small real subset of the benchmark: a finished run asked again with --groups reuses every
stage, the report gets its intersectional section, bad options fail before any work."""
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


@pytest.fixture(scope="module")
def runs(small_benchmark, tmp_path_factory):
    """One folder run without --groups, then asked again with --groups gender,era (min cell 2)."""
    out = tmp_path_factory.mktemp("run") / "run"
    base = ["run", "--profile", "tiny", "--dataset", str(small_benchmark), "--out", str(out), "--threads", "1",
            "--seed", "0", "--min-count", "1"]
    first = CliRunner().invoke(cli, [*base, "--quiet"])
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(cli, [*base, "--groups", "gender,era", "--min-cell", "2", "--era-edges", "1900,1950"])
    assert second.exit_code == 0, second.output
    return out, base, second.output


def test_groups_reuse_every_stage_and_add_one(runs):
    out, _, log = runs
    ran = [line.split("] ", 1)[1] for line in log.splitlines() if line.startswith("[run ]")]
    assert ran == ["groups/era-e1900_1950-m2-s0", "report/seeds-0+groups-era-e1900_1950-m2-s0"], log
    assert "[skip] train/baseline (done)" in log and "[skip] bias/cda (done)" in log
    # the seeds' identity has no groups setting; the stage's folder records it
    assert "groups" not in json.loads((out / "config.json").read_text())["study"]
    assert "groups" not in json.loads((out / "seed-0" / "config.json").read_text())["config"]
    cfg = json.loads((out / "groups" / "era-e1900_1950-m2-s0" / "config.json").read_text())
    assert cfg.pop("inputs_sha256")
    assert cfg == {"groups": {"columns": ["era"], "era_edges": [1900, 1950], "min_per_gender": 2}, "seeds": [0]}


def test_cells_follow_the_attribute_table_and_the_min_cell_rule(runs, small_benchmark):
    from wikigenderbias.groups import EraBins, attribute_table

    out, _, _ = runs
    res = json.loads((out / "groups" / "era-e1900_1950-m2-s0" / "cells.json").read_text())
    table = attribute_table(eras=EraBins((1900, 1950)), dataset=str(small_benchmark)).frame
    test = table[table["split"].isin(["male_test", "female_test"])]
    want = {str(e): {g: int(((test["era"] == e) & (test["gender"] == g)).sum()) for g in ("male", "female")}
            for e in test["era"].unique()}
    levels = {(r["level"], r["extractor"]) for r in res["reports"]}
    assert {("extraction", "baseline"), ("extraction", "cda")} <= levels
    assert set(res["graph_same_as_extraction"]) | {v for lv, v in levels if lv == "graph"} == {"baseline", "cda"}
    for rep in res["reports"]:
        p = rep["populations"]["test"]
        assert p["sizes"] == want
        for r in p["rows"]:
            small = min(r["male"], r["female"]) < 2
            assert r["judged"] is (not small and r["cell"] != "unknown")
            if small:
                assert r["verdict"] == "too few to estimate" and r["gap"] is None and r["mde"] is None
            else:   # one seed: a gap, no test
                assert r["gap"] is not None and r["verdict"].startswith("no test")
    assert set(res["not_per_person"]) == {"data", "fisher", "bourli_projection"}


def test_report_has_the_section_and_loses_it_without_groups(runs):
    out, base, _ = runs
    rep = out / "report"
    html, md = (rep / "report.html").read_text(), (rep / "report.md").read_text()
    assert 'id="groups"' in html and "6. Gender gap per era cell" in html and (rep / "groups.png").stat().st_size
    assert md.index("## 5. Runs") < md.index("## 6. Gender gap per era cell")
    assert "Not per person, so not per cell" in md and "`fisher`" in md
    assert json.loads((rep / "report.json").read_text())["groups"]["groups"]["min_per_gender"] == 2
    again = CliRunner().invoke(cli, base)      # without --groups: the plain report again, stages reused
    assert again.exit_code == 0, again.output
    assert [ln for ln in again.output.splitlines() if ln.startswith("[run ]")] == ["[run ] report/seeds-0"]
    assert 'id="groups"' not in (rep / "report.html").read_text() and not (rep / "groups.png").exists()
    assert (out / "groups" / "era-e1900_1950-m2-s0" / "cells.json").exists()   # kept for a later ask
    args = [*base, "--groups", "gender,era", "--min-cell", "2", "--era-edges", "1900,1950"]
    same = CliRunner().invoke(cli, args)   # asked again: the cells reused, the report with them again
    assert same.exit_code == 0 and "[skip] groups/era-e1900_1950-m2-s0 (done)" in same.output, same.output
    # a seed stage run again to the same files (its triples edited, then written anew) leaves the cells current
    triples = out / "seed-0" / "triples" / "baseline.jsonl"
    triples.write_text(triples.read_text().splitlines()[0] + "\n")
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "[run ] triples/baseline" in again.output, again.output
    assert "[skip] groups/era-e1900_1950-m2-s0 (done)" in again.output
    # cells computed from other seed stages than the folder holds now: they run again, and the report
    cfg_file = out / "groups" / "era-e1900_1950-m2-s0" / "config.json"
    cfg_file.write_text(json.dumps({**json.loads(cfg_file.read_text()), "inputs_sha256": "0" * 64}))
    redo = CliRunner().invoke(cli, args)
    assert redo.exit_code == 0, redo.output
    ran = [ln for ln in redo.output.splitlines() if ln.startswith(("[run ]", "[redo]"))]
    assert ran == ["[redo] groups/era-e1900_1950-m2-s0: the seeds' stages changed since it ran; running it again",
                   "[run ] groups/era-e1900_1950-m2-s0", "[run ] report/seeds-0+groups-era-e1900_1950-m2-s0"], ran


@pytest.mark.parametrize("args, words", [
    (["--groups", "gender,planet"], "unknown grouping 'planet'"),
    (["--groups", "gender"], "name a grouping besides gender"),
    (["--groups", "gender,era", "--era-edges", "1950,1900"], "must increase"),
    (["--groups", "gender,era", "--min-cell", "1"], "--min-cell"),
])
def test_bad_groups_fail_before_any_work(tmp_path, args, words):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", "--profile", "tiny", "--out", str(out), *args])
    assert r.exit_code != 0 and words in r.output, r.output
    assert not out.exists()


def test_api_groups_checked_and_keys_differ():
    from wgb.pipeline import PipelineConfig
    from wgb.pipeline.groups import key

    with pytest.raises(ValueError, match="min_per_gender"):
        PipelineConfig(profile="tiny", groups={"columns": ["era"], "era_edges": [1900], "min_per_gender": 1}).validate()
    with pytest.raises(ValueError, match="unknown grouping"):
        PipelineConfig(profile="tiny", groups={"columns": ["x"], "era_edges": [1900], "min_per_gender": 5}).validate()
    g = {"columns": ["era"], "era_edges": [1850, 1900], "min_per_gender": 30}
    assert len({key(g, [0]), key({**g, "era_edges": [1900]}, [0]), key({**g, "min_per_gender": 20}, [0]),
                key(g, [0, 1]), key({**g, "columns": ["region"]}, [0])}) == 5
    assert key({**g, "columns": ["region"]}, [0]) == "region-m30-s0"


def test_section_says_which_gender_is_short():
    from wgb.pipeline.groups_report import section

    def rows(cell, male, female, judged, verdict):
        return [{"cell": cell, "metric": m, "male": male, "female": female, "judged": judged, "verdict": verdict,
                 "gap": 0.1 if judged else None, "ci": [0.0, 0.2] if judged else None, "mde": 0.3 if judged else None,
                 "pooled": 0.05} for m in ("f1_gap:spouse", "micro_f1_gap")]

    pop = {"persons": 200, "n_seeds": 3, "n_claims": 2, "judged_cells": ["A"], "ranges": [],
           "rows": rows("A", 40, 40, True, "male > female") + rows("B", 5, 40, False, "too few to estimate")
           + rows("C", 5, 4, False, "too few to estimate") + rows("unknown", 3, 3, False, "unknown: counted, not judged")}
    rep = {"level": "extraction", "extractor": "baseline", "min_per_gender": 30, "correction": "holm", "alpha": 0.05,
           "pooled_label": "pooled", "populations": {"test": pop}}
    s = section({"reports": [rep], "grouping": "era", "groups": {"columns": ["era"], "min_per_gender": 30},
                 "graph_same_as_extraction": ["baseline"], "not_per_person": {}, "registered": "exploratory",
                 "era_edges": [1900]})
    t = s["tables"][0]
    assert t["metrics"] == ["spouse", "micro F1"]
    status = {r["cell"]: r["status"] for r in t["rows"]}
    assert status == {"A": None, "B": "too few to estimate (fewer than 30 men)",
                      "C": "too few to estimate (fewer than 30 men and women)",
                      "unknown": "unknown: counted, not judged"}
    assert [x["css"] for x in t["rows"][0]["metrics"]] == ["supported", "supported"]
    assert section(None) is None


def test_crossfit_run_gets_both_populations_side_by_side(tmp_path_factory):
    from support.propagation_data import release_subset

    bench = release_subset(tmp_path_factory.mktemp("cfbench") / "small",
                           {"train": 24, "validation": 6, "male_test": 6, "female_test": 6})
    out = tmp_path_factory.mktemp("cfrun") / "run"
    r = CliRunner().invoke(cli, ["run", "--profile", "tiny", "--protocol", "crossfit", "--folds", "2", "--dataset",
                                 str(bench), "--out", str(out), "--threads", "1", "--quiet", "--min-count", "1",
                                 "--groups", "gender,north_south", "--min-cell", "2"])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "groups" / "north_south-m2-s0" / "cells.json").read_text())
    for rep in res["reports"]:
        pops = rep["populations"]
        assert list(pops) == ["test", "all"] and pops["test"]["persons"] == 12 and pops["all"]["persons"] == 42
        assert sum(n for s in pops["all"]["sizes"].values() for n in s.values()) == 42   # unknown counted too
    assert "population all" in (out / "report" / "report.html").read_text()


def test_the_plain_report_runs_again_when_the_seed_stages_changed(runs):
    """The report over the seeds records what it was computed from (report/inputs.json, the seeds'
    stage markers); a report computed from other seed stages than the folder holds runs again, said
    with [redo]; the same inputs leave it alone."""
    out, base, _ = runs
    first = CliRunner().invoke(cli, base)
    assert first.exit_code == 0, first.output
    record = out / "report" / "inputs.json"
    saved = json.loads(record.read_text())
    assert saved["seeds"] == [0] and len(saved["inputs_sha256"]) == 64
    same = CliRunner().invoke(cli, base)
    assert "[skip] report/seeds-0 (done)" in same.output, same.output
    record.write_text(json.dumps({**saved, "inputs_sha256": "0" * 64}))
    redo = CliRunner().invoke(cli, base)
    assert redo.exit_code == 0, redo.output
    ran = [ln for ln in redo.output.splitlines() if ln.startswith(("[run ]", "[redo]"))]
    assert ran == ["[redo] report/seeds-0: the seeds' stages changed since it ran; running it again",
                   "[run ] report/seeds-0"], ran
    assert json.loads(record.read_text()) == saved
