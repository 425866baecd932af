"""Time the README's set-up on a fresh copy of the working tree and record it for the README.

    python scripts/record_setup.py --copy /tmp/ciclone [--shared /work/shared] [--note "..."]

Copies the working tree as a clone of it would be (tracked files and untracked ones git does not
ignore: no .venv, .git, site/ or run folders) to --copy, then runs there, each timed:

1. ``install``: the README's first command without ``wgb run`` (whose time ``results/wgb_run/quick``
   records): ``python3 -m venv .venv && pip install -e ".[all]" && pip install --no-deps -r requirements/ner.txt``;
2. ``ci``: ``bash .ci/run`` (the extras, Chromium where it can, ``mkdocs build --strict``, every test).

Writes ``results/setup/fresh_copy.json`` (atomically): wall seconds, the load average before and
after, pytest's summary (passed, skipped, failed, seconds) and its skip reasons. Exits 1 when a step
fails (the file is still written, with the failing step's return code).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = "results/setup/fresh_copy.json"
INSTALL = ('python3 -m venv .venv && .venv/bin/pip install -q -e ".[all]" '
           "&& .venv/bin/pip install -q --no-deps -r requirements/ner.txt")
_SUMMARY = re.compile(r"(\d+) (passed|skipped|failed|errors?|deselected|xfailed|xpassed)")
_SECONDS = re.compile(r" in ([\d.]+)s")
_SKIP = re.compile(r"^SKIPPED \[(\d+)\] ([^:]+):\d+: (.*)$")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)")


def pytest_summary(output: str) -> dict:
    """Counts, seconds, skip reasons and failed tests from ``pytest -q -rfEs`` output."""
    last = [ln for ln in output.splitlines() if _SECONDS.search(ln) and _SUMMARY.search(ln)]
    if not last:
        return {"found": False}
    counts = {k.rstrip("s") if k.startswith("error") else k: int(n) for n, k in _SUMMARY.findall(last[-1])}
    skips = [{"count": int(m.group(1)), "file": m.group(2), "reason": m.group(3)}
             for ln in output.splitlines() if (m := _SKIP.match(ln.strip()))]
    failed = [m.group(1) for ln in output.splitlines() if (m := _FAILED.match(ln.strip()))]
    return {"found": True, **{k: counts.get(k, 0) for k in ("passed", "skipped", "failed", "error")},
            "seconds": float(_SECONDS.search(last[-1]).group(1)), "summary": last[-1].strip("= "), "skips": skips,
            "failures": failed}


def tracked_files() -> list[str]:
    """What a clone would hold if the working tree were committed: tracked files and untracked ones
    git does not ignore (no .venv, site/, caches or run folders)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return sorted({f for f in out.split("\0") if f})


def _compiles(path: Path) -> bool:
    try:
        compile(path.read_bytes(), str(path), "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _step(cmd: str, cwd: Path, log: Path) -> dict:
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.run(["bash", "-c", cmd], cwd=cwd, stdout=fh, stderr=subprocess.STDOUT).returncode
    return {"command": cmd, "returncode": rc, "wall_seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copy", required=True, help="an empty or absent folder for the fresh copy")
    ap.add_argument("--shared", default="/work/shared", help="linked as ../shared next to the copy when it exists")
    ap.add_argument("--note", default="", help="what else ran on the machine")
    ap.add_argument("--out", default=str(ROOT / OUT))
    args = ap.parse_args(argv)
    copy = Path(args.copy)
    if copy.exists() and any(copy.iterdir()):
        raise SystemExit(f"--copy {copy} is not empty")
    copy.mkdir(parents=True, exist_ok=True)
    for rel in tracked_files():
        if (ROOT / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, copy / rel)
    broken = [str(f.relative_to(copy)) for f in sorted(copy.rglob("*.py")) if not _compiles(f)]
    if broken:  # a file caught mid-edit: the measurement would time a collection error
        raise SystemExit(f"{broken[0]}: does not compile in the copy (caught mid-edit?); {len(broken)} such file(s)")
    shared = copy.parent / "shared"
    if Path(args.shared).exists() and not shared.exists():
        shared.symlink_to(args.shared)
    from wgbcore.atomicio import atomic_write_json

    rec = {"script": "scripts/record_setup.py", "cpu_count": os.cpu_count(), "python": sys.version.split()[0],
           "started": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg_before": [round(x, 2) for x in os.getloadavg()],
           "pip_cache": "warm" if (Path.home() / ".cache" / "pip").exists() else "empty",
           "note": args.note or "pip's cache as it was on the machine"}
    rec["install"] = _step(INSTALL, copy, copy / "install.log")
    if rec["install"]["returncode"] == 0:
        rec["ci"] = _step("bash .ci/run", copy, copy / "ci.log")
        rec["ci"]["pytest"] = pytest_summary((copy / "ci.log").read_text(encoding="utf-8", errors="replace"))
    rec["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    rec["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    atomic_write_json(args.out, rec)
    ok = rec["install"]["returncode"] == 0 and rec.get("ci", {}).get("returncode") == 0
    print(f"wrote {args.out}: install {rec['install']['wall_seconds']} s"
          + (f", ci {rec['ci']['wall_seconds']} s, {rec['ci']['pytest'].get('summary')}" if "ci" in rec else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
