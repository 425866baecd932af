"""No stale verdict in the repository (issue #38): every committed claims table re-derived from its
own numbers under today's rules (wgbstudies.recheck), its count files re-hashed, its plan
present, one definition per claim name, and the pages derived from the tables regenerated from
them. A failure lists each stale file and why; regenerate it (the study's command with
``--no-train``, ``scripts/study/crossfit_report.py``), never edit the numbers by hand.

The docs' and README's generated blocks are checked against these files by
``tests/test_readme_generated.py``; together the chain docs -> files -> counts is checked."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    sys.path.insert(0, str(ROOT / "scripts" / "study"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_no_committed_verdict_is_stale():
    """Each claim's p-value from its value, standard error and t df, the intersection-union and Holm
    p-values, the verdict, the design version and the sha256 of the count files it was made from."""
    from wgbstudies.recheck import committed_tables, recheck_all

    tables = committed_tables(ROOT)
    assert tables, "no committed claims table found"
    stale = recheck_all(ROOT, tables)
    lines = [f"- {path}: " + "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
             for path, problems in sorted(stale.items())]
    assert not stale, (f"{len(stale)} of {len(tables)} committed claims tables are stale under today's rules "
                       "(regenerate them):\n" + "\n".join(lines))


def test_every_committed_study_has_its_plan():
    """A study folder with a claims table says how its plan was registered (plan.json), and its table
    was made under that plan."""
    from wgbstudies.plan import AFTER, BEFORE, DURING
    from wgbstudies.recheck import committed_tables

    missing, bad = [], []
    for path in committed_tables(ROOT):
        if path.name in ("protocols.json", "report.json"):
            continue
        plan = path.parent / "plan.json"
        rel = path.relative_to(ROOT).as_posix()
        if not plan.is_file():
            missing.append(rel)
            continue
        p = json.loads(plan.read_text())
        if p.get("registered") not in (BEFORE, DURING, AFTER):
            bad.append(f"{rel}: plan.json registered {p.get('registered')!r}")
    assert not missing and not bad, ("study folders without a plan.json (python scripts/study/register_plans.py, "
                                     "or the study's command, writes one):\n" + "\n".join(missing + bad))


def test_one_name_one_definition():
    """A claim name means one thing across every committed table and plan: the same statistic in
    every table, the same canonical definition in every plan (a claim over fewer members than the
    paper's is named by its members)."""
    from wgbstudies.recheck import committed_tables

    seen: dict[str, tuple[str, str]] = {}
    clash = []
    for path in committed_tables(ROOT):
        if path.name == "protocols.json":
            continue
        d = json.loads(path.read_text())
        rep = d.get("design_report") if path.name == "results.json" else d
        views = [rep, *((rep or {}).get("populations") or {}).values()] if path.name != "report.json" else \
            [{"claims": (d.get("analysis") or {}).get("verdicts", [])}]
        for view in views:
            for c in (view or {}).get("claims", []):
                where = path.relative_to(ROOT).as_posix()
                first = seen.setdefault(c["claim"], (c["statistic"], where))
                if first[0] != c["statistic"]:
                    clash.append(f"{c['claim']!r}: {first[0]!r} ({first[1]}) vs {c['statistic']!r} ({where})")
    defs: dict[str, tuple[str, str]] = {}
    for plan in sorted((ROOT / "results").rglob("plan.json")):
        p = json.loads(plan.read_text())
        for c in p.get("claims") or []:
            if not isinstance(c, dict) or "name" not in c:
                continue
            # the claim as tested (its controls are reported beside it, never inside: not its definition)
            body = json.dumps({k: v for k, v in c.items() if k not in ("name", "controls")}, sort_keys=True)
            where = plan.relative_to(ROOT).as_posix()
            first = defs.setdefault(c["name"], (body, where))
            if first[0] != body:
                clash.append(f"{c['name']!r}: two definitions ({first[1]}, {where})")
    assert not clash, "one name, two definitions:\n" + "\n".join(sorted(set(clash)))


def test_pages_derived_from_the_tables_are_current():
    """protocols.md and the seeds study's claims_summary.md (shown in the docs) are what
    scripts/study/crossfit_report.py makes of the committed tables today."""
    m = _script("crossfit_report")
    stale = []
    for folder in ("results/re_crossfit/debias", "results/re_crossfit/grid", "results/re_crossfit/grid_all"):
        pj, pm = ROOT / folder / "protocols.json", ROOT / folder / "protocols.md"
        if not pj.is_file():
            continue
        if pm.read_text() != m.page(json.loads(pj.read_text())):
            stale.append(f"{folder}/protocols.md")
    seeds = ROOT / m.SEEDS_STUDY
    if seeds.is_file():
        main = ROOT / m.MAIN_STUDY
        want = m.seeds_study(json.loads(seeds.read_text()), json.loads(main.read_text()) if main.is_file() else None)
        if (seeds.parent / "claims_summary.md").read_text() != want:
            stale.append(seeds.parent.relative_to(ROOT).as_posix() + "/claims_summary.md")
    assert not stale, "stale pages (python scripts/study/crossfit_report.py rewrites them): " + ", ".join(stale)
