"""`wgb run --protocol crossfit` on the tiny profile: every person extracted by a fold model that
never saw them, both populations in the study, fold runs reused from a cross-fitted study."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from wgb.cli import cli

SIZES = {"train": 24, "validation": 6, "male_test": 6, "female_test": 6}
FOLDS = 2


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory):
    from support.propagation_data import release_subset

    return release_subset(tmp_path_factory.mktemp("bench") / "small", SIZES)


def _args(bench, out, *extra):
    return ["run", "--profile", "tiny", "--protocol", "crossfit", "--folds", str(FOLDS), "--dataset", str(bench),
            "--out", str(out), "--quiet", "--threads", "1", "--seeds", "0", "--min-count", "1", *extra]


@pytest.fixture(scope="module")
def study_and_run(small_benchmark, tmp_path_factory):
    """A cross-fitted tiny study (none, cda) into a runs folder, then `wgb run` over the same folder."""
    root = tmp_path_factory.mktemp("cf")
    runs = root / "runs"
    study = ["re", "debias-grid", str(root / "study"), "--variants", "none,cda", "--seeds", "0",
             "--protocol", "crossfit", "--folds", str(FOLDS), "--runs-dir", str(runs), "--dataset",
             str(small_benchmark), "--epochs", "1", "--threads", "1", "--quiet", "--resamples", "100",
             "--set", "word_dim=16", "--set", "hidden=16", "--set", "w2v_epochs=1"]
    r = CliRunner().invoke(cli, study)
    assert r.exit_code == 0, r.output
    stamps = {d.name: (d / "DONE").stat().st_mtime_ns for d in runs.iterdir() if (d / "DONE").exists()}
    assert len(stamps) == 2 * FOLDS
    out = root / "run"
    r = CliRunner().invoke(cli, _args(small_benchmark, out, "--runs-dir", str(runs)))
    assert r.exit_code == 0, r.output
    return root, runs, out, stamps


def test_every_person_is_extracted_once_by_a_model_that_never_saw_them(study_and_run, small_benchmark):
    import wikigenderbias
    from wikigenderbias.schema import SPLITS

    _, runs, out, _ = study_and_run
    ds = wikigenderbias.load(path=str(small_benchmark))
    everyone = set().union(*(set(ds[s]["entity_id"]) for s in SPLITS))
    seen = {}
    for v in ("baseline", "cda"):
        rec = json.loads((out / "seed-0" / "extractors" / f"{v}.folds.json").read_text())
        assert rec["folds"] == FOLDS and len(rec["runs"]) == FOLDS
        for k, rel in enumerate(rec["runs"]):
            run = (out / "seed-0" / rel).resolve()
            cfg = json.loads((run / "config.json").read_text())
            assert cfg["fold"] == k and cfg["folds"] == FOLDS
            z = np.load(run / "entity_counts.npz", allow_pickle=False)
            for e in z["entity_ids"].tolist():
                assert seen.setdefault((v, e), k) == k
    held = {e for (v, e) in seen if v == "baseline"}
    assert held <= everyone and len(held) >= 0.9 * len(everyone)
    gold = [json.loads(x) for x in (out / "seed-0" / "triples" / "gold.jsonl").read_text().splitlines()]
    assert {t["source"]["split"] for t in gold} >= {"train", "male_test"}   # every person's facts


def test_fold_runs_of_the_study_are_reused_not_retrained(study_and_run):
    _, runs, out, stamps = study_and_run
    # the study's runs are the ones wgb run used, and none was trained again
    for v, name in (("baseline", "none"), ("cda", "cda")):
        rec = json.loads((out / "seed-0" / "extractors" / f"{v}.folds.json").read_text())
        used = {(out / "seed-0" / p).resolve() for p in rec["runs"]}
        assert used == {(runs / f"{name}-attention-seed0-fold{k}").resolve() for k in range(FOLDS)}
    after = {d.name: (d / "DONE").stat().st_mtime_ns for d in runs.iterdir() if (d / "DONE").exists()}
    assert after == stamps


def test_report_holds_both_populations(study_and_run, small_benchmark):
    import wikigenderbias

    _, _, out, _ = study_and_run
    rep = json.loads((out / "report" / "report.json").read_text())
    a = rep["analysis"]
    assert a["protocol"] == "crossfit"
    sc = a["scales"]
    ds = wikigenderbias.load(path=str(small_benchmark))
    n_test = len(set(ds["male_test"]["entity_id"])) + len(set(ds["female_test"]["entity_id"]))
    assert sum(sc["sizes"]["test"]["persons"].values()) <= n_test
    assert sum(sc["sizes"]["all"]["persons"].values()) > sum(sc["sizes"]["test"]["persons"].values())
    # every claim of the run appears once, with an answer for each population
    assert [r["claim"] for r in sc["rows"]] == [v["claim"] for v in a["verdicts"]]
    assert all(r["all"] and r["test"] for r in sc["rows"])
    # the graphs at each scale: the test persons' share is smaller
    for g, n in sc["sizes"]["all"]["triples"].items():
        assert n >= sc["sizes"]["test"]["triples"][g]
    # every person's candidate pairs (all splits) joined their triples; the gold difference is 0
    assert not [k for k in a["unmapped"] if "candidate pair" in k]
    assert all(r["gold"]["value"] == pytest.approx(0.0, abs=1e-12) for r in a["facts"] if r["relation"] == "all")
    md = (out / "report" / "report.md").read_text()
    assert "test persons only" in md and "all persons" in md


def test_rerun_gives_identical_numbers(study_and_run, small_benchmark):
    _, runs, out, _ = study_and_run
    before = (out / "report" / "report.json").read_text()
    for marker in (out / "stages").glob("report*"):
        marker.unlink()
    r = CliRunner().invoke(cli, _args(small_benchmark, out, "--runs-dir", str(runs)))
    assert r.exit_code == 0, r.output
    strip = lambda t: {k: v for k, v in json.loads(t).items() if k not in ("timings", "generated", "seconds")}  # noqa: E731
    assert strip((out / "report" / "report.json").read_text()) == strip(before)


def test_a_mismatching_run_in_the_store_is_not_reused(study_and_run, small_benchmark, tmp_path):
    from wgb.pipeline.config import PipelineConfig
    from wgb.pipeline.crossfit import fold_run_dir

    _, runs, _, _ = study_and_run
    cfg = PipelineConfig(profile="tiny", protocol="crossfit", folds=FOLDS, dataset=str(small_benchmark),
                         threads=1, runs_dir=str(runs), overrides={"re_epochs": 2})
    d, reused = fold_run_dir(cfg, cfg.settings(), tmp_path, "baseline", 0)
    assert not reused and d.name.startswith("none-attention-seed0-fold0-")   # the study's folder is not touched


# --------------------------------------------------------------------------------------------
# kill -9 in the middle of a cross-fitted run: the rerun resumes and gives the numbers of a run
# that was never interrupted
# --------------------------------------------------------------------------------------------
def _strip_run(report: dict) -> dict:
    drop = ("timings", "generated", "seconds", "out", "command", "started", "finished")
    if isinstance(report, dict):
        return {k: _strip_run(v) for k, v in report.items() if k not in drop}
    if isinstance(report, list):
        return [_strip_run(v) for v in report]
    return report


@pytest.mark.slow  # two tiny cross-fitted runs, one killed mid-way and resumed (about 1 min on 2 cores)
def test_kill_9_mid_run_resumes_to_the_numbers_of_an_uninterrupted_run(small_benchmark, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    ref, out = tmp_path / "ref", tmp_path / "killed"
    r = CliRunner().invoke(cli, _args(small_benchmark, ref))
    assert r.exit_code == 0, r.output
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    proc = subprocess.Popen([sys.executable, "-m", "wgb", *_args(small_benchmark, out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    first = out / "seed-0" / "extractors" / "baseline" / "fold0" / "DONE"
    deadline, caught = time.time() + 300, False
    while time.time() < deadline and proc.poll() is None:
        if first.exists():      # one fold run finished, the rest of the run not yet
            os.killpg(proc.pid, signal.SIGKILL)
            caught = True
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    assert caught, f"the run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    assert not (out / "report" / "report.json").exists()
    stamp = first.stat().st_mtime_ns
    r = CliRunner().invoke(cli, _args(small_benchmark, out))
    assert r.exit_code == 0, r.output
    assert first.stat().st_mtime_ns == stamp            # the finished fold run was not trained again
    got = json.loads((out / "report" / "report.json").read_text())
    want = json.loads((ref / "report" / "report.json").read_text())
    assert got["analysis"]["verdicts"] and got["analysis"]["protocol"] == "crossfit"
    assert _strip_run(got) == _strip_run(want)
