"""Parts of a study trained elsewhere: ``OUT/parts/<name>/timing.json``.

A study's fold runs may train in several places (a lent machine's cores, a second local process,
another session) into the study's one run store, each place with a scratch study folder of its
own. Each such place is a *part*: its ``timing.json`` (the grid's format: ``runs`` and
``invocations``), and where it ran (``machine.txt``), are kept in ``OUT/parts/<name>/`` beside
the study. The study's timing summary counts every part's runs with its own, and says where
they ran and how long each part took; a run timed both here and in a part keeps this folder's
record.
"""
from __future__ import annotations

import json
from pathlib import Path


def read_parts(out: str | Path) -> dict[str, dict]:
    """``{part name: its timing.json}`` of ``OUT/parts/*``, in name order; errors name the file."""
    from wgbcore.fileio import reading

    parts = {}
    root = Path(out) / "parts"
    for p in sorted(root.glob("*/timing.json")) if root.is_dir() else []:
        with reading(p, "a part's timing (timing.json)"):
            d = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(d, dict) or not isinstance(d.get("runs", {}), dict):
            raise ValueError(f"{p}: not a study timing file (no 'runs' object)")
        parts[p.parent.name] = d
    return parts


def part_wall_seconds(timing: dict) -> float:
    """A part's wall time: the sum of its invocations' seconds."""
    return round(sum(float(i.get("seconds", 0.0)) for i in timing.get("invocations", [])), 1)


def with_parts(summary_timing: dict, out: str | Path) -> dict:
    """The study's timing summary (``n_runs``, ``per_run``, ``train_seconds_total``,
    ``eval_seconds_total``, ``wall_seconds_total``, ``notes``) with the parts' runs added.

    ``parts_wall_seconds`` and ``parts_runs`` say how long each part took and how many runs it
    trained. A folder that trained nothing itself only aggregates parts that ran side by side:
    its wall time is the longest part's. Otherwise its wall time stays its own invocations', and
    the note says the parts' came on top."""
    parts = read_parts(out)
    if not parts:
        return summary_timing
    t = dict(summary_timing)
    per_run = dict(t.get("per_run") or {})
    own_trained = bool(t.get("train_seconds_total"))
    walls, counts = {}, {}
    for name, d in parts.items():
        walls[name] = part_wall_seconds(d)
        counts[name] = len(d.get("runs", {}))
        for run, rec in d.get("runs", {}).items():
            per_run.setdefault(run, {**rec, "part": name})
    t.update(per_run=per_run, n_runs=len(per_run), parts_wall_seconds=walls, parts_runs=counts,
             train_seconds_total=sum(float(v.get("train_seconds", 0.0)) for v in per_run.values()),
             eval_seconds_total=sum(float(v.get("eval_seconds", 0.0)) for v in per_run.values()))
    untimed = {n: len(d.get("brought_back_untimed") or []) for n, d in parts.items()}
    listed = ", ".join(f"{n} ({counts[n]} run{'s' * (counts[n] != 1)}"
                       + (f" + {untimed[n]} untimed" if untimed[n] else "") + f", {walls[n]:.0f} s)" for n in walls)
    notes = list(t.get("notes") or [])
    if own_trained:
        notes.append(f"runs also trained by {len(walls)} part(s) elsewhere: {listed}; their wall time is "
                     "not in this folder's")
    else:
        t["wall_seconds_total"] = max(walls.values(), default=0.0)
        notes.append(f"trained by {len(walls)} parallel parts ({', '.join(walls)}); wall time = the longest part")
    t["notes"] = notes
    return t
