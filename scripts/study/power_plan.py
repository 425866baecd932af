"""The power plan of issue #26, before compute: the minimum detectable effect of every claim of
the debiasing study and of the CNN/PCNN x attention/average grid under today's protocol and under
person-level cross-fitting (5 folds, 3 / 5 / 10 seeds), from the committed per-entity counts.

    python scripts/study/power_plan.py              # -> results/re_crossfit/plan.{json,md} + the docs blocks
    python scripts/study/power_plan.py --docs-only  # only rewrite the generated blocks of docs/guide/debiasing.md

The docs page's blocks ``<!-- BEGIN generated:power-plan -->`` and ``<!-- BEGIN
generated:label-noise -->`` are rewritten from ``plan.json`` and ``label_noise.json``
(:func:`wgbstudies.power.plan_markdown`, :func:`wgbstudies.label_noise.label_noise_markdown`).

Method and assumptions: :mod:`wgbstudies.power`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUDY_RUNS = "results/re_debias/study/runs"
GRID_RUNS = "results/re_grid_cnn_pcnn/runs"
VARIANTS = ["none", "cda", "duplicate", "hard_debias", "anonymize"]
#: Issue #26's own figures (power under cross-fitting), to check the plan against.
ISSUE_FIGURES = {
    "The spouse F1 gap favours male articles (baseline)": 0.97,
    "CDA reduces the spouse F1 gap": 0.94,
    "CDA reduces the mean |F1 gap|": 0.50,
    "Hard-debiased embeddings reduce the mean |F1 gap|": 0.49,
    "CDA reduces the spouse F1 gap beyond training as long (equal-budget control)": 0.2,
}


DOCS = "docs/guide/debiasing.md"


def docs_blocks(out: Path) -> dict[str, str]:
    """The generated blocks of the docs page, from the committed plan and label-noise results."""
    import json

    from wgbstudies import label_noise, power

    blocks = {"power-plan": power.plan_markdown(json.loads((out / "plan.json").read_text()))}
    if (out / "label_noise.json").is_file():
        blocks["label-noise"] = label_noise.label_noise_markdown(json.loads((out / "label_noise.json").read_text()))
    return blocks


def fill_blocks(text: str, blocks: dict[str, str]) -> str:
    """``text`` with the body of every ``<!-- BEGIN generated:NAME -->`` .. ``<!-- END generated:NAME -->``
    block named in ``blocks`` replaced (other blocks untouched)."""
    import re

    def sub(m: re.Match) -> str:
        name = m.group("name")
        return m.group(0) if name not in blocks else m.group(1) + blocks[name].rstrip("\n") + "\n" + m.group(4)

    return re.sub(r"(<!-- BEGIN generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
                  sub, text, flags=re.S)


def write_docs(out: Path, page: Path) -> bool:
    from wgbcore.atomicio import atomic_write_text

    if not page.is_file():
        print(f"{page}: no docs page; generated blocks not written", file=sys.stderr)
        return False
    old = page.read_text(encoding="utf-8")
    new = fill_blocks(old, docs_blocks(out))
    if new != old:
        atomic_write_text(page, new)
    return new != old


def main(argv: list[str] | None = None) -> int:
    from relext.evaluation.study_counts import StudyCounts
    from wgbstudies import power
    from wgbstudies.claims import claim_specs, grid_claim_specs
    from wgbcore.atomicio import atomic_write_json
    from wgbcore.provenance import provenance

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/re_crossfit")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--bootstrap-seed", type=int, default=0)
    ap.add_argument("--rule", default="argmax", choices=["argmax", "threshold"])
    ap.add_argument("--docs", default=DOCS, help="the docs page whose generated blocks are rewritten")
    ap.add_argument("--docs-only", action="store_true", help="only rewrite the docs blocks from the committed JSON")
    args = ap.parse_args(argv)
    if args.docs_only:
        os.chdir(ROOT)
        print("docs blocks", "rewritten" if write_docs(Path(args.out), Path(args.docs)) else "unchanged")
        return 0
    t0 = time.perf_counter()
    load = [round(x, 2) for x in os.getloadavg()]
    os.chdir(ROOT)
    kw = dict(n_resamples=args.resamples, seed=args.bootstrap_seed)

    study = StudyCounts.from_runs(power.find_runs(STUDY_RUNS, keep=VARIANTS), rule=args.rule)
    grid = StudyCounts.from_runs(power.find_runs(GRID_RUNS, key="combo"), rule=args.rule)
    sections = {"debias": power.plan_section(study, claim_specs(VARIANTS), **kw),
                "grid": power.plan_section(grid, grid_claim_specs(sorted(grid.counts)), **kw)}
    sections["debias"]["runs_dir"], sections["grid"]["runs_dir"] = STUDY_RUNS, GRID_RUNS
    plan = {
        "meta": {**provenance(seed=args.bootstrap_seed), "command": "python scripts/study/power_plan.py",
                 "rule": args.rule, "n_resamples": args.resamples, "bootstrap_seed": args.bootstrap_seed,
                 "population": power.POPULATION, "test_population": power.TEST_POPULATION,
                 "folds": power.FOLDS, "seed_counts": list(power.SEED_COUNTS),
                 "planned_seeds": power.PLANNED_SEEDS, "goal_mde": power.GOAL_MDE, "alpha": power.ALPHA,
                 "power": power.POWER, "loadavg_before": load},
        "assumptions": power.assumptions(),
        "studies": sections,
    }
    plan["issue_check"], plan["issue_check_note"] = power.issue_check(sections["debias"], ISSUE_FIGURES)
    plan["meta"]["seconds"] = round(time.perf_counter() - t0, 1)
    out = Path(args.out)
    atomic_write_json(out / "plan.json", plan)
    from wgbcore.atomicio import atomic_write_text

    atomic_write_text(out / "plan.md", power.plan_document(plan).markdown())
    print(f"wrote {out / 'plan.json'} and {out / 'plan.md'} in {plan['meta']['seconds']} s")
    write_docs(out, Path(args.docs))
    for name, s in sections.items():
        sm = s["summary"]
        print(f"{name}: goal met by {len(sm['goal_met_at_planned_seeds'])} of {sm['gap_claims']} gap claims "
              f"at {power.PLANNED_SEEDS} seeds; decided: {len(sm['decided_at_planned_seeds'])} of {s['n_claims']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
