"""The report of a `wgb run`: ``report.html`` (self-contained: charts inlined), ``report.md``,
``report.json`` and the charts, rendered from jinja2 templates (``wgb/templates/run_report.*``,
:mod:`wgbcore.render`). It leads with the verdicts, then the evidence
(:mod:`wgb.pipeline.propagation`)."""
from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wgb import __version__
from wgb.pipeline.config import GENDER_RELATION, TARGET_RELATION
from wgbcore.atomicio import atomic_savefig, atomic_write_json, clean_json
from wgbstats.design import MIN_SEEDS

from wgb.pipeline.charts import DPI, FIG_WIDTH, MARKERS, REL_COLORS, _plt  # noqa: E402,F401
PART_LABELS = {"shared": "shared items: |extracted| − |gold|", "error_born": "error-born items",
               "missed": "missed gold items (subtracted)", "added": "total bias added",
               "excess": "total − control"}


def _ok(x: Any) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def _err(e: dict) -> list[list[float]] | None:
    lo, hi = e["ci"]
    if not (_ok(lo) and _ok(hi) and _ok(e["value"])):
        return None
    return [[max(e["value"] - lo, 0.0)], [max(hi - e["value"], 0.0)]]


def plot_propagation(analysis: dict, path: Path) -> Path:
    """Left: the widening of the facts-per-person difference per relation and extractor (0 = a
    gender-blind extractor on each person's own candidate pairs); right: how much each debiased extractor
    reduces the extraction |F1 gap| and the graph's widening, per relation."""
    plt = _plt()
    comps = analysis["comparisons"]
    fig, axes = plt.subplots(1, 2 if comps else 1, figsize=(FIG_WIDTH, 4.4), squeeze=False)
    ax = axes[0][0]
    rows = analysis.get("facts", [])
    extractors = list(dict.fromkeys(r["extractor"] for r in rows))
    rels = list(dict.fromkeys(r["relation"] for r in rows))
    width = 0.8 / max(len(extractors), 1)
    for k, v in enumerate(extractors):
        for i, rel in enumerate(rels):
            r = next(x for x in rows if x["extractor"] == v and x["relation"] == rel)
            e = r["widening"]
            if not _ok(e["value"]):
                continue
            ax.bar(i + (k - (len(extractors) - 1) / 2) * width, e["value"], width, color=f"C{k}", yerr=_err(e),
                   capsize=3, label=v if i == 0 else None)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(range(len(rels)))
    ax.set_xticklabels(["all" if r == "all" else r for r in rels])
    ax.set_ylabel("facts per person, men − women:\nextracted − gender-blind")
    ax.set_title("Widening of the facts-per-person difference beyond exposure (95% CI)", fontsize=11)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=max(len(extractors), 1), fontsize=8,
              frameon=False)
    if comps:
        ax = axes[0][1]
        rels = [r["relation"] for r in comps[0]["per_relation"]]
        width = 0.8 / (2 * len(comps))
        for k, c in enumerate(comps):
            for j, (level, color, lab) in enumerate((("extraction", "#7f7f7f", "extraction |F1 gap|"),
                                                     ("graph", "#1f77b4", "graph widening"))):
                off = (2 * k + j - (2 * len(comps) - 1) / 2) * width
                for i, row in enumerate(c["per_relation"]):
                    e = row[level]
                    if not _ok(e["value"]):
                        continue
                    ax.bar(i + off, e["value"], width, color=color, alpha=1.0 if k == 0 else 0.6,
                           yerr=_err(e), capsize=2, label=f"{c['debiased']}: {lab}" if i == 0 else None)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(range(len(rels)))
        ax.set_xticklabels(rels)
        ax.set_ylabel(f"{comps[0]['baseline']} − debiased")
        ax.set_title("Reduction: extraction |F1 gap| and graph widening", fontsize=11)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    try:
        return atomic_savefig(path, fig, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)


