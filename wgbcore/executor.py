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
  from whatever its folder holds;
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
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import socket
import sys
import time
import traceback
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from wgbcore.lock import FolderLocked

__all__ = ["EXECUTORS", "MAX_WORKER_DEATHS", "ExecutorConfig", "Task", "Outcome", "TaskFailed", "run_tasks",
           "gpu_of_slot", "visible_gpus", "one_line"]

EXECUTORS = ("serial", "processes", "dask")
#: A task whose worker died this many times is reported failed (Dask's ``allowed-failures`` default).
MAX_WORKER_DEATHS = 3

log = logging.getLogger(__name__)


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (tracebacks go to the task's log)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@dataclass(frozen=True)
class ExecutorConfig:
    """Where and how tasks run (validated at once: a bad option fails before any work)."""

    kind: str = "serial"
    #: worker processes (processes, dask LocalCluster) [default: cores // threads_per_run; with GPUs:
    #: GPUs x runs_per_gpu]
    workers: int | None = None
    #: torch threads per task [default: serial: torch's own; else cores // workers]
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
        return max(1, (os.cpu_count() or 1) // (self.threads_per_run or 1))

    def n_threads(self) -> int | None:
        if self.threads_per_run is not None or self.kind == "serial":
            return self.threads_per_run
        return max(1, (os.cpu_count() or 1) // self.n_workers())

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
    #: done | failed | busy (another process holds the folder) | died (its worker was lost)
    status: str
    value: Any = None
    error: str | None = None
    log: str | None = None
    attempts: int = 1
    seconds: float = 0.0
    worker: str = ""
    #: the exception itself when it could travel back (re-raised by ``fail_fast`` in serial runs)
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


def _pool_init(threads: int | None, gpus: list[str], runs_per_gpu: int | None, counter) -> None:
    """Initializer of a local worker process: its GPU (before torch starts CUDA) and threads."""
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


def _travels(exc: BaseException) -> BaseException | None:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled stays here; its text travels
        return None


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
                           exc=exc if keep_exc else _travels(exc))
    return Outcome(task.key, "done", value=value, log=task.log, attempts=attempt, seconds=time.time() - t0,
                   worker=who)


# --------------------------------------------------------------------------------------------
# backends: submit(task, attempt) -> handle; wait(timeout) -> [(handle, outcome | None = died)]
# --------------------------------------------------------------------------------------------
class _Serial:
    slots = 1

    def __init__(self, cfg: ExecutorConfig):
        self.cfg, self.queue = cfg, []

    def submit(self, task: Task, attempt: int):
        self.queue.append((task, attempt))
        return (task.key, attempt)

    def wait(self, timeout: float):
        task, attempt = self.queue.pop(0)
        return [((task.key, attempt), execute(task, attempt, self.cfg.n_threads(), keep_exc=True))]

    def close(self) -> None:
        pass


class _Pool:
    def __init__(self, cfg: ExecutorConfig):
        self.cfg = cfg
        self.slots = cfg.n_workers()
        self.gpus = cfg.gpu_list()
        self.futures: dict = {}
        self.pool = None
        self._start()

    def _start(self) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # spawned, not forked: a forked torch (OpenMP pools, CUDA) can hang; workers import what
        # their tasks need once and run many tasks
        ctx = mp.get_context("spawn")
        counter = ctx.Value("i", 0)
        self.pool = ProcessPoolExecutor(self.slots, mp_context=ctx, initializer=_pool_init,
                                        initargs=(self.cfg.n_threads(), self.gpus, self.cfg.runs_per_gpu, counter))

    def submit(self, task: Task, attempt: int):
        fut = self.pool.submit(execute, task, attempt, self.cfg.n_threads())
        self.futures[fut] = (task.key, attempt)
        return self.futures[fut]

    def wait(self, timeout: float):
        from concurrent.futures import FIRST_COMPLETED
        from concurrent.futures import wait as fwait
        from concurrent.futures.process import BrokenProcessPool

        done, _ = fwait(list(self.futures), timeout=timeout, return_when=FIRST_COMPLETED)
        out, broken = [], False
        for fut in done:
            handle = self.futures.pop(fut)
            try:
                out.append((handle, fut.result()))
            except BrokenProcessPool:
                broken = True
                out.append((handle, None))
        if broken:  # every task of the broken pool is lost with it: resubmitted by the caller
            out += [(h, None) for h in self.futures.values()]
            self.futures.clear()
            self.pool.shutdown(wait=False, cancel_futures=True)
            self._start()
        return out

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


class _Dask:
    def __init__(self, cfg: ExecutorConfig):
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("--executor dask needs dask.distributed, which is not installed: "
                               "pip install 'wgb[dask]' (or use --executor processes)") from None
        self.cfg = cfg
        self.gpus = cfg.gpu_list()
        if cfg.scheduler:
            sched = cfg.scheduler
            if not sched.startswith(("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")) \
                    and Path(sched).is_file():
                self.client = Client(scheduler_file=sched, timeout=60)
            else:
                self.client = Client(sched, timeout=60)
        else:
            self.client = Client(processes=True, n_workers=cfg.n_workers(), threads_per_worker=1,
                                 dashboard_address=None, silence_logs=logging.ERROR)
        self.slots = 1 << 30  # everything is handed to the scheduler at once; it queues and balances
        self.futures: dict = {}

    def submit(self, task: Task, attempt: int):
        fut = self.client.submit(execute, task, attempt, self.cfg.n_threads(), self.gpus, self.cfg.runs_per_gpu,
                                 key=f"{task.key}-{attempt}-{uuid.uuid4().hex[:8]}", pure=False)
        self.futures[fut] = (task.key, attempt)
        return self.futures[fut]

    def wait(self, timeout: float):
        from distributed import wait as dwait

        try:
            dwait(list(self.futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        out = []
        for fut in [f for f in self.futures if f.done()]:
            handle = self.futures.pop(fut)
            try:
                out.append((handle, fut.result()))
            except Exception as exc:  # noqa: BLE001 - KilledWorker & co: the worker, not the task
                out.append((handle, Outcome(handle[0], "died", error=one_line(exc), attempts=handle[1])))
        return out

    def workers(self) -> int:
        try:
            return sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        except Exception:  # noqa: BLE001 - only for the progress bar
            return 0

    def close(self) -> None:
        cluster = getattr(self.client, "cluster", None)
        self.client.close()
        if cluster is not None and not self.cfg.scheduler:
            cluster.close()


def _backend(cfg: ExecutorConfig):
    return {"serial": _Serial, "processes": _Pool, "dask": _Dask}[cfg.kind](cfg)


def check_picklable(tasks: Iterable[Task]) -> None:
    """Every task can travel to another process (a top-level function and plain data), or a
    ``ValueError`` naming the first that cannot."""
    for t in tasks:
        try:
            pickle.dumps(t)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"task {t.key} cannot be sent to another process ({one_line(exc)}); "
                             "its function must be a top-level function and its arguments plain data "
                             "(a dataset by its path)") from None


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
    bar = tqdm(total=len(todo) + already_done + len(results), initial=already_done + len(results), desc=desc,
               unit="run", disable=None if progress else True, dynamic_ncols=True)
    if not todo:
        bar.close()
        return results
    backend = _backend(cfg)
    pending: deque[Task] = deque(todo)
    waiting: list[tuple[float, Task]] = []
    in_flight: dict = {}
    attempts: Counter = Counter()
    deaths: Counter = Counter()
    n_failed = 0

    def show() -> None:
        running = len(in_flight)
        if isinstance(backend, _Dask):
            running = min(running, backend.workers() or running)
        bar.set_postfix_str(f"running {running}, waiting {len(waiting)}, failed {n_failed}", refresh=True)

    def finish(outcome: Outcome) -> None:
        nonlocal n_failed
        results[outcome.key] = outcome
        n_failed += outcome.status == "failed"
        bar.update(1)
        if outcome.status == "failed":
            bar.write(f"FAILED {outcome.key}: {outcome.error}" + (f" (log: {outcome.log})" if outcome.log else ""))
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
