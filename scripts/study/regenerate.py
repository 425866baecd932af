"""Re-aggregate committed studies under today's rules, training nothing: each folder's own config
(``study.json`` of a debiasing study, ``grid.json`` of a grid) is read back and the study rerun with
``train=False``, so the verdicts, the claims tables and the pages are rewritten from the committed
count files with exactly the configuration they were made with (the command line that made them is
not needed). Its ``plan.json`` must be the plan today's code builds from that config
(``scripts/study/register_plans.py``), or the study refuses to run.

    python scripts/study/regenerate.py results/re_crossfit/debias_seeds [more folders] [--no-plots]
    python scripts/study/regenerate.py --all        # every committed study folder with a plan.json

Run from the repository root (the configs' ``runs_dir`` are relative to it).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: the committed studies, in the order their pages depend on them
STUDIES = ("results/re_debias/study", "results/re_grid_cnn_pcnn", "results/re_crossfit/grid",
           "results/re_crossfit/grid_all", "results/re_crossfit/debias", "results/re_crossfit/debias_seeds")


def regenerate(folder: str | Path, *, plots: bool = True) -> dict:
    from wgbstudies.grid import GridConfig, run_grid
    from wgbstudies.debias import DebiasStudyConfig, run_study

    out = Path(folder)
    if (out / "study.json").is_file():
        config = DebiasStudyConfig(**json.loads((out / "study.json").read_text()))
        return run_study(config, out, progress=False, plots=plots, train=False)
    if (out / "grid.json").is_file():
        config = GridConfig(**json.loads((out / "grid.json").read_text()))
        return run_grid(config, out, progress=False, plots=plots, train=False)
    raise SystemExit(f"{out}: neither study.json nor grid.json: not a study folder")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help=f"the committed studies: {', '.join(STUDIES)}")
    ap.add_argument("--no-plots", action="store_true", help="leave the PNG figures as they are")
    a = ap.parse_args(argv)
    folders = list(a.folders) + ([Path(s) for s in STUDIES if (ROOT / s).is_dir()] if a.all else [])
    if not folders:
        ap.error("name a study folder or --all")
    for f in folders:
        t0 = time.perf_counter()
        try:
            s = regenerate(f, plots=not a.no_plots)
        except ValueError as exc:
            print(f"{f}: {exc}", file=sys.stderr)
            return 1
        rep = s.get("design_report") or {}
        st = (rep.get("plan") or {}).get("label", "no claims")
        print(f"{f}: {len(rep.get('claims', []))} claims ({st}) in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
