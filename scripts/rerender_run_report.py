"""Render a committed `wgb run` report again from its own report.json, with today's templates.

    python scripts/rerender_run_report.py results/wgb_run/quick

Nothing is computed: the analysis, config, settings and timings are read from FOLDER/report.json
and passed to :func:`wgb.pipeline.report.write_report`, which writes report.md, report.html, the
charts and report.json (the same bytes when the analysis is unchanged) into FOLDER. For a change of
wording or formatting only (e.g. issue 40: counts as whole numbers, "too few seeds" instead of a
p-value below three seeds); a change of numbers needs the run itself.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wgb.pipeline.config import PipelineConfig  # noqa: E402
from wgb.pipeline.report import write_report  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a report folder holding report.json")
    ap.add_argument("--out", type=Path, default=None, help="write here instead of FOLDER")
    args = ap.parse_args(argv)
    rep = json.loads((args.folder / "report.json").read_text(encoding="utf-8"))
    write_report(args.out or args.folder, cfg=PipelineConfig(**rep["config"]), settings=rep["settings"],
                 analysis=rep["analysis"], extraction=rep["extraction"], link_reports=rep["fb13_links"],
                 timings=rep["timings"])
    print(f"wrote {args.out or args.folder}")


if __name__ == "__main__":
    main()
