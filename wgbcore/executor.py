"""Many independent tasks, each writing one output folder: serially, on local processes or on Dask.

A :class:`Task` is a picklable top-level callable with plain-data arguments, keyed by the folder it
writes (its output folder is the unit of resumption). The folder on disk is the source of truth:

* a task whose ``marker`` file exists is finished and never submitted again (``marker=None``: the
  caller decides which tasks still have work, e.g. the grid: ``DONE`` and a current ``eval.json``);
* two processes never write one folder: the task itself holds the folder's lock
  (:mod:`wgbcore.lock`) while it writes. A task that finds the folder locked raises
  :class:`~wgbcore.lock.FolderLocked`; the executor counts it as *waiting* (someone else, maybe
  another machine sharing the folder, is on it) and tries again every ``poll_seconds`` until the
  holder finished it (its marker appears) or died (the kernel released its lock);
* a task whose worker died (killed, out of memory, machine lost) is resubmitted, up to
  :data:`MAX_WORKER_DEATHS` times; the lock of a dead process vanishes with it, and the task resumes
  from whatever its folder holds. (A local pool breaks as a whole when one worker dies: the tasks
  that were running then are resubmitted uncharged and run one at a time until each has ended or
  died alone, so that a death is charged to the task that caused it.);
* a task that raises is retried ``retries`` times, then reported failed with a one-line error and
  its log file; the other tasks go on (``fail_fast``: stop at the first failure).

Backends (:class:`ExecutorConfig`): ``serial`` (this process), ``processes`` (a local process pool,
spawned, ``workers`` processes x ``threads_per_run`` torch threads), ``dask`` (a
``distributed.LocalCluster`` of ``workers`` single-threaded processes, or an existing cluster at
``scheduler``: an address such as ``tcp://10.0.0.5:8786`` or a scheduler JSON file). With
``runs_per_gpu`` each local worker is given one GPU (``CUDA_VISIBLE_DEVICES``), ``runs_per_gpu``
workers per GPU. Every task writes its stdout, stderr, log records and, on failure, its traceback
to its ``log`` file. Results come back through ``on_result`` in this process, in the order tasks
finish; one progress bar counts done / running / waiting / failed with an ETA.

Here: the options and the scheduling loop; the worker side (``Task``, ``Outcome``, ``execute``) is
in :mod:`wgbcore.executor_worker`, the three backends in :mod:`wgbcore.executor_backends`.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urlsplit

from wgbcore.cores import oversubscribed, usable_cores
from wgbcore.executor_backends import _backend, _Dask, check_picklable
from wgbcore.executor_worker import Outcome, Task, TaskFailed, execute, gpu_of_slot, one_line

__all__ = ["EXECUTORS", "MAX_WORKER_DEATHS", "ExecutorConfig", "Task", "Outcome", "TaskFailed", "run_tasks",
           "gpu_of_slot", "visible_gpus", "one_line", "execute", "check_picklable", "check_scheduler",
           "reach_scheduler"]

EXECUTORS = ("serial", "processes", "dask")
#: Seconds an existing Dask scheduler has to answer (a wrong host fails in seconds, not a minute).
SCHEDULER_TIMEOUT = 5.0
_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")
#: A task whose worker died this many times is reported failed (Dask's ``allowed-failures`` default).
MAX_WORKER_DEATHS = 3

log = logging.getLogger(__name__)


def check_scheduler(address: str) -> None:
    """A Dask scheduler given as ``scheme://host:port`` (``tcp``, ``tls``, ...), ``host:port`` or a
    scheduler JSON file that exists; anything else (an empty address, a port outside 1-65535, an
    unknown scheme, a missing file) is a ``ValueError`` saying which, before any work."""
    text = str(address).strip()
    if not text:
        raise ValueError("scheduler address is empty: give tcp://HOST:PORT or a scheduler JSON file, "
                         "or leave --scheduler out for a local cluster")
    if "://" in text or re.fullmatch(r"[\w.\-\[\]:]+:\d+", text):
        url = urlsplit(text if "://" in text else f"tcp://{text}")
        if url.scheme not in _SCHEMES:
            raise ValueError(f"scheduler {text!r}: unknown scheme {url.scheme!r}; expected one of {list(_SCHEMES)}")
        if url.scheme == "inproc":
            return
        try:
            port = url.port
        except ValueError:
            port = -1
        if not url.hostname:
            raise ValueError(f"scheduler {text!r} names no host (expected {url.scheme}://HOST:PORT)")
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"scheduler {text!r}: port {url.netloc.rpartition(':')[2]} is not a port (1-65535)")
        return
    if not Path(text).is_file():
        raise ValueError(f"scheduler {text!r} is neither an address (tcp://HOST:PORT) nor an existing scheduler "
                         "JSON file")


def reach_scheduler(address: str, timeout: float = SCHEDULER_TIMEOUT) -> None:
    """The scheduler ``address`` (or the one its scheduler JSON file names) accepts a connection
    within ``timeout`` seconds: a ``ConnectionError`` (or ``ValueError`` for a file naming no
    address) in one line otherwise. Commands call it before writing anything, so a wrong address
    leaves no study folder behind; Dask's own handshake comes later, on the first task."""
    import json
    import socket

    text = str(address).strip()
    if "://" not in text and Path(text).is_file():
        try:
            named = json.loads(Path(text).read_text())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{text}: not a scheduler JSON file ({one_line(exc)})") from None
        if not isinstance(named, dict) or not isinstance(named.get("address"), str):
            raise ValueError(f"{text}: a scheduler JSON file names its 'address' (tcp://HOST:PORT); this one does not")
        text = named["address"]
    url = urlsplit(text if "://" in text else f"tcp://{text}")
    if url.scheme not in ("tcp", "tls", "ws", "wss") or not url.hostname or url.port is None:
        return   # inproc, ucx: nothing to probe here
    try:
        socket.create_connection((url.hostname, url.port), timeout=timeout).close()
    except OSError as exc:
        raise ConnectionError(f"no Dask scheduler answered at {address} within {timeout:g} s ({one_line(exc)}); "
                              "is `dask scheduler` running there and reachable from here?") from None


