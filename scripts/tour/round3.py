"""Round 3 of the bad-input tour (issue 40's closing requirement): 100+ cases of our own over the
surfaces of the round -- cross-fitting, the executor, locks, cross-fitted scoring, study folders,
stored-result integrity, shared option validation, config files, data commands, kge inputs --
each run as a user runs it (``python -m wgb ...`` in a fresh process, in a folder of its own, with a
timeout) and classified from its exit code, its output and the files it left:

==============  ==========================================================================
class           meaning
==============  ==========================================================================
clear error     refused (exit 1 or 2) with one ``Error:`` line holding the case's words (the
                file / field / value concerned), nothing half-written left behind
right result    valid input: exit 0 and the case's check of the output and files passes
silently wrong  exit 0 where the input should be refused, or a result the check finds wrong
unclear         refused, but not in one line naming what is wrong (or valid input refused)
partial         refused, but something half-written left behind (a folder, a temp file)
hang            still running at the case's timeout (killed)
traceback       a Python traceback, or killed by a signal
==============  ==========================================================================

Usage: ``python scripts/tour/round3.py [--root DIR] [--only ID,...] [--jobs N]``; writes
``results/tour/round3.json`` and ``round3.md`` (counts by class and by pattern, one line a case)
unless ``--only`` is given (``--render``: the markdown again from the JSON; a
``round3_before.json`` beside it, the same cases run on the code before the round's fixes, adds
its counts and the cases whose class changed). Fixtures (tiny, seconds each) are made under ``--root`` first
(:mod:`round3_fixtures`) and reused by the next tour when complete.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import round3_fixtures as F  # noqa: E402

CLASSES = ("clear error", "right result", "silently wrong", "unclear", "partial", "hang", "traceback")
MUST_BE_ZERO = ("traceback", "silently wrong", "partial", "hang")
OUT = F.REPO / "results" / "tour"


@dataclass
class Outcome:
    code: int | None
    output: str
    seconds: float


def run_case(case, fx: F.Fixtures, work: Path) -> dict:
    """Set the case up in ``work`` (its own folder, also the command's working folder), run its
    command with its timeout, classify the outcome."""
    work.mkdir(parents=True)
    try:
        args = case.setup(fx, work)
    except Exception as e:   # noqa: BLE001 -- a broken setup is the tour's fault: said, never classified
        return {"class": "setup failed", "note": f"{type(e).__name__}: {e}"[:400], "seconds": 0.0}
    t0 = time.perf_counter()
    p = subprocess.Popen([*F.WGB, *map(str, args)], cwd=work, env=F.env(fx.root), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=case.timeout)
        outcome = Outcome(p.returncode, out, time.perf_counter() - t0)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        outcome = Outcome(None, out, time.perf_counter() - t0)
    cls, note = classify(case, fx, work, outcome)
    note = note.replace(str(work), "$CASE").replace(str(fx.root), "$FX")
    return {"class": cls, "note": note, "seconds": round(outcome.seconds, 1), "exit": outcome.code,
            "args": " ".join(str(a).replace(str(work), "$CASE").replace(str(fx.root), "$FX") for a in args),
            "output": outcome.output[-600:].replace(str(work), "$CASE").replace(str(fx.root), "$FX")}


def _error_lines(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith("Error:")]


def _temp_leftovers(work: Path) -> list[str]:
    """Files a writer left half-done: atomic-write temp files and temp folders."""
    return sorted(str(p.relative_to(work)) for p in work.rglob("*")
                  if p.name.endswith(".tmp") or ".tmp-" in p.name or p.name.startswith(".tmp"))


def classify(case, fx: F.Fixtures, work: Path, o: Outcome) -> tuple[str, str]:
    if o.code is None:
        return "hang", f"still running after {case.timeout} s"
    if "Traceback (most recent call last)" in o.output or o.code < 0 or o.code > 2:
        last = [ln for ln in o.output.splitlines() if ln.strip()][-1:] or [""]
        return "traceback", f"exit {o.code}: {last[0][:200]}"
    errors = _error_lines(o.output)
    if case.expect == "error":
        if o.code == 0:
            return "silently wrong", "exit 0: " + (case.wrong_if_ok or "the bad input was accepted")
        if len(errors) != 1:
            return "unclear", f"exit {o.code} with {len(errors)} 'Error:' lines: {o.output.strip()[-200:]}"
        missing = [w for w in case.words if w not in errors[0]]
        if missing:
            return "unclear", f"the error line lacks {missing}: {errors[0][:250]}"
        left = [str(p) for p in case.gone(fx, work)] if case.gone else []
        left = [p for p in left if Path(p).exists() or Path(p).is_symlink()] + _temp_leftovers(work)
        if left:
            return "partial", f"left behind: {[p.replace(str(work), '$CASE') for p in left]}"
        extra = case.check(fx, work, o) if case.check else None
        if extra:
            return extra.split(":", 1)[0], extra.split(":", 1)[1].strip()
        return "clear error", errors[0][:300]
    if o.code != 0:
        return "unclear", f"valid input refused (exit {o.code}): {(errors or [o.output.strip()[-200:]])[0][:250]}"
    problem = case.check(fx, work, o) if case.check else None
    if problem:
        return problem.split(":", 1)[0], problem.split(":", 1)[1].strip()
    left = _temp_leftovers(work)
    if left:
        return "partial", f"exit 0 but temp files left: {left}"
    return "right result", case.note or "as documented"


def write_results(cases, results: dict[str, dict], wall: float, load: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    by_class = Counter(r["class"] for r in results.values())
    by_pattern: dict[str, Counter] = {}
    for c in cases:
        by_pattern.setdefault(c.pattern, Counter())[results[c.id]["class"]] += 1
    doc = {"cases": len(cases), "wall_seconds": round(wall, 1), "load_average": load, "cores": os.cpu_count(),
           "by_class": {k: by_class.get(k, 0) for k in (*CLASSES, "setup failed") if k in CLASSES or by_class.get(k)},
           "by_pattern": {p: dict(sorted(cnt.items())) for p, cnt in by_pattern.items()},
           "results": [{"id": c.id, "pattern": c.pattern, "surface": c.surface, "expect": c.expect,
                        **results[c.id]} for c in cases]}
    (OUT / "round3.json").write_text(json.dumps(doc, indent=1) + "\n")
    render(doc)


def _counts_md(doc: dict) -> list[str]:
    by_class = Counter(r["class"] for r in doc["results"])
    by_pattern: dict[str, Counter] = {}
    for r in doc["results"]:
        by_pattern.setdefault(r["pattern"], Counter())[r["class"]] += 1
    classes = [*CLASSES, *(["setup failed"] if by_class.get("setup failed") else [])]
    md = ["| class | cases |", "|---|---|", *[f"| {k} | {by_class.get(k, 0)} |" for k in classes], "",
          "| pattern | " + " | ".join(classes) + " |", "|---" * (len(classes) + 1) + "|"]
    md += [f"| {p} | " + " | ".join(str(cnt.get(k, 0)) for k in classes) + " |" for p, cnt in by_pattern.items()]
    return md


def _cell(text: str, n: int) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:n]


def render(doc: dict) -> None:
    """``round3.md`` from ``round3.json`` (and ``round3_before.json``, the same cases run on the code
    before this round's fixes, when it is there)."""
    md = ["# Bad-input tour, round 3", "",
          f"{doc['cases']} cases (`python scripts/tour/round3.py`), {doc['wall_seconds']:.0f} s wall with the "
          f"fixtures on {doc['cores']} cores, load average {doc['load_average']} at the end. Classes: see the "
          "script's docstring.", "", "## Counts by class and by pattern", "", *_counts_md(doc)]
    before = OUT / "round3_before.json"
    if before.exists():
        b = json.loads(before.read_text())
        md += ["", "## Before this round's fixes", "",
               f"The same {b['cases']} cases run on {b.get('code', 'the code before the fixes')}:", "",
               *_counts_md(b), "", "Cases whose class changed:", "", "| id | before | after |", "|---|---|---|"]
        was = {r["id"]: r for r in b["results"]}
        md += [f"| {r['id']} | {was[r['id']]['class']}: {_cell(was[r['id']]['note'], 160)} | {r['class']} |"
               for r in doc["results"] if r["id"] in was and was[r["id"]]["class"] != r["class"]]
    md += ["", "## Cases", "", "| id | pattern | surface | class | what happened |", "|---|---|---|---|---|"]
    for r in doc["results"]:
        md.append(f"| {r['id']} | {r['pattern']} | {r['surface']} | {r['class']} | {_cell(r['note'], 220)} |")
    (OUT / "round3.md").write_text("\n".join(md) + "\n")


def main(argv=None) -> int:
    from round3_cases import CASES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "wgb-tour-round3",
                    help="fixtures (kept for the next tour) and one folder per case")
    ap.add_argument("--only", default="", help="comma-separated case ids (results not written)")
    ap.add_argument("--jobs", type=int, default=3, help="cases run at once")
    ap.add_argument("--render", action="store_true", help="only write round3.md again from round3.json")
    a = ap.parse_args(argv)
    if a.render:
        render(json.loads((OUT / "round3.json").read_text()))
        return 0
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "case ids repeat"
    todo = [c for c in CASES if not a.only or c.id in a.only.split(",")]
    t0 = time.perf_counter()
    fx = F.build(a.root, log=lambda m: print(m, flush=True))
    cases_dir = a.root / "cases"
    shutil.rmtree(cases_dir, ignore_errors=True)
    results: dict[str, dict] = {}

    def one(case):
        r = run_case(case, fx, cases_dir / case.id)
        print(f"{r['class']:>14}  {case.id:<40} {r['seconds']:5.1f}s  {r['note'][:150]}", flush=True)
        if a.only:
            print("   $ wgb " + r.get("args", ""), "\n   " + r.get("output", "").replace("\n", "\n   "))
        return case.id, r

    with ThreadPoolExecutor(a.jobs) as pool:
        results = dict(pool.map(one, todo))
    wall = time.perf_counter() - t0
    counts = Counter(r["class"] for r in results.values())
    print(f"\n{len(todo)} cases in {wall:.0f} s: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    if not a.only:
        write_results(todo, results, wall, ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 1 if any(counts.get(k) for k in (*MUST_BE_ZERO, "setup failed")) else 0


if __name__ == "__main__":
    sys.exit(main())
