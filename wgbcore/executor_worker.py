"""The worker side of the run executor (:mod:`wgbcore.executor`): what a task is, what comes
back, and :func:`execute`, the function every worker runs (its threads, its GPU, its log)."""
from __future__ import annotations

import contextlib
import io
import logging
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from wgbcore.lock import FolderLocked


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (tracebacks go to the task's log)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__




def gpu_of_slot(slot: int, gpus: list[str], runs_per_gpu: int) -> str:
    """The GPU of worker ``slot``: slots 0..r-1 on the first GPU, r..2r-1 on the second, ...
    (wrapping round when there are more workers than GPUs x runs per GPU)."""
    return gpus[(slot // runs_per_gpu) % len(gpus)]




@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(*args, **kwargs)`` writing ``folder``."""

    key: str
    folder: str
    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: file in ``folder`` whose presence means finished (None: every given task has work)
    marker: str | None = "DONE"
    #: the task's log file (stdout, stderr, log records, the traceback of a failure)
    log: str | None = None

    def finished(self) -> bool:
        return self.marker is not None and (Path(self.folder) / self.marker).exists()


@dataclass
class Outcome:
    key: str
    #: done | failed | busy (another process holds the folder) | died (its worker was lost) | lost
    #: (a local worker died while this task ran beside others: resubmitted, not charged to it)
    status: str
    value: Any = None
    error: str | None = None
    log: str | None = None
    attempts: int = 1
    seconds: float = 0.0
    worker: str = ""
    #: the exception itself, kept in serial runs only (re-raised by ``fail_fast``); from a worker
    #: process only its one-line text and the log travel back
    exc: BaseException | None = None


class TaskFailed(RuntimeError):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        where = f" (log: {outcome.log})" if outcome.log else ""
        super().__init__(f"{outcome.key} failed: {outcome.error}{where}")


# --------------------------------------------------------------------------------------------
# worker side
# --------------------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _set_threads(threads: int | None) -> None:
    if threads is None:
        return
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # pragma: no cover
        pass


def watch_parent(parent: int, *, interval: float = 2.0, getppid=os.getppid, exit=os._exit) -> None:
    """Return (by ending the process) once ``parent`` is no longer this process's parent: a worker
    whose invocation was killed must not train on unseen (its run folder stays unfinished and
    resumes). Runs in a daemon thread of each local worker."""
    import time

    while getppid() == parent:
        time.sleep(interval)
    exit(1)


def _pool_init(threads: int | None, gpus: list[str], runs_per_gpu: int | None, counter) -> None:
    """Initializer of a local worker process: its GPU (before torch starts CUDA) and threads; it
    ends with its parent (:func:`watch_parent`)."""
    import threading

    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True, name="wgb-parent-watch").start()
    if runs_per_gpu:
        with counter.get_lock():
            slot = counter.value
            counter.value += 1
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu_of_slot(slot, gpus, runs_per_gpu)
    _set_threads(threads)


def _dask_gpu(gpus: list[str], runs_per_gpu: int | None) -> None:
    """A LocalCluster worker's GPU, from its name (0..n-1), set once before its first task."""
    if not runs_per_gpu or _WORKER.get("gpu_set"):
        return
    from distributed import get_worker

    name = get_worker().name
    slot = int(name) if isinstance(name, int) or str(name).isdigit() else 0
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu_of_slot(slot, gpus, runs_per_gpu)
    _WORKER["gpu_set"] = True


class _Tee(io.TextIOBase):
    """A text stream writing into the log file (never a terminal: progress bars stay quiet)."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, s: str) -> int:
        self.fh.write(s)
        return len(s)

    def flush(self) -> None:
        self.fh.flush()

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def _captured(path: str | None, header: str):
    if path is None:
        yield None
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(header + "\n")
        fh.flush()
        stream = _Tee(fh)
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
                yield stream
        finally:
            root.removeHandler(handler)


def execute(task: Task, attempt: int = 1, threads: int | None = None, gpus: list[str] | None = None,
            runs_per_gpu: int | None = None, *, keep_exc: bool = False) -> Outcome:
    """Run one task where it was sent (this is the function a worker runs)."""
    t0 = time.time()
    who = f"{socket.gethostname()}:{os.getpid()}"
    if task.finished():
        return Outcome(task.key, "done", log=task.log, attempts=attempt, worker=who)
    if gpus:
        _dask_gpu(gpus, runs_per_gpu)
    _set_threads(threads)
    header = f"== {time.strftime('%Y-%m-%dT%H:%M:%S%z')} {task.key}: attempt {attempt} on {who}"
    with _captured(task.log, header) as stream:
        try:
            value = task.fn(*task.args, **dict(task.kwargs))
        except FolderLocked as exc:
            print(f"waiting: {exc}", file=stream or sys.stderr)
            return Outcome(task.key, "busy", error=one_line(exc), log=task.log, attempts=attempt,
                           seconds=time.time() - t0, worker=who)
        except Exception as exc:  # noqa: BLE001 - reported as the task's failure; the others go on
            if stream is not None:
                traceback.print_exc(file=stream)
            return Outcome(task.key, "failed", error=one_line(exc), log=task.log, attempts=attempt,
                           seconds=time.time() - t0, worker=who,
                           exc=exc if keep_exc else None)
    return Outcome(task.key, "done", value=value, log=task.log, attempts=attempt, seconds=time.time() - t0,
                   worker=who)

