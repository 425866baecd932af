"""The intersectional study (issue #41, part 6): the analysis its committed plan fixed
(``results/groups/study_plan.json``, written by ``scripts/study/groups_plan.py``).

Refuses to run when the plan is missing, its claims differ from their recorded hash, or a run's
``entity_counts.npz`` differs from the sha256 the plan recorded. Reads the none arm's cross-fitted
fold runs (not retrained, not modified) and writes, per grouping (era, region, north_south) and
population (test, all; side by side), the per-cell table of :mod:`relext.evaluation.cell_gaps` with the plan's
interactions and ranges, the study's claims table, the HTML report with one plot per grouping:

    python scripts/study/groups_study.py   # -> results/groups/study/{results.json,results.md,report.html,*.png}
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PLAN = ROOT / "results/groups/study_plan.json"
OUT = ROOT / "results/groups/study"


def load_plan() -> dict:
    if not PLAN.is_file():
        raise SystemExit(f"{PLAN}: no plan; run scripts/study/groups_plan.py and commit it first")
    plan = json.loads(PLAN.read_text())
    if hashlib.sha256(json.dumps(plan["claims"], sort_keys=True).encode()).hexdigest() != plan["claims_sha256"]:
        raise SystemExit(f"{PLAN}: claims differ from their recorded sha256 (an edited plan)")
    for rel, digest in plan["inputs_sha256"].items():
        if hashlib.sha256((ROOT / rel).read_bytes()).hexdigest() != digest:
            raise SystemExit(f"{rel}: differs from the sha256 the plan recorded")
    return plan


def claims_table(results: dict, plan: dict) -> list[dict]:
    """One row per planned claim part: population, family, cells, metric, MDE, effect, interval, verdict."""
    rows = []
    for g, rep in results["groupings"].items():
        for pop, p in rep["populations"].items():
            for r in p["rows"]:
                rows.append({"population": pop, "family": f"within-cell gaps by {g}", "cells": r["cell"],
                             "metric": r["metric"], "men": r["male"], "women": r["female"], "mde": r["mde"],
                             "effect": r["gap"], "ci": r["ci"], "verdict": r["verdict"], "pooled": r["pooled"]})
            for i in p["interactions"]:
                rows.append({"population": pop, "family": f"interaction {' - '.join(i['cells'])}",
                             "cells": " - ".join(i["cells"]), "metric": i["metric"], "mde": i["mde"],
                             "effect": i["value"], "ci": i["ci"], "verdict": i["verdict"]})
            for a, b in p["interactions_too_few"]:
                rows.append({"population": pop, "family": f"interaction {a} - {b}", "cells": f"{a} - {b}",
                             "metric": "all", "mde": None, "effect": None, "ci": None,
                             "verdict": "too few to estimate"})
            for r in p["ranges"]:
                rows.append({"population": pop, "family": f"max - min over {g} cells",
                             "cells": f"max {r['max_cell']}, min {r['min_cell']}", "metric": r["metric"],
                             "mde": None, "effect": r["value"], "ci": r["ci"],
                             "verdict": (f"differ: {', '.join(' vs '.join(x) for x in r['pairs_excluding_zero'])}"
                                         if r["pairs_excluding_zero"] else "no pair differs"),
                             "driving_pair": r["driving_pair"]})
            if g in plan["ranges"] and len(p["judged_cells"]) < 2:
                rows.append({"population": pop, "family": f"max - min over {g} cells", "cells": ", ".join(p["judged_cells"]),
                             "metric": "all", "mde": None, "effect": None, "ci": None,
                             "verdict": "fewer than 2 cells with enough persons"})
    return rows


def _fmt(x, spec="+.3f"):
    return "-" if x is None else format(x, spec)


def _ci(ci):
    return "-" if not ci or None in ci else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def decided_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["verdict"] not in ("undecided", "too few to estimate", "no pair differs",
                                                    "unknown: counted, not judged")
            and not r["verdict"].startswith("fewer than")]


def report(results: dict, plan: dict, plots: dict[str, str]):
    from relext.evaluation.cell_gaps import add_section
    from wgbcore.render import Document

    doc = Document("Intersectional gender gaps: gender x birth era, gender x birthplace region")
    t = results["timing"]
    doc.para(f"The plan (`results/groups/study_plan.md`, committed before this analysis) fixed the claims, cells, "
             f"minimum sizes ({plan['min_per_gender']} persons of each gender) and power. Runs: the cross-fitted "
             f"`{plan['runs']['arm']}` arm (PCNN+attention), seeds {plan['runs']['seeds'][0]}-{plan['runs']['seeds'][-1]} "
             f"x {plan['runs']['folds']} folds, not retrained. Two populations side by side, never pooled: the annotated "
             f"test persons and all persons. {results['n_resamples']} bootstrap resamples (seed x person, persons "
             f"within gender x fold x population x cell); wall time {t['wall_s']} s on {t['cores']} cores at load "
             f"{t['load_before']}.")
    rows = results["claims"]
    doc.heading("Decided claims", 2)
    dec = decided_rows(rows)
    doc.table(["population", "family", "cells", "metric", "MDE", "effect", "interval", "verdict"],
              [[r["population"], r["family"], r["cells"], r["metric"], _fmt(r["mde"], ".3f"), _fmt(r["effect"]),
                _ci(r["ci"]), r["verdict"]] for r in dec])
    doc.para(f"{len(dec)} of {len(rows)} claim rows decided; every row with its MDE, interval and verdict is in "
             "`results.md` / `results.json` and in the sections below.")
    for g, rep in results["groupings"].items():
        add_section(doc, rep, plots.get(g), level=2)
    doc.heading("What no cell size here can decide", 2)
    doc.items(results["cannot_decide"])
    return doc


def cannot_decide(results: dict) -> list[str]:
    """From the results: cells under the minimum, and the floors below which no seed count decides."""
    from relext.evaluation.cell_gaps import UNKNOWN

    out = []
    for g, rep in results["groupings"].items():
        for pop, p in rep["populations"].items():
            small = [f"{c} ({n['male']} men, {n['female']} women)" for c, n in p["sizes"].items()
                     if c not in p["judged_cells"] and c != UNKNOWN]
            if small:
                out.append(f"{g}, {pop} persons: too few to estimate in " + "; ".join(small))
            if UNKNOWN in p["sizes"]:
                n = p["sizes"][UNKNOWN]
                out.append(f"{g}, {pop} persons: birthplace unknown to the gazetteer for {n['male']} men and "
                           f"{n['female']} women (counted, never judged: not a group)")
    out.append("gender values beyond female/male: the release has 0 persons with another value (results/groups/release), "
               "so no cell of non-binary or other persons exists to estimate")
    out.append("an effect below a judged cell's MDE floor (study_plan.md: the persons' part alone) is not decided by any "
               "number of seeds; only more persons in that cell would")
    return out


def main() -> None:
    from relext.evaluation.cell_gaps import cell_labels, cell_report, plot
    from relext.evaluation.study_counts import StudyCounts
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wikigenderbias.groups import EraBins

    plan = load_plan()
    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    runs = {(plan["runs"]["arm"], s): [ROOT / plan["runs"]["dir"] / f"{plan['runs']['arm']}-attention-seed{s}-fold{k}"
                                       for k in range(plan["runs"]["folds"])] for s in plan["runs"]["seeds"]}
    data = StudyCounts.from_runs(runs)
    eras = EraBins(tuple(plan["era_edges"]))
    groupings, plots = {}, {}
    for g in plan["groupings"]:
        labels, order = cell_labels(data.entity_ids, [g], eras=eras)
        if order != plan["groupings"][g]["cells"]:
            raise SystemExit(f"{g}: cells {order} differ from the plan's {plan['groupings'][g]['cells']}")
        groupings[g] = cell_report(data, labels, order, variant=plan["runs"]["arm"], grouping=g,
                                   metrics=plan["metrics"], min_per_gender=plan["min_per_gender"], alpha=plan["alpha"],
                                   method="holm", n_resamples=plan["n_resamples"], seed=plan["bootstrap_seed"],
                                   interactions=[tuple(x) for x in plan["interactions"].get(g, [])],
                                   ranges=g in plan["ranges"])
        plots[g] = plot(groupings[g], OUT / f"gaps_{g}.png").name
    results = {"plan": "results/groups/study_plan.json", "plan_claims_sha256": plan["claims_sha256"],
               "n_resamples": plan["n_resamples"], "groupings": groupings}
    results["claims"] = claims_table(results, plan)
    results["cannot_decide"] = cannot_decide(results)
    results["timing"] = {"wall_s": round(time.perf_counter() - t0, 1), "load_before": load, "cores": os.cpu_count()}
    doc = report(results, plan, plots)
    atomic_write_json(OUT / "results.json", results)
    atomic_write_text(OUT / "results.md", doc.markdown() + "\n## Every claim row\n\n" + claims_markdown(results["claims"]))
    atomic_write_text(OUT / "report.html", doc.html())
    print(f"wrote {OUT} ({results['timing']['wall_s']} s)")


def claims_markdown(rows: list[dict]) -> str:
    lines = ["| population | family | cells | metric | MDE | effect | interval | verdict |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['population']} | {r['family']} | {r['cells']} | {r['metric']} | {_fmt(r['mde'], '.3f')} | "
              f"{_fmt(r['effect'])} | {_ci(r['ci'])} | {r['verdict']} |" for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
