"""Power and plan before compute for the cross-fitted debiasing study at 10 seeds per arm.

The cross-fitted debiasing study (`results/re_crossfit/debias`: PCNN+attention, arms none, cda,
duplicate, hard_debias, anonymize; 5 folds over all 5,169 persons) has 5 seeds of every arm
(none and cda have 10, run for the none+cda seeds study). Issue #39 asks for every arm at >= 10
seeds. This plan is written from the committed fold runs of seeds 0-4, before any run of
anonymize, duplicate or hard_debias at seeds 5-9 -- but after none and cda seeds 5-9 were run and
read in the none+cda seeds study, so the 10-seed verdicts are exploratory (registered "after some of
its runs"); the 5-seed study stays the one registered before its claims could be estimated:

* claims and family: the study's 13 claims (`wgbstudies.claims.claim_specs` over the five arms;
  their definitions hashed below), Holm over the 13 at alpha 0.05, intersection-union tests for
  claims over several variants, both populations reported (all persons; the annotated test persons);
* seeds and folds: seeds 0-9 of every arm x 5 folds = 250 fold runs (fold seed 0);
* stopping rule: a fixed sample. Verdicts are made once, when all 250 fold runs are done; a look
  before that shows estimates labelled "interim: not decided";
* the MDE of each claim at 80% power with 5 seeds (today) and 10 seeds of every arm, under the
  design layer's seed reference (`wgbstats.verdicts.mde_at_seeds`, design version 2), at
  Holm's first step alpha/13 (conservative: later steps test at larger levels), on all persons.

    python scripts/study/debias_ten_seeds_plan.py   # -> results/re_crossfit/debias_ten_seeds_plan.{json,md}

The runs it plans (resumable; the same command continues where it stopped):

    wgb re debias-grid results/re_crossfit/debias --variants none,cda,duplicate,hard_debias,anonymize \\
        --seeds 0-9 --protocol crossfit --folds 5 --runs-dir results/re_crossfit/debias/runs --executor processes
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
VARIANTS = ("none", "cda", "duplicate", "hard_debias", "anonymize")
SEEDS_NOW, PLAN_SEEDS, FOLDS = list(range(5)), list(range(10)), 5
ALPHA, M_CLAIMS = 0.05, 13


def plan() -> dict:
    from wgbstats.design import DESIGN_VERSION, Design
    from relext.evaluation.study_counts import StudyCounts
    from wgbstats.verdicts import mde_at_seeds, variance_parts
    from wgbstudies.claims import claim_specs, population_views
    from wgbstudies.plan import claims_sha256

    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    runs = {}
    for v in VARIANTS:
        for s in SEEDS_NOW:
            dirs = [ROOT / RUNS / f"{v}-attention-seed{s}-fold{k}" for k in range(FOLDS)]
            missing = [d for d in dirs if not (d / "entity_counts.npz").is_file()]
            if missing:
                raise SystemExit(f"{missing[0]}: no entity_counts.npz (the committed fold runs are needed)")
            runs[(v, s)] = dirs
    specs = claim_specs(list(VARIANTS))
    design = Design(StudyCounts.from_runs(runs), n_resamples=2000, seed=0)
    rows = []
    for pop, d in population_views(design):
        for spec in specs:
            members = spec.parts or []
            ests = ([d.estimate(p.fn, p.variants, seeds=SEEDS_NOW) for p in members] if members
                    else [d.estimate(spec.fn, spec.variants, seeds=SEEDS_NOW)])
            parts = [variance_parts(e) for e in ests]
            df_e = ests[0].df_entity
            lev = ALPHA / M_CLAIMS / (len(members) if members else 1)   # a part against: Bonferroni over parts
            lev_for = ALPHA / M_CLAIMS
            rows.append({
                "population": pop, "claim": spec.name, "variants": sorted(spec.variants),
                "parts": len(members) or 1, "value_now": [e.value for e in ests],
                "mde_5_seeds": max(mde_at_seeds(p, 5, 5, alpha_level=lev_for, df_entity=df_e) for p in parts),
                "mde_10_seeds": max(mde_at_seeds(p, 5, 10, alpha_level=lev_for, df_entity=df_e) for p in parts),
                "mde_10_seeds_against": max(mde_at_seeds(p, 5, 10, alpha_level=lev, df_entity=df_e) for p in parts),
                "mde_seed_floor": max(mde_at_seeds(p, 5, 10 ** 9, alpha_level=lev_for, df_entity=df_e) for p in parts)})
    return {"meta": {"command": "python scripts/study/debias_ten_seeds_plan.py", "registered": "after some of its runs (exploratory)",
                     "registration_note": "written before any run of anonymize, duplicate or hard_debias at seeds 5-9, "
                                          "but none and cda seeds 5-9 had been run and read (the none+cda seeds study, "
                                          "results/re_crossfit/debias_seeds) before it: its verdicts are exploratory",
                     "study": "results/re_crossfit/debias", "runs_dir": RUNS, "variants": list(VARIANTS),
                     "seeds": PLAN_SEEDS, "folds": FOLDS, "fold_seed": 0, "fold_runs": len(VARIANTS) * 10 * FOLDS,
                     "seeds_measured": SEEDS_NOW, "alpha": ALPHA, "family": "the 13 claims, Holm",
                     "claims_in_family": M_CLAIMS, "claims_sha256": claims_sha256(specs),
                     "claims": [s.name for s in specs], "design_version": DESIGN_VERSION, "power": 0.8,
                     "stopping_rule": "fixed sample: verdicts once all 250 fold runs are done; earlier looks are "
                                      "'interim: not decided'",
                     "loadavg_before": load, "seconds": round(time.perf_counter() - t0, 1)},
            "claims": rows}


def markdown(p: dict) -> str:
    m = p["meta"]
    lines = [f"Plan, written by `{m['command']}` from the committed fold runs (seeds 0-4), {m['registered']}: "
             f"{m['registration_note']}. Every arm at seeds 0-9 x 5 folds "
             f"({m['fold_runs']} fold runs); the 13 claims under Holm at alpha 0.05 (claims sha256 "
             f"`{m['claims_sha256'][:16]}`, design version {m['design_version']}); stopping rule: {m['stopping_rule']}. "
             "MDE at 80% power at Holm's first step (alpha/13), with the seed reference; 'against': the level an "
             "intersection-union claim's evidence against needs (Bonferroni over its parts); 'floor': infinitely "
             "many seeds.", ""]
    for pop in dict.fromkeys(r["population"] for r in p["claims"]):
        lines += [f"**{pop}**", "", "| claim | MDE, 5 seeds | MDE, 10 seeds | 10 seeds, against | floor |",
                  "|---|---|---|---|---|"]
        for r in p["claims"]:
            if r["population"] == pop:
                lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {r['mde_5_seeds']:.4f} | "
                             f"{r['mde_10_seeds']:.4f} | {r['mde_10_seeds_against']:.4f} | {r['mde_seed_floor']:.4f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.provenance import provenance

    p = plan()
    p["meta"] = {**provenance(seed=0), **p["meta"]}
    out = ROOT / "results" / "re_crossfit" / "debias_ten_seeds_plan"
    atomic_write_json(out.with_suffix(".json"), p)
    atomic_write_text(out.with_suffix(".md"), markdown(p))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
