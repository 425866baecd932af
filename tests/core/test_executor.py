"""The run executor: tasks keyed by their folder, retries, dead workers, locked folders, backends."""
from __future__ import annotations

import threading

import pytest

from support import executor_tasks as T
from wgbcore.executor import (MAX_WORKER_DEATHS, ExecutorConfig, Task, TaskFailed, gpu_of_slot, one_line,
                              run_tasks)
from wgbcore.lock import try_lock


def _tasks(tmp_path, fn, n, *args, marker="DONE"):
    return [Task(f"t{i}", str(tmp_path / f"t{i}"), fn, (str(tmp_path / f"t{i}"), *args) if args or fn is not T.write_done
                 else (str(tmp_path / f"t{i}"), i), marker=marker, log=str(tmp_path / "logs" / f"t{i}.log"))
            for i in range(n)]


def test_serial_runs_each_unfinished_task_once_and_logs_its_output(tmp_path):
    tasks = _tasks(tmp_path, T.write_done, 3)
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "DONE").write_text("")  # finished before: never run again
    seen = []
    out = run_tasks(tasks, ExecutorConfig(), on_result=seen.append, progress=False)
    assert [o.key for o in seen] == ["t0", "t2"]
    assert {k: o.status for k, o in out.items()} == {"t0": "done", "t1": "done", "t2": "done"}
    assert out["t1"].attempts == 0 and out["t0"].value["value"] == 0
    assert not (tmp_path / "t1" / "value.txt").exists()
    log = (tmp_path / "logs" / "t2.log").read_text()
    assert "t2: attempt 1" in log and "wrote 2" in log


def test_failures_are_retried_then_reported_in_one_line_with_the_traceback_in_the_log(tmp_path):
    tasks = [Task("flaky", str(tmp_path / "a"), T.fail_times, (str(tmp_path / "a"), 1), log=str(tmp_path / "a.log")),
             Task("bad", str(tmp_path / "b"), T.fail_times, (str(tmp_path / "b"), 5), log=str(tmp_path / "b.log")),
             Task("ok", str(tmp_path / "c"), T.fail_times, (str(tmp_path / "c"), 0), log=str(tmp_path / "c.log"))]
    out = run_tasks(tasks, ExecutorConfig(retries=1), progress=False)
    assert out["flaky"].status == "done" and out["flaky"].attempts == 2 and out["flaky"].value == 2
    assert out["ok"].status == "done"
    bad = out["bad"]
    assert bad.status == "failed" and bad.attempts == 2
    assert bad.error == "ValueError: planned failure 2 of 5" and bad.log == str(tmp_path / "b.log")
    assert "Traceback" in (tmp_path / "b.log").read_text()
    with pytest.raises(ValueError, match="planned failure 1 of 5"):
        run_tasks([Task("x", str(tmp_path / "x"), T.fail_times, (str(tmp_path / "x"), 5))], ExecutorConfig(),
                  progress=False, fail_fast=True)


def test_a_folder_held_by_another_process_waits_until_it_is_free(tmp_path):
    tasks = _tasks(tmp_path, T.write_done, 2)
    held = try_lock(tmp_path / "t0")  # "another process" is on t0 (a second open file: it conflicts)
    assert held is not None
    threading.Timer(0.6, held.release).start()
    out = run_tasks(tasks, ExecutorConfig(poll_seconds=0.2), progress=False)
    assert out["t0"].status == "done" and out["t0"].value["value"] == 0
    assert "waiting: " in (tmp_path / "logs" / "t0.log").read_text()


def test_a_folder_its_holder_finishes_is_not_run_again(tmp_path):
    task = _tasks(tmp_path, T.write_done, 1)[0]
    held = try_lock(tmp_path / "t0")

    def finish():
        (tmp_path / "t0" / "DONE").write_text("")
        held.release()

    threading.Timer(0.4, finish).start()
    out = run_tasks([task], ExecutorConfig(poll_seconds=0.2), progress=False)
    assert out["t0"].status == "done" and out["t0"].value is None
    assert not (tmp_path / "t0" / "value.txt").exists()


@pytest.mark.parametrize("bad, match", [
    (dict(kind="threads"), "executor must be one of"),
    (dict(kind="processes", workers=0), "workers must be"),
    (dict(retries=-1), "retries must be"),
    (dict(kind="processes", scheduler="tcp://x:1"), "needs the dask executor"),
    (dict(kind="serial", workers=2), "one task at a time"),
    (dict(kind="serial", runs_per_gpu=2), "needs several workers"),
])
def test_bad_executor_configs(bad, match):
    with pytest.raises(ValueError, match=match):
        ExecutorConfig(**bad)


