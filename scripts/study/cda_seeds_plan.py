"""Power before compute for more seeds of the cross-fitted debiasing study's `none` and `cda` arms.

At 5 seeds x 5 folds over all 5,169 persons, "CDA reduces the spouse F1 gap" is undecided
(`results/re_crossfit/debias/results.json`: measured -0.0089, MDE 0.0120; its design report says
about 36 seeds would decide it). More seeds shrink only the seed part of the variance (and the
seed x person interaction); the person part stays. This plan computes, from the committed fold
runs (seeds 0-4) and before any further run, each claim's MDE at 80% power if `none` and `cda`
had S seeds (the other arms staying at 5), for every claim comparing `cda` with `none` (the
baseline's own claims hardly move: their seed part is small), on all persons:

    MDE(S) = (t(1 - level/2) + t(0.8)) * sqrt(seed part * 5/S + person part + interaction * 5/S)

(the parts of :func:`wgbstats.verdicts.variance_parts`; the quantiles of Student's t at the
df that S seeds give, :func:`wgbstats.verdicts.mde_at_seeds`; under design version 1, when
the committed plan was written, they were the normal's), at two levels: the one Holm tested
the claim at in the committed 13-claim study, and Holm's first step (alpha/13, the strictest).
The runs below make a study of `none` and `cda` alone, whose family has fewer claims: these
levels are conservative for it. The runs it plans (the same command resumes and extends):

    wgb re debias-grid results/re_crossfit/debias_seeds --variants none,cda --seeds 0-35 \\
        --protocol crossfit --folds 5 --runs-dir results/re_crossfit/debias/runs --executor processes --workers 2

    python scripts/study/cda_seeds_plan.py   # -> results/re_crossfit/cda_seeds_plan.{json,md}
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RUNS = "results/re_crossfit/debias/runs"
STUDY = "results/re_crossfit/debias/results.json"
SEEDS, FOLDS, VARIANTS = list(range(5)), 5, ("none", "cda")
PLAN_SEEDS = (5, 10, 15, 20, 36)
ALPHA, M_CLAIMS = 0.05, 13


def runs(runs_dir: Path) -> dict[tuple[str, int], list[Path]]:
    out = {}
    for v in VARIANTS:
        for s in SEEDS:
            dirs = [runs_dir / f"{v}-attention-seed{s}-fold{k}" for k in range(FOLDS)]
            missing = [d for d in dirs if not (d / "entity_counts.npz").is_file()]
            if missing:
                raise SystemExit(f"{missing[0]}: no entity_counts.npz (the cross-fitted study's runs are needed)")
            out[(v, s)] = dirs
    return out


def mde_at(parts: dict, n0: int, s: float, level: float) -> float:
    from wgbstats.verdicts import mde_at_seeds

    return mde_at_seeds(parts, n0, s, alpha_level=level)


def plan() -> dict:
    from wgbstats.verdicts import variance_parts
    from wgbstudies.claims import claim_specs, design_for_runs

    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    study = json.loads((ROOT / STUDY).read_text())["design_report"]["populations"]["all"]["claims"]
    level_of = {c["claim"]: 1 - c["ci_adjusted_level"] for c in study}
    measured = {c["claim"]: c for c in study}
    design = design_for_runs(runs(ROOT / RUNS))
    rows = []
    for spec in claim_specs(["none", "cda", "duplicate", "hard_debias", "anonymize"]):
        members = spec.parts or []
        variants = {v for p in members for v in p.variants} | set(spec.variants)
        if variants != set(VARIANTS) or spec.name not in measured:   # the claims comparing cda with none
            continue
        ests = [design.estimate(p.fn, p.variants, seeds=SEEDS) for p in members] if members else \
            [design.estimate(spec.fn, spec.variants, seeds=SEEDS)]
        vparts = [variance_parts(e) for e in ests]
        row = {"claim": spec.name, "variants": sorted(variants), "value_measured": measured[spec.name]["value"],
               "verdict_measured": measured[spec.name]["verdict"], "mde_measured": measured[spec.name]["mde"],
               "level_holm": level_of[spec.name], "level_first_step": ALPHA / M_CLAIMS,
               "variance_parts": vparts if members else vparts[0]}
        for name, lev in (("holm", level_of[spec.name]), ("first_step", ALPHA / M_CLAIMS)):
            row[f"mde_{name}"] = {str(s): max(mde_at(p, len(SEEDS), s, lev) for p in vparts) for s in PLAN_SEEDS}
            row[f"mde_{name}_seed_floor"] = max(mde_at(p, len(SEEDS), 10 ** 9, lev) for p in vparts)
        rows.append(row)
    return {"meta": {"command": "python scripts/study/cda_seeds_plan.py", "runs_dir": RUNS, "study": STUDY,
                     "seeds_measured": SEEDS, "folds": FOLDS, "population": "all persons (5169)",
                     "plan_seeds": list(PLAN_SEEDS), "alpha": ALPHA, "claims_in_family": M_CLAIMS, "power": 0.8,
                     "loadavg_before": load, "seconds": round(time.perf_counter() - t0, 1)},
            "claims": rows}


def markdown(p: dict) -> str:
    seeds = p["meta"]["plan_seeds"]
    lines = ["Power plan for more `none` and `cda` seeds in the cross-fitted debiasing study, written by "
             "`python scripts/study/cda_seeds_plan.py` from the committed fold runs (seeds 0-4, 5 folds, all "
             "5169 persons) before any further run. MDE at 80% power with S seeds of `none` and `cda`, at the level "
             "Holm tested the claim at in the 13-claim study (first-step level alpha/13 in brackets; both conservative "
             "for a study of `none` and `cda` alone, whose family has fewer claims); "
             "'floor': infinitely many seeds (the persons' noise alone). 'measured': the committed study's verdict, "
             "effect and MDE; this plan's bootstrap over `none` and `cda` alone draws other replicates, so its "
             "5-seed MDE differs from the study's by the bootstrap's own noise.", "",
             "| claim | measured (5 seeds) | " + " | ".join(f"MDE, {s} seeds" for s in seeds) + " | floor |",
             "|---|---|" + "---|" * (len(seeds) + 1)]
    for r in p["claims"]:
        cells = [f"{r['mde_holm'][str(s)]:.4f} ({r['mde_first_step'][str(s)]:.4f})" for s in seeds]
        lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {r['verdict_measured']}; {r['value_measured']:+.4f}; "
                     f"MDE {r['mde_measured']:.4f} | "
                     + " | ".join(cells) + f" | {r['mde_holm_seed_floor']:.4f} ({r['mde_first_step_seed_floor']:.4f}) |")
    return "\n".join(lines) + "\n"


def main() -> int:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.provenance import provenance

    p = plan()
    p["meta"] = {**provenance(seed=0), **p["meta"]}
    out = ROOT / "results" / "re_crossfit" / "cda_seeds_plan"
    atomic_write_json(out.with_suffix(".json"), p)
    atomic_write_text(out.with_suffix(".md"), markdown(p))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
