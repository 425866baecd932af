#!/usr/bin/env python
"""Convert the authors' WikiGenderBias release into the embedded benchmark folder (run once).

    python scripts/convert_release.py ../shared/data/wikigenderbias/Wikigender.json.gz

writes wikigenderbias/data/wikigenderbias/ (parquet + dataset card + report.json).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from wikigenderbias.release import convert_release, data_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("release", type=Path, help="Wikigender.json or Wikigender.json.gz")
    ap.add_argument("--out", type=Path, default=data_dir(), help="benchmark folder (default: the embedded one)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    folder = convert_release(args.release, args.out, overwrite=True)
    report = json.loads((folder / "report.json").read_text())
    print(f"wrote {folder} in {time.perf_counter() - t0:.1f} s")
    print(json.dumps(report["spans"]["total"], indent=2))


if __name__ == "__main__":
    main()
