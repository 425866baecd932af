"""Commit a finished ``wgb run``: copy its report into ``results/wgb_run/<name>/`` and write
``run.json`` (the command, wall time and peak memory from GNU time's ``-v`` log, the machine).

    python scripts/record_wgb_run.py OUT DEST --log run.log --command "wgb run ..."

``OUT`` is the run's output folder (with ``report/``); ``--log`` is the file that holds
``/usr/bin/time -v``'s output for the command; a run resumed with more seeds gives one ``--log``
per invocation (wall and CPU seconds add up, peak memory is the largest). The README's numbers for the run are generated
from ``DEST/report.json`` and ``DEST/run.json`` by ``scripts/readme_tables.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wgbcore.atomicio import atomic_write_json, replace_dir  # noqa: E402


def gnu_time(log: str) -> dict:
    """Wall seconds, peak RSS and CPU seconds from a ``/usr/bin/time -v`` log."""
    text = Path(log).read_text(errors="replace")
    out = {}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if m:
        parts = [float(x) for x in m.group(1).split(":")]
        out["wall_seconds"] = round(sum(p * 60 ** i for i, p in enumerate(reversed(parts))), 1)
    for key, pat in (("max_rss_mb", r"Maximum resident set size \(kbytes\): (\d+)"),
                     ("user_seconds", r"User time \(seconds\): ([\d.]+)"),
                     ("system_seconds", r"System time \(seconds\): ([\d.]+)"),
                     ("exit_status", r"Exit status: (\d+)")):
        m = re.search(pat, text)
        if m:
            v = float(m.group(1))
            out[key] = round(v / 1024, 1) if key == "max_rss_mb" else (int(v) if key == "exit_status" else v)
    if "wall_seconds" not in out:
        raise SystemExit(f"{log}: no '/usr/bin/time -v' output found")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--log", required=True, action="append")
    ap.add_argument("--command", required=True)
    ap.add_argument("--note", default="")
    a = ap.parse_args(argv)
    report = a.out / "report"
    if not (report / "report.json").exists():
        raise SystemExit(f"{report}: no report.json (has the run finished?)")
    runs = [gnu_time(log) for log in a.log]
    for log, one in zip(a.log, runs):
        if one.get("exit_status", 0) != 0:
            raise SystemExit(f"{log}: the command exited with {one['exit_status']}")
    t = {k: round(sum(r.get(k, 0.0) for r in runs), 1) for k in ("wall_seconds", "user_seconds", "system_seconds")}
    t["max_rss_mb"] = max(r.get("max_rss_mb", 0.0) for r in runs)
    t["invocations"] = runs
    staging = a.dest.with_name(a.dest.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(report, staging)
    atomic_write_json(staging / "run.json", {
        "command": a.command, **t, "cpu_count": os.cpu_count(),
        "loadavg_at_record": [round(x, 2) for x in os.getloadavg()], "note": a.note,
        "seeds": json.loads((report / "report.json").read_text())["analysis"]["seeds"]})
    replace_dir(staging, a.dest)
    print(f"recorded {a.out} -> {a.dest} ({t['wall_seconds']:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
