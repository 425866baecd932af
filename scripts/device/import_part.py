"""Record a part of a study that trained elsewhere: STUDY/parts/NAME/ (see wgbstudies.parts).

Two sources:

* ``--device-out DIR``: the files of one call of ``scripts/device/debias_seeds.sh`` (runs.tgz,
  timing.json, machine.txt, progress.tsv, script.log). The finished fold runs in runs.tgz are
  unpacked into the repository (every member must lie under ``--runs-dir``; a run folder that
  already holds DONE here is left as it is), and the part's timing keeps only the runs it
  brought back (a run killed at the call's deadline trained for nothing the study uses).
  With ``--base`` (an earlier call's timing.json on the same warm machine, whose scratch study
  folder it shared), what that call had recorded is left out.
* ``--timing FILE [--base FILE]``: a study folder's timing.json after a local invocation (a
  scratch study folder's, or the study's own against the committed one it started from: the
  part is then what the invocation added, its runs and invocations).

    python scripts/device/import_part.py results/re_crossfit/grid device_h200_2026-11-27 \\
        --device-out /work/.device/1 --runs-dir results/re_crossfit/grid/runs
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tarfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
DEVICE_FILES = ("machine.txt", "progress.tsv", "script.log", "gpu_timing.tsv")


def _load(path: Path) -> dict:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read a study timing file ({exc})")
    if not isinstance(d, dict) or not isinstance(d.get("runs"), dict):
        raise SystemExit(f"{path}: not a study timing file (no 'runs' object)")
    return d


def unpack_runs(archive: Path, runs_dir: str) -> list[str]:
    """The run folders of ``archive`` (every member under ``runs_dir``), unpacked into the
    repository where they are not finished here already; returns their names. Every member is
    checked before anything is written."""
    base = PurePosixPath(runs_dir)
    with tarfile.open(archive) as tf:
        members, run_of = tf.getmembers(), {}
        for m in members:
            p = PurePosixPath(m.name)
            if p.is_absolute() or ".." in p.parts or not (m.isfile() or m.isdir()):
                raise SystemExit(f"{archive}: member {m.name!r} is not a plain relative file or folder")
            if base.is_relative_to(p):        # the run store itself or a folder above it
                continue
            if not p.is_relative_to(base):
                raise SystemExit(f"{archive}: member {m.name!r} lies outside {runs_dir}")
            run_of[m.name] = p.relative_to(base).parts[0]
        keep = [m for m in members if m.name in run_of and not (ROOT / runs_dir / run_of[m.name] / "DONE").exists()]
        try:
            tf.extractall(ROOT, members=keep, filter="data")
        except TypeError:   # a Python without extraction filters
            tf.extractall(ROOT, members=keep)
    return sorted(set(run_of.values()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", type=Path)
    ap.add_argument("name")
    ap.add_argument("--device-out", type=Path)
    ap.add_argument("--runs-dir", help="the study's run store, relative to the repository (with --device-out)")
    ap.add_argument("--timing", type=Path)
    ap.add_argument("--base", type=Path)
    a = ap.parse_args(argv)
    if bool(a.device_out) == bool(a.timing):
        ap.error("give --device-out DIR or --timing FILE")
    dest = a.study / "parts" / a.name
    if dest.exists():
        raise SystemExit(f"{dest}: exists; a part is recorded once")
    base = _load(a.base) if a.base else {"runs": {}, "invocations": []}
    started = {i.get("started") for i in base.get("invocations", [])}
    if a.device_out:
        if not a.runs_dir:
            ap.error("--device-out needs --runs-dir")
        timing = _load(a.device_out / "timing.json")
        brought = unpack_runs(a.device_out / "runs.tgz", a.runs_dir) if (a.device_out / "runs.tgz").exists() else []
        timing = {"runs": {k: v for k, v in timing["runs"].items() if k in brought and k not in base["runs"]},
                  "invocations": [i for i in timing.get("invocations", []) if i.get("started") not in started],
                  # timed here but killed at the call's deadline before they were whole: not the study's
                  "not_brought_back": sorted(set(timing["runs"]) - set(brought) - set(base["runs"])),
                  # whole (DONE, eval.json, counts) but finished after the grid's last timing save
                  "brought_back_untimed": sorted(set(brought) - set(timing["runs"]))}
        extra = [a.device_out / f for f in DEVICE_FILES if (a.device_out / f).exists()]
    else:
        new = _load(a.timing)
        timing = {"runs": {k: v for k, v in new["runs"].items() if k not in base["runs"]},
                  "invocations": [i for i in new.get("invocations", []) if i.get("started") not in started]}
        extra = []
    dest.mkdir(parents=True)
    (dest / "timing.json").write_text(json.dumps(timing, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for f in extra:
        shutil.copyfile(f, dest / f.name)
    print(f"{dest}: {len(timing['runs'])} runs, {len(timing.get('invocations', []))} invocation(s)"
          + (f"; {len(timing['not_brought_back'])} timed but not brought back; "
             f"{len(timing['brought_back_untimed'])} brought back untimed" if a.device_out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
