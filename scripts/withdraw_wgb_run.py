"""Withdraw a committed ``wgb run`` report that cannot be regenerated under today's rules, and say so.

    python scripts/withdraw_wgb_run.py record results/wgb_run/crossfit --reason design-v1 --reason exposure \
        --screenshot results/wgb_run/screenshots/run_report_crossfit_5seeds_top.png
    git rm -r results/wgb_run/crossfit ...          # then remove the report and its screenshots
    python scripts/readme_tables.py                  # the blocks below now say it was withdrawn

``record`` reads the folder's ``run.json`` (the command) and ``report.json`` (seeds, protocol,
extractors, run store), asks git for the last commit that holds its ``report.json``, and writes the
entry into ``results/wgb_run/withdrawn.json``; run it before the files are removed. Everything a
reader sees of a withdrawn report is generated from that file by ``scripts/readme_tables.py``:
``results/wgb_run/WITHDRAWN.md`` (:func:`markdown`) and the docs' blocks that showed the report
(:func:`notice`), never a verdict or an effect of it. Regenerating a report: run the command its
entry gives, record it with ``scripts/record_wgb_run.py``, then delete its entry here.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = "results/wgb_run/withdrawn.json"
PAGE = "results/wgb_run/WITHDRAWN.md"

# Why a report was withdrawn: one key per reason, the text says what was wrong with it.
REASONS = {
    "design-v1": (
        "made under design version {design_version} (today's rules are version {today}): its p-values came from "
        "a percentile bootstrap, counting the replicates on the far side of the null, with few seeds resampled; a "
        "reviewer's recompute of its decided verdicts with a small-sample seed reference did not reproduce them "
        "(issue #38)"),
    "exposure": (
        "its graph nulls ignored exposure: the gender-blind extractor behind its \"facts per person\" and \"data "
        "bias added\" claims kept neither each person's candidate pairs nor their error counts, so its \"facts per "
        "person\" contradiction measured that women's articles carry more negative candidate pairs (more chances of "
        "a spurious fact), not errors gendered beyond that exposure; today's nulls keep each person's candidate "
        "pairs (`wgb.pipeline.nulls`)"),
    "claims-v0": (
        "it was judged with the claims that issue #27 withdrew: its \"graph's recall gap ... like the extraction "
        "recall gap\" claims are a tautology (the graph's recall gap is the extraction recall gap by construction), "
        "its data-bias claims were tested against no extraction instead of a gender-blind extractor with the same "
        "errors, and its embedding verdicts rested on the shared items alone, without a retraining control"),
}
# The same, in a clause (the docs' blocks; WITHDRAWN.md has the full text).
SHORT = {
    "design-v1": "made under design version {design_version} (percentile-bootstrap p-values that a reviewer's "
                 "recompute did not reproduce; today's rules are version {today})",
    "exposure": "graph nulls that ignored exposure (its \"facts per person\" verdict measured women's larger "
                "number of negative candidate pairs)",
    "claims-v0": "judged with the claims issue #27 withdrew",
}


def _load(root: Path = ROOT) -> list[dict]:
    p = root / RECORD
    return json.loads(p.read_text(encoding="utf-8"))["withdrawn"] if p.is_file() else []


def entry(root: Path, folder: str) -> dict | None:
    """The withdrawn.json entry of ``folder`` (None: not withdrawn)."""
    return next((e for e in _load(root) if e["folder"] == folder), None)


def _git_last_commit(root: Path, path: str) -> str:
    out = subprocess.run(["git", "log", "-1", "--format=%h", "--", path], cwd=root, capture_output=True,
                         text=True, check=True).stdout.strip()
    if not out:
        raise SystemExit(f"{path}: no commit holds it")
    return out


def record(root: Path, folder: str, reasons: list[str], screenshots: list[str]) -> dict:
    """The entry of a committed report folder (see the module docstring), written into RECORD."""
    for r in reasons:
        if r not in REASONS:
            raise SystemExit(f"unknown reason {r!r}; known: {sorted(REASONS)}")
    d = root / folder
    run = json.loads((d / "run.json").read_text(encoding="utf-8"))
    rep = json.loads((d / "report.json").read_text(encoding="utf-8"))
    cfg, a = rep.get("config") or {}, rep.get("analysis") or {}
    protocol = a.get("protocol") or cfg.get("protocol") or "test"   # reports before cross-fitting: test only
    files = sorted(p.relative_to(root).as_posix() for p in d.iterdir() if p.is_file())
    e = {"folder": folder, "last_commit": _git_last_commit(root, f"{folder}/report.json"),
         "command": run["command"], "protocol": protocol, "seeds": a.get("seeds") or cfg.get("seeds"),
         "folds": cfg.get("folds") if protocol == "crossfit" else None, "debias": cfg.get("debias") or [],
         "runs_dir": cfg.get("runs_dir"), "design_version": a.get("design_version") or 1,
         "reasons": reasons, "files": files + sorted(screenshots)}
    entries = [x for x in _load(root) if x["folder"] != folder] + [e]
    sys.path.insert(0, str(root))
    from wgbcore.atomicio import atomic_write_json

    atomic_write_json(root / RECORD, {"withdrawn": sorted(entries, key=lambda x: x["folder"])})
    return e


def rerun_command(e: dict) -> str:
    """The recorded command as it makes the same kind of report today: ``--profile full`` is
    cross-fitted by default now (a test-protocol run says ``--protocol test``), and a run store
    named in it holds no models in a clone (``RUNS``: an empty folder, or a store with them)."""
    words = e["command"].split()
    if e["protocol"] == "test" and "--protocol" not in words:
        words += ["--protocol", "test"]
    if "--runs-dir" in words:
        words[words.index("--runs-dir") + 1] = "RUNS"
    return " ".join(words)


def _seeds(e: dict) -> str:
    s = e["seeds"]
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) and len(s) > 2 else ", ".join(map(str, s))


def needs(e: dict) -> str:
    """What running the command takes beyond the committed files."""
    variants = ["none", *e["debias"]]
    if e["protocol"] == "crossfit":
        n = len(variants) * len(e["seeds"]) * e["folds"]
        store = (f"the run store it named, `{e['runs_dir']}`, commits each fold run's records (config.json, "
                 "metrics.json, eval.json, entity_counts.npz, DONE) but not its model (model.pt, vocab.json are "
                 "git-ignored), and the main job extracts the triples with the models; so `RUNS` is an empty folder "
                 f"(the command trains the {n} fold runs there, each resumable) or a store that holds their models"
                 if e.get("runs_dir") else "the command trains them inside `OUT`")
        return (f"retraining its extractors' fold models: {' and '.join(variants)}, seeds {_seeds(e)}, "
                f"{e['folds']} folds each ({n} fold runs), then the graphs, embeddings and nulls per seed; {store}")
    n = len(variants) * len(e["seeds"])
    return (f"training its extractors afresh inside `OUT` ({' and '.join(v if v != 'none' else 'the baseline' for v in variants)} "
            f"for each of seeds {_seeds(e)}: {n} extractor runs, nothing committed is reused), then the graphs, "
            "embeddings and nulls per seed")


def _needs_short(e: dict) -> str:
    variants = ["none", *e["debias"]]
    if e["protocol"] == "crossfit":
        n = len(variants) * len(e["seeds"]) * e["folds"]
        return (f"{n} fold runs trained ({' and '.join(variants)}, seeds {_seeds(e)}, {e['folds']} folds)"
                + (f" into a run store `RUNS`: the committed `{e['runs_dir']}` holds their records, not their models"
                   if e.get("runs_dir") else ""))
    return f"{len(variants) * len(e['seeds'])} extractor runs trained inside `OUT` ({' and '.join(variants)}, seeds {_seeds(e)})"


def _what(e: dict) -> str:
    kind = "cross-fitted (every person of the benchmark)" if e["protocol"] == "crossfit" else \
        "test-protocol (the release's annotated test persons)"
    return f"the {kind} {len(e['seeds'])}-seed main-job report `{e['folder']}/`"


def _why(e: dict, texts: dict = REASONS) -> str:
    from wgbstats.design import DESIGN_VERSION

    return "; ".join(texts[r].format(design_version=e["design_version"], today=DESIGN_VERSION)
                     for r in e["reasons"])


def notice(folder: str, root: Path = ROOT) -> str | None:
    """A docs block's body for a withdrawn report (None: ``folder`` is not withdrawn)."""
    e = entry(root, folder)
    if e is None:
        return None
    return (f"**Withdrawn**: {_what(e)}, last held by commit `{e['last_commit']}`, is no longer in the repository, "
            f"and no verdict of it is shown: {_why(e, SHORT)}. To make it under today's rules: "
            f"`{rerun_command(e)} --out OUT`, then `scripts/record_wgb_run.py` into `{e['folder']}/`; "
            f"it needs {_needs_short(e)}. Why, in full, and the exact commands: `{PAGE}`.")


