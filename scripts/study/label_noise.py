"""Label-noise sensitivity of issue #26: the share of spouse bags none of whose sentences has a
marriage word, by gender, for the annotated test persons and the distant (train / validation)
persons of the embedded release; and the spouse F1 gap with and without such bags for every
committed prediction set under ``results/`` (a folder with ``male_test.jsonl`` + ``female_test.jsonl``).

    python scripts/study/label_noise.py        # -> results/re_crossfit/label_noise.{json,md}

Word lists and method: :mod:`wgbstudies.label_noise`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Issue #26's figures: women's and men's test spouse bags without a marriage word.
ISSUE_RATES = {"female": 0.112, "male": 0.067}


def prediction_sets(root: Path) -> list[Path]:
    """Committed test-protocol prediction folders under ``root`` (a fold run's predictions are one
    part of a cross-fitted set, not a set: skipped)."""
    return sorted(p for p in root.rglob("predictions")
                  if p.is_dir() and (p / "male_test.jsonl").is_file() and (p / "female_test.jsonl").is_file()
                  and not any(re.search(r"-fold\d+$", part) for part in p.parts))


def main(argv: list[str] | None = None) -> int:
    from wgbstudies import label_noise as ln
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.provenance import provenance

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/re_crossfit")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--bootstrap-seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load = [round(x, 2) for x in os.getloadavg()]
    os.chdir(ROOT)
    ev = ln.spouse_evidence()
    wide = ln.spouse_evidence(words=ln.MARRIAGE_WORDS | ln.ENGAGEMENT_WORDS)
    rates = {"marriage_words": ln.rates(ev), "with_engagement_words": ln.rates(wide)}
    sets = prediction_sets(Path("results"))
    gaps = []
    for p in sets:
        res = ln.spouse_gap_sensitivity([ln.read_run_rows(p)], ev, n_resamples=args.resamples,
                                        seed=args.bootstrap_seed)
        run_json = p.parent / "run.json"
        system = json.loads(run_json.read_text()).get("system") if run_json.is_file() else None
        gaps.append({"predictions": str(p), "system": system, **res})
    out = {
        "meta": {**provenance(seed=args.bootstrap_seed), "command": "python scripts/study/label_noise.py",
                 "data": "the embedded release (wikigenderbias.load)", "loadavg_before": load},
        "marriage_words": sorted(ln.MARRIAGE_WORDS), "engagement_words": sorted(ln.ENGAGEMENT_WORDS),
        "rates": rates,
        "issue_rates_test": ISSUE_RATES,
        "spouse_gap": gaps,
        "note": (f"{len(sets)} committed prediction set(s) under results/; the debiasing study and the grid "
                 "commit per-entity counts only (no predictions), so their gaps without such bags wait for "
                 "the cross-fitted runs' predictions."),
    }
    out["meta"]["seconds"] = round(time.perf_counter() - t0, 1)
    atomic_write_json(Path(args.out) / "label_noise.json", out)
    atomic_write_text(Path(args.out) / "label_noise.md", ln.report_document(out).markdown())
    for lst, r in rates.items():
        print(lst, {p: {g: f"{v['without_word']}/{v['spouse_bags']}" for g, v in d.items()} for p, d in r.items()})
    print(f"wrote {args.out}/label_noise.json and .md in {out['meta']['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
