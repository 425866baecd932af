"""Power and plan before compute for the cross-fitted grid at more seeds (issue #39, item 6): CNN and
PCNN at 10 seeds, RNN and BiRNN at 5.

The cross-fitted grid (`results/re_crossfit/grid`: CNN, PCNN, RNN, BiRNN x attention, average; 5
folds over all 5,169 persons, fold seed 0) has CNN/PCNN at seeds 0-4 and RNN/BiRNN at seeds 0-2,
and its verdicts at those seeds were read. This plan is written from those committed fold runs,
before any run at the new seeds; because the 5- and 3-seed verdicts were read, the verdicts at the
planned seeds are a second look and are registered as exploratory:

* claims and family: the grid's claims (`wgbstudies.claims.grid_claim_specs` over the eight
  combinations; their definitions hashed below), Holm over all of them at alpha 0.05,
  intersection-union tests for claims over several members, both populations reported (all
  persons; the annotated test persons);
* seeds and folds: CNN and PCNN seeds 0-9, RNN and BiRNN seeds 0-4, x 5 folds (fold seed 0): 100 and
  40 new fold runs. A claim is estimated on the seeds its members share, so a claim over a
  recurrent combination rests on at most 5 seeds;
* stopping rule: a fixed sample; verdicts once every planned fold run is done; a look before that
  shows estimates labelled "interim: not decided";
* the MDE of each claim at 80% power now and at the planned seeds, under the design layer's seed
  reference (`wgbstats.verdicts.mde_at_seeds`, design version 2), at Holm's first step (alpha / the
  number of claims; conservative: later steps test at larger levels).

    python scripts/study/grid_ten_seeds_plan.py   # -> results/re_crossfit/grid_ten_seeds_plan.{json,md}

The runs it plans (resumable; the same command continues where it stopped):

    wgb re grid --out results/re_crossfit/grid --encoders cnn,pcnn,rnn@0-4,birnn@0-4 --selectors attention,average \\
        --seeds 0-9 --protocol crossfit --folds 5 --runs-dir results/re_crossfit/grid/runs --executor processes \\
        --set conv_impl=dense --amend-plan "the ten-seed plan (results/re_crossfit/grid_ten_seeds_plan.md)"

``--set conv_impl=dense``: the committed runs are dense, and PCNN's default became the gather path after
its equivalence study; a run's identity names its path, so without it the grid refuses to mix them.
``--amend-plan``: the grid folder's own plan.json was registered for CNN/PCNN at seeds 0-4; this plan
extends it (registered after runs had finished: exploratory, as above).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RUNS = "results/re_crossfit/grid/runs"
ENCODERS, SELECTORS, FOLDS, ALPHA = ("cnn", "pcnn", "rnn", "birnn"), ("attention", "average"), 5, 0.05
SEEDS_NOW = {"cnn": range(5), "pcnn": range(5), "rnn": range(3), "birnn": range(3)}
SEEDS_PLAN = {"cnn": range(10), "pcnn": range(10), "rnn": range(5), "birnn": range(5)}


def committed_runs() -> dict[tuple[str, int], list[Path]]:
    runs = {}
    for enc in ENCODERS:
        for sel in SELECTORS:
            for s in SEEDS_NOW[enc]:
                dirs = [ROOT / RUNS / f"{enc}-{sel}-seed{s}-fold{k}" for k in range(FOLDS)]
                missing = [d for d in dirs if not (d / "entity_counts.npz").is_file()]
                if missing:
                    raise SystemExit(f"{missing[0]}: no entity_counts.npz (the committed fold runs are needed)")
                runs[(f"{enc}-{sel}", s)] = dirs
    return runs


def _planned_seeds(variants) -> int:
    return min(len(SEEDS_PLAN[v.split("-")[0]]) for v in variants)


def plan() -> dict:
    from wgbstudies.claims import design_for_runs, grid_claim_specs, population_views
    from wgbstudies.plan import claims_sha256
    from wgbstats.design import DESIGN_VERSION
    from wgbstats.verdicts import mde_at_seeds, variance_parts

    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    runs = committed_runs()
    combos = sorted({c for c, _ in runs})
    specs = grid_claim_specs(combos)
    m = len(specs)
    design = design_for_runs(runs, rule="argmax", n_resamples=2000, seed=0)
    rows = []
    for pop, d in population_views(design):
        for spec in specs:
            members = spec.parts or []
            items = [(p.fn, p.variants) for p in members] if members else [(spec.fn, spec.variants)]
            ests = [d.estimate(fn, list(vs)) for fn, vs in items]
            parts = [variance_parts(e) for e in ests]
            n_now = min(e.n_seeds for e in ests)
            n_plan = min(_planned_seeds(vs) for _, vs in items)
            df_e = ests[0].df_entity
            lev_for, lev_against = ALPHA / m, ALPHA / m / len(items)
            rows.append({
                "population": pop, "claim": spec.name, "variants": sorted(spec.variants), "parts": len(items),
                "seeds_now": n_now, "seeds_planned": n_plan,
                "mde_now": max(mde_at_seeds(p, n_now, n_now, alpha_level=lev_for, df_entity=df_e) for p in parts),
                "mde_planned": max(mde_at_seeds(p, n_now, n_plan, alpha_level=lev_for, df_entity=df_e)
                                   for p in parts),
                "mde_planned_against": max(mde_at_seeds(p, n_now, n_plan, alpha_level=lev_against,
                                                        df_entity=df_e) for p in parts),
                "mde_seed_floor": max(mde_at_seeds(p, n_now, 10 ** 9, alpha_level=lev_for, df_entity=df_e)
                                      for p in parts)})
    new_runs = sum((len(SEEDS_PLAN[e]) - len(SEEDS_NOW[e])) * len(SELECTORS) * FOLDS for e in ENCODERS)
    return {"meta": {"command": "python scripts/study/grid_ten_seeds_plan.py",
                     "registered": "after its first seeds were read (exploratory)",
                     "registration_note": "written before any fold run at the new seeds (CNN/PCNN 5-9, RNN/BiRNN "
                                          "3-4), but the grid's verdicts at CNN/PCNN seeds 0-4 and RNN/BiRNN 0-2 "
                                          "had been read: the verdicts at the planned seeds are a second look",
                     "study": "results/re_crossfit/grid", "runs_dir": RUNS,
                     "seeds_now": {e: list(v) for e, v in SEEDS_NOW.items()},
                     "seeds_planned": {e: list(v) for e, v in SEEDS_PLAN.items()},
                     "folds": FOLDS, "fold_seed": 0, "new_fold_runs": new_runs, "alpha": ALPHA,
                     "paths": "the new seeds train with the paths that trained the committed ones (conv_impl "
                              "'dense', the recurrent encoders' legacy path); a faster path joins only after its "
                              "equivalence study passes, and a run's identity names its path, so a study never "
                              "mixes paths silently",
                     "family": f"the grid's {m} claims, Holm", "claims_in_family": m,
                     "claims_sha256": claims_sha256(specs), "claims": [s.name for s in specs],
                     "design_version": DESIGN_VERSION, "power": 0.8,
                     "stopping_rule": "fixed sample: verdicts once every planned fold run is done; earlier looks "
                                      "are 'interim: not decided'",
                     "loadavg_before": load, "seconds": round(time.perf_counter() - t0, 1)},
            "claims": rows}


def markdown(p: dict) -> str:
    m = p["meta"]
    lines = [f"Plan, written by `{m['command']}` from the committed fold runs (CNN/PCNN seeds 0-4, RNN/BiRNN "
             f"0-2), {m['registered']}: {m['registration_note']}. CNN and PCNN at seeds 0-9, RNN and BiRNN at "
             f"0-4, x {m['folds']} folds ({m['new_fold_runs']} new fold runs); {m['family']} at alpha "
             f"{m['alpha']} (claims sha256 `{m['claims_sha256'][:16]}`, design version {m['design_version']}); "
             f"stopping rule: {m['stopping_rule']}. Paths: {m['paths']}. MDE at 80% power at Holm's first step (alpha/"
             f"{m['claims_in_family']}) with the seed reference, on the seeds a claim's members share; "
             "'against': the level an intersection-union claim's evidence against needs (Bonferroni over "
             "its parts); 'floor': infinitely many seeds.", ""]
    for pop in dict.fromkeys(r["population"] for r in p["claims"]):
        lines += [f"**{pop}**", "", "| claim | seeds now | MDE now | seeds planned | MDE planned | "
                  "planned, against | floor |", "|---|---|---|---|---|---|---|"]
        for r in p["claims"]:
            if r["population"] == pop:
                lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {r['seeds_now']} | {r['mde_now']:.4f} | "
                             f"{r['seeds_planned']} | {r['mde_planned']:.4f} | {r['mde_planned_against']:.4f} | "
                             f"{r['mde_seed_floor']:.4f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.provenance import provenance

    p = plan()
    p["meta"] = {**provenance(seed=0), **p["meta"]}
    out = ROOT / "results" / "re_crossfit" / "grid_ten_seeds_plan"
    atomic_write_json(out.with_suffix(".json"), p)
    atomic_write_text(out.with_suffix(".md"), markdown(p))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
