"""Study folders as trustworthy as run folders (issue 40, pattern 4): one writer of a study folder
(``re grid`` / ``re debias-grid`` hold its lock, a second one is refused naming the holder's pid),
a finished study reruns although a figure was saved as null (missing, said so, never averaged), and
a folder keeps the protocol it was registered under (the other ``--protocol`` is refused naming it)."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from wgbstudies.debias import DebiasStudyConfig, run_study
from wgb.cli import cli


def _fake_trainer():
    spec = importlib.util.spec_from_file_location("_debias_study_tests", Path(__file__).with_name("test_debias_study.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.FakeTrainer()


# --------------------------------------------------------------------------------------------
# (a) one writer of a study folder
# --------------------------------------------------------------------------------------------
STUDY_COMMANDS = [
    ("re grid", lambda out: ["re", "grid", "--out", str(out), "--encoders", "cnn", "--selectors", "attention",
                             "--seeds", "0", "--epochs", "1", "--no-plots"]),
    ("re debias-grid", lambda out: ["re", "debias-grid", str(out), "--variants", "none", "--seeds", "0",
                                    "--epochs", "1", "--quiet"]),
]


@pytest.mark.parametrize("name,args", STUDY_COMMANDS, ids=[c[0] for c in STUDY_COMMANDS])
def test_a_second_writer_of_a_study_folder_is_refused_naming_the_holder(name, args, tmp_path):
    from wgbcore.lock import FolderLock

    out = tmp_path / "study"
    held = FolderLock(out, beside=True).acquire()     # the first invocation, still running
    try:
        r = CliRunner().invoke(cli, args(out))
    finally:
        held.release()
    assert r.exit_code == 1, r.output
    assert "in use by another wgb process" in r.output and f"pid {os.getpid()}" in r.output, r.output
    assert "study folder" in r.output
    assert not out.exists()                           # nothing written: no plan, no timing, no runs


# --------------------------------------------------------------------------------------------
# (b) a figure saved as null is missing on reload, said so, never averaged
# --------------------------------------------------------------------------------------------
def _emb(run: str, d: float | None) -> dict:
    stage = {"direct_bias_removed_direction": 0.1, "direct_bias_own_direction": 0.2,
             "weat": {"career": {"effect_size": d, "p_value": None if d is None else 0.5}}}
    return {"run": run, "n_permutations": 1000, "seed": 0, "initial": stage, "trained": stage}


def test_a_finished_debias_study_reruns_with_a_weat_effect_size_saved_as_null(tmp_path):
    from wgbstudies.embedding import FILE

    cfg = DebiasStudyConfig(variants=["none", "cda"], seeds=[0, 1], n_resamples=20)
    run_study(cfg, tmp_path, train_fn=_fake_trainer(), plots=False, progress=False)
    assert (tmp_path / "DONE").exists()
    runs = sorted(d for d in (tmp_path / "runs").iterdir() if d.name.startswith("none-"))
    # what the first run left: the WEAT test of seed 0 had no value (NaN, written as null)
    (runs[0] / FILE).write_text(json.dumps(_emb(runs[0].name, None)))
    (runs[1] / FILE).write_text(json.dumps(_emb(runs[1].name, 0.8)))
    summary = run_study(cfg, tmp_path, train_fn=_fake_trainer(), plots=False, progress=False)   # was a TypeError
    emb = summary["embedding_bias_trained"]["none"]
    assert emb["weat_effect_size"]["career"] == {"initial": 0.8, "trained": 0.8}   # over the run that has it
    assert emb["initial_direct_bias_removed_direction"] == pytest.approx(0.1)
    assert emb["missing"] == [f"{s} WEAT career effect size: missing (null) in 1 of 2 runs ({runs[0].name}); "
                              "the mean is over the others" for s in ("initial", "trained")]
    md = (tmp_path / "results.md").read_text()
    assert "Missing figures (saved as null, left out of the means)" in md and runs[0].name in md
    # no run has it: shown as missing, not as a number
    (runs[1] / FILE).write_text(json.dumps(_emb(runs[1].name, None)))
    summary = run_study(cfg, tmp_path, train_fn=_fake_trainer(), plots=False, progress=False)
    assert summary["embedding_bias_trained"]["none"]["weat_effect_size"]["career"]["initial"] is None
    assert "career: missing -> missing" in (tmp_path / "results.md").read_text()


# --------------------------------------------------------------------------------------------
# (c) a folder keeps its protocol
# --------------------------------------------------------------------------------------------
def _debias_plan(folds):
    from wgbstudies.plan import study_plan

    return study_plan(DebiasStudyConfig(variants=["none", "cda"], seeds=[0, 1], folds=folds))


def _grid_plan(folds):
    from wgbstudies.grid import GridConfig
    from wgbstudies.plan import grid_plan

    return grid_plan(GridConfig(encoders=["cnn"], selectors=["attention"], seeds=[0, 1], folds=folds))


PROTOCOL_CHANGES = [  # (plan builder, registered folds, asked folds, amend)
    (_debias_plan, None, 2, None), (_debias_plan, 2, None, None), (_debias_plan, None, 3, "more folds"),
    (_grid_plan, None, 2, None), (_grid_plan, 5, None, "back to the test split"),
]


@pytest.mark.parametrize("plan,was,now,amend", PROTOCOL_CHANGES)
def test_a_folder_refuses_the_other_protocol_naming_the_one_it_holds(plan, was, now, amend, tmp_path):
    from wgbstudies.plan import PLAN_FILE, register

    register(tmp_path, plan(was), runs_finished=0, n_runs=4)
    before = (tmp_path / PLAN_FILE).read_bytes()
    held, asked = ("test", "crossfit") if was is None else ("crossfit", "test")
    with pytest.raises(ValueError, match=rf"this folder holds a study under --protocol {held}; this command asks "
                                         rf"for --protocol {asked}, .*not even with --amend-plan.*use another OUT$"):
        register(tmp_path, plan(now), runs_finished=2, n_runs=4, amend=amend)
    assert (tmp_path / PLAN_FILE).read_bytes() == before
    register(tmp_path, plan(was), runs_finished=2, n_runs=4)    # the same protocol still resumes


def test_a_debias_study_under_the_other_protocol_is_refused_before_any_fold_run(tmp_path):
    from support.relext_data import tiny_dataset

    cfg = DebiasStudyConfig(variants=["none"], seeds=[0], n_resamples=20)
    run_study(cfg, tmp_path, train_fn=_fake_trainer(), plots=False, progress=False)
    report, runs = (tmp_path / "results.json").read_bytes(), sorted(p.name for p in (tmp_path / "runs").iterdir())
    other = DebiasStudyConfig(variants=["none"], seeds=[0], n_resamples=20, folds=2)
    trainer = _fake_trainer()
    with pytest.raises(ValueError, match=r"holds a study under --protocol test; this command asks for --protocol crossfit"):
        run_study(other, tmp_path, train_fn=trainer, plots=False, progress=False, dataset=tiny_dataset(n_train=20))
    assert trainer.calls == [] and (tmp_path / "results.json").read_bytes() == report
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == runs


# --------------------------------------------------------------------------------------------
# (d) a run's folder is not a study folder (tour round 3: re grid --out RUN wrote its plan into it)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,args", STUDY_COMMANDS, ids=[c[0] for c in STUDY_COMMANDS])
def test_a_runs_folder_as_out_is_refused_before_anything_is_written(name, args, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"encoder": "cnn", "seed": 0}))
    (run / "model.pt").write_bytes(b"weights")
    before = sorted(p.name for p in run.iterdir())
    r = CliRunner().invoke(cli, args(run))
    assert r.exit_code == 1, r.output
    assert f"{run}: holds a run (its config.json), not a study" in r.output, r.output
    assert sorted(p.name for p in run.iterdir()) == before


def test_an_interval_that_leaves_out_its_estimate_is_drawn_not_refused():
    """A percentile interval may leave out its point estimate (few resamples): matplotlib refused
    the negative bar length ('yerr' must not contain negative values) after every run had trained."""
    from relext.evaluation.plots import _span

    assert _span(0.5, 0.6, 0.9) == (0.0, pytest.approx(0.4))
    assert _span(0.5, 0.1, 0.4) == (pytest.approx(0.4), 0.0)
    assert _span(0.5, 0.4, 0.7) == (pytest.approx(0.1), pytest.approx(0.2))
