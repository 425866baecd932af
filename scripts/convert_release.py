#!/usr/bin/env python
"""Convert the authors' WikiGenderBias release into the embedded benchmark folder (run once).

    python scripts/convert_release.py ../shared/data/wikigenderbias/Wikigender.json.gz

writes wikigenderbias/data/wikigenderbias/ (parquet + dataset card + report.json).

    python scripts/convert_release.py --card-only

rewrites only the dataset card and report.json of the folder from its data files (their
fingerprint, which keys the `datasets` cache), leaving the parquet files byte for byte as they are.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from wikigenderbias.release import DESCRIPTION, convert_release, data_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("release", type=Path, nargs="?", help="Wikigender.json or Wikigender.json.gz")
    ap.add_argument("--out", type=Path, default=data_dir(), help="benchmark folder (default: the embedded one)")
    ap.add_argument("--card-only", action="store_true",
                    help="only rewrite README.md and report.json (the data fingerprint) of an existing folder")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.card_only:
        from wikigenderbias.card import refresh_card

        fp = refresh_card(args.out, description=DESCRIPTION)
        print(f"rewrote {args.out}/README.md and report.json in {time.perf_counter() - t0:.1f} s; "
              f"data fingerprint sha256:{fp['sha256']}")
        return
    if args.release is None:
        ap.error("the release file is required (or --card-only)")
    folder = convert_release(args.release, args.out, overwrite=True)
    report = json.loads((folder / "report.json").read_text())
    print(f"wrote {folder} in {time.perf_counter() - t0:.1f} s")
    print(json.dumps(report["spans"]["total"], indent=2))


if __name__ == "__main__":
    main()
