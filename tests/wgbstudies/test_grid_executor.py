"""Grids and studies on the run executor: configs checked before any work, failures reported
with their logs and named in the verdicts, and identical files whichever executor ran them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from wgbstudies.grid import GridConfig, run_grid, write_summary
from support import executor_tasks as T
from wgbcore.executor import ExecutorConfig

CFG = dict(encoders=["cnn"], selectors=["average"], seeds=[1, 2, 3], epochs=1, n_resamples=30)


def _grid(tmp_path, executor=None, **kw):
    return run_grid(GridConfig(**{**CFG, **kw}), tmp_path, train_fn=T.fake_train, make_config=T.fake_config,
                    predict_fn=T.keep_predictions, plots=False, progress=False, executor=executor)


@pytest.mark.parametrize("overrides, match", [
    ({"hidden": "abc"}, "run magic-average-seed1|field 'hidden' of ExtractorConfig expects int, got str 'abc'"),
    ({"nosuch": 1}, "unknown training field 'nosuch' \\(--set nosuch=...\\)"),
    ({}, "unknown encoder 'magic'|magic"),
])
def test_grid_config_errors_fail_before_any_work(tmp_path, overrides, match):
    encoders = ["cnn"] if overrides else ["cnn", "magic"]
    cfg = GridConfig(encoders=encoders, selectors=["average"], seeds=[1], train_overrides=overrides)
    with pytest.raises(ValueError, match=match) as info:
        run_grid(cfg, tmp_path / "g", progress=False, plots=False)
    assert "\n" not in str(info.value) and str(info.value).startswith("run ")
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("args, match", [
    (["--encoders", "cnn,magic"], "magic"),
    (["--set", "hidden=abc"], "field 'hidden' of ExtractorConfig expects int"),
    (["--set", "nosuch=1"], "nosuch"),
    (["--executor", "serial", "--workers", "2"], "one task at a time"),
    (["--scheduler", "tcp://127.0.0.1:1"], "needs the dask executor"),
])
def test_cli_grid_bad_configs_are_one_line_errors_without_grid_json(tmp_path, args, match):
    from wgb.cli import cli

    res = CliRunner().invoke(cli, ["re", "grid", "--out", str(tmp_path / "g"), "--encoders", "cnn",
                                   "--selectors", "average", "--seeds", "1", *args])
    assert res.exit_code != 0 and match in res.output, res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "g" / "grid.json").exists()


def test_cli_debias_grid_checks_every_run_before_any_work_and_passes_the_executor(tmp_path, monkeypatch):
    from wgb.cli import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["re", "debias-grid", str(tmp_path / "s"), "--variants", "none", "--seeds", "0",
                              "--set", "hidden=abc"])
    assert res.exit_code != 0 and "field 'hidden' of ExtractorConfig expects int" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "s" / "study.json").exists()
    seen = {}

    def fake_run_study(config, out, progress=True, train=True, executor=None, amend_plan=None):
        seen["executor"] = executor
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text("# report\n")
        return {"meta": {"runs_evaluated": 0, "n_runs": 1, "runs_failed": {}}}

    monkeypatch.setattr("wgbstudies.debias.run_study", fake_run_study)
    res = runner.invoke(cli, ["re", "debias-grid", str(tmp_path / "s"), "--variants", "none", "--executor",
                              "processes", "--workers", "2", "--threads-per-run", "1", "--retries", "2"])
    assert res.exit_code == 0, res.output
    ex = seen["executor"]
    assert (ex.kind, ex.workers, ex.threads_per_run, ex.retries) == ("processes", 2, 1, 2)


def test_a_failing_run_is_reported_with_its_log_and_named_in_the_verdicts(tmp_path):
    summary = _grid(tmp_path, train_overrides={"fail_seed": 2})
    meta = summary["meta"]
    assert meta["runs_failed"] == {"cnn-average-seed2": "RuntimeError: planned failure of seed 2"}
    log = Path(meta["runs_failed_logs"]["cnn-average-seed2"])
    assert log == tmp_path / "logs" / "cnn-average-seed2.log" and "Traceback" in log.read_text()
    assert meta["runs_evaluated"] == 2 and meta["runs_missing"] == ["cnn-average-seed2"]
    assert summary["design_report"]["missing_runs"] == ["cnn-average-seed2"]
    assert any("1 of 3 runs are missing" in f and "cnn-average-seed2" in f for f in summary["findings"])
    assert "cnn-average-seed2" in (tmp_path / "results.md").read_text()


def test_retries_run_a_failed_run_again(tmp_path):
    summary = _grid(tmp_path / "a", ExecutorConfig(retries=1), train_overrides={"fail_seed": 2})
    assert summary["meta"]["runs_failed"] == {"cnn-average-seed2": "RuntimeError: planned failure of seed 2"}
    log = (tmp_path / "a" / "logs" / "cnn-average-seed2.log").read_text()
    assert "attempt 1" in log and "attempt 2" in log


def test_an_unreadable_entity_counts_file_is_reported_not_dropped(tmp_path):
    cfg = GridConfig(**CFG)
    _grid(tmp_path)
    bad = tmp_path / "runs" / "cnn-average-seed3" / "entity_counts.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    summary = write_summary(cfg, tmp_path, plots=False, design=True)
    meta = summary["meta"]
    assert list(meta["runs_unreadable"]) == [str(bad)]
    assert meta["runs_missing"] == ["cnn-average-seed3"]
    assert summary["design_report"]["missing_runs"] == ["cnn-average-seed3"]
    assert summary["design_report"]["seeds"] == {"cnn-average": [1, 2]}
    assert any(str(bad) in f for f in summary["findings"])


def _run_files(root: Path) -> dict[str, tuple]:
    """Per run: eval.json without the paths that name the test's folders (run_dir, and the
    Word2Vec cache each executor gets of its own, so that none reuses another's vectors) and the
    npz bytes."""
    out = {}
    for d in sorted((root / "runs").iterdir()):
        ev = json.loads((d / "eval.json").read_text())
        ev.pop("run_dir")
        if isinstance(ev.get("config"), dict):
            ev["config"].pop("cache_dir", None)
        out[d.name] = (json.dumps(ev, sort_keys=True), (d / "entity_counts.npz").read_bytes())
    return out


@pytest.mark.slow  # spawns 2 worker processes (about 10 s on 2 busy cores)
def test_fake_grid_gives_the_same_files_on_local_processes(tmp_path):
    a = _grid(tmp_path / "serial")
    b = _grid(tmp_path / "proc", ExecutorConfig(kind="processes", workers=2, threads_per_run=1))
    assert _run_files(tmp_path / "serial") == _run_files(tmp_path / "proc")
    assert a["design_report"]["claims"] == b["design_report"]["claims"]


# --------------------------------------------------------------------------------------------
# the real trainer on a tiny study: serial, 2 local processes, a 2-worker Dask LocalCluster, and a
# loopback cluster of separately started `dask scheduler` / `dask worker` processes, one killed
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    from support.relext_data import tiny_dataset

    path = tmp_path_factory.mktemp("data") / "tiny"
    tiny_dataset(n_train=16, n_eval=4).save_to_disk(str(path))
    return path


@pytest.fixture(scope="module")
def gendered_data(tmp_path_factory):
    """Tiny articles with he/she and his/her (the study's embedding-bias report needs two pairs),
    four persons per test split (the design's half splits need more than one)."""
    from datasets import Dataset, DatasetDict

    from support.debias_data import article
    from wikigenderbias.schema import sentence_features

    names = ["John Smith", "Jane Doe", "Carl Green", "Emma Stone", "Peter Brown", "Anna White", "Paul Roe",
             "Lucy Black"]

    def split(name, genders):
        rows = []
        for i, g in enumerate(genders):
            rows += article(name, f"e{i}", names[i], g, names[-1 - i])
        return Dataset.from_list(rows, features=sentence_features())

    path = tmp_path_factory.mktemp("data") / "gendered"
    DatasetDict({"train": split("train", ["male", "female"] * 3), "validation": split("validation", ["male", "female"]),
                 "male_test": split("male_test", ["male"] * 4),
                 "female_test": split("female_test", ["female"] * 4)}).save_to_disk(str(path))
    return path


TINY = dict(batch_size=8, word_dim=8, hidden=8, max_length=30, w2v_epochs=1, threads=1, patience=0)


def _real_grid(tmp_path, data, name, executor):
    from relext.training.train import TrainConfig

    def make(**kw):
        return TrainConfig(**kw, **TINY, dataset=str(data), cache_dir=str(tmp_path / f"w2v-{name}"))

    cfg = GridConfig(encoders=["cnn"], selectors=["attention", "average"], seeds=[0, 1, 2], epochs=1,
                     n_resamples=50)
    return run_grid(cfg, tmp_path / name, make_config=make, executor=executor, plots=False, progress=False)


def _study(tmp_path, data, name, executor, epochs=1):
    from wgbstudies.debias import DebiasStudyConfig, run_study

    overrides = dict(TINY, dataset=str(data), w2v_min_count=1, cache_dir=str(tmp_path / f"w2v-{name}"))
    cfg = DebiasStudyConfig(variants=["none", "cda"], seeds=[0, 1, 2], epochs=epochs, n_resamples=50,
                            train_overrides=overrides)
    return run_study(cfg, tmp_path / name, executor=executor, plots=False, progress=False)


def _claims(root: Path) -> list:
    return json.loads((root / "claims.json").read_text())["claims"]


@pytest.mark.slow  # 18 tiny trainings, a process pool and a Dask LocalCluster (about 1-2 min)
def test_serial_processes_and_dask_give_byte_identical_runs_and_claims(tmp_path, tiny_data):
    pytest.importorskip("distributed")
    ref = _real_grid(tmp_path, tiny_data, "serial", ExecutorConfig())
    assert not ref["meta"]["runs_failed"] and ref["meta"]["runs_evaluated"] == 6
    assert ref["design_report"]["claims"]
    for name, ex in [("processes", ExecutorConfig(kind="processes", workers=2, threads_per_run=1)),
                     ("dask", ExecutorConfig(kind="dask", workers=2, threads_per_run=1))]:
        got = _real_grid(tmp_path, tiny_data, name, ex)
        assert not got["meta"]["runs_failed"], got["meta"]["runs_failed"]
        assert _run_files(tmp_path / name) == _run_files(tmp_path / "serial"), name
        assert got["design_report"]["claims"] == ref["design_report"]["claims"], name
        assert got["design_report"]["gaps"] == ref["design_report"]["gaps"], name
        assert got["variants"] == ref["variants"], name
    threads = {json.loads((d / "metrics.json").read_text())["threads"] for d in (tmp_path / "dask" / "runs").iterdir()}
    assert threads == {1}


def _dask_bin() -> str:
    return str(Path(sys.executable).with_name("dask"))


@pytest.mark.slow  # starts a scheduler and 2 workers over loopback and kills one mid-run (about 1 min)
def test_loopback_cluster_with_a_worker_killed_mid_run_completes_with_identical_results(tmp_path, gendered_data):
    pytest.importorskip("distributed")
    from wgbcore.lock import holder

    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    procs = [subprocess.Popen([_dask_bin(), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    killed: dict = {}
    try:
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        workers = [subprocess.Popen([_dask_bin(), "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                                     "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        procs += workers
        victim = workers[0].pid
        runs = tmp_path / "loop" / "runs"
        stop = threading.Event()

        def kill_when_busy():  # the first worker dies while it holds an unfinished run's lock
            while not stop.is_set():
                for d in runs.glob("*") if runs.exists() else []:
                    if holder(d).get("pid") == victim and not (d / "eval.json").exists():
                        os.kill(victim, signal.SIGKILL)
                        killed["run"] = d.name
                        return
                time.sleep(0.02)

        watcher = threading.Thread(target=kill_when_busy, daemon=True)
        watcher.start()
        got = _study(tmp_path, gendered_data, "loop", ExecutorConfig(kind="dask", scheduler=str(sched_file),
                                                                  threads_per_run=1), epochs=2)
        stop.set()
        assert killed, "the worker was never caught mid-run"
        assert workers[0].wait(timeout=10) == -signal.SIGKILL
        assert not got["meta"]["runs_failed"] and got["meta"]["runs_evaluated"] == 6
        ref = _study(tmp_path, gendered_data, "serial", ExecutorConfig(), epochs=2)
        assert _run_files(tmp_path / "loop") == _run_files(tmp_path / "serial")
        assert _claims(tmp_path / "loop") == _claims(tmp_path / "serial")
        assert not ref["meta"]["runs_failed"]
        log = (tmp_path / "loop" / "logs" / f"{killed['run']}.log").read_text()
        assert f":{victim}" in log and log.count("attempt 1 on") == 2  # started on the victim, finished elsewhere
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_the_trainer_holds_the_run_folder_lock(tmp_path):
    from relext.training.train import TrainConfig, train
    from wgbcore.lock import FolderLocked, try_lock

    held = try_lock(tmp_path / "run", what="run")  # another writer is on it
    with pytest.raises(FolderLocked, match="this run is in use by another wgb process"):
        train(TrainConfig(epochs=1, dataset=str(tmp_path / "no-such-data")), tmp_path / "run", progress=False)
    held.release()
    with pytest.raises(FileNotFoundError):  # free again: it trains (and fails on the data, leaving no folder)
        train(TrainConfig(epochs=1, dataset=str(tmp_path / "no-such-data")), tmp_path / "fresh", progress=False)
    assert not (tmp_path / "fresh").exists()


def test_rerunning_resumes_only_what_is_missing(tmp_path):
    first = _grid(tmp_path, train_overrides={"fail_seed": 2})
    assert list(first["meta"]["runs_failed"]) == ["cnn-average-seed2"]
    evals = {p: p.stat().st_mtime_ns for p in tmp_path.glob("runs/*/eval.json")}
    again = _grid(tmp_path)  # the failure fixed: only the failed run is trained and evaluated
    assert again["meta"]["runs_failed"] == {} and again["meta"]["runs_missing"] == []
    assert {p: p.stat().st_mtime_ns for p in evals} == evals
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert len(timing["invocations"]) == 2 and timing["invocations"][1]["executor"] == "serial"
    assert list(timing["runs"]) == ["cnn-average-seed1", "cnn-average-seed3", "cnn-average-seed2"]
    import socket

    # where and when each run trained (a grid over several machines says which ran where)
    assert timing["runs"]["cnn-average-seed2"]["ran_on"] == socket.gethostname()
    assert timing["runs"]["cnn-average-seed2"]["finished"] and timing["runs"]["cnn-average-seed2"]["wall_seconds"] >= 0
    assert timing["invocations"][1]["host"] == socket.gethostname() and len(timing["invocations"][1]["loadavg_start"]) == 3
