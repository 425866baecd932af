"""The run executor's options, shared by every command that trains many runs
(``wgb re grid``, ``wgb re debias-grid``): ``@executor_options`` adds them and hands the command
one ``executor`` argument (a :class:`wgbcore.executor.ExecutorConfig`, checked before any work)."""
from __future__ import annotations

import functools

import click

_OPTIONS = [
    click.option("--executor", "executor_kind", type=click.Choice(["serial", "processes", "dask"]), default="serial",
                 show_default=True, help="Where the runs train: one after another here, in local worker "
                 "processes, or on Dask (a local cluster, or --scheduler)."),
    click.option("--workers", type=click.IntRange(min=1), default=None,
                 help="Worker processes (processes, dask) [default: cores / --threads-per-run; with "
                      "--runs-per-gpu: GPUs x runs per GPU]."),
    click.option("--threads-per-run", type=click.IntRange(min=1), default=None,
                 help="torch threads of each run [default: serial: torch's own; else cores / workers]. "
                      "Numbers are byte-identical across executors at the same value."),
    click.option("--scheduler", default=None, metavar="ADDRESS",
                 help="An existing Dask cluster: scheduler address (tcp://host:8786) or scheduler JSON "
                      "file (needs --executor dask; its workers must see OUT and the runs folder)."),
    click.option("--retries", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Times a failing run is tried again before it is reported failed."),
    click.option("--runs-per-gpu", type=click.IntRange(min=1), default=None,
                 help="Runs sharing one GPU: each local worker sees one GPU (CUDA_VISIBLE_DEVICES); "
                      "sets --device cuda unless given."),
]


def executor_options(f):
    """Add the executor options to a click command; it receives ``executor`` instead."""

    @functools.wraps(f)
    def wrapper(*args, **kw):
        from wgbcore.executor import ExecutorConfig, reach_scheduler

        opts = {name: kw.pop(name) for name in ("executor_kind", "workers", "threads_per_run", "scheduler",
                                                 "retries", "runs_per_gpu")}
        threads = kw.get("threads")
        if threads is not None and opts["threads_per_run"] is not None and threads != opts["threads_per_run"]:
            raise click.UsageError(f"--threads {threads} and --threads-per-run {opts['threads_per_run']} both set "
                                   "each run's torch threads: give one")
        try:
            cfg = ExecutorConfig(kind=opts.pop("executor_kind"), **opts)
            cfg.gpu_list()  # --runs-per-gpu without a visible GPU fails here, before any work
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        if cfg.scheduler:   # a scheduler that does not answer: refused before the command writes anything
            try:
                reach_scheduler(cfg.scheduler, cfg.connect_timeout)
            except (ValueError, ConnectionError) as exc:
                raise click.ClickException(str(exc)) from None
        return f(*args, executor=cfg, **kw)

    for opt in reversed(_OPTIONS):
        wrapper = opt(wrapper)
    return wrapper


def run_device(executor, device: str | None) -> str | None:
    """The training device of the runs: cuda when runs share GPUs and no --device was given."""
    return "cuda" if device is None and executor.runs_per_gpu else device
