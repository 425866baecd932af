"""Plots of evaluation and grid results (matplotlib, Agg backend, PNG files)."""
from __future__ import annotations

import math
from pathlib import Path

from wikigenderbias.schema import POSITIVE_RELATIONS

MALE_COLOR, FEMALE_COLOR = "#1f77b4", "#d62728"
FLAG_COLOR, PLAIN_COLOR = "#d62728", "#7f7f7f"


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _err(d: dict) -> tuple[float, float]:
    """(below, above) error bar lengths from a seed-interval dict; 0 when undefined."""
    m, lo, hi = d.get("mean"), d.get("ci_low"), d.get("ci_high")
    if lo is None or hi is None or not all(math.isfinite(x) for x in (m, lo, hi)):
        return 0.0, 0.0
    return _span(m, lo, hi)


def _span(v: float, lo: float, hi: float) -> tuple[float, float]:
    """(below, above) bar lengths of the interval [lo, hi] drawn at ``v``; a percentile interval may
    leave out its own point estimate (few resamples, a skewed statistic): that side is drawn as 0,
    never negative (matplotlib refuses negative lengths: the study failed after all its runs)."""
    return max(0.0, v - lo), max(0.0, hi - v)


def _save(fig, path: Path) -> Path:
    from wgbcore.atomicio import atomic_savefig

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return atomic_savefig(path, fig, dpi=120, bbox_inches="tight")


def plot_f1_by_gender(combos: list[dict], path: str | Path, *, title: str = "") -> Path:
    """Grouped bars: F1 per relation (one panel each), male vs female, per combination."""
    plt = _plt()
    labels = [f"{c['encoder']}-{c['selector']}" for c in combos]
    panel = max(4.2, 0.35 * len(combos) + 1.2)  # wide enough for one rotated label per combination
    fig, axes = plt.subplots(1, len(POSITIVE_RELATIONS), figsize=(panel * len(POSITIVE_RELATIONS), 4),
                             sharey=True)
    x = list(range(len(combos)))
    w = 0.38
    for ax, rel in zip(axes, POSITIVE_RELATIONS):
        for off, gender, color in ((-w / 2, "male", MALE_COLOR), (w / 2, "female", FEMALE_COLOR)):
            vals = [c["f1"][rel][gender]["mean"] for c in combos]
            errs = list(zip(*[_err(c["f1"][rel][gender]) for c in combos])) or [[], []]
            ax.bar([i + off for i in x], vals, w, yerr=errs, color=color, label=gender, capsize=2)
        ax.set_title(rel)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=7, rotation=60, ha="right", rotation_mode="anchor")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("F1 (mean over seeds, t-interval)")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # outside the bars
    if title:
        fig.suptitle(title)
    p = _save(fig, Path(path))
    plt.close(fig)
    return p


def plot_gaps(combos: list[dict], path: str | Path, *, title: str = "") -> Path:
    """F1 gap and EO gap per relation per combination, with seed intervals (flagged in red)."""
    plt = _plt()
    metrics = (("f1", "F1 gap (male − female)"), ("recall", "EO gap: TPR male − female"))
    fig, axes = plt.subplots(len(metrics), len(POSITIVE_RELATIONS),
                             figsize=(4.2 * len(POSITIVE_RELATIONS), 3.6 * len(metrics)),
                             sharey="row", squeeze=False)
    labels = [f"{c['encoder']}-{c['selector'][:3]}" for c in combos]
    for row, (metric, ylabel) in enumerate(metrics):
        for col, rel in enumerate(POSITIVE_RELATIONS):
            ax = axes[row][col]
            ax.axhline(0, color="black", lw=0.8)
            for i, c in enumerate(combos):
                d = c["gaps"][metric].get(rel)
                if d is None:
                    continue
                color = FLAG_COLOR if d.get("flagged") else PLAIN_COLOR
                lo, hi = _err(d)
                ax.errorbar([i - 0.1], [d["mean"]], yerr=[[lo], [hi]], fmt="o", color=color,
                            capsize=3, ms=6)
                boots = d.get("bootstrap_intervals") or [None] * len(d.get("values", []))
                for k, (v, b) in enumerate(zip(d.get("values", []), boots)):
                    x = i + 0.1 + 0.08 * k
                    bc = FLAG_COLOR if b and (b[0] > 0 or b[1] < 0) else PLAIN_COLOR
                    yerr = [[s] for s in _span(v, b[0], b[1])] if b and None not in b else None
                    ax.errorbar([x], [v], yerr=yerr, fmt=".", color=bc, alpha=0.6, ms=4,
                                elinewidth=0.8, capsize=0)
            ax.set_xlim(-0.6, len(combos) - 0.4)
            ax.set_xticks(range(len(combos)))
            ax.set_xticklabels(labels, rotation=60, fontsize=7, ha="right")
            ax.grid(axis="y", alpha=0.3)
            if row == 0:
                ax.set_title(rel)
            if col == 0:
                ax.set_ylabel(ylabel)
    fig.suptitle(title or "Gender gaps: big marker = seed mean with Student-t interval; small = "
                 "each seed with its entity-bootstrap interval; red = interval excludes 0")
    fig.tight_layout()
    p = _save(fig, Path(path))
    plt.close(fig)
    return p


def plot_grid(summary: dict, out: str | Path) -> list[Path]:
    out = Path(out)
    paths = []
    for variant, combos in summary.get("variants", {}).items():
        if not combos:
            continue
        paths.append(plot_f1_by_gender(combos, out / f"f1_by_gender_{variant}.png",
                                       title=f"F1 per relation and gender ({variant} rule)"))
        paths.append(plot_gaps(combos, out / f"gaps_{variant}.png"))
    return paths


def plot_run_gaps(result, path: str | Path, *, variant: str = "argmax") -> Path:
    """One run: F1 and EO gaps per relation with their entity-bootstrap intervals."""
    plt = _plt()
    gaps = result.gaps[variant]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.axhline(0, color="black", lw=0.8)
    rels = [*POSITIVE_RELATIONS, "micro"]
    for off, metric, marker in ((-0.12, "f1", "o"), (0.12, "recall", "s")):
        for i, rel in enumerate(rels):
            g = next((g for g in gaps if g.relation == rel and g.metric == metric), None)
            if g is None:
                continue
            color = FLAG_COLOR if g.flagged else PLAIN_COLOR
            ax.errorbar([i + off], [g.gap], yerr=[[s] for s in _span(g.gap, g.ci_low, g.ci_high)],
                        fmt=marker, color=color, capsize=3,
                        label=("F1 gap" if metric == "f1" else "EO gap") if i == 0 else None)
    ax.set_xticks(range(len(rels)))
    ax.set_xticklabels(rels)
    ax.set_ylabel("male − female")
    ax.legend()
    ax.set_title(f"Gender gaps ({variant} rule), bootstrap intervals over entities")
    ax.grid(axis="y", alpha=0.3)
    p = _save(fig, Path(path))
    plt.close(fig)
    return p
