"""Encoder × selector × seed grids: train (resumably), evaluate, aggregate, plot.

Layout of a grid folder ``OUT``::

    OUT/plan.json                             the pre-registered plan (relext.studies.plan), written
                                              before the first run; a folder whose plan differs is refused
    OUT/runs/<encoder>-<selector>-seed<k>/   one run directory per combination (see relext.train)
    OUT/runs/<...>/eval.json, eval.md         its evaluation (relext.evaluate.evaluate_run)
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
from typing import Any, Callable, Sequence

from relext.evaluate import ENTITY_COUNTS, EvalResult, load_eval, package_version
from relext.fairness import GAP_METRICS, MICRO, seed_interval
from relext.report import grid_document
from wgbcore.atomicio import atomic_write_json
from wikigenderbias.schema import POSITIVE_RELATIONS

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
    #: person-level cross-fitting (relext.crossfit): None = the test protocol (one run per seed);
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
            from relext.crossfit import FoldSpec

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
    from relext.train import TrainConfig

    kwargs = dict(encoder=encoder, selector=selector, seed=seed, **overrides)
    if epochs is not None:
        kwargs["epochs"] = epochs
    return TrainConfig(**kwargs)


def _default_train(config, run_dir: Path):
    from relext.train import train

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
    :mod:`relext.train`. With ``train=False`` unfinished runs are left alone (finished ones
    are evaluated and summarised). With ``design`` the final summary carries the seed x entity
    design report (combined intervals, corrected flags, the paper's claims as verdicts). Returns the summary written to ``results.json``.

    The runs go to ``executor`` (a :class:`wgbcore.executor.ExecutorConfig`; default serial): one
    task per run directory (:func:`relext.grid_exec.run_one`), a failed run reported with its
    one-line error and ``OUT/logs/<run>.log`` while the others go on. Executors other than serial
    re-load the data in each worker: ``dataset_loader`` (a picklable function returning the
    DatasetDict) instead of an in-memory ``dataset``.

    With ``design`` the grid is pre-registered: ``OUT/plan.json`` (:mod:`relext.studies.plan`) is
    written before the first run, and a folder whose plan differs is refused unless ``amend_plan``
    says why it changes.
    """
    from relext.crossfit import check_fold_plans
    from relext.grid_exec import (check_overrides, checked_configs, eval_current, eval_settings,
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
        from relext.studies.plan import grid_plan, register

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
    from relext.train import train

    return train(config, run_dir, dataset=dataset, progress=True)


def _eval_current(run_dir: Path, config: GridConfig) -> bool:
    """Is run_dir/eval.json present, newer than DONE, and made with the grid's eval settings?"""
    from relext.grid_exec import eval_current, eval_settings

    return eval_current(run_dir, eval_settings(config))


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------
def _si(values: Sequence[float], confidence: float) -> dict:
    """Seed mean and Student-t interval (seed variance only). It never flags by itself:
    ``flagged`` is set from the combined seed x entity design (:func:`apply_design_flags`)."""
    s = seed_interval(values, confidence)
    return {**asdict(s), "flagged": False}


def aggregate(results: dict[tuple[str, str], list[EvalResult]], confidence: float = 0.95) -> dict:
    """Per variant, per (encoder, selector): seed means and t-intervals of every figure."""
    variants: dict[str, list[dict]] = {}
    for (enc, sel), evals in results.items():
        if not evals:
            continue
        for variant in evals[0].scores:
            if not all(variant in e.scores for e in evals):
                continue
            sc = [e.scores[variant] for e in evals]
            combo: dict = {"encoder": enc, "selector": sel, "n_seeds": len(evals),
                           "seeds": [e.seed for e in evals]}
            combo["micro_f1"] = {s: _si([x[s].micro_f1 for x in sc], confidence) for s in sc[0]}
            combo["macro_f1"] = {s: _si([x[s].macro_f1 for x in sc], confidence) for s in sc[0]}
            combo["pr_auc"] = {s: _si([x[s].pr_auc for x in sc], confidence) for s in sc[0]}
            combo["f1"] = {
                rel: {
                    "male": _si([x["male_test"].relation(rel).f1 for x in sc], confidence),
                    "female": _si([x["female_test"].relation(rel).f1 for x in sc], confidence),
                    "pooled": _si([x["pooled"].relation(rel).f1 for x in sc], confidence),
                }
                for rel in POSITIVE_RELATIONS
            }
            combo["gaps"] = {}
            for metric in GAP_METRICS:
                per_rel = {}
                for rel in (*POSITIVE_RELATIONS, MICRO):
                    gs = [g for e in evals for g in e.gaps[variant]
                          if g.relation == rel and g.metric == metric]
                    if not gs:
                        continue
                    d = _si([g.gap for g in gs], confidence)
                    d["bootstrap_flagged"] = sum(g.flagged for g in gs)
                    d["bootstrap_intervals"] = [[g.ci_low, g.ci_high] for g in gs]
                    per_rel[rel] = d
                combo["gaps"][metric] = per_rel
            variants.setdefault(variant, []).append(combo)
    return variants


def findings(variants: dict) -> list[str]:
    """Statements comparing the grid with the paper's findings, computed from the numbers."""
    combos = variants.get("argmax") or next(iter(variants.values()), [])
    if not combos:
        return []
    lines = []
    gaps = {(c["encoder"], c["selector"]): c["gaps"]["f1"] for c in combos}
    n = len(gaps)
    largest = {k: max(POSITIVE_RELATIONS, key=lambda r: abs(g[r]["mean"])) for k, g in gaps.items()}
    n_sp = sum(v == "spouse" for v in largest.values())
    n_male = sum(g["spouse"]["mean"] > 0 for g in gaps.values())
    n_flag = sum(g["spouse"]["flagged"] for g in gaps.values())
    n_multi = sum("combined" in g["spouse"] for g in gaps.values())
    n_boot = sum(g["spouse"]["bootstrap_flagged"] for g in gaps.values())
    n_runs = sum(g["spouse"]["n"] for g in gaps.values())
    lines.append(
        f"Spouse has the largest |F1 gap| in {n_sp} of {n} encoder/selector combinations "
        f"(largest elsewhere: {sorted({v for v in largest.values() if v != 'spouse'}) or 'none'}); "
        f"the spouse gap favours male articles (mean > 0) in {n_male} of {n}; its combined seed x entity "
        f"interval excludes 0 (Benjamini-Hochberg) in {n_flag} of the {n_multi} combinations with per-entity "
        f"counts, and a single run's entity-bootstrap interval in {n_boot} of {n_runs} runs. "
        "Paper: spouse gap largest, favouring men.")
    mean_abs = {r: sum(abs(g[r]["mean"]) for g in gaps.values()) / n for r in POSITIVE_RELATIONS}
    n_bd = sum(g["birthDate"]["bootstrap_flagged"] for g in gaps.values())
    order = sorted(POSITIVE_RELATIONS, key=lambda r: mean_abs[r])
    lines.append(
        "Mean |F1 gap| over combinations: " + ", ".join(f"{r} {mean_abs[r]:.3f}" for r in order)
        + f"; birthDate's entity-bootstrap interval excludes 0 in {n_bd} of {n_runs} runs. "
        "Paper: birthDate shows very little gap.")
    eo = {(c["encoder"], c["selector"]): c["gaps"]["recall"] for c in combos}
    eo_largest = [max(POSITIVE_RELATIONS, key=lambda r: abs(g[r]["mean"])) for g in eo.values()]
    counts = {r: eo_largest.count(r) for r in POSITIVE_RELATIONS if eo_largest.count(r)}
    lines.append(
        "Largest |equality-of-opportunity gap| (TPR male − female) per combination: "
        + ", ".join(f"{r} in {k}" for r, k in sorted(counts.items(), key=lambda kv: -kv[1]))
        + f" of {n}. Paper: birthDate satisfies equality of opportunity the least in all "
        "combinations but RNN+attention (spouse).")
    encs = sorted({c["encoder"] for c in combos})
    pairs = [(e, gaps.get((e, "average")), gaps.get((e, "attention"))) for e in encs]
    pairs = [(e, a, t) for e, a, t in pairs if a is not None and t is not None]
    if pairs:
        micro = {(c["encoder"], c["selector"]): c["micro_f1"]["pooled"]["mean"] for c in combos}
        smaller = [e for e, a, t in pairs if abs(a["spouse"]["mean"]) < abs(t["spouse"]["mean"])]
        better = [e for e, _, _ in pairs if micro[(e, "average")] > micro[(e, "attention")]]
        lines.append(
            f"Average vs attention: the average selector has the smaller |spouse F1 gap| for "
            f"{len(smaller)} of {len(pairs)} encoders ({', '.join(smaller) or 'none'}) and the "
            f"higher pooled micro F1 for {len(better)} of {len(pairs)} ({', '.join(better) or 'none'}). "
            "Paper: average selectors show less bias for every encoder but PCNN and score "
            "slightly higher across the board.")
    return lines


def collect(config: GridConfig, out: Path) -> dict[tuple[str, str], list[EvalResult]]:
    """Per-run evaluations of finished runs by (encoder, selector). Cross-fitted grids have none:
    a fold run sees a fifth of the persons, so their numbers come from the design layer only."""
    from relext.grid_exec import stored_problem

    results: dict[tuple[str, str], list[EvalResult]] = {}
    if config.folds is not None:
        return results
    for r in config.runs():
        run_dir = config.run_dir(out, r)
        # a changed or unreadable eval.json is left out here and named by write_summary
        if (run_dir / "DONE").exists() and stored_problem(run_dir) is None:
            results.setdefault((r.encoder, r.selector), []).append(load_eval(run_dir))
    return results


def run_metrics(run_dir: Path) -> dict:
    """Training facts of a finished run from its metrics.json (epochs, best epoch, epoch time)."""
    path = run_dir / "metrics.json"
    if not path.exists():
        return {}
    try:
        m = json.loads(path.read_text())
    except json.JSONDecodeError:
        return {}
    epochs = m.get("epochs") or []
    times = [e["train_seconds"] for e in epochs if isinstance(e, dict) and "train_seconds" in e]
    return {"epochs_run": m.get("epochs_run"), "best_epoch": m.get("best_epoch"),
            "stopped_early": m.get("stopped_early"), "best_validation": m.get("best_score"),
            "mean_epoch_train_seconds": sum(times) / len(times) if times else None,
            "threads": m.get("threads"), "device": m.get("device_name") or m.get("device") or "cpu"}


def finished_runs(config: GridConfig, out: Path, key=lambda r: (f"{r.encoder}-{r.selector}", r.seed)) -> dict:
    """``key(run)`` -> run directory (test protocol) or the list of its K fold run directories
    (crossfit: only seeds whose every fold is finished), for finished runs with per-entity counts."""
    folds: dict = {}
    for r in config.runs():
        d = config.run_dir(out, r)
        if (d / "DONE").exists() and (d / ENTITY_COUNTS).exists() and (d / "eval.json").exists():
            folds.setdefault(key(r), []).append(d)
    if config.folds is None:
        return {k: v[0] for k, v in folds.items()}
    return {k: v for k, v in folds.items() if len(v) == config.folds}


def design_runs(config: GridConfig, out: Path) -> dict[tuple[str, int], Path | list[Path]]:
    """(``<encoder>-<selector>``, seed) -> run directory (or, cross-fitted, its fold run
    directories), for finished runs with per-entity counts."""
    return finished_runs(config, out)


_METRIC_NAMES = {"f1": "f1_gap", "recall": "eo_gap"}


def apply_design_flags(variants: dict, report: dict) -> None:
    """Give every aggregated gap its combined (seed x entity) interval and BH-corrected flag."""
    for rule, combos in variants.items():
        rows = {(g["variant"], g["metric"], g["relation"]): g for g in report.get("gaps", {}).get(rule, [])}
        for c in combos:
            for metric, per_rel in c["gaps"].items():
                for rel, d in per_rel.items():
                    g = rows.get((f"{c['encoder']}-{c['selector']}", _METRIC_NAMES[metric], rel))
                    if g is None or g["n_seeds"] != d["n"]:
                        continue
                    d["combined"] = {k: g[k] for k in ("value", "ci", "ci_seed", "ci_entity", "p_value",
                                                       "p_adjusted", "degenerate", "n_seeds")}
                    d["flagged"] = g["flagged"]


def write_summary(config: GridConfig, out: str | Path, *, timing: dict | None = None,
                  failed: dict | None = None, plots: bool = True, design: bool = True,
                  logs: dict | None = None) -> dict:
    """Aggregate the evaluated runs of the grid and write results.json / results.md / plots.
    Runs the verdicts lack (unfinished, failed, unreadable count files) are named, never dropped."""
    from relext.grid_exec import missing_line, split_readable
    from relext.run_sets import check_run_folders

    out = Path(out)
    results = collect(config, out)
    variants = aggregate(results, config.confidence)
    report = {}
    usable, unreadable = split_readable(design_runs(config, out))
    check_run_folders(usable)   # distinct, complete, one fold seed (relext.run_sets)
    in_design = {str(d) for v in usable.values() for d in (v if isinstance(v, (list, tuple)) else [v])}
    missing = [r.name for r in config.runs() if str(config.run_dir(out, r)) not in in_design]
    if design:
        from relext.studies.claims import grid_design_report

        from relext.studies.plan import apply_status, read_plan, status
        from relext.studies.recheck import stamp

        report = grid_design_report(usable, seed=config.bootstrap_seed)
        apply_design_flags(variants, report)
        if report:
            report["missing_runs"] = missing
            # the look against the plan (interim: no verdict), then what it was computed from
            apply_status(report, status(read_plan(out), report.get("seeds") or {}))
            stamp(report, usable, out)
    runs_done = sorted(r.name for r in config.runs() if (config.run_dir(out, r) / "DONE").exists())
    names = {r.name: r for r in config.runs()}
    timing = timing or {}
    per_run = timing.get("runs", {})
    run_info = {name: run_metrics(config.run_dir(out, names[name])) for name in runs_done}
    summary = {
        "meta": {**config.to_dict(), "version": package_version(),
                 "n_runs": len(config.runs()), "runs_done": runs_done,
                 "runs_evaluated": (sum(len(v) for v in results.values()) if config.folds is None else  # fold runs
                                    sum((config.run_dir(out, names[n]) / "eval.json").exists() for n in runs_done)),
                 "protocol": config.protocol,
                 "runs_failed": failed or {}, "runs_failed_logs": logs or {},
                 "runs_missing": missing, "runs_unreadable": unreadable},
        "timing": {
            "n_runs": len(per_run),
            "train_seconds_total": sum(v.get("train_seconds", 0.0) for v in per_run.values()),
            "eval_seconds_total": sum(v.get("eval_seconds", 0.0) for v in per_run.values()),
            "wall_seconds_total": sum(i.get("seconds", 0.0) for i in timing.get("invocations", [])),
            "per_run": per_run,
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "cpu_count": os.cpu_count(),
            "devices": sorted({str(v.get("device") or "cpu") for v in run_info.values() if v}),
            "notes": [i["note"] for i in timing.get("invocations", []) if i.get("note")],
        },
        "runs": run_info,
        "variants": variants,
        "findings": findings(variants) + [x for x in [missing_line(missing, len(config.runs()), unreadable)] if x],
        "design_report": report,
    }
    atomic_write_json(out / "results.json", summary)
    if plots and variants:
        from relext.plots import plot_grid

        plot_grid(summary, out)
    grid_document(summary, images=bool(plots and variants)).write(out, "results")
    return summary
