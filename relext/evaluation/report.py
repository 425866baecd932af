"""Markdown and JSON renderings of evaluation and grid results; atomic writes."""
from __future__ import annotations

import math

from wikigenderbias.schema import POSITIVE_RELATIONS


def timing_where(t: dict) -> str:
    """``"; trained on ...; note"`` from a grid's timing summary (empty for plain CPU runs)."""
    devices = [d for d in t.get("devices") or [] if d != "cpu"]
    parts = ([f"trained on {', '.join(devices)}"] if devices else []) + list(t.get("notes") or [])
    return "".join(f"; {p}" for p in parts)


def fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def fmt_signed(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:+.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------------
def eval_markdown(result) -> str:
    """Markdown report of an :class:`relext.evaluation.evaluate.EvalResult`."""
    cfg = result.config
    out = [f"# Evaluation of `{result.run_dir}`", ""]
    desc = ", ".join(f"{k}={cfg[k]}" for k in ("encoder", "selector", "seed", "epochs") if k in cfg)
    out += [f"Model: {desc or 'unknown config'}; wgb {result.version}.", ""]
    if result.thresholds is not None:
        ts = sorted({round(t, 4) for t in result.thresholds[1:] if math.isfinite(t)})
        out += [f"Threshold variant: {result.threshold_mode} threshold(s) {ts} chosen on the "
                "validation split, applied unchanged to the tests.", ""]
    b = result.bootstrap
    out += [f"Intervals: {b.get('confidence', 0.95):.0%} bootstrap percentile intervals over test "
            f"entities ({b.get('n_resamples')} resamples, seed {b.get('seed')}). "
            "**Bold** gaps have intervals that exclude 0.", ""]
    for variant, by_split in result.scores.items():
        out += [f"## Decision rule: {variant}", ""]
        rows = []
        for split, sc in by_split.items():
            rows.append([split, str(sc.n_bags)] + [fmt(sc.relation(r).f1) for r in POSITIVE_RELATIONS]
                        + [fmt(sc.micro_f1), fmt(sc.macro_f1), fmt(sc.pr_auc), fmt(sc.curve_max_f1)])
        out += [_table(["split", "bags", *[f"F1 {r}" for r in POSITIVE_RELATIONS], "micro F1",
                        "macro F1", "PR-AUC", "curve max F1"], rows), ""]
        rows = []
        for split, sc in by_split.items():
            for r in sc.relations:
                rows.append([split, r.relation, fmt(r.precision), fmt(r.recall), fmt(r.f1),
                             str(r.support), str(r.predicted)])
        out += ["<details><summary>precision / recall per relation</summary>", "",
                _table(["split", "relation", "P", "R", "F1", "gold", "predicted"], rows), "",
                "</details>", ""]
        rows = []
        for g in result.gaps.get(variant, []):
            gap = fmt_signed(g.gap)
            if g.flagged:
                gap = f"**{gap}**"
            rows.append([g.relation, "F1 gap" if g.metric == "f1" else "EO gap (TPR)",
                         fmt(g.male), fmt(g.female), gap,
                         f"[{fmt_signed(g.ci_low)}, {fmt_signed(g.ci_high)}]"])
        out += ["### Gender gaps (male − female)", "",
                _table(["relation", "metric", "male", "female", "gap", "interval"], rows), ""]
    return "\n".join(out)
