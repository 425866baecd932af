"""Running the PyTorch-BigGraph worker (``kge/pbg_worker.py``) on a job folder: which interpreter,
resuming and extending, waiting for rank 0's export on the other ranks, and the peak memory of
the whole process tree.

PBG 1.0.0 imports ``pkg_resources`` (removed in setuptools 81), so it usually lives in its own
virtual environment; point ``$WGB_PBG_PYTHON`` (or ``python=``) at its interpreter::

    python -m venv ~/pbg-venv
    ~/pbg-venv/bin/pip install torch torchbiggraph==1.0.0 'setuptools<81'
    export WGB_PBG_PYTHON=~/pbg-venv/bin/python
"""
from __future__ import annotations

import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

WORKER = Path(__file__).resolve().with_name("pbg_worker.py")
ENV_PYTHON = "WGB_PBG_PYTHON"
__all__ = ["WORKER", "ENV_PYTHON", "pbg_available", "pbg_python", "TreeMemory", "epochs_done", "run_worker",
           "wait_for_export", "worker_command", "self_peak_rss"]


def pbg_available(python: str | None = None) -> bool:
    """Whether PBG can be imported by ``python`` (default: ``$WGB_PBG_PYTHON`` or this one)."""
    exe = python or os.environ.get(ENV_PYTHON)
    if not exe:
        if importlib.util.find_spec("torchbiggraph") is None:
            return False
        exe = sys.executable
    r = subprocess.run([exe, "-W", "ignore", "-c", "import torchbiggraph.train"], capture_output=True)
    return r.returncode == 0


def pbg_python(python: str | None = None) -> str:
    """The interpreter that runs PBG; a clear error when none can import it."""
    exe = python or os.environ.get(ENV_PYTHON) or sys.executable
    try:
        r = subprocess.run([exe, "-W", "ignore", "-c", "import torchbiggraph.train"], capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"cannot run {exe} for PyTorch-BigGraph ({e.strerror})") from None
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(
            f"PyTorch-BigGraph cannot be imported by {exe} ({last}). Make a virtual environment with "
            f"`pip install torch torchbiggraph==1.0.0 'setuptools<81'` and point ${ENV_PYTHON} (or "
            f"--pbg-python) at its python.")
    return exe


