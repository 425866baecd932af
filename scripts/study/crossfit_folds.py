"""Write the cross-fitting fold plan of the embedded release: persons per fold by gender and
population, the plan's fingerprint (results/re_crossfit/folds.json + folds.md).

    python scripts/study/crossfit_folds.py [--folds 5] [--fold-seed 0]
"""
from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> None:
    from relext.protocols.crossfit import FoldSpec, plan_for
    from relext.protocols.data import load_dataset_dict
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--fold-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "re_crossfit")
    a = ap.parse_args(argv)
    ds = load_dataset_dict()
    spec = FoldSpec(folds=a.folds, fold_seed=a.fold_seed)
    plan = plan_for(ds, spec)
    summary = plan.summary()
    p = plan.persons
    summary["totals"] = {f"{g}_{pop}": int(((p.gender == g) & (p.population == pop)).sum())
                         for g in ("male", "female") for pop in ("test", "distant")}
    summary["dataset"] = "the embedded WikiGenderBias release"
    views = []
    for k in range(spec.folds):
        role = plan.role(k)
        views.append({"fold": k, **{r: int((role == r).sum()) for r in ("train", "validation", "test")}})
    summary["views"] = views
    atomic_write_json(a.out / "folds.json", summary)
    lines = [f"# Cross-fitting folds ({spec.folds} folds, fold seed {spec.fold_seed})", "",
             f"{summary['persons']} persons of {summary['dataset']}; plan fingerprint `{summary['fingerprint'][:16]}`.",
             "", "| fold | persons | men (test) | men (distant) | women (test) | women (distant) | "
             "trains on | selects on | predicts |", "|---|---|---|---|---|---|---|---|---|"]
    for f, v in zip(summary["folds"], views):
        lines.append(f"| {f['fold']} | {f['persons']} | {f['male_test']} | {f['male_distant']} | {f['female_test']} | "
                     f"{f['female_distant']} | {v['train']} | {v['validation']} | {v['test']} |")
    atomic_write_text(a.out / "folds.md", "\n".join(lines) + "\n")
    print(a.out / "folds.md")


if __name__ == "__main__":
    main()
