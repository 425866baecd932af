"""`wgb run --groups`: the gender gap per cell of a person-level grouping (gender x birth era,
gender x region, gender x Global North/South) for a run's extractors and the graphs built from them.

**What is per person, and so per cell.** A run's per-person quantities are the extraction's
per-person counts (``entity_counts.npz``: tp, fp, fn per relation; ``extraction:<v>``) and the
graph's per-person counts against the gold graph (``graph:<v>``, :func:`wgb.pipeline.propagation.graph_entity_counts`).
Both go through :func:`relext.evaluation.cell_gaps.cell_report`, as ``wgb re score --groups`` does: persons
resampled within gender x fold x population x cell, the minimum persons of each gender for a
verdict ("too few to estimate" below it), the MDE at the cell's size before the verdict, Holm over
cells x relations, the partial-pooling estimate beside it (model-based), the max - min over the
judged cells with its simultaneous interval. Where a graph's per-person counts equal the
extraction's at every seed (one triple per bag, the usual case; the graph has no NA class), its
table would repeat the extraction's and is left out, said so.

**What is not per person** (:data:`NOT_PER_PERSON`): the kge bias measures score *items* (hypernym
values), each over all persons of a graph, from embeddings trained once per seed on the whole
graph; a per-cell value would be another estimand (the measure recomputed on one cell's persons, or
embeddings retrained per cell), not an aggregate of per-person values, so none is reported.

Identity: the groups settings (columns, era edges, minimum per gender) and the seeds name the
stage (``OUT/stages/groups_<key>.done``) and its folder ``OUT/groups/<key>/`` (its ``config.json``
records them); the seeds' stages never depend on them, so adding ``--groups`` to a finished run
reuses every stage and adds this one (and renders the report again).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

#: Why each kge bias measure has no per-cell value (see the module docstring).
NOT_PER_PERSON = {
    "data": "scores items (hypernym values) from the shares of men and of women holding each; a share is a "
            "statistic of a group of persons, not a per-person value to aggregate by cell",
    "fisher": "scores items by the mean over all persons of a one-step change in the embeddings' score; the "
              "stored result keeps the item means only, and the embeddings are trained once on the whole graph",
    "bourli_projection": "scores items by their embeddings' projection on a gender direction: no person in it",
}
GENERIC_NOT_PER_PERSON = "scores items or clusters of a graph's embeddings, not persons"


def settings_of(opts: Mapping[str, Any] | None) -> dict | None:
    """The plain settings a :class:`~wgb.pipeline.config.PipelineConfig` keeps from
    :func:`wgb.cli_groups.resolve_groups`'s options (None without ``--groups``)."""
    if not opts:
        return None
    return {"columns": list(opts["columns"]), "era_edges": [int(e) for e in opts["eras"].edges],
            "min_per_gender": int(opts["min_per_gender"])}


def check(groups: Mapping[str, Any] | None) -> None:
    """A groups setting given through the API is checked as the CLI checks it (one-line errors)."""
    if groups is None:
        return
    from relext.evaluation.cell_gaps import parse_groups
    from wikigenderbias.groups import EraBins

    if not isinstance(groups, Mapping) or set(groups) != {"columns", "era_edges", "min_per_gender"}:
        raise ValueError(f"groups must be a mapping with columns, era_edges and min_per_gender, got {groups!r}")
    parse_groups(",".join(["gender", *groups["columns"]]))
    EraBins(tuple(groups["era_edges"]))
    m = groups["min_per_gender"]
    if isinstance(m, bool) or not isinstance(m, int) or m < 2:
        raise ValueError(f"groups min_per_gender must be a whole number >= 2, got {m!r}")


def key(groups: Mapping[str, Any], seeds: Sequence[int]) -> str:
    """The stage's and the folder's name: ``era-e1850_1900_1950-m30-s0_1_2``."""
    cols = "-".join(groups["columns"])
    edges = "_".join(str(e) for e in groups["era_edges"]) if "era" in groups["columns"] else ""
    name = f"{cols}{'-e' + edges if edges else ''}-m{groups['min_per_gender']}-s{'_'.join(map(str, seeds))}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def folder(out: Path, groups: Mapping[str, Any], seeds: Sequence[int]) -> Path:
    return Path(out) / "groups" / key(groups, seeds)


