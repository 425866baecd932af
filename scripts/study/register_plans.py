"""Retrospective ``plan.json`` of the committed studies (issue #38): their plans, as
:mod:`wgbstudies.plan` builds them from each study's config, with the facts of when their
claims, families and seeds were fixed, from git and the studies' ``timing.json``.

A study run from now on writes its own ``plan.json`` before its first run (``wgb re grid``,
``wgb re debias-grid``); the studies below ran before that, so each gets its registration status
by hand, from the record:

- ``before the runs``: a plan with its claims and seeds committed before the first run;
- ``during the runs, before any claim could be estimated``: the claims fixed after the first runs
  started, before any variant had the seeds a test needs (confirmatory, with that history);
- ``after the runs``: exploratory.

    python scripts/study/register_plans.py            # writes <study>/plan.json, refuses another plan
    python scripts/study/register_plans.py --check    # exit 1 when a plan.json is missing or differs

The study commands refuse a folder whose ``plan.json`` differs from the plan they would follow,
so run this before regenerating the committed results with today's code (the plans record
today's design version and claim names).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

V2 = ("2026-11-27", "design version 2 (issue #38): p-values and intervals studentized, value / se against the "
                    "seed reference of relext.design_reference (Student's t over the seeds where they may dominate), "
                    "instead of counting percentile-bootstrap replicates beyond 0; a correction of the inference "
                    "made after the results were read (a reviewer's recompute), not a choice among analyses")
RENAMED = ("2026-11-27", "one name, one definition (issue #38): a claim over fewer members than the paper names "
                         "carries its members in its name (its definition unchanged; `narrows` names the paper's)")

#: study folder -> (kind, registered, registered_at, note, history)
STUDIES: dict[str, dict] = {
    "results/re_debias/study": {
        "kind": "debias", "registered": "after the runs", "registered_at": None,
        "note": "No plan was written before its runs (test protocol, 80 runs, committed 2026-11-23 07:44, d0602b0); "
                "its claims were reworded and their family changed after its verdicts were read (issues #27, "
                "#38): exploratory.",
        "history": [RENAMED, V2]},
    "results/re_grid_cnn_pcnn": {
        "kind": "grid", "registered": "after the runs", "registered_at": None,
        "note": "No plan was written before its runs (test protocol, 20 runs from 2026-11-23 05:30, "
                "timing.json); its claims were reworded after its verdicts were read (issue #27): exploratory.",
        "history": [RENAMED, V2]},
    "results/re_crossfit/grid": {
        "kind": "grid", "registered": "before the runs", "registered_at": "2026-11-25T10:18:14+0000",
        "runs_finished": "0 of 100",
        "note": "Planned in results/re_crossfit/plan.json (studies.grid: its 15 claims, 5 seeds, 5 folds), "
                "written 2026-11-25 09:53:56 and committed 10:18:14 (3d0e8fd); its first fold run started at "
                "14:28:14 (timing.json).",
        "history": [("2026-11-25T10:18:14+0000", "plan committed with the power plan of issue #26 (3d0e8fd)"),
                    ("2026-11-25T14:28:14+0000", "first fold run started"), RENAMED, V2]},
    "results/re_crossfit/grid_all": {
        "kind": "grid", "registered": "after the runs", "registered_at": None,
        "note": "Its CNN/PCNN half are the cross-fitted grid's 100 fold runs, whose verdicts were committed "
                "(2026-11-25 14:30) before this grid was planned; the RNN/BiRNN MDEs were planned in "
                "results/re_crossfit/grid_rnn_plan.json (committed 15:55:12, 9b22c2d) before their first fold "
                "run (17:04:37), but the eight-combination family was chosen with half its data read: "
                "exploratory.",
        "history": [RENAMED, V2]},
    "results/re_crossfit/debias": {
        "kind": "debias", "registered": "during the runs, before any claim could be estimated",
        "registered_at": "2026-11-25T09:53:56+0000",
        "runs_finished": "1 of 125 (none seed 0 fold 0; no seed had all its folds)",
        "note": "Planned in results/re_crossfit/plan.json (power_plan.py, issue #26): 5 seeds, 5 folds, the "
                "variants, and since 09:53:56 the 13 claims this study reports. The plan's first version (12 "
                "claims) was written at 09:39:12 and committed at 09:43:27 (feb3d8c), 8 s after the first fold "
                "runs started (09:43:19, parts/a and parts/b timing.json); its claims were revised (12 -> 13: "
                "'birthDate has the smallest F1 gap' became 'Hypernym has the smallest F1 gap' and 'birthDate "
                "shows very little F1 gap'; the claims about every member became intersection-union tests) at "
                "09:53:56, committed 10:18:14 (3d0e8fd), ten minutes after the runs started and about three "
                "minutes after the first fold run finished (none seed 0 fold 0, ~09:51); the first seed with "
                "all five folds finished at ~10:20 and a claim could first be estimated (3 seeds of none) at "
                "~11:54, so the claims were fixed before any of them could be estimated.",
        "history": [("2026-11-25T09:39:12+0000", "plan written: 12 claims, 5 seeds, 5 folds"),
                    ("2026-11-25T09:43:19+0000", "first fold runs started (parts a: none, cda; b: duplicate, "
                                                 "hard_debias)"),
                    ("2026-11-25T09:43:27+0000", "plan committed (feb3d8c)"),
                    ("2026-11-25T09:51:00+0000", "first fold run finished (none seed 0 fold 0, from parts/a "
                                                 "timing.json: start + 449 s training + 11 s evaluation)"),
                    ("2026-11-25T09:53:56+0000", "plan revised to the 13 claims reported (committed 10:18:14, "
                                                 "3d0e8fd)"),
                    ("2026-11-25T10:20:00+0000", "first seed with all its folds (none seed 0, ~10:19:36)"),
                    ("2026-11-25T11:54:00+0000", "first claim estimable (none seeds 0-2, ~11:53:52)"),
                    RENAMED, V2]},
    "results/re_crossfit/debias_seeds": {
        "kind": "debias", "registered": "after the runs", "registered_at": None,
        "note": "The seeds (0-35) and folds (5) were fixed by scripts/study/cda_seeds_plan.py (its command, "
                "committed 2026-11-26 15:53:10, 1c63278) 4 s before its first fold run (15:53:14, timing.json); "
                "its claims and their family (Holm over its own 8 claims) were not in that plan: chosen after "
                "the 5-seed study's verdicts, whose seeds 0-4 it reuses; its verdicts were read at 7, 9 and 10 "
                "seeds (d4fb7b2, 4d3e03d, a2babb9). Exploratory; until the planned 36 seeds are in, interim: "
                "not decided.",
        "history": [("2026-11-26T15:53:10+0000", "seed count 36 committed (cda_seeds_plan.py, 1c63278)"),
                    ("2026-11-26T15:53:14+0000", "first fold run started"),
                    ("2026-11-26T16:27:20+0000", "verdicts committed at 7 seeds (d4fb7b2)"),
                    ("2026-11-26T17:07:17+0000", "verdicts committed at 9 seeds (4d3e03d)"),
                    ("2026-11-26T17:29:00+0000", "verdicts committed at 10 seeds (a2babb9)"),
                    RENAMED, V2]},
}


def build(folder: str, spec: dict) -> dict:
    from wgbstudies.grid import GridConfig
    from wgbstudies.debias import DebiasStudyConfig
    from wgbstudies.plan import grid_plan, study_plan

    out = ROOT / folder
    if spec["kind"] == "debias":
        config = DebiasStudyConfig(**json.loads((out / "study.json").read_text()))
        plan, grid = study_plan(config), config.grid_config()
    else:
        grid = GridConfig(**json.loads((out / "grid.json").read_text()))
        plan = grid_plan(grid)
    runs = grid.runs()
    done = sum((ROOT / grid.run_dir(out, r) / "DONE").exists() for r in runs)   # runs_dir: relative to the root
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return {"registered": spec["registered"], "registered_at": spec["registered_at"] or now,
            "runs_finished_at_registration": spec.get("runs_finished") or f"{done} of {len(runs)} (recorded {now[:10]})",
            "note": spec["note"], "history": [{"at": a, "what": w} for a, w in spec["history"]],
            "written_by": f"scripts/study/register_plans.py, a retrospective record written {now}", **plan}


def main(argv=None) -> int:
    from wgbstudies.plan import PLAN_FILE, first_difference, read_plan
    from wgbcore.atomicio import atomic_write_json

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check: exit 1 when a plan is missing or differs")
    ap.add_argument("--force", action="store_true", help="rewrite every plan.json (its record too), even one that differs")
    a = ap.parse_args(argv)
    bad = 0
    for folder, spec in STUDIES.items():
        if not (ROOT / folder).is_dir():
            continue
        plan = build(folder, spec)
        have = read_plan(ROOT / folder)
        diff = first_difference(have, plan) if have else "no plan.json"
        if have and not diff and not a.force:
            print(f"{folder}/{PLAN_FILE}: the same plan ({have['registered']})")
            continue
        if a.check or (have and not a.force):
            print(f"{folder}/{PLAN_FILE}: {diff if have else 'missing'}" + ("" if a.check else "; --force overwrites"))
            bad += 1
            continue
        atomic_write_json(ROOT / folder / PLAN_FILE, plan)
        print(f"{folder}/{PLAN_FILE}: written ({plan['registered']})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
