"""The run executor's backends (:mod:`wgbcore.executor`): this process, a local process pool,
Dask. Each has ``slots`` (tasks in flight at once), ``submit(task, attempt) -> handle``,
``wait(timeout) -> [(handle, Outcome | None)]`` (None: the worker died with the task) and
``close()``."""
from __future__ import annotations

import logging
import pickle
import uuid
from pathlib import Path
from typing import Iterable

from wgbcore.executor_worker import Outcome, Task, _pool_init, execute, one_line


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
        self.workers = cfg.n_workers()
        self.gpus = cfg.gpu_list()
        self.futures: dict = {}
        #: tasks in flight together when a worker died (which one killed it is unknown): they run
        #: one at a time until each has ended or died alone, so that a death is charged to its task
        self.suspects: set[str] = set()
        self.pool = None
        self._start()

    @property
    def slots(self) -> int:
        return 1 if self.suspects else self.workers

    def _start(self) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # spawned, not forked: a forked torch (OpenMP pools, CUDA) can hang; workers import what
        # their tasks need once and run many tasks
        ctx = mp.get_context("spawn")
        counter = ctx.Value("i", 0)
        self.pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_pool_init,
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
        out, lost, broken = [], [], False
        for fut in done:
            handle = self.futures.pop(fut)
            try:
                out.append((handle, fut.result()))
                self.suspects.discard(handle[0])
            except BrokenProcessPool:
                broken = True
                lost.append(handle)
        if broken:  # every task of the broken pool is lost with it: resubmitted by the caller
            lost += list(self.futures.values())
            self.futures.clear()
            if len(lost) == 1:  # it was alone: its death is its own (None = charged to the task)
                out.append((lost[0], None))
            else:
                self.suspects.update(h[0] for h in lost)
                out += [(h, Outcome(h[0], "lost", error="a worker process died", attempts=h[1])) for h in lost]
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
            wait = cfg.connect_timeout
            try:
                if "://" not in sched and Path(sched).is_file():
                    self.client = Client(scheduler_file=sched, timeout=wait)
                else:
                    self.client = Client(sched, timeout=wait)
            except (OSError, TimeoutError) as exc:   # a wrong host or port: seconds, one line
                raise ConnectionError(f"no Dask scheduler answered at {sched} within {wait:g} s ({one_line(exc)}); "
                                      "is `dask scheduler` running there and reachable from here?") from None
            except Exception as exc:  # noqa: BLE001 - something answered, not a Dask scheduler (a proxy: a
                # garbage frame length becomes a MemoryError in distributed's protocol)
                raise ConnectionError(f"{sched} answered, but not as a Dask scheduler ({one_line(exc)})") from None
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