def inputs_fingerprint(out: Path, seeds: Sequence[int]) -> str:
    """sha256 of the seeds' stage markers (each lists the sha256 of the files its stage wrote): a
    seed stage run again since the per-cell stage changes it, and the per-cell stage runs again."""
    import hashlib

    h = hashlib.sha256()
    for s in seeds:
        for m in sorted((Path(out) / f"seed-{s}" / "stages").glob("*.done")):
            h.update(f"{s}/{m.name}\n".encode() + m.read_bytes())
    return h.hexdigest()


def stale(out: Path, groups: Mapping[str, Any], seeds: Sequence[int]) -> bool:
    """Whether the per-cell stage's folder was computed from other seed stages than the folder holds now."""
    import json

    saved = folder(out, groups, seeds) / "config.json"
    if not saved.is_file():
        return False
    return json.loads(saved.read_text()).get("inputs_sha256") != inputs_fingerprint(out, seeds)


def compute(out: Path, cfg, settings: Mapping[str, Any], seeds: Sequence[int], dataset, splits: Sequence[str]) -> dict:
    """The per-cell reports of every extractor (and its graph where it differs) of the seeds' runs
    into ``OUT/groups/<key>/`` (``cells.json``, ``config.json``, the plot ``cells.png``); returns the JSON."""
    from relext.evaluation.cell_gaps import cell_labels, cell_report
    from wgb.pipeline.propagation import MIN_RESAMPLES, build_study, head_entities
    from wgb.pipeline.stages import seed_dir
    from wgbcore.atomicio import atomic_write_json
    from wikigenderbias.groups import EraBins

    g = cfg.groups
    variants = cfg.variants()
    study = build_study({s: seed_dir(out, s) for s in seeds}, variants, head_entities(dataset, splits))
    data = study.counts
    eras = EraBins(tuple(g["era_edges"]))
    labels, order = cell_labels(data.entity_ids, g["columns"], eras=eras, dataset=cfg.dataset)
    grouping = " x ".join(g["columns"])
    resamples = max(MIN_RESAMPLES, int(settings["n_resamples"]))   # as the report's own estimates
    reports, same = [], []
    for v in variants:
        for level in ("extraction", "graph"):
            name = f"{level}:{v}"
            # the graph has no NA column (class 0): its cells repeat the extraction's when the rest agree
            if level == "graph" and all(np.array_equal(data.counts[name][s][:, 1:], data.counts[f"extraction:{v}"][s][:, 1:])
                                        for s in seeds):
                same.append(v)
                continue
            rep = cell_report(data, labels, order, variant=name, grouping=grouping,
                              min_per_gender=g["min_per_gender"], n_resamples=resamples, seed=0)
            rep.update(level=level, extractor=v)
            reports.append(rep)
    measures = {m: NOT_PER_PERSON.get(m, GENERIC_NOT_PER_PERSON) for m in cfg.measures}
    result = {"groups": dict(g), "grouping": grouping, "seeds": list(seeds), "era_edges": list(eras.edges),
              "n_resamples": resamples,
              "registered": "exploratory: the run's claims do not name these cells",
              "reports": reports, "graph_same_as_extraction": same, "not_per_person": measures}
    d = folder(out, g, seeds)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "config.json", {"groups": dict(g), "seeds": list(seeds),
                                          "inputs_sha256": inputs_fingerprint(out, seeds)})
    plot(result, d / "cells.png")
    atomic_write_json(d / "cells.json", result)
    return result


# --------------------------------------------------------------------------------------------
# The report's section: one table per extractor x population, one figure
# --------------------------------------------------------------------------------------------
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

    from wgb.pipeline.report import DPI, FIG_WIDTH, REL_COLORS, _plt
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
