"""The plan of the intersectional study (issue #41, part 6), written and committed before its analysis.

The study reads the committed cross-fitted fold runs of the debiasing study's ``none`` arm
(PCNN+attention, ``results/re_crossfit/debias/runs/none-attention-seed{S}-fold{K}``, seeds 0-9 x 5
folds, every one of the 5,169 persons predicted once per seed by a model that never saw them; no
retraining, the files untouched) and asks, for gender x birth era and gender x birthplace region
(and Global North/South), in each population (the annotated test persons; all persons) side by side:

* **within each cell**: the F1 gap (male - female) of spouse, hypernym, birthDate and birthPlace;
  family: the judged cells x 4 relations of one grouping and population, Holm at 0.05;
* **interactions**: is the gap larger before 1900 than from 1950 (``<1900`` minus ``>=1950``), and
  is it different in the Global North and South (North minus South), per relation; Holm over the 4
  relations of each;
* **the largest difference over cells**: max - min of each relation's gap over the judged era cells
  and over the judged region cells, a simultaneous 95% interval (max-t, :mod:`wgbstats.cells`) at
  Bonferroni 0.05 / 4 over the relations, and the pair of cells that drives it.

Cells: birth era in three bins, edges 1900 and 1950 (``<1900``, ``1900-1949``, ``>=1950``; the
default four bins leave 26 women in the test persons' 1850-1899 cell, under the minimum, so the two
oldest bins are merged -- a choice from cell sizes, not from any gap); the UN M49 regions (Northern
America apart from Latin America and the Caribbean) and Global North/South of
:mod:`wikigenderbias.groups`; ``unknown`` birthplaces counted, never judged. A cell takes part in a
verdict with at least 30 persons of each gender (:data:`wgbstats.cells.MIN_PER_GENDER`); below: its
count and "too few to estimate". Power per cell: the MDE at 80% power at the family's first Holm
level with the 10 seeds, and its floor (the persons' part alone: no seed count decides a smaller
effect in that cell), from the runs' variance -- no gap, interval or verdict is computed here.

    python scripts/study/groups_plan.py      # -> results/groups/study_plan.{json,md}
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RUNS = "results/re_crossfit/debias/runs"
ARM, SEEDS, FOLDS = "none", list(range(10)), 5
ALPHA, MIN_PER_GENDER, N_RESAMPLES, BOOT_SEED = 0.05, 30, 1000, 0
ERA_EDGES = (1900, 1950)
RELATIONS = ("spouse", "hypernym", "birthDate", "birthPlace")
METRICS = tuple(f"f1_gap:{r}" for r in RELATIONS)
GROUPINGS = ("era", "region", "north_south")
INTERACTIONS = {"era": [["<1900", ">=1950"]], "north_south": [["North", "South"]], "region": []}
RANGES = ("era", "region")
OUT = ROOT / "results/groups"
#: What was seen before this plan was written (said, not hidden).
HISTORY = ("The claims are the ones issue #41 and its task brief name (the spouse / birthPlace / hypernym / birthDate F1 "
           "gap within each era and region, pre-1900 vs from 1950, North vs South, max - min over eras and over "
           "regions), fixed before any estimate. Before this plan was written, the code (relext.evaluation.cell_gaps) was "
           "smoke-tested once on these runs by era (edges 1900, 1950; both populations; 500 resamples), so the era "
           "estimates had been seen; the region and North/South estimates had not. Nothing in this plan was changed "
           "after that smoke test except this note.")


def run_dirs() -> dict:
    runs = {}
    for s in SEEDS:
        dirs = [ROOT / RUNS / f"{ARM}-attention-seed{s}-fold{k}" for k in range(FOLDS)]
        missing = [d for d in dirs if not (d / "entity_counts.npz").is_file()]
        if missing:
            raise SystemExit(f"{missing[0]}: no entity_counts.npz (the committed fold runs are needed)")
        runs[(ARM, s)] = dirs
    return runs


def inputs_sha256(runs: dict) -> dict:
    return {str(d.relative_to(ROOT) / "entity_counts.npz"): hashlib.sha256((d / "entity_counts.npz").read_bytes()).hexdigest()
            for dirs in runs.values() for d in dirs}


def claims() -> list[dict]:
    """Every claim of the study (the same for both populations), before any estimate."""
    out = []
    for g in GROUPINGS:
        out.append({"family": f"within-cell gaps by {g}", "grouping": g,
                    "claim": f"F1 gap (male - female) of each relation within each judged {g} cell",
                    "metrics": list(METRICS), "test": "two-sided (supported: male > female; contradicted: female > "
                    "male)", "correction": "holm over judged cells x relations", "alpha": ALPHA})
    for g, pairs in INTERACTIONS.items():
        for a, b in pairs:
            out.append({"family": f"interaction {a} - {b}", "grouping": g,
                        "claim": f"the F1 gap in {a} minus the F1 gap in {b}, per relation (supported: larger in {a})",
                        "metrics": list(METRICS), "test": "two-sided", "correction": "holm over the relations",
                        "alpha": ALPHA})
    for g in RANGES:
        out.append({"family": f"max - min over {g} cells", "grouping": g,
                    "claim": f"max - min of each relation's F1 gap over the judged {g} cells, and the pair driving it",
                    "metrics": list(METRICS), "test": "simultaneous interval (max-t over the cells' pairwise "
                    "differences, each pair against the seed reference) excludes 0",
                    "correction": f"Bonferroni over the relations: each at {ALPHA}/{len(METRICS)}", "alpha": ALPHA})
    return out


def power(data, labels, order) -> dict:
    """Per population: persons per cell and gender, judged or not, and the MDE (80% power at the
    family's first Holm level) now and its floor, per judged cell and metric, from variances only."""
    from relext.evaluation.cell_gaps import UNKNOWN, _views
    from wgbstats.cells import CellDesign
    from wgbstats.verdicts import mde_at_seeds, variance_parts, z_total

    out = {}
    for pop, d, keep in _views(data):
        cd = CellDesign(d, labels[keep], n_resamples=N_RESAMPLES, seed=BOOT_SEED, min_per_gender=MIN_PER_GENDER,
                        order=order)
        sizes = cd.sizes()
        judged = [c for c in cd.cells if c != UNKNOWN and cd.enough(c)]
        level = ALPHA / max(len(judged) * len(METRICS), 1)
        cells = []
        for c in cd.cells:
            row = {"cell": c, **sizes[c], "judged": c in judged, "mde": {}, "mde_floor": {}}
            if c in judged:
                for m in METRICS:
                    parts = variance_parts(cd.cell_metric(ARM, c, m))
                    row["mde"][m] = round(mde_at_seeds(parts, len(SEEDS), len(SEEDS), alpha_level=level,
                                                       df_entity=cd.cell_df(c)), 4)
                    row["mde_floor"][m] = round(z_total(level) * math.sqrt(parts["entity"]), 4)
            cells.append(row)
        out[pop] = {"persons": int(len(d.entity_ids)), "judged_cells": judged, "holm_first_level": level,
                    "cells": cells}
    return out


def plan() -> dict:
    from relext.evaluation.cell_gaps import cell_labels
    from relext.evaluation.study_counts import StudyCounts
    from wgbstats.design import DESIGN_VERSION
    from wikigenderbias.groups import EraBins

    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    runs = run_dirs()
    data = StudyCounts.from_runs(runs)
    eras = EraBins(ERA_EDGES)
    groupings = {}
    for g in GROUPINGS:
        labels, order = cell_labels(data.entity_ids, [g], eras=eras)
        groupings[g] = {"cells": order, "power": power(data, labels, order)}
    spec = claims()
    return {
        "study": "intersectional gender gaps of the cross-fitted none arm (issue #41, part 6)",
        "registered": "before the analysis: this plan is committed before scripts/study/groups_study.py is run",
        "history": HISTORY,
        "runs": {"dir": RUNS, "arm": ARM, "pattern": f"{ARM}-attention-seed{{S}}-fold{{K}}", "seeds": SEEDS,
                 "folds": FOLDS, "retrained": False},
        "inputs_sha256": inputs_sha256(runs), "design_version": DESIGN_VERSION,
        "populations": ["test", "all"], "era_edges": list(ERA_EDGES), "min_per_gender": MIN_PER_GENDER,
        "alpha": ALPHA, "n_resamples": N_RESAMPLES, "bootstrap_seed": BOOT_SEED, "metrics": list(METRICS),
        "interactions": INTERACTIONS, "ranges": list(RANGES), "claims": spec,
        "claims_sha256": hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest(),
        "groupings": groupings,
        "timing": {"wall_s": round(time.perf_counter() - t0, 1), "load_before": load, "cores": os.cpu_count()},
    }


def markdown(p: dict) -> str:
    lines = ["# Plan: intersectional gender gaps (issue #41, part 6)", "",
             f"Written by `scripts/study/groups_plan.py` before the analysis (`scripts/study/groups_study.py`). Runs: "
             f"`{p['runs']['dir']}`, arm `{p['runs']['arm']}`, seeds {p['runs']['seeds'][0]}-{p['runs']['seeds'][-1]} x "
             f"{p['runs']['folds']} folds, not retrained. Populations: the annotated test persons and all persons, side "
             f"by side. Era bins: edges {p['era_edges']}. Minimum {p['min_per_gender']} persons of each gender per "
             f"judged cell. Design version {p['design_version']}, {p['n_resamples']} resamples.", "",
             f"History: {p['history']}", "", "## Claims", ""]
    lines += [f"- **{c['family']}**: {c['claim']}; {c['test']}; {c['correction']}." for c in p["claims"]]
    lines += ["", "## Cells and power (MDE at 80% power, the family's first Holm level, 10 seeds; floor: "
              "the persons' part alone, no seed count decides a smaller effect)", ""]
    for g, gd in p["groupings"].items():
        for pop, pw in gd["power"].items():
            lines += [f"### {g}, population {pop} ({pw['persons']} persons; Holm's first level "
                      f"{pw['holm_first_level']:.2g})", "",
                      "| cell | men | women | judged | " + " | ".join(f"MDE {m[7:]} (floor)" for m in p["metrics"]) + " |",
                      "|---|---|---|---|" + "---|" * len(p["metrics"])]
            for c in pw["cells"]:
                mdes = [f"{c['mde'][m]:.3f} ({c['mde_floor'][m]:.3f})" if m in c["mde"] else "too few to estimate"
                        for m in p["metrics"]]
                lines.append(f"| {c['cell']} | {c['male']} | {c['female']} | {'yes' if c['judged'] else 'no'} | "
                             + " | ".join(mdes) + " |")
            lines.append("")
    t = p["timing"]
    lines.append(f"Wall time {t['wall_s']} s on {t['cores']} cores, load before {t['load_before']}.")
    for a in p.get("amendments", []):   # dated, appended after the analysis; never an edited claim
        lines += ["", f"## Amendment {a['date']}: {a['title']}", "", a["text"], "",
                  f"Result: {a['result'] or 'pending (the re-run follows this amendment' + chr(39) + 's commit).'}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    p = plan()
    atomic_write_json(OUT / "study_plan.json", p)
    atomic_write_text(OUT / "study_plan.md", markdown(p))
    print(f"wrote {OUT / 'study_plan.json'}, {OUT / 'study_plan.md'} ({p['timing']['wall_s']} s)")


if __name__ == "__main__":
    main()
