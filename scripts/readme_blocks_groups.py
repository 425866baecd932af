"""Blocks of docs/guide/intersectional.md written from the intersectional study's committed files
(issue #41): its plan's cells and power, and its decided claims. Imported by
``scripts/readme_tables.py`` (its ``BLOCKS``); every function reads only the file it names."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = "results/groups/study_plan.json"
RESULTS = "results/groups/study/results.json"


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def groups_study_cells(src: str = PLAN) -> str:
    """Persons per cell and gender, judged or not, with the spouse MDE and its floor, per grouping and population."""
    p = _load(src)
    out = [f"Cells of the study (`{src}`, written by `scripts/study/groups_plan.py` before the analysis; "
           f"at least {p['min_per_gender']} persons of each gender for a verdict; MDE of the spouse F1 gap at 80% "
           f"power with {len(p['runs']['seeds'])} seeds, its floor in brackets):", "",
           "| grouping | population | cell | men | women | spouse MDE (floor) |", "|---|---|---|---|---|---|"]
    for g, gd in p["groupings"].items():
        for pop, pw in gd["power"].items():
            for c in pw["cells"]:
                m = "f1_gap:spouse"
                mde = f"{c['mde'][m]:.3f} ({c['mde_floor'][m]:.3f})" if m in c["mde"] else "too few to estimate"
                out.append(f"| {g} | {pop} | {c['cell']} | {c['male']:,} | {c['female']:,} | {mde} |")
    return "\n".join(out)


def groups_study_claims(src: str = RESULTS) -> str:
    """The decided claims of the study, and how many claim rows there are."""
    r = _load(src)
    rows = r["claims"]
    undecided = ("undecided", "too few to estimate", "no pair differs", "unknown: counted, not judged")
    dec = [x for x in rows if x["verdict"] not in undecided and not x["verdict"].startswith("fewer than")]

    def ci(c):
        return "-" if not c or None in c else f"[{c[0]:+.3f}, {c[1]:+.3f}]"

    out = [f"{len(dec)} of {len(rows)} claim rows decided (`{src}`, written by `scripts/study/groups_study.py`; "
           f"{r['n_resamples']} resamples, wall time {r['timing']['wall_s']} s on {r['timing']['cores']} cores; every "
           "row in `results/groups/study/results.md`):", "",
           "| population | family | cells | metric | MDE | effect | interval | verdict |", "|---|---|---|---|---|---|---|---|"]
    for x in dec:
        mde = "-" if x["mde"] is None else f"{x['mde']:.3f}"
        out.append(f"| {x['population']} | {x['family']} | {x['cells']} | {x['metric']} | {mde} | "
                   f"{x['effect']:+.3f} | {ci(x['ci'])} | {x['verdict']} |")
    return "\n".join(out)


def groups_study_cannot(src: str = RESULTS) -> str:
    """What no cell size of the study can decide, as its results list it."""
    return "\n".join(f"- {x}" for x in _load(src)["cannot_decide"]) + f"\n\n(`{src}`)"


BLOCKS = {"groups-study-cells": groups_study_cells, "groups-study-claims": groups_study_claims,
          "groups-study-cannot": groups_study_cannot}
