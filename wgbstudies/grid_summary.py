"""A grid's results from its finished runs: collected (each run's stored evaluation, checked),
aggregated per combination (seed means and intervals), the seed x entity design report with the
claims' verdicts, and the summary files ``results.json`` / ``.md`` / ``.html`` and plots. Used by
:func:`wgbstudies.grid.run_grid` after every run and by the studies that read a grid."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from dataclasses import asdict
from typing import Sequence

from relext.evaluation.evaluate import ENTITY_COUNTS, EvalResult, load_eval, package_version
from relext.evaluation.fairness import GAP_METRICS, MICRO, seed_interval
from wgbcore.atomicio import atomic_write_json
from wgbstudies.grid_report import grid_document
from wikigenderbias.schema import POSITIVE_RELATIONS

log = logging.getLogger("wgbstudies.grid")
#: ``config`` below is a :class:`wgbstudies.grid.GridConfig`


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


def collect(config, out: Path) -> dict[tuple[str, str], list[EvalResult]]:
    """Per-run evaluations of finished runs by (encoder, selector). Cross-fitted grids have none:
    a fold run sees a fifth of the persons, so their numbers come from the design layer only."""
    from wgbstudies.grid_exec import stored_problem

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


def finished_runs(config, out: Path, key=lambda r: (f"{r.encoder}-{r.selector}", r.seed)) -> dict:
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


def design_runs(config, out: Path) -> dict[tuple[str, int], Path | list[Path]]:
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


def write_summary(config, out: str | Path, *, timing: dict | None = None,
                  failed: dict | None = None, plots: bool = True, design: bool = True,
                  logs: dict | None = None) -> dict:
    """Aggregate the evaluated runs of the grid and write results.json / results.md / plots.
    Runs the verdicts lack (unfinished, failed, unreadable count files) are named, never dropped."""
    from wgbstudies.grid_exec import missing_line, split_readable
    from wgbstudies.parts import with_parts
    from relext.evaluation.run_sets import check_run_folders

    out = Path(out)
    results = collect(config, out)
    variants = aggregate(results, config.confidence)
    report = {}
    usable, unreadable = split_readable(design_runs(config, out))
    check_run_folders(usable)   # distinct, complete, one fold seed (relext.evaluation.run_sets)
    in_design = {str(d) for v in usable.values() for d in (v if isinstance(v, (list, tuple)) else [v])}
    missing = [r.name for r in config.runs() if str(config.run_dir(out, r)) not in in_design]
    if design:
        from wgbstudies.claims import grid_design_report

        from wgbstudies.plan import apply_status, read_plan, status
        from wgbstudies.recheck import stamp

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
    summary["timing"] = with_parts(summary["timing"], out)   # fold runs trained by OUT/parts/* elsewhere
    atomic_write_json(out / "results.json", summary)
    if plots and variants:
        from relext.evaluation.plots import plot_grid

        plot_grid(summary, out)
    grid_document(summary, images=bool(plots and variants)).write(out, "results")
    return summary
