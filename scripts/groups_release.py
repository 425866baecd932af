#!/usr/bin/env python
"""The person-level groups of the embedded release, committed (issue #41 part 1).

    python scripts/groups_release.py

writes results/groups/release/: ``persons.csv`` (the attribute table of
:func:`wikigenderbias.groups.attribute_table`, one row per person), ``cells.json`` (cell counts,
unknowns, mapping coverage, provenance) and ``README.md`` (the same as tables, with the spot check
of 30 random birthplace mappings: the sample is drawn here, the verdicts are read from the
hand-written ``spot_check_verdicts.json``; a sampled place without a verdict is an error).
"""
from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

from wgbcore.atomicio import atomic_write_json, atomic_write_text
from wgbcore.provenance import package_version
from wikigenderbias.groups import attribute_table

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "groups" / "release"
SEED, N_CHECK = 41, 30


def _md_table(df) -> list[str]:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join([df.index.name or "", *cols]) + " |", "|" + "---|" * (len(cols) + 1)]
    for i, row in df.iterrows():
        lines.append("| " + " | ".join([str(i), *(f"{int(v):,}" for v in row)]) + " |")
    return lines


def main() -> int:
    t0 = time.perf_counter()
    table = attribute_table()
    summary = table.summary()
    f = table.frame
    sample = f.drop_duplicates("birth_place").sort_values("birth_place").sample(N_CHECK, random_state=SEED)
    verdicts = json.loads((OUT / "spot_check_verdicts.json").read_text(encoding="utf-8"))["verdicts"]
    missing = [p for p in sample["birth_place"] if p not in verdicts]
    if missing:
        print(f"{OUT / 'spot_check_verdicts.json'}: no hand verdict for {missing}", file=sys.stderr)
        return 1
    checked = [{"place": r.birth_place, "country": r.country, "region": r.region, "north_south": r.north_south,
                "level": r.place_level, "derivation": r.place_derivation, "verdict": verdicts[r.birth_place]}
               for r in sample.itertuples()]
    tally = {k: sum(c["verdict"].split(" ")[0] == k for c in checked) for k in ("correct", "wrong", "unmapped")}
    summary["spot_check"] = {"seed": SEED, "n": N_CHECK, "tally": tally, "places": checked}
    summary["provenance"] = {"wgb_version": package_version(), "python": platform.python_version(),
                             "script": "scripts/groups_release.py", "seconds": round(time.perf_counter() - t0, 1)}
    atomic_write_text(OUT / "persons.csv", f.to_csv(index=False))
    atomic_write_json(OUT / "cells.json", summary)
    cov = summary["coverage"]
    lines = ["# Person-level groups of the WikiGenderBias release", "",
             "Written by `scripts/groups_release.py` (`wgb data groups` prints the same cells); "
             "`persons.csv` is the attribute table, `cells.json` these numbers.", "",
             f"{summary['persons']:,} persons, each with exactly one birthDate and one birthPlace fact; "
             f"{cov['distinct_places']:,} distinct birthplaces.", "", "## Rules", ""]
    lines += [f"- **{k}**: {v}" for k, v in summary["rules"].items()]
    lines += ["", "## Gender x birth era", ""] + _md_table(table.cells("gender", "era"))
    lines += ["", "## Gender x region", ""] + _md_table(table.cells("gender", "region"))
    lines += ["", "## Gender x Global North/South", ""] + _md_table(table.cells("gender", "north_south"))
    lines += ["", "## Unknown (counted, never dropped)", "",
              ", ".join(f"{k}: {v:,}" for k, v in summary["unknown"].items()) + " persons.", "",
              "## Birthplace mapping coverage", "", "| gazetteer rule | persons | distinct places |", "|---|---|---|"]
    lines += [f"| {lv} | {cov['persons_by_level'][lv]:,} | {cov['places_by_level'][lv]:,} |" for lv in cov["persons_by_level"]]
    lines += ["", f"A country for {cov['persons_with_country']:,} persons ({cov['share_with_country']:.1%}), a region for "
              f"{cov['persons_with_region']:,} ({cov['share_with_region']:.1%}); {cov['ambiguous_places']:,} distinct "
              f"places ({cov['ambiguous_persons']:,} persons) are city names shared by places in several countries "
              "that no qualifier decides (the most populous namesake taken; `place_ambiguous` > 0, the namesakes "
              f"in `place_derivation`), {cov['qualifier_undecided_persons']:,} of those persons with a qualifier that "
              f"did not decide; for {cov['qualifier_decided_persons']:,} persons the qualifiers of a 'Place, "
              "Qualifier' birthplace chose among the namesakes (a subdivision, a subdivision code or a place name "
              "after the comma; a curated county or subdivision: rule context).", "",
              f"## Spot check: {N_CHECK} random birthplaces (seed {SEED}), verdicts by hand", "",
              f"{tally['correct']} correct, {tally['wrong']} wrong, {tally['unmapped']} unmapped "
              "(`spot_check_verdicts.json`).", "",
              "| place | country | region | north/south | rule | derivation | verdict |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {c['place']} | {c['country'] or '-'} | {c['region']} | {c['north_south']} | {c['level']} | "
              f"{c['derivation']} | {c['verdict']} |" for c in checked]
    atomic_write_text(OUT / "README.md", "\n".join(lines) + "\n")
    print(f"wrote {OUT} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
