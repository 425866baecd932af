"""Gender gaps per cell of a person-level grouping (gender x birth era, gender x region, gender x
Global North/South): the per-cell table of ``wgb re score --groups`` and of the intersectional
study (issue #41, parts 3 and 5), over :class:`wgbstats.cells.CellDesign`.

For one variant's runs and each population (the annotated test persons; all persons when the runs
are cross-fitted: side by side, never pooled silently), every cell gets its persons per gender; a
cell with fewer than ``min_per_gender`` of either gender gets "too few to estimate" and no verdict;
the others get, per relation, the MDE at the cell's size (80% power at the family's first Holm
level, :func:`wgbstats.verdicts.power_needs`) **before** the raw F1 gap, its interval at the
corrected level and its verdict (Holm or BH across cells x relations); beside it the partial-pooling
estimate (:mod:`wgbstats.pooling`, marked model-based). Per relation, the max-minus-min over the
judged cells with its simultaneous interval and the pair that drives it
(:meth:`wgbstats.cells.CellDesign.range`, Bonferroni over the relations). The ``unknown`` cell
(a birthplace the gazetteer cannot place) is counted and shown, never judged.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from relext.evaluation.study_counts import StudyCounts
from wgbstats.verdicts import cut_interval
from wgbstats.cells import MIN_PER_GENDER, CellDesign
from wgbstats.pooling import LABEL as POOLED_LABEL, finite_or_none, partial_pool
from wgbstats.verdicts import Claim, verdicts
from wikigenderbias.groups import EraBins, GROUP_COLUMNS, attribute_table
from wikigenderbias.schema import POSITIVE_RELATIONS

#: Groupings ``--groups`` takes besides gender (the gap's own axis).
GROUPINGS = ("era", "region", "north_south")
UNKNOWN = "unknown"
#: The F1 gaps of the per-cell table.
METRICS = tuple(f"f1_gap:{r}" for r in POSITIVE_RELATIONS) + ("micro_f1_gap",)
POOLED_COLOR = "#2ca02c"
VERDICT_WORDS = {"supported": "male > female", "contradicted": "female > male", "undecided": "undecided"}


def parse_groups(text: str) -> list[str]:
    """``"gender,era"`` -> ``["era"]`` (gender is always the gap's axis); an unknown column is a
    one-line error naming it."""
    cols = [c.strip() for c in text.split(",") if c.strip()]
    bad = [c for c in cols if c != "gender" and c not in GROUPINGS]
    if bad or not cols:
        raise ValueError(f"--groups {text!r}: unknown grouping {bad[0] if bad else '(none)'!r}; expected gender "
                         f"and one or more of {list(GROUPINGS)}")
    rest = [c for c in cols if c != "gender"]
    if not rest:
        raise ValueError(f"--groups {text!r}: name a grouping besides gender, one of {list(GROUPINGS)}")
    return list(dict.fromkeys(rest))


def cell_labels(entity_ids: Sequence[str], columns: Sequence[str], *, eras: EraBins = EraBins(),
                dataset: str | None = None) -> tuple[np.ndarray, list[str]]:
    """(one cell label per person, the cells in order) from the attribute table of ``dataset``
    (default: the embedded release); several columns make crossed cells ("<1900 x Europe"). A
    person the table does not have is an error naming them."""
    for c in columns:
        if c not in GROUP_COLUMNS:
            raise ValueError(f"unknown grouping {c!r}; expected one of {list(GROUPINGS)}")
    frame = attribute_table(eras=eras, dataset=dataset).frame.set_index("entity_id")
    ids = [str(i) for i in entity_ids]
    missing = [i for i in ids if i not in frame.index]
    if missing:
        raise ValueError(f"person {missing[0]!r} (and {len(missing) - 1} more) not in the benchmark's attribute "
                         "table; score the runs with the --data they were evaluated on")
    parts = [frame.loc[ids, c].astype(str).to_numpy() for c in columns]
    labels = parts[0] if len(parts) == 1 else np.array([" x ".join(t) for t in zip(*parts)])
    cats = [list(frame[c].cat.categories) if hasattr(frame[c], "cat") else sorted(set(p)) for c, p in zip(columns, parts)]
    order = cats[0] if len(cats) == 1 else [" x ".join(t) for t in _product(cats)]
    return labels, [c for c in order if c in set(labels.tolist())]


def _product(lists):
    out = [()]
    for lst in lists:
        out = [(*o, x) for o in out for x in lst]
    return out


def _views(data: StudyCounts) -> list[tuple[str, StudyCounts, np.ndarray]]:
    keep_all = np.ones(len(data.entity_ids), dtype=bool)
    if data.populations() == ["test"]:
        return [("test", data, keep_all)]
    out = []
    if "test" in data.populations():
        t = data.population == "test"
        out.append(("test", data.take(t), t))
    return out + [("all", data, keep_all)]


def cell_report(data: StudyCounts, labels: np.ndarray, order: Sequence[str], *, variant: str, grouping: str,
                metrics: Sequence[str] = METRICS, min_per_gender: int = MIN_PER_GENDER, alpha: float = 0.05,
                method: str = "holm", n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95,
                interactions: Sequence[tuple[str, str]] = (), ranges: bool = True) -> dict:
    """The per-cell table, interactions and ranges of ``variant`` in every population (module
    docstring) as plain JSON. ``interactions``: (cell a, cell b) pairs whose gap difference a - b is
    tested per metric (claim: the gap is larger in a), Holm across them; ``ranges``: the max-minus-min
    per metric over the judged cells."""
    out = {"grouping": grouping, "variant": variant, "min_per_gender": min_per_gender, "alpha": alpha,
           "correction": method, "n_resamples": n_resamples, "pooled_label": POOLED_LABEL, "populations": {}}
    for pop, d, keep in _views(data):
        cd = CellDesign(d, labels[keep], n_resamples=n_resamples, seed=seed, confidence=confidence,
                        min_per_gender=min_per_gender, order=order)
        out["populations"][pop] = _population(cd, variant, metrics, alpha, method, interactions, ranges)
    return out


def score_groups(data: StudyCounts, *, columns: Sequence[str], eras: EraBins = EraBins(), dataset: str | None = None,
                 min_per_gender: int = MIN_PER_GENDER, n_resamples: int = 1000, seed: int = 0,
                 confidence: float = 0.95, alpha: float = 0.05, variant: str = "model") -> dict:
    """``wgb re score --groups``: :func:`cell_report` of the scored runs (one variant, a run a seed)
    over the cells of ``columns`` (crossed when several) from the benchmark's attribute table."""
    labels, order = cell_labels(data.entity_ids, columns, eras=eras, dataset=dataset)
    out = cell_report(data, labels, order, variant=variant, grouping=" x ".join(columns),
                      min_per_gender=min_per_gender, alpha=alpha, n_resamples=n_resamples, seed=seed,
                      confidence=confidence)
    out["era_edges"] = list(eras.edges)
    return out


#: intervals cut to what the statistic can take (an F1 gap in [-1, 1], a difference of two in [-2, 2],
#: a max - min in [0, 2]): wgbstats' cut_interval
cut = cut_interval


def _population(cd: CellDesign, variant: str, metrics, alpha, method, interactions, with_ranges=True) -> dict:
    sizes = cd.sizes()
    judged = [c for c in cd.cells if c != UNKNOWN and cd.enough(c)]
    est = {(c, m): cd.cell_metric(variant, c, m) for c in cd.cells for m in metrics
           if min(sizes[c].values()) >= 2}
    claims = [Claim(f"{m} | {c}", f"{m} in cell {c}", 1, est[(c, m)]) for c in judged for m in metrics]
    vs = {v.claim: v for v in verdicts(claims, alpha=alpha, method=method)} if claims else {}
    rows = []
    for m in metrics:
        pooled = partial_pool([est[(c, m)].value if (c, m) in est else np.nan for c in cd.cells],
                              [est[(c, m)].se ** 2 if (c, m) in est else np.nan for c in cd.cells],
                              fit=[c in judged for c in cd.cells])
        for k, c in enumerate(cd.cells):
            e, v = est.get((c, m)), vs.get(f"{m} | {c}")
            status = ("unknown: counted, not judged" if c == UNKNOWN else
                      "too few to estimate" if c not in judged else VERDICT_WORDS[v.verdict])
            if v is not None and e.degenerate:
                status = f"no test: {e.degenerate}"
            rows.append({"cell": c, "metric": m, "male": sizes[c]["male"], "female": sizes[c]["female"],
                         "judged": c in judged, "mde": finite_or_none(v.mde) if v and v.mde is not None else None,
                         "gap": finite_or_none(e.value) if e is not None and c in judged else None,
                         "ci": cut([finite_or_none(x) for x in v.ci_adjusted], -1.0, 1.0)
                         if v and not e.degenerate else None,
                         "ci_level": v.ci_adjusted_level if v else None,
                         "p_adjusted": v.p_adjusted if v else None, "verdict": status,
                         "pooled": finite_or_none(pooled.estimate[k]) if c != UNKNOWN else None,
                         "pooled_sd": finite_or_none(pooled.sd[k]) if c != UNKNOWN else None,
                         "pooled_weight": finite_or_none(pooled.weight[k]) if c != UNKNOWN else None,
                         "raw_small_cell": finite_or_none(e.value) if e is not None and c not in judged else None})
    ranges = []
    if len(judged) >= 2 and with_ranges:
        for m in metrics:
            r = cd.range(variant, m, judged, alpha=alpha / len(metrics))
            d = {k: v for k, v in r.to_dict().items() if k != "pairs"}
            if d.get("ci"):
                d["ci"] = cut(d["ci"], 0.0, 2.0)    # a max - min of F1 gaps lies in [0, 2]
            ranges.append(d)
    inter = []
    pairs = [(a, b) for a, b in interactions if a in judged and b in judged]
    skipped = [[a, b] for a, b in interactions if (a, b) not in pairs]
    if pairs:
        ic = [Claim(f"{m} | {a} - {b}", f"{m}: gap in {a} minus gap in {b}", 1, cd.between(variant, a, b, m))
              for a, b in pairs for m in metrics]
        for c, v in zip(ic, verdicts(ic, alpha=alpha, method="holm")):
            m, ab = c.name.split(" | ")
            a, b = ab.split(" - ")
            inter.append({"cells": [a, b], "metric": m, "mde": finite_or_none(v.mde) if v.mde else None,
                          "value": v.value, "ci": cut(v.ci_adjusted, -2.0, 2.0), "ci_level": v.ci_adjusted_level,
                          "p_adjusted": v.p_adjusted,
                          "verdict": {"supported": f"gap larger in {a}", "contradicted": f"gap larger in {b}",
                                      "undecided": "undecided"}[v.verdict]})
    return {"persons": int(len(cd.data.entity_ids)), "sizes": sizes, "judged_cells": judged, "rows": rows,
            "ranges": ranges, "interactions": inter, "interactions_too_few": skipped,
            "n_claims": len(claims), "n_seeds": len(cd.data.seeds(variant))}


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------
def _f(x, fmt="+.3f") -> str:
    return "-" if x is None else format(x, fmt)


def _ci(ci) -> str:
    return "-" if not ci or any(v is None for v in ci) else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def table_rows(pop: dict) -> list[list[str]]:
    """The per-cell table's rows (MDE before the verdict; the pooled estimate marked)."""
    return [[r["cell"], r["metric"].replace("f1_gap:", "F1 gap "), str(r["male"]), str(r["female"]),
             _f(r["mde"], ".3f"), _f(r["gap"]), _ci(r["ci"]), r["verdict"], _f(r["pooled"])]
            for r in pop["rows"]]


TABLE_HEADER = ["cell", "metric", "men", "women", "MDE (80%)", "gap (male - female)", "interval (corrected level)",
                "verdict", "pooled estimate (EB, model-based)"]


def range_lines(pop: dict) -> list[str]:
    """One line per metric: the max-minus-min over the judged cells, its interval, which cells."""
    if len(pop["judged_cells"]) >= 2 and not pop["ranges"]:
        return []
    if len(pop["judged_cells"]) < 2:
        return [f"max - min over cells: fewer than 2 cells with enough persons ({', '.join(pop['judged_cells']) or 'none'})"]
    return [f"{r['metric']}: max - min = {r['value']:.3f} (max in {r['max_cell']}, min in {r['min_cell']}): "
            + (f"no test: {r['degenerate']}" if r["degenerate"] else "simultaneous "
            f"{r['level']:.2%} interval [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
            + (f"; cells that differ: {', '.join(' vs '.join(p) for p in r['pairs_excluding_zero'])}"
               if r["pairs_excluding_zero"] else "; no pair of cells differs at the simultaneous level"))
            for r in pop["ranges"]]


def markdown(report: dict) -> str:
    """The report as markdown (every population, the table, the max-min lines, interactions)."""
    out = [f"## Gender gaps by {report['grouping']} ({report['variant']})", "",
           f"Cells with fewer than {report['min_per_gender']} persons of either gender: too few to estimate. "
           f"Verdicts: {report['correction']} across cells x metrics at {report['alpha']}; MDE at 80% power. "
           f"Pooled estimate: {report['pooled_label']}.", ""]
    for pop, p in report["populations"].items():
        out += [f"### Population: {pop} ({p['persons']} persons, {p['n_seeds']} seeds)", "",
                "| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
        out += ["| " + " | ".join(r) + " |" for r in table_rows(p)]
        out += [""] + [f"- {x}" for x in range_lines(p)]
        for i in p["interactions"]:
            out.append(f"- interaction {i['metric']} {i['cells'][0]} - {i['cells'][1]}: {i['value']:+.3f} "
                       f"{_ci(i['ci'])}, MDE {_f(i['mde'], '.3f')}: {i['verdict']}")
        for a, b in p["interactions_too_few"]:
            out.append(f"- interaction {a} - {b}: too few persons in a cell to estimate")
        out.append("")
    return "\n".join(out) + "\n"


def plot(report: dict, path: str | Path, *, metrics: Sequence[str] | None = None) -> Path:
    """The gap per cell with its interval at the corrected level (judged cells: filled; the pooled
    estimate as an open marker; cells too small: the count only), one panel per metric, populations
    side by side."""
    import textwrap

    from relext.evaluation.plots import FLAG_COLOR, PLAIN_COLOR, _plt, _save

    plt = _plt()
    pops = list(report["populations"])
    metrics = list(metrics or dict.fromkeys(r["metric"] for r in report["populations"][pops[0]]["rows"]))
    fig, axes = plt.subplots(len(pops), len(metrics), figsize=(3.3 * len(metrics), 3.4 * len(pops)),
                             squeeze=False, sharey="row")
    for i, pop in enumerate(pops):
        p = report["populations"][pop]
        for j, m in enumerate(metrics):
            ax = axes[i][j]
            rows = [r for r in p["rows"] if r["metric"] == m]
            ax.axhline(0, color="black", lw=0.8)
            for x, r in enumerate(rows):
                if r["gap"] is not None and r["ci"] and None not in r["ci"]:
                    color = PLAIN_COLOR if r["verdict"] == "undecided" else FLAG_COLOR
                    ax.errorbar([x - 0.12], [r["gap"]], yerr=[[r["gap"] - r["ci"][0]], [r["ci"][1] - r["gap"]]],
                                fmt="o", color=color, capsize=3, ms=5)
                else:
                    ax.annotate("too few" if r["cell"] != UNKNOWN else "unknown", (x, 0), rotation=90,
                                fontsize=7, ha="center", va="bottom", color=PLAIN_COLOR)
                if r["pooled"] is not None:
                    ax.plot([x + 0.12], [r["pooled"]], marker="D", mfc="none", color=POOLED_COLOR, ms=5)
            ax.set_xticks(range(len(rows)))
            ax.set_xticklabels([textwrap.fill(r["cell"], 16) + f"\n{r['male']}m/{r['female']}f" for r in rows],
                               fontsize=7, rotation=45, ha="right", rotation_mode="anchor")
            ax.grid(axis="y", alpha=0.3)
            ax.set_title(f"{m.replace('f1_gap:', 'F1 gap ')} ({pop})", fontsize=9)
        axes[i][0].set_ylabel("male - female")
    fig.suptitle(f"Gender gap per {report['grouping']} cell: dot = raw gap with its interval at the corrected "
                 "level (red: decided, grey: undecided); open green diamond = partial-pooling estimate "
                 "(model-based, not a verdict); 'too few' = under the minimum persons", fontsize=9)
    fig.tight_layout()
    out = _save(fig, Path(path))
    plt.close(fig)
    return out


def add_section(doc, report: dict, image: str | None = None, *, level: int = 2):
    """The intersectional section of an HTML/markdown report (:class:`wgbcore.render.Document`):
    per population the cell table (MDE before the verdict, the pooled estimate marked), the
    max-minus-min lines and interactions, and the plot ``image`` (a path relative to the page)."""
    doc.heading(f"Gender gap by {report['grouping']} ({report['variant']})", level)
    doc.para(f"Gap = male - female F1 within each cell. A cell with fewer than {report['min_per_gender']} persons "
             f"of either gender is **too few to estimate** (its count shown, no verdict). Verdicts: "
             f"{report['correction']} across cells x metrics at {report['alpha']}; intervals at the corrected level; "
             f"the MDE (80% power at the family's first Holm level) comes before the verdict. The pooled estimate is "
             f"{report['pooled_label']}.")
    if image:
        doc.image(image, f"gap per {report['grouping']} cell with its interval")
    for pop, p in report["populations"].items():
        doc.heading(f"Population: {pop} ({p['persons']} persons, {p['n_seeds']} seeds)", level + 1)
        doc.table(TABLE_HEADER, table_rows(p))
        doc.items(range_lines(p) + [
            f"interaction {i['metric']} {i['cells'][0]} - {i['cells'][1]}: {i['value']:+.3f} {_ci(i['ci'])}, "
            f"MDE {_f(i['mde'], '.3f')}: {i['verdict']}" for i in p["interactions"]]
            + [f"interaction {a} - {b}: too few persons in a cell to estimate" for a, b in p["interactions_too_few"]])
    return doc


def write_report(report: dict, out_dir: str | Path, stem: str = "cells") -> list[Path]:
    """``OUT/<stem>.json``, ``.md``, ``.html`` and the plot ``<stem>.png`` (atomic writes)."""
    from wgbcore.atomicio import atomic_write_json
    from wgbcore.render import Document

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = plot(report, out / f"{stem}.png")
    doc = add_section(Document(f"Gender gaps by {report['grouping']}"), report, png.name)
    files = doc.write(out, stem)
    return [atomic_write_json(out / f"{stem}.json", report), files["md"], files["html"], png]


def study_groups(runs, out_dir: str | Path, *, columns: Sequence[str], eras: EraBins = EraBins(),
                 min_per_gender: int = MIN_PER_GENDER, dataset: str | None = None, n_resamples: int = 1000,
                 seed: int = 0, alpha: float = 0.05, rule: str = "argmax") -> list[Path]:
    """``re grid`` / ``re debias-grid --groups``: the per-cell report of every variant of a study's
    finished runs (``runs``: (variant, seed) -> run directory or its fold run directories) into
    ``OUT/groups/cells-<columns>-<variant>.{json,md,html,png}``. Exploratory: a study's plan does not
    name these cells."""
    data = StudyCounts.from_runs(runs, rule=rule)
    labels, order = cell_labels(data.entity_ids, columns, eras=eras, dataset=dataset)
    paths = []
    for v in sorted(data.counts):
        rep = cell_report(data, labels, order, variant=v, grouping=" x ".join(columns), min_per_gender=min_per_gender,
                          alpha=alpha, n_resamples=n_resamples, seed=seed)
        rep["era_edges"], rep["registered"] = list(eras.edges), "exploratory: not in the study's plan"
        paths += write_report(rep, out_dir, stem=f"cells-{'-'.join(columns)}-{v}")
    return paths