def test_runs_per_gpu_without_a_gpu_is_refused_and_slots_fill_gpus_in_turn(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(ValueError, match="no CUDA GPU is visible"):
        ExecutorConfig(kind="processes", runs_per_gpu=2).gpu_list()
    assert [gpu_of_slot(s, ["3", "5"], 2) for s in range(5)] == ["3", "3", "5", "5", "3"]
    assert ExecutorConfig(kind="processes", runs_per_gpu=3, gpus=("0", "1")).n_workers() == 6


def test_unpicklable_tasks_fail_before_any_work(tmp_path):
    task = Task("lam", str(tmp_path / "l"), lambda: None)
    with pytest.raises(ValueError, match="task lam cannot be sent to another process"):
        run_tasks([task], ExecutorConfig(kind="processes", workers=1), progress=False)
    assert not (tmp_path / "l").exists()


def test_duplicate_keys_are_refused(tmp_path):
    t = _tasks(tmp_path, T.write_done, 1)[0]
    with pytest.raises(ValueError, match="duplicate task keys"):
        run_tasks([t, t], progress=False)


def test_one_line():
    assert one_line(ValueError("a\nb")) == "ValueError: a" and one_line(KeyError()) == "KeyError"


@pytest.mark.slow  # spawns worker processes (about 10 s on 2 busy cores)
def test_local_processes_resubmit_a_task_whose_worker_died_and_assign_gpus(tmp_path):
    cfg = ExecutorConfig(kind="processes", workers=2, threads_per_run=1, runs_per_gpu=1, gpus=("0", "1"))
    tasks = _tasks(tmp_path, T.write_done, 3) + [
        Task("dies", str(tmp_path / "d"), T.die_once, (str(tmp_path / "d"),), log=str(tmp_path / "d.log")),
        Task("dead", str(tmp_path / "e"), T.always_die, (str(tmp_path / "e"),), log=str(tmp_path / "e.log"))]
    out = run_tasks(tasks, cfg, progress=False)
    assert all(out[f"t{i}"].status == "done" and out[f"t{i}"].value["value"] == i for i in range(3))
    assert {out[f"t{i}"].value["gpu"] for i in range(3)} <= {"0", "1"}
    assert {out[f"t{i}"].value["omp"] for i in range(3)} == {"1"}
    assert out["dies"].status == "done" and out["dies"].value != int((tmp_path / "d" / "died").read_text())
    assert out["dead"].status == "failed" and out["dead"].error.startswith("worker lost")
    assert MAX_WORKER_DEATHS == 3


@pytest.mark.slow  # starts a Dask LocalCluster
def test_dask_local_cluster_runs_tasks_and_survives_a_dead_worker(tmp_path):
    pytest.importorskip("distributed")
    cfg = ExecutorConfig(kind="dask", workers=2, threads_per_run=1)
    tasks = _tasks(tmp_path, T.write_done, 3) + [
        Task("dies", str(tmp_path / "d"), T.die_once, (str(tmp_path / "d"),))]
    out = run_tasks(tasks, cfg, progress=False)
    assert all(o.status == "done" for o in out.values()), out
    assert sorted(out["t2"].value) == ["gpu", "omp", "pid", "value"] and out["t2"].value["omp"] == "1"
    with pytest.raises(TaskFailed, match="x failed: ValueError: planned failure 1 of 5"):
        run_tasks([Task("x", str(tmp_path / "x"), T.fail_times, (str(tmp_path / "x"), 5))], cfg, progress=False,
                  fail_fast=True)


def test_without_a_terminal_each_task_gets_a_plain_progress_line(tmp_path, capsys):
    # under nohup or a batch job tqdm's bar is silent: a long grid must still say what it did
    tasks = _tasks(tmp_path, T.write_done, 2) + [
        Task("bad", str(tmp_path / "b"), T.fail_times, (str(tmp_path / "b"), 5), log=str(tmp_path / "b.log"))]
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "DONE").write_text("")
    run_tasks(tasks, ExecutorConfig(), progress=True, desc="runs", already_done=4)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("runs ")]
    assert [x.split(":")[0] for x in lines] == ["runs 6/7", "runs 7/7"]     # 4 skipped + t1 finished before
    assert " t0 done in " in lines[0] and "elapsed, about " in lines[0] and "left" in lines[0]
    assert f"bad FAILED: ValueError: planned failure 1 of 5 (log: {tmp_path / 'b.log'})" in lines[1]
    assert "left" not in lines[1]
    run_tasks(_tasks(tmp_path / "quiet", T.write_done, 1), ExecutorConfig(), progress=False)
    assert "runs " not in capsys.readouterr().err      # progress=False: silent


def test_progress_line_formats_hours():
    from wgbcore.executor import progress_line
    from wgbcore.executor_worker import Outcome

    line = progress_line("runs", 10, 40, Outcome("k", "done", seconds=330.0), elapsed=7500.0, ended=10)
    assert line == "runs 10/40: k done in 5.5 min; 2 h 05 min elapsed, about 6 h 15 min left"
    # two slots whose first two tasks ended together: the rate alone would say twice the time left
    first = progress_line("runs", 1, 10, Outcome("a", "done", seconds=720.0), elapsed=720.0, ended=1,
                          slots=2, durations=[720.0])
    assert first.endswith("about 54.0 min left")
    assert progress_line("runs", 10, 10, Outcome("b", "done", seconds=720.0), elapsed=720.0, ended=1,
                         slots=2, durations=[720.0]).endswith("elapsed")


def test_a_worker_ends_with_its_killed_invocation(tmp_path):
    # found by killing a grid with pkill: its spawned workers trained on, unseen, and wrote into
    # run folders meanwhile deleted; a worker must end when its parent does
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text(
        "import multiprocessing as mp, os, sys, time\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from wgbcore.executor_worker import _pool_init\n"
        "if __name__ == '__main__':\n"
        "    ctx = mp.get_context('spawn')\n"
        "    pool = ProcessPoolExecutor(1, mp_context=ctx, initializer=_pool_init, initargs=(1, [], None, ctx.Value('i', 0)))\n"
        "    print(pool.submit(os.getpid).result(), flush=True)\n"
        "    pool.submit(time.sleep, 120)\n"
        "    time.sleep(0.5)\n"
        "    os._exit(0)   # the parent dies without shutting its pool down, as under kill\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    worker = int(out.stdout.split()[0])
    for _ in range(40):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.25)
    else:
        os.kill(worker, 9)
        raise AssertionError("the worker outlived its parent")


def test_watch_parent_exits_once_the_parent_changes():
    from wgbcore.executor_worker import watch_parent

    parents, exits = iter([7, 7, 1]), []
    watch_parent(7, interval=0, getppid=lambda: next(parents), exit=exits.append)
    assert exits == [1]
