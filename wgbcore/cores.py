"""How many cores this process may use, and a thread plan that never asks for more.

``os.cpu_count()`` counts the machine's cores, not the ones this process may run on: a container
limited by a CPU quota (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) or a process pinned with
``taskset`` sees every core of the host. Asking for more threads (workers x threads per run) than
the usable cores makes OpenMP's threads wait on each other at every parallel region while one of
them is descheduled (``benchmarks/results/re_busy.md`` measures what that costs), so the executor's
defaults are taken from :func:`usable_cores`, and a plan above it is reported.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = ["usable_cores", "cgroup_cpu_limit", "thread_plan", "oversubscribed", "busy_hint"]

_CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")
_CGROUP_V1 = (Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))


def cgroup_cpu_limit(v2: Path = _CGROUP_V2, v1: tuple[Path, Path] = _CGROUP_V1) -> float | None:
    """The CPU quota of this process's cgroup in cores (``None``: no limit, or none readable)."""
    try:
        quota, period = v2.read_text().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        quota, period = (int(p.read_text().strip()) for p in v1)
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return None


def usable_cores(*, affinity=None, limit: float | None | bool = True) -> int:
    """Cores this process may run on: the CPU affinity set (``taskset``), capped by the cgroup CPU
    quota rounded up (a quota of 1.5 cores can keep 2 threads busy part of the time); at least 1.
    ``affinity`` and ``limit`` are for tests (``limit=True``: read the cgroup)."""
    if affinity is None:
        try:
            affinity = os.sched_getaffinity(0)
        except (AttributeError, OSError):    # not on Linux
            affinity = range(os.cpu_count() or 1)
    n = len(affinity) or 1
    if limit is True:
        limit = cgroup_cpu_limit()
    if limit:
        n = min(n, max(1, math.ceil(limit)))
    return max(1, n)


def thread_plan(workers: int | None, threads: int | None, cores: int | None = None) -> tuple[int, int]:
    """(workers, threads per worker) filling ``cores`` (default: :func:`usable_cores`) without
    exceeding it where either is left to default: neither given -> one worker per core at 1 thread;
    one given -> the other is ``cores // given`` (at least 1). Both given: as given (see
    :func:`oversubscribed`)."""
    cores = cores or usable_cores()
    if workers is None and threads is None:
        return cores, 1
    if workers is None:
        return max(1, cores // threads), threads
    if threads is None:
        return workers, max(1, cores // workers)
    return workers, threads


def oversubscribed(workers: int, threads: int, cores: int | None = None) -> str | None:
    """A one-line warning when ``workers x threads`` exceeds the usable cores, else ``None``."""
    cores = cores or usable_cores()
    if workers * threads <= cores:
        return None
    return (f"{workers} workers x {threads} threads = {workers * threads} threads on {cores} usable "
            f"core(s): runs will wait on each other (see benchmarks/results/re_busy.md); "
            f"fewer workers or --threads 1 keeps every thread on a core")


def busy_hint(threads: int, *, cores: int | None = None, load: float | None = None) -> str | None:
    """A one-line hint when a run is about to use ``threads`` > 1 torch threads on a machine whose
    1-minute load average already fills its usable cores: next to other busy processes a 2-thread
    PCNN epoch loses several times its fair share of the cores with OpenMP's default wait policy,
    less with ``OMP_WAIT_POLICY=PASSIVE``, least at 1 thread (``benchmarks/results/re_busy.md``
    measures it). A hint, not a default: the thread
    count is left as asked, so a seed gives the same numbers whatever the machine's load."""
    cores = cores or usable_cores()
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:     # pragma: no cover - not on Linux
            return None
    if threads <= 1 or load < cores:
        return None
    policy = os.environ.get("OMP_WAIT_POLICY", "").upper()
    return (f"the machine is busy (1-minute load {load:.1f} on {cores} usable core(s)): {threads} torch threads "
            f"wait on each other when one is descheduled; --threads 1"
            + ("" if policy == "PASSIVE" else " (or OMP_WAIT_POLICY=PASSIVE)")
            + " degrades more gracefully (benchmarks/results/re_busy.md)")
