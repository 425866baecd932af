"""The ``wgb run --groups`` section of the run's report: per extractor (and graph) x population, a
table with a row per cell (:func:`section`, what the templates render) and one figure of the gap per
cell with its interval (:func:`plot`), from the cells :mod:`wgb.pipeline.groups` computed."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

VERDICT_CLASS = {"male > female": "supported", "female > male": "contradicted", "undecided": "undecided"}


def _label(metric: str) -> str:
    return "micro F1" if metric == "micro_f1_gap" else metric.replace("f1_gap:", "")


def section(result: Mapping[str, Any] | None) -> dict | None:
    """What the templates render: per report and population, one row per cell with its persons and,
    per metric, gap, interval, verdict (or "too few to estimate") and MDE; the max - min lines."""
    if not result:
        return None
    from relext.evaluation.cell_gaps import range_lines

    tables = []
    for rep in result["reports"]:
        for pop, p in rep["populations"].items():
            metrics = list(dict.fromkeys(r["metric"] for r in p["rows"]))
            rows = []
            for cell in dict.fromkeys(r["cell"] for r in p["rows"]):
                mine = {r["metric"]: r for r in p["rows"] if r["cell"] == cell}
                first = next(iter(mine.values()))
                short = [w for w, n in (("men", first["male"]), ("women", first["female"]))
                         if n < rep["min_per_gender"]]
                status = None if first["judged"] else first["verdict"] + (
                    f" (fewer than {rep['min_per_gender']} {' and '.join(short)})" if short and cell != "unknown" else "")
                rows.append({"cell": cell, "men": first["male"], "women": first["female"],
                             "judged": first["judged"], "status": status,
                             "metrics": [{**mine[m], "css": VERDICT_CLASS.get(mine[m]["verdict"], "undecided")}
                                         for m in metrics]})
            tables.append({"title": f"{rep['level']} · {rep['extractor']} · population {pop}",
                           "level": rep["level"], "extractor": rep["extractor"], "population": pop,
                           "persons": p["persons"], "n_seeds": p["n_seeds"], "n_claims": p["n_claims"],
                           "metrics": [_label(m) for m in metrics], "rows": rows, "ranges": range_lines(p)})
    first = result["reports"][0] if result["reports"] else {}
    return {"grouping": result["grouping"], "groups": result["groups"], "tables": tables,
            "min_per_gender": result["groups"]["min_per_gender"], "correction": first.get("correction", "holm"),
            "alpha": first.get("alpha", 0.05), "pooled_label": first.get("pooled_label", ""),
            "graph_same_as_extraction": result["graph_same_as_extraction"],
            "not_per_person": result["not_per_person"], "registered": result["registered"],
            "era_edges": result["era_edges"]}


def plot(result: Mapping[str, Any], path: Path) -> Path:
    """One panel per extractor (and graph) x population: per cell, the gap of each relation and of
    micro F1 with its interval at the corrected level (filled: decided; open: undecided); a cell
    under the minimum shows its count and "too few"."""
    import textwrap

    from wgb.pipeline.charts import DPI, FIG_WIDTH, REL_COLORS, _plt
    from wgbcore.atomicio import atomic_savefig

    plt = _plt()
    panels = [(rep, pop, p) for rep in result["reports"] for pop, p in rep["populations"].items()]
    fig, axes = plt.subplots(max(len(panels), 1), 1, figsize=(FIG_WIDTH, 1.0 + 3.3 * max(len(panels), 1)),
                             squeeze=False)
    colors = {**{k: v for k, v in REL_COLORS.items()}, "micro_f1_gap": "#333333"}
    for ax, (rep, pop, p) in zip(axes[:, 0], panels):
        metrics = list(dict.fromkeys(r["metric"] for r in p["rows"]))
        cells = list(dict.fromkeys(r["cell"] for r in p["rows"]))
        width = 0.8 / max(len(metrics), 1)
        ax.axhline(0, color="black", lw=0.7)
        labelled: set[str] = set()
        for j, m in enumerate(metrics):
            color = colors.get(m.replace("f1_gap:", ""), f"C{j}")
            for i, c in enumerate(cells):
                r = next(x for x in p["rows"] if x["cell"] == c and x["metric"] == m)
                x = i + (j - (len(metrics) - 1) / 2) * width
                if r["gap"] is None:
                    continue
                if not r["ci"] or None in r["ci"]:   # no test (fewer than 3 seeds): the point alone
                    ax.plot([x], [r["gap"]], marker="x", ls="none", color=color, ms=5,
                            label=None if m in labelled else _label(m))
                    labelled.add(m)
                    continue
                decided = r["verdict"] in ("male > female", "female > male")
                ax.errorbar([x], [r["gap"]], yerr=[[max(r["gap"] - r["ci"][0], 0)], [max(r["ci"][1] - r["gap"], 0)]],
                            fmt="o", color=color, mfc=color if decided else "white", capsize=2, ms=4,
                            label=None if m in labelled else _label(m))
                labelled.add(m)
        for i, c in enumerate(cells):
            r = next(x for x in p["rows"] if x["cell"] == c)
            if not r["judged"]:
                ax.text(i, 0.88, "unknown:\ncounted, not judged" if c == "unknown" else
                        f"too few to estimate\n(< {result['groups']['min_per_gender']} of a gender)",
                        transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=8, color="#666666")
        ax.set_xticks(range(len(cells)))
        sizes = p["sizes"]
        ax.set_xticklabels([f"{textwrap.fill(c, 16)}\n{sizes[c]['male']} m / {sizes[c]['female']} w" for c in cells],
                           fontsize=8)
        ax.set_xlim(-0.6, len(cells) - 0.4)
        lo, hi = ax.get_ylim()   # an F1 gap lies in [-1, 1]: an interval past it is drawn to the edge
        ax.set_ylim(max(lo, -1.05), min(hi, 1.05))
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("F1 gap, men − women", fontsize=9)
        untested = not any(r["ci"] and None not in r["ci"] for r in p["rows"] if r["gap"] is not None)
        ax.set_title(f"{rep['level']} · {rep['extractor']} · population {pop} ({p['persons']} persons, "
                     f"{p['n_seeds']} seed{'s' if p['n_seeds'] != 1 else ''})"
                     + ("; x = gap, no interval: fewer than 3 seeds" if untested else ""), fontsize=10)
    if not panels:
        axes[0][0].text(0.5, 0.5, "no extractor runs", ha="center", va="center")
    seen: dict = {}
    for ax in axes[:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.suptitle(f"Gender gap per {result['grouping']} cell with its interval at the corrected level "
                 "(filled: decided, open: undecided)", fontsize=10)
    fig.tight_layout()
    if seen:  # one legend for every panel, below them
        fig.legend(list(seen.values()), list(seen), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(seen),
                   fontsize=9, frameon=False)
    try:
        return atomic_savefig(path, fig, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