@dataclass(frozen=True)
class ExecutorConfig:
    """Where and how tasks run (validated at once: a bad option fails before any work)."""

    kind: str = "serial"
    #: worker processes (processes, dask LocalCluster) [default: usable cores (wgbcore.cores) //
    #: threads_per_run; with GPUs:
    #: GPUs x runs_per_gpu]
    workers: int | None = None
    #: torch threads per task [default: serial: torch's own; else usable cores // workers]
    threads_per_run: int | None = None
    #: an existing Dask cluster: scheduler address or scheduler JSON file (dask only)
    scheduler: str | None = None
    #: times a failing task is tried again
    retries: int = 0
    #: tasks sharing one GPU (processes / dask LocalCluster; each worker sees one GPU)
    runs_per_gpu: int | None = None
    #: GPU ids to spread workers over [default: CUDA_VISIBLE_DEVICES or every GPU torch sees]
    gpus: tuple[str, ...] | None = None
    #: seconds between two looks at a folder another process holds
    poll_seconds: float = 5.0
    #: seconds to wait for an existing scheduler to answer (``scheduler``) before giving up
    connect_timeout: float = SCHEDULER_TIMEOUT

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise ValueError(f"executor must be one of {list(EXECUTORS)}, got {self.kind!r}")
        for name in ("workers", "threads_per_run", "runs_per_gpu"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {self.retries!r}")
        if self.scheduler is not None and self.kind != "dask":
            raise ValueError("a scheduler address needs the dask executor (--executor dask)")
        if self.scheduler is not None:
            check_scheduler(self.scheduler)
        if self.kind == "serial" and self.workers not in (None, 1):
            raise ValueError(f"the serial executor runs one task at a time (workers {self.workers}); "
                             "use --executor processes or dask for more")
        if self.runs_per_gpu is not None and self.kind == "serial":
            raise ValueError("runs per GPU needs several workers: use --executor processes or dask")
        if self.runs_per_gpu is not None and self.scheduler is not None:
            raise ValueError("runs per GPU places local workers; on an existing cluster start each "
                             "`dask worker` with its own CUDA_VISIBLE_DEVICES instead")
        if self.gpus is not None:
            object.__setattr__(self, "gpus", tuple(str(g) for g in self.gpus))

    def gpu_list(self) -> list[str]:
        if self.runs_per_gpu is None:
            return []
        gpus = list(self.gpus) if self.gpus is not None else visible_gpus()
        if not gpus:
            raise ValueError("runs per GPU asked for, but no CUDA GPU is visible "
                             "(CUDA_VISIBLE_DEVICES empty or torch sees none)")
        return gpus

    def n_workers(self) -> int:
        if self.kind == "serial":
            return 1
        if self.workers is not None:
            return self.workers
        if self.runs_per_gpu is not None:
            return len(self.gpu_list()) * self.runs_per_gpu
        return max(1, usable_cores() // (self.threads_per_run or 1))

    def n_threads(self) -> int | None:
        if self.threads_per_run is not None or self.kind == "serial":
            return self.threads_per_run
        return max(1, usable_cores() // self.n_workers())

    def oversubscription(self) -> str | None:
        """A one-line warning when this machine's workers x threads exceed its usable cores
        (:func:`wgbcore.cores.usable_cores`: the affinity set and cgroup quota, not the host's
        cores); ``None`` for an existing cluster, serial runs with torch's own threads, or a plan
        that fits. The defaults always fit."""
        if self.scheduler is not None or self.n_threads() is None:
            return None
        return oversubscribed(self.n_workers(), self.n_threads(), usable_cores())

    def describe(self) -> dict[str, Any]:
        """What ran where, for a results file."""
        d: dict[str, Any] = {"executor": self.kind, "workers": self.n_workers(), "threads_per_run": self.n_threads(),
                             "retries": self.retries}
        if self.scheduler:
            d["scheduler"] = self.scheduler
        if self.runs_per_gpu:
            d["runs_per_gpu"] = self.runs_per_gpu
        return d


def visible_gpus() -> list[str]:
    """GPU ids from ``CUDA_VISIBLE_DEVICES``, else every GPU torch counts (none without torch)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g.strip() for g in env.split(",") if g.strip() and g.strip() != "-1"]
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except ImportError:  # pragma: no cover - torch is a dependency of every trainer
        return []


# --------------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------------
def run_tasks(tasks: Iterable[Task], config: ExecutorConfig | None = None, *,
              on_result: Callable[[Outcome], None] | None = None, progress: bool = True, desc: str = "runs",
              already_done: int = 0, fail_fast: bool = False) -> dict[str, Outcome]:
    """Run every task that is not finished; returns their outcomes by key (``done`` or ``failed``).

    ``on_result(outcome)`` is called in this process as each task ends for good (after its
    retries). ``already_done``: tasks the caller skipped, counted by the progress bar.
    ``fail_fast``: raise :class:`TaskFailed` (in serial runs the task's own exception) at the first
    failure, after cancelling the rest.
    """
    from tqdm.auto import tqdm

    cfg = config or ExecutorConfig()
    tasks = list(tasks)
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate task keys: {sorted(k for k, n in Counter(keys).items() if n > 1)}")
    todo = [t for t in tasks if not t.finished()]
    results: dict[str, Outcome] = {t.key: Outcome(t.key, "done", log=t.log, attempts=0)
                                   for t in tasks if t.finished()}
    if cfg.kind != "serial":
        check_picklable(todo)
    if todo and (warning := cfg.oversubscription()):
        log.warning(warning)
        if progress:
            print(f"warning: {warning}", file=sys.stderr, flush=True)
    bar = tqdm(total=len(todo) + already_done + len(results), initial=already_done + len(results), desc=desc,
               unit="run", disable=None if progress else True, dynamic_ncols=True)
    if not todo:
        bar.close()
        return results
    # not a terminal (nohup, a batch job, CI): the bar stays silent, so one plain line per task instead
    plain = progress and bar.disable
    started, ended_here, n0, total = time.time(), 0, already_done + len(results), len(todo) + already_done + len(results)
    backend = _backend(cfg)
    pending: deque[Task] = deque(todo)
    waiting: list[tuple[float, Task]] = []
    in_flight: dict = {}
    attempts: Counter = Counter()
    deaths: Counter = Counter()
    n_failed = 0
    durations: list[float] = []

    def show() -> None:
        running = len(in_flight)
        if isinstance(backend, _Dask):
            running = min(running, backend.workers() or running)
        bar.set_postfix_str(f"running {running}, waiting {len(waiting)}, failed {n_failed}", refresh=True)

    def finish(outcome: Outcome) -> None:
        nonlocal n_failed, ended_here
        results[outcome.key] = outcome
        n_failed += outcome.status == "failed"
        bar.update(1)
        ended_here += 1
        if outcome.status == "failed" and not bar.disable:
            bar.write(f"FAILED {outcome.key}: {outcome.error}" + (f" (log: {outcome.log})" if outcome.log else ""))
        if plain:
            if outcome.seconds:
                durations.append(outcome.seconds)
            print(progress_line(desc, n0 + ended_here, total, outcome, time.time() - started, ended_here,
                                slots=backend.slots, durations=durations), file=sys.stderr, flush=True)
        if on_result is not None:
            on_result(outcome)
        if outcome.status == "failed" and fail_fast:
            if outcome.exc is not None and cfg.kind == "serial":
                raise outcome.exc
            raise TaskFailed(outcome)

    try:
        while pending or in_flight or waiting:
            now = time.time()
            for item in [w for w in waiting if w[0] <= now]:
                waiting.remove(item)
                if item[1].finished():  # the other holder finished it
                    finish(Outcome(item[1].key, "done", log=item[1].log, attempts=attempts[item[1].key]))
                else:
                    pending.append(item[1])
            while pending and len(in_flight) < backend.slots:
                task = pending.popleft()
                attempts[task.key] += 1
                in_flight[backend.submit(task, attempts[task.key])] = task
            show()
            if not in_flight:
                time.sleep(max(0.0, min(w[0] for w in waiting) - time.time()) if waiting else 0)
                continue
            for handle, outcome in backend.wait(timeout=1.0):
                task = in_flight.pop(handle)
                if outcome is not None and outcome.status == "lost":  # died beside others: not charged
                    pending.appendleft(task)
                    attempts[task.key] -= 1
                    continue
                if outcome is None or outcome.status == "died":
                    deaths[task.key] += 1
                    why = outcome.error if outcome is not None else "its worker process died"
                    log.warning("%s: %s; resubmitting (%d/%d)", task.key, why, deaths[task.key], MAX_WORKER_DEATHS)
                    if deaths[task.key] <= MAX_WORKER_DEATHS and outcome is None:
                        pending.appendleft(task)
                        attempts[task.key] -= 1  # a lost worker is not the task's failure
                        continue
                    outcome = Outcome(task.key, "failed", error=f"worker lost: {why}", log=task.log,
                                      attempts=attempts[task.key])
                if outcome.status == "busy":
                    attempts[task.key] -= 1
                    waiting.append((time.time() + cfg.poll_seconds, task))
                    continue
                if outcome.status == "failed" and attempts[task.key] <= cfg.retries:
                    pending.append(task)
                    continue
                finish(replace(outcome, attempts=attempts[task.key]))
            show()
    finally:
        backend.close()
        bar.close()
    return {t.key: results[t.key] for t in tasks if t.key in results}


def progress_line(desc: str, n: int, total: int, outcome: Outcome, elapsed: float, ended: int, *,
                  slots: int = 1, durations: Sequence[float] = ()) -> str:
    """``runs 12/40: <key> done in 5.6 min; 2 h 04 min elapsed, about 1 h 30 min left``.

    Time left: the mean duration of the tasks this invocation ended times the tasks left, shared
    by ``slots`` running at once; without durations, the rate of the tasks ended so far (which
    underestimates the pace early on when ``slots`` tasks started together). A failed task names
    its error and log."""
    def hm(sec: float) -> str:
        m = int(round(sec / 60))
        return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{sec / 60:.1f} min"

    what = outcome.status if outcome.status != "failed" else f"FAILED: {outcome.error}" + (
        f" (log: {outcome.log})" if outcome.log else "")
    took = f" in {hm(outcome.seconds)}" if outcome.seconds else ""
    rest = total - n
    per = sum(durations) / len(durations) / max(1, slots) if durations else (elapsed / ended if ended else 0)
    left = f", about {hm(per * rest)} left" if per and rest > 0 else ""
    return f"{desc} {n}/{total}: {outcome.key} {what}{took}; {hm(elapsed)} elapsed{left}"
