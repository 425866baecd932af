"""The cases of the round-3 tour (scripts/tour/round3.py): one :class:`Case` a row, grouped by the
issue-40 pattern it probes. A case's ``setup(fx, work)`` prepares its folder ``work`` (copies of
the fixtures it changes, edited files, a held lock) and returns the ``wgb`` arguments to judge;
``expect`` is "error" (refused in one line holding ``words``, nothing of ``gone`` left) or "ok"
(exit 0 and ``check`` returns nothing; it returns "class: why" otherwise)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import round3_fixtures as F

P1, P2, P3, P4, P5, N = ("1 fold plan", "2 run sets", "3 stored results", "4 study folders", "5 shared options",
                         "newcomer")


@dataclass
class Case:
    id: str
    pattern: str
    surface: str
    setup: Callable
    expect: str = "error"
    words: tuple = ()
    gone: Callable | None = None
    check: Callable | None = None
    timeout: float = 120
    note: str = ""
    wrong_if_ok: str = ""


# ------------------------------------------------------------------ helpers
def edit_json(path: Path, fn) -> Path:
    d = json.loads(path.read_text())
    d = fn(d) or d
    path.write_text(json.dumps(d))
    return path


def edit_lines(path: Path, fn) -> Path:
    rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    rows = fn(rows) or rows
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hold_lock(fx, folder: Path, beside: bool, seconds: int = 60) -> None:
    """A second process holding ``folder``'s lock (a writer still at work) for ``seconds``."""
    ready = folder.parent / f".{folder.name}.held"
    code = ("import sys,time; from wgbcore.lock import FolderLock; "
            f"l=FolderLock(sys.argv[1], beside={beside}).acquire(); open(sys.argv[2],'w').write('1'); "
            f"time.sleep({seconds})")
    subprocess.Popen([sys.executable, "-c", code, str(folder), str(ready)], env=F.env(fx.root),
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if ready.exists():
            ready.unlink()
            return
        time.sleep(0.05)
    raise RuntimeError("the lock holder did not start")


def loop(work: Path, name: str = "loop") -> Path:
    p = work / name
    p.symlink_to(p)
    return p


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def no(*names):
    """``gone``: these paths (relative to the case folder) must not exist after the refusal."""
    return lambda fx, w: [w / n for n in names]


def out_has(*words, cls="silently wrong"):
    def check(fx, w, o):
        miss = [x for x in words if x not in o.output]
        return f"{cls}: output lacks {miss}" if miss else None
    return check


def score_json(work: Path) -> dict:
    return json.loads((work / "s.json").read_text())


def small_re(fx, out, *extra):
    return ["re", "train", str(out), "--dataset", str(fx["bench"]), *fx.small(*extra)]


def crossfit_re(fx, out, *extra):
    return small_re(fx, out, "--protocol", "crossfit", *extra)


def cfg_file(work: Path, text: str, name="c.yaml") -> Path:
    return write(work / name, text)


def same_results(a_path: Path, b_path: Path) -> bool:
    """Two results.json with the same numbers: timing and the hashes of the input files (an
    evaluation written again has new bytes: its time) left out."""
    def numbers(d):   # times, loads, dates, thread counts and input hashes: not results
        if isinstance(d, dict):
            return {k: numbers(v) for k, v in d.items() if k not in ("timing", "inputs", "loadavg", "registered_at",
                                                                     "threads") and not k.endswith("_seconds")}
        return [numbers(v) for v in d] if isinstance(d, list) else d
    a, b = (numbers(json.loads(p.read_text())) for p in (a_path, b_path))
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