def plot_bias_added(analysis: dict, path: Path) -> Path | None:
    """The parts of the bias added by extraction, one panel per measure, one bar per extractor."""
    rows = analysis["bias_added"]
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    if not measures:
        return None
    plt = _plt()
    fig, axes = plt.subplots(len(measures), 1, figsize=(FIG_WIDTH, 1.2 + 1.9 * len(measures)), squeeze=False)
    parts = ["shared", "error_born", "missed", "added", "excess"]
    for ax, m in zip(axes[:, 0], measures):
        mine = [r for r in rows if r["measure"] == m]
        h = 0.8 / max(len(mine), 1)
        for k, r in enumerate(mine):
            for i, part in enumerate(parts):
                e = dict(r["excess"]["added"] if part == "excess" else r[part])
                if part == "missed" and _ok(e["value"]):  # drawn as what it takes away
                    e = {**e, "value": -e["value"], "ci": [-c if _ok(c) else c for c in reversed(e["ci"])]}
                if not _ok(e["value"]):
                    continue
                err = _err(e)
                ax.barh(i + (k - (len(mine) - 1) / 2) * h, e["value"], h, color=f"C{k}",
                        xerr=err, capsize=2, label=r["extractor"] if i == 0 else None)
        ax.axvline(0, color="black", lw=0.6)
        ax.set_yticks(range(len(parts)))
        ax.set_yticklabels([PART_LABELS[p] for p in parts], fontsize=9)
        ax.invert_yaxis()
        over = mine[0]["over"] if mine else ""
        ctrl = mine[0].get("control_kind", "control") if mine else "control"
        ex_over = mine[0].get("excess_over", over) if mine else ""
        ax.set_title(f"{m}: bias mass added by extraction (+ = more bias; 95% CI over {over}"
                     + (f", total − control over {ex_over}" if ex_over != over else "") + f"; control: {ctrl})",
                     fontsize=10)
        if not any(_ok((r["excess"]["added"] if part == "excess" else r[part])["value"]) for r in mine for part in parts):
            ax.text(0.5, 0.5, "not measured on these graphs", ha="center", va="center", transform=ax.transAxes,
                    color="grey")
    handles = {}
    for ax in axes[:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.tight_layout()
    if handles:  # one legend for all panels, below them
        fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=len(handles), fontsize=9, frameon=False)
    try:
        return atomic_savefig(path, fig, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)


def write_report(folder: Path, *, cfg, settings: dict, analysis: dict, extraction: dict, link_reports: dict,
                 timings: dict, seconds: dict | None = None, groups: dict | None = None) -> Path:
    """``report.html`` / ``.md`` / ``.json`` and the charts into ``folder``; with ``groups``
    (:func:`wgb.pipeline.groups.compute`'s JSON), the intersectional section and its plot ``groups.png``.

    ``extraction``: per extractor, the seed-averaged F1 per relation and gender
    (``{v: {relation: {"male", "female"}}}``); ``timings``: per seed, per stage (seconds)."""
    from wgbcore.render import render, render_to

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    seeds = analysis["seeds"]
    provenance = {
        "data": cfg.dataset or "embedded WikiGenderBias release",
        "extractor": f"{cfg.encoder}+{cfg.selector}, {settings['re_epochs']} epochs",
        "kge": f"{cfg.kge_model}, dim {settings['kge_dim']}, {settings['kge_epochs']} epochs",
        "seeds": ", ".join(map(str, seeds)), "profile": cfg.profile, "version": __version__,
        "measures": ", ".join(cfg.measures),
    }
    charts = {"propagation": plot_propagation(analysis, folder / "propagation.png"),
              "bias_added": plot_bias_added(analysis, folder / "bias_added.png")}
    from wgb.pipeline.groups_report import plot as plot_groups, section

    if groups is not None:
        charts["groups"] = plot_groups(groups, folder / "groups.png")
    else:  # a report rendered again without --groups keeps no plot of an earlier one
        (folder / "groups.png").unlink(missing_ok=True)

    cells = section(groups)
    context = {"analysis": analysis, "cfg": asdict(cfg), "settings": settings, "prov": provenance,
               "extraction": extraction, "link_reports": link_reports, "timings": timings,
               "seconds": seconds or {}, "target": TARGET_RELATION, "gender_relation": GENDER_RELATION,
               "n_seeds": len(seeds), "min_seeds": MIN_SEEDS, "cells": cells,
               "charts": {k: (p.name if p else None) for k, p in charts.items()}}
    render_to(folder / "report.md", "run_report.md", package="wgb", **context)
    html = render("run_report.html", package="wgb", **context,
                  inline={k: p for k, p in charts.items() if p})
    from wgbcore.atomicio import atomic_write_text

    atomic_write_text(folder / "report.html", html)
    atomic_write_json(folder / "report.json", clean_json({
        "provenance": provenance, "config": asdict(cfg), "settings": settings, "analysis": analysis,
        "extraction": extraction, "fb13_links": link_reports, "timings": timings,
        **({"groups": groups} if groups is not None else {})}))
    return folder