def self_peak_rss() -> int:
    """Peak resident memory of this process so far, bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    return kids


def _tree_memory(root: int) -> tuple[int, int, int]:
    """(sum of PSS, largest RSS, processes) of ``root`` and its descendants, bytes (Linux /proc)."""
    kids, todo, seen = _children(), [root], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(kids.get(p, []))
    pss = rss = 0
    for p in seen:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
                    elif line.startswith("Rss:"):
                        rss = max(rss, int(line.split()[1]) * 1024)
        except OSError:
            continue
    return pss, rss, len(seen)


class TreeMemory:
    """Samples the memory of a process tree in a thread: ``peak_pss`` (shared pages split between
    the processes that map them, so PBG's shared-memory embeddings count once), ``peak_rss`` of
    the largest process, the most processes seen. Zeros where /proc is missing (not Linux)."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        self.pid, self.interval = pid, interval
        self.peak_pss = self.peak_rss = self.max_procs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        if not os.path.exists("/proc/self/smaps_rollup"):
            return
        while not self._stop.is_set():
            pss, rss, n = _tree_memory(self.pid)
            self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
            self.max_procs = max(self.max_procs, n)
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def as_dict(self) -> dict:
        return {"peak_pss_bytes": self.peak_pss, "peak_rss_largest_process_bytes": self.peak_rss,
                "max_processes": self.max_procs}


def epochs_done(job_dir: str | os.PathLike) -> int:
    """Epochs in the job's PBG checkpoint (its version counts edge chunks)."""
    job = Path(job_dir)
    v = job / "checkpoint" / "checkpoint_version.txt"
    layout = job / "edges" / "layout.json"
    if not v.exists() or not layout.exists():
        return 0
    chunks = int(json.loads(layout.read_text())["num_edge_chunks"])
    return int(v.read_text().strip()) // max(1, chunks)


def worker_command(python: str, job_dir: str | os.PathLike, rank: int = 0, machines: int = 1,
                   init: str | None = None) -> list[str]:
    cmd = [python, "-W", "ignore", str(WORKER), str(job_dir)]
    if machines > 1:
        cmd += ["--rank", str(rank), "--machines", str(machines), "--init", str(init)]
    return cmd


def run_worker(job_dir: str | os.PathLike, *, python: str, rank: int = 0, machines: int = 1,
               init: str | None = None, timeout: float | None = None, log: Callable[[str], None] = lambda m: None,
               progress: bool = False) -> dict:
    """Train: run the worker (rank ``rank`` of ``machines``) until it exits; returns its seconds,
    the process tree's peak memory and (rank 0) the worker's ``out/stats.json``. The worker's
    output goes to ``JOB/pbg.log`` (``pbg.rank<R>.log`` on other ranks); a failure raises with
    its last lines."""
    job = Path(job_dir)
    log_path = job / ("pbg.log" if rank == 0 else f"pbg.rank{rank}.log")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = worker_command(python, job, rank, machines, init)
    t0 = time.perf_counter()
    with open(log_path, "w+") as f:  # read back through this handle: rank 0 may remove a shared job folder
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        with TreeMemory(proc.pid) as mem:
            last = ""
            while proc.poll() is None:
                if progress and time.perf_counter() - t0 > 5:
                    line = _last_progress_line(log_path)
                    if line and line != last:
                        log(f"  pbg: {line}")
                        last = line
                try:
                    proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    if timeout is not None and time.perf_counter() - t0 > timeout:
                        proc.kill()
                        proc.wait()
                        raise TimeoutError(f"PBG worker ran past {timeout:.0f} s; see {log_path}") from None
        f.seek(0)
        text = f.read()
    secs = time.perf_counter() - t0
    if proc.returncode != 0 or (rank == 0 and not (job / "out" / "DONE").exists()):
        tail = "".join(text.splitlines(True)[-20:])
        raise RuntimeError(f"PBG training failed (exit {proc.returncode}); see {log_path}:\n{tail}")
    stats = json.loads((job / "out" / "stats.json").read_text()) if rank == 0 else _rank_timing(text)
    return {"seconds": secs, "memory": mem.as_dict(), "worker": stats}


def _rank_timing(text: str) -> dict:
    """The ``wgb-timing {...}`` line a worker of rank > 0 prints at the end."""
    for ln in reversed(text.splitlines()):
        if ln.startswith("wgb-timing "):
            return json.loads(ln[len("wgb-timing "):])
    return {}


def _last_progress_line(log_path: Path) -> str:
    try:
        with open(log_path, "rb") as f:
            f.seek(max(0, os.path.getsize(log_path) - 4096))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    for ln in reversed(lines):
        if "Finished epoch" in ln or "Starting epoch" in ln:
            return ln.split("] ", 1)[-1].strip()
    return ""


def wait_for_export(job_dir: str | os.PathLike, check: Callable[[dict], None], timeout: float,
                    log: Callable[[str], None] = lambda m: None, poll: float = 2.0) -> dict:
    """On ranks > 0: wait until rank 0 has exported the job (``edges/layout.json`` and ``job.json``),
    then ``check`` its ``job.json`` against this rank's options; returns it."""
    job = Path(job_dir)
    t0 = time.monotonic()
    said = False
    while True:
        meta = job / "job.json"
        if (job / "edges" / "layout.json").exists() and meta.exists():
            try:
                prev = json.loads(meta.read_text())
            except json.JSONDecodeError:  # being replaced right now
                prev = None
            if prev is not None:
                check(prev)
                return prev
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{job}: rank 0 exported no job within {timeout:.0f} s (is --job-dir the same "
                               "shared folder on every machine, and is rank 0 running?)")
        if not said:
            log(f"waiting for rank 0 to export the graph into {job} ...")
            said = True
        time.sleep(poll)


def remove_job(job_dir: str | os.PathLike) -> None:
    shutil.rmtree(job_dir, ignore_errors=True)