def markdown(root: Path = ROOT) -> str:
    """The body of WITHDRAWN.md's block: every withdrawn report, why, and how to make it again."""
    es = _load(root)
    if not es:
        return "No main-job report is withdrawn."
    out = []
    for e in es:
        cmd = rerun_command(e)
        out += [f"### `{e['folder']}/`", "",
                f"- **What**: {_what(e)}: "
                + ", ".join(f"`{os.path.relpath(f, Path(PAGE).parent)}`" for f in e["files"]) + ".",
                f"- **Last held by**: commit `{e['last_commit']}` (`git show {e['last_commit']}:{e['folder']}/report.md`; "
                "`git log -1 --format=%h -- " + e["folder"] + "/report.json` names the commit that removed it).",
                f"- **Why**: {_why(e)}.",
                f"- **Recorded command**: `{e['command']}`.",
                f"- **Needs**: {needs(e)}.",
                "- **To make it again** (then delete its entry in `" + RECORD + "` and run "
                "`python scripts/readme_tables.py`):", "",
                "```bash",
                f"/usr/bin/time -v {cmd} --out OUT > LOG 2>&1",
                f"python scripts/record_wgb_run.py OUT {e['folder']} --log LOG --command \"{cmd}\"",
                "```", ""]
    return "\n".join(out).rstrip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="write a committed report folder's entry into " + RECORD)
    r.add_argument("folder", help="e.g. results/wgb_run/crossfit")
    r.add_argument("--reason", action="append", required=True, choices=sorted(REASONS))
    r.add_argument("--screenshot", action="append", default=[], help="a screenshot of it, removed with it")
    a = ap.parse_args(argv)
    e = record(ROOT, a.folder.rstrip("/"), a.reason, a.screenshot)
    print(f"{RECORD}: {e['folder']} (last commit {e['last_commit']}); now remove {len(e['files'])} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
