"""Encoder × selector × seed grids: train (resumably), evaluate, aggregate, plot.

Layout of a grid folder ``OUT``::

    OUT/plan.json                             the pre-registered plan (wgbstudies.plan), written
                                              before the first run; a folder whose plan differs is refused
    OUT/runs/<encoder>-<selector>-seed<k>/   one run directory per combination (see relext.training.train)
    OUT/runs/<...>/eval.json, eval.md         its evaluation (relext.evaluation.evaluate.evaluate_run)
    OUT/timing.json                           seconds spent training / evaluating each run
    OUT/results.json, OUT/results.md          the aggregate table (means, seed intervals, and the
                                              seed x entity design report with the claims' verdicts)
    OUT/f1_by_gender_<variant>.png, OUT/gaps_<variant>.png

Rerunning the same command resumes: runs with a ``DONE`` marker are not trained again, the
others are handed to the trainer, which resumes from its checkpoint; evaluations already
written for a finished run are reused. The aggregate files are rewritten after every run, so
a grid stopped half-way still leaves a valid (partial) table.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from wgbcore.atomicio import atomic_write_json
# the summary of the finished runs lives in wgbstudies.grid_summary; its names are importable from here too
from wgbstudies.grid_summary import (aggregate, apply_design_flags, collect, design_runs,  # noqa: F401
                                     findings, finished_runs, run_metrics, write_summary)

log = logging.getLogger(__name__)

TrainFn = Callable[[Any, Path], Any]


@dataclass
class GridConfig:
    encoders: list[str]
    selectors: list[str]
    seeds: list[int]
    epochs: int | None = None
    #: extra TrainConfig fields applied to every run (e.g. {"word_dim": 50})
    train_overrides: dict = field(default_factory=dict)
    threshold_mode: str = "global"
    n_resamples: int = 1000
    confidence: float = 0.95
    bootstrap_seed: int = 0
    #: where the run directories live (default OUT/runs); keep big checkpoints out of results/
    runs_dir: str | None = None
    #: encoder -> its own seeds (a subset design: e.g. 10 seeds for the main arms, 5 for the rest);
    #: encoders not named use ``seeds``
    seeds_by_encoder: dict = field(default_factory=dict)
    #: person-level cross-fitting (relext.protocols.crossfit): None = the test protocol (one run per seed);
    #: K = one run per seed and fold, each predicting its held-out fold's persons
    folds: int | None = None
    fold_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("encoders", "selectors", "seeds"):
            values = list(getattr(self, name))
            if not values:
                raise ValueError(f"grid needs at least one of {name}")
            if len(set(values)) != len(values):
                raise ValueError(f"duplicate {name}: {values}")
            setattr(self, name, values)
        unknown = sorted(set(self.seeds_by_encoder) - set(self.encoders))
        if unknown:
            raise ValueError(f"seeds_by_encoder names encoder(s) not in the grid: {unknown}")
        for enc, seeds in self.seeds_by_encoder.items():
            if not seeds or len(set(seeds)) != len(seeds):
                raise ValueError(f"seeds_by_encoder[{enc!r}]: expected distinct seeds, got {seeds}")
        self.seeds_by_encoder = {k: list(v) for k, v in self.seeds_by_encoder.items()}
        if self.folds is not None:
            from relext.protocols.crossfit import FoldSpec

            FoldSpec(folds=self.folds, fold_seed=self.fold_seed)

    @property
    def protocol(self) -> str:
        return "test" if self.folds is None else "crossfit"

    def fold_list(self) -> list[int | None]:
        return [None] if self.folds is None else list(range(self.folds))

    def fold_overrides(self, run: "GridRun") -> dict:
        """The TrainConfig fields that make ``run`` a fold run ({} under the test protocol)."""
        if run.fold is None:
            return {}
        return {"folds": self.folds, "fold": run.fold, "fold_seed": self.fold_seed}

    def seeds_of(self, encoder: str) -> list[int]:
        return self.seeds_by_encoder.get(encoder, self.seeds)

    def runs(self) -> list["GridRun"]:
        """Seed-major order: every combination with the first seed before any second seed, so
        a grid stopped early still covers all combinations. With ``seeds_by_encoder``, the
        encoders with the most seeds come first (seed-major among themselves), then the others:
        the main arms of a study reach their seed count before the secondary arms start."""
        most = max(len(self.seeds_of(e)) for e in self.encoders)
        tiers = [[e for e in self.encoders if (len(self.seeds_of(e)) == most) == first] for first in (True, False)]
        out = []
        for encs in tiers:
            seeds = sorted({k for e in encs for k in self.seeds_of(e)}, key=self._seed_rank)
            out += [GridRun(e, s, k, f) for k in seeds for e in encs if k in self.seeds_of(e)
                    for s in self.selectors for f in self.fold_list()]
        return out

    def _seed_rank(self, seed: int) -> tuple[int, int]:
        order = self.seeds + [k for e in self.encoders for k in self.seeds_of(e) if k not in self.seeds]
        return (order.index(seed), seed)

    def to_dict(self) -> dict:
        return asdict(self)

    def run_dir(self, out: str | Path, run: "GridRun") -> Path:
        return (Path(self.runs_dir) if self.runs_dir else Path(out) / "runs") / run.name


@dataclass(frozen=True)
class GridRun:
    encoder: str
    selector: str
    seed: int
    fold: int | None = None

    @property
    def name(self) -> str:
        suffix = "" if self.fold is None else f"-fold{self.fold}"
        return f"{self.encoder}-{self.selector}-seed{self.seed}{suffix}"


def _default_make_config(*, encoder: str, selector: str, seed: int, epochs: int | None, **overrides):
    from relext.training.train import TrainConfig

    kwargs = dict(encoder=encoder, selector=selector, seed=seed, **overrides)
    if epochs is not None:
        kwargs["epochs"] = epochs
    return TrainConfig(**kwargs)


def _default_train(config, run_dir: Path):
    from relext.training.train import train

    return train(config, run_dir, progress=True)


class _Timing:
    """``OUT/timing.json``: checked against the sha256 recorded when it was last saved (an edited
    file is refused, naming it), read as JSON with errors naming it."""

    def __init__(self, path: Path):
        from wgbcore.fileio import reading
        from wgbcore.provenance import output_status

        self.path = path
        self.data = {"runs": {}, "invocations": []}
        if path.exists():
            output_status(path)
            with reading(path, "study timing (timing.json)"):
                self.data = json.loads(path.read_text(encoding="utf-8"))

    def add_run(self, name: str, key: str, seconds: float) -> None:
        rec = self.data["runs"].setdefault(name, {})
        rec[key] = rec.get(key, 0.0) + seconds
        self.save()

    def note_run(self, name: str, **fields) -> None:
        """Where and when a run trained (its worker's host, the time it finished)."""
        self.data["runs"].setdefault(name, {}).update({k: v for k, v in fields.items() if v is not None})

    def save(self) -> None:
        from wgbcore.provenance import record_outputs

        atomic_write_json(self.path, self.data)
        record_outputs([self.path])


def run_grid(
    config: GridConfig,
    out: str | Path,
    *,
    train_fn: TrainFn | None = None,
    make_config: Callable[..., Any] | None = None,
    predict_fn: Callable | None = None,
    dataset=None,
    progress: bool = True,
    keep_going: bool = True,
    plots: bool = True,
    train: bool = True,
    design: bool = True,
    executor=None,
    dataset_loader: Callable[[], Any] | None = None,
    amend_plan: str | None = None,
) -> dict:
    """Train every combination that is not DONE, evaluate, and write the aggregate results.

    ``train_fn(train_config, run_dir)`` trains (or resumes) one run; ``make_config(encoder=,
    selector=, seed=, epochs=, **train_overrides)`` builds its config. Both default to
    :mod:`relext.training.train`. With ``train=False`` unfinished runs are left alone (finished ones
    are evaluated and summarised). With ``design`` the final summary carries the seed x entity
    design report (combined intervals, corrected flags, the paper's claims as verdicts). Returns the summary written to ``results.json``.

    The runs go to ``executor`` (a :class:`wgbcore.executor.ExecutorConfig`; default serial): one
    task per run directory (:func:`wgbstudies.grid_exec.run_one`), a failed run reported with its
    one-line error and ``OUT/logs/<run>.log`` while the others go on. Executors other than serial
    re-load the data in each worker: ``dataset_loader`` (a picklable function returning the
    DatasetDict) instead of an in-memory ``dataset``.

    With ``design`` the grid is pre-registered: ``OUT/plan.json`` (:mod:`wgbstudies.plan`) is
    written before the first run, and a folder whose plan differs is refused unless ``amend_plan``
    says why it changes.
    """
    from relext.protocols.crossfit import check_fold_plans
    from wgbstudies.grid_exec import (check_overrides, checked_configs, eval_current, eval_settings,
                                  refuse_other_finished_runs, run_one, stored_problem)
    from wgbcore.executor import ExecutorConfig, Task, run_tasks

    out = Path(out)
    executor = executor or ExecutorConfig()
    make_config = make_config or _default_make_config
    data = dataset if dataset is not None else dataset_loader
    if executor.kind != "serial" and dataset is not None:
        raise ValueError(f"the {executor.kind} executor re-loads the data in each worker: give it by its "
                         "path (the config's dataset, or dataset_loader), not as an in-memory dataset")
    check_overrides(config.train_overrides)
    runs = config.runs()  # every run's config and the fold plan checked first: before grid.json or any run
    train_configs = checked_configs(runs, lambda r: make_config(
        encoder=r.encoder, selector=r.selector, seed=r.seed, epochs=config.epochs, **config.train_overrides,
        **config.fold_overrides(r)))
    check_fold_plans(train_configs.values(), dataset if dataset is not None else dataset_loader)
    refuse_other_finished_runs({r.name: config.run_dir(out, r) for r in runs}, train_configs)
    if design:   # a grid that decides claims is pre-registered (a study on the grid registers its own plan)
        from wgbstudies.plan import grid_plan, register

        register(out, grid_plan(config), runs_finished=sum((config.run_dir(out, r) / "DONE").exists() for r in runs),
                 n_runs=len(runs), amend=amend_plan)
    out.mkdir(parents=True, exist_ok=True)
    timing = _Timing(out / "timing.json")
    started = time.time()
    invocation = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": 0.0, "host": socket.gethostname(),
                  "cpu_count": os.cpu_count(), "loadavg_start": [round(x, 2) for x in os.getloadavg()],
                  **executor.describe()}
    timing.data["invocations"].append(invocation)
    atomic_write_json(out / "grid.json", config.to_dict())
    train_fn = train_fn or (_default_train if data is None else None)
    settings = eval_settings(config)
    tasks, skipped = [], 0
    for r in runs:
        run_dir = config.run_dir(out, r)
        done = (run_dir / "DONE").exists()
        if (not done and not train) or (done and eval_current(run_dir, settings)):
            skipped += 1
            continue
        problem = stored_problem(run_dir) if done else None
        if problem:   # computed again, and said: never a silent replacement of a stored result
            log.warning("%s; evaluating %s again", problem, r.name)
        tasks.append(Task(r.name, str(run_dir), run_one, marker=None, log=str(out / "logs" / f"{r.name}.log"),
                          args=(train_fn, train_configs[r.name], str(run_dir), settings, predict_fn, data)))
    failed: dict[str, str] = {}
    logs: dict[str, str] = {}
    by_name = {r.name: r for r in runs}

    def completes_seed(name: str) -> bool:
        """Did this run finish its (combination, seed): every fold of it done?"""
        r = by_name.get(name)
        return r is not None and all((config.run_dir(out, x) / "DONE").exists() for x in runs
                                     if (x.encoder, x.selector, x.seed) == (r.encoder, r.selector, r.seed))

    def on_result(o) -> None:
        v = o.value or {}
        for key in ("train_seconds", "eval_seconds"):
            if v.get(key) is not None:
                timing.add_run(o.key, key, v[key])
        if o.status == "failed":
            failed[o.key], logs[o.key] = o.error, o.log
        trained = v.get("train_seconds") is not None
        if trained:
            timing.note_run(o.key, ran_on=(o.worker or "").rsplit(":", 1)[0] or None,
                            finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"), wall_seconds=round(o.seconds or 0.0, 1))
        invocation["seconds"] = time.time() - started
        timing.save()
        if trained or not (out / "results.json").exists():
            # after a real training run the plots are cheap next to it: refresh them too; the
            # verdicts when it completes a seed (so a long grid stopped early has them for what finished)
            write_summary(config, out, timing=timing.data, failed=failed, logs=logs, plots=plots and trained,
                          design=design and trained and completes_seed(o.key))

    run_tasks(tasks, executor, on_result=on_result, progress=progress, desc="runs", already_done=skipped,
              fail_fast=not keep_going)
    invocation["seconds"] = time.time() - started
    timing.save()
    return write_summary(config, out, timing=timing.data, failed=failed, logs=logs, plots=plots, design=design)


def _default_train_with(config, run_dir, dataset):
    from relext.training.train import train

    return train(config, run_dir, dataset=dataset, progress=True)


def _eval_current(run_dir: Path, config: GridConfig) -> bool:
    """Is run_dir/eval.json present, newer than DONE, and made with the grid's eval settings?"""
    from wgbstudies.grid_exec import eval_current, eval_settings

    return eval_current(run_dir, eval_settings(config))


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------
