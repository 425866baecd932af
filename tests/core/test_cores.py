"""wgbcore.cores: the usable cores (affinity, cgroup quota) and a thread plan that never exceeds them."""
from __future__ import annotations

import pytest

from wgbcore.cores import cgroup_cpu_limit, oversubscribed, thread_plan, usable_cores


@pytest.mark.parametrize("text, expected", [
    ("max 100000\n", None),
    ("150000 100000\n", 1.5),
    ("200000 100000\n", 2.0),
    ("garbage\n", None),
])
def test_cgroup_v2_quota(tmp_path, text, expected):
    f = tmp_path / "cpu.max"
    f.write_text(text)
    missing = (tmp_path / "no1", tmp_path / "no2")
    assert cgroup_cpu_limit(v2=f, v1=missing) == expected


def test_cgroup_v1_quota_when_no_v2(tmp_path):
    q, p = tmp_path / "q", tmp_path / "p"
    q.write_text("50000\n")
    p.write_text("100000\n")
    assert cgroup_cpu_limit(v2=tmp_path / "absent", v1=(q, p)) == 0.5
    q.write_text("-1\n")                     # v1's "no limit"
    assert cgroup_cpu_limit(v2=tmp_path / "absent", v1=(q, p)) is None


@pytest.mark.parametrize("affinity, limit, expected", [
    (range(16), None, 16),          # no quota: the affinity set
    (range(16), 1.5, 2),            # quota 1.5 cores: rounded up
    (range(16), 0.2, 1),            # never below 1
    ({0, 3}, 8.0, 2),               # taskset to two cores under a larger quota
    ((), None, 1),
])
def test_usable_cores(affinity, limit, expected):
    assert usable_cores(affinity=affinity, limit=limit) == expected


@pytest.mark.parametrize("workers, threads, cores, expected", [
    (None, None, 4, (4, 1)),
    (None, 2, 4, (2, 2)),
    (None, 8, 4, (1, 8)),           # threads given above the cores: one worker (warned separately)
    (2, None, 4, (2, 2)),
    (3, None, 2, (3, 1)),
    (2, 3, 4, (2, 3)),              # both given: as given
])
def test_thread_plan(workers, threads, cores, expected):
    assert thread_plan(workers, threads, cores) == expected


def test_defaults_never_exceed_the_cores():
    for cores in range(1, 17):
        for given in [None, *range(1, 9)]:
            w, t = thread_plan(None, given, cores)
            assert w * t <= max(cores, given or 1)
            w, t = thread_plan(given, None, cores)
            assert w * t <= max(cores, given or 1)


def test_oversubscribed_says_so():
    assert oversubscribed(2, 1, 2) is None
    msg = oversubscribed(2, 2, 2)
    assert msg and "4 threads on 2 usable core" in msg


def test_executor_defaults_fit_the_usable_cores(monkeypatch):
    import wgbcore.executor as ex

    monkeypatch.setattr(ex, "usable_cores", lambda: 3)
    cfg = ex.ExecutorConfig(kind="processes")
    assert (cfg.n_workers(), cfg.n_threads()) == (3, 1) and cfg.oversubscription() is None
    cfg = ex.ExecutorConfig(kind="processes", threads_per_run=2)
    assert (cfg.n_workers(), cfg.n_threads()) == (1, 2) and cfg.oversubscription() is None


def test_executor_warns_when_asked_for_more_threads_than_cores(monkeypatch, capsys, tmp_path):
    import wgbcore.cores as cores
    import wgbcore.executor as ex

    monkeypatch.setattr(ex, "usable_cores", lambda: 2)
    monkeypatch.setattr(cores, "usable_cores", lambda: 2)
    cfg = ex.ExecutorConfig(kind="processes", workers=2, threads_per_run=2)
    assert "4 threads on 2 usable core" in cfg.oversubscription()
    assert ex.ExecutorConfig(kind="serial").oversubscription() is None     # torch's own threads


@pytest.mark.parametrize("threads, load, policy, expect", [
    (1, 9.0, None, None),                 # one thread: nothing to say
    (2, 1.0, None, None),                 # an idle machine
    (2, 2.5, None, "OMP_WAIT_POLICY=PASSIVE"),
    (2, 2.5, "PASSIVE", "--threads 1"),   # the policy already set: not suggested again
])
def test_busy_hint(monkeypatch, threads, load, policy, expect):
    from wgbcore.cores import busy_hint

    if policy:
        monkeypatch.setenv("OMP_WAIT_POLICY", policy)
    else:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    hint = busy_hint(threads, cores=2, load=load)
    if expect is None:
        assert hint is None
    else:
        assert expect in hint and "re_busy.md" in hint
        if policy:
            assert "OMP_WAIT_POLICY" not in hint
