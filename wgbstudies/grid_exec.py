"""The runs of a grid or study as tasks of the run executor (:mod:`wgbcore.executor`).

One task per run directory: :func:`run_one` trains the run unless it is ``DONE`` (the trainer
holds the run folder's lock while it writes) and evaluates it unless its ``eval.json`` is current
(under the same lock). A task carries only plain data: the run's config, its folder, the grid's
evaluation settings and, when the data is not the config's own dataset path, a picklable loader
that each worker calls once (:func:`cached_dataset`); nothing big travels. Results are the files
in the run directory, so the same run gives byte-identical ``eval.json`` / ``entity_counts.npz``
whichever executor ran it (at the same torch thread count, which orders float sums).

Also here: the checks that let a grid fail before its first run (:func:`checked_configs`) and
the readability check of per-entity count files (:func:`split_readable`).
"""
from __future__ import annotations

import dataclasses
import json
import pickle
import re
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from relext.evaluation.evaluate import ENTITY_COUNTS

EVAL_KEYS = ("threshold_mode", "n_resamples", "confidence", "bootstrap_seed")

_DATASETS: dict[bytes, Any] = {}


def eval_settings(config) -> dict[str, Any]:
    """The grid's evaluation settings (what makes an ``eval.json`` current)."""
    return {k: getattr(config, k) for k in EVAL_KEYS}


def stored_problem(run_dir: str | Path) -> str | None:
    """Why a run's stored evaluation (``eval.json``, ``entity_counts.npz``) may not be read --
    missing, changed since it was written (its sha256 differs from the run's
    :data:`wgbcore.provenance.OUTPUTS` record), or unreadable -- as one line naming the file; None
    when both are fine (files written before records existed are only checked for readability)."""
    import numpy as np

    from wgbcore.provenance import OutputChanged, output_status

    run_dir = Path(run_dir)
    for name in ("eval.json", ENTITY_COUNTS):
        path = run_dir / name
        if not path.is_file():
            return f"{path}: missing"
        try:
            output_status(path)
            if name == "eval.json":
                json.loads(path.read_text(encoding="utf-8"))
            else:
                with np.load(path, allow_pickle=False) as z:
                    for key in z.files:
                        z[key]
        except OutputChanged as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - zip, pickle, truncation, JSON: all the file's fault
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return f"{path}: unreadable ({type(exc).__name__}: {msg})".replace(": )", ")")
    return None


def eval_current(run_dir: str | Path, settings: Mapping[str, Any]) -> bool:
    """Is run_dir/eval.json present, readable and as recorded (:func:`stored_problem`), newer than
    DONE, and made with these evaluation settings?"""
    run_dir = Path(run_dir)
    path = run_dir / "eval.json"
    if stored_problem(run_dir) is not None:
        return False
    committed = not (run_dir / "predictions").exists() and not (run_dir / "model.pt").exists()
    done = run_dir / "DONE"
    if not committed and done.exists() and path.stat().st_mtime < done.stat().st_mtime:
        return False  # retrained since (a committed run has no model to re-evaluate: trust its files)
    try:
        d = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return False
    b = d.get("bootstrap", {}) if isinstance(d, dict) else {}
    return (isinstance(d, dict) and d.get("threshold_mode") == settings["threshold_mode"]
            and b.get("n_resamples") == settings["n_resamples"]
            and b.get("confidence") == settings["confidence"]
            and b.get("seed") == settings["bootstrap_seed"])


def cached_dataset(data):
    """``data`` itself (None, or an in-memory DatasetDict of a serial run), or what the loader
    ``data()`` returns, loaded once per worker process."""
    if data is None or not callable(data):
        return data
    key = pickle.dumps(data)
    if key not in _DATASETS:
        _DATASETS.clear()  # one study's data at a time
        _DATASETS[key] = data()
    return _DATASETS[key]


def run_one(train_fn: Callable | None, train_config, run_dir: str, settings: Mapping[str, Any],
            predict_fn: Callable | None = None, data=None) -> dict[str, Any]:
    """Train (unless DONE) and evaluate (unless current) one run; the seconds each took."""
    from relext.evaluation.evaluate import evaluate_run
    from wgbcore.lock import folder_lock

    run = Path(run_dir)
    dataset = cached_dataset(data)
    out: dict[str, Any] = {"train_seconds": None, "eval_seconds": None}
    if not (run / "DONE").exists():
        t0 = time.time()
        if train_fn is None:
            from relext.training.train import train

            train(train_config, run, dataset=dataset, progress=True)
        else:
            train_fn(train_config, run)
        out["train_seconds"] = time.time() - t0
        if not (run / "DONE").exists():
            raise RuntimeError(f"trainer returned but {run}/DONE was not written")
    if not eval_current(run, settings):
        t0 = time.time()
        with folder_lock(run, what="run"):
            evaluate_run(run, **settings, predict_fn=predict_fn, dataset=dataset)
        out["eval_seconds"] = time.time() - t0
    return out


#: run-config fields a grid (or a study on one) sets per run, with the option that sets them: a
#: ``--set`` of one was a TypeError ("got multiple values for keyword argument 'epochs'")
SET_PER_RUN = {"encoder": "--encoders", "selector": "--selectors", "seed": "--seeds", "epochs": "--epochs",
               "folds": "--protocol crossfit --folds", "fold": "--protocol crossfit (every fold runs)",
               "fold_seed": "--fold-seed"}


def check_overrides(overrides: Mapping[str, Any], per_run: Mapping[str, str] = SET_PER_RUN) -> None:
    """A one-line ``ValueError`` for an extra training field (``--set FIELD=VALUE``) that the grid
    sets per run itself, naming the option that sets it."""
    for name in overrides:
        if name in per_run:
            raise ValueError(f"--set {name}=...: the study sets {name!r} for each run; use {per_run[name]}")


def checked_configs(runs, make: Callable[..., Any]) -> dict[str, Any]:
    """``run.name -> make(run)`` for every run, each checked (its ``validate()`` and, for a
    dataclass, every field's type), or a one-line ``ValueError`` naming the run and the field
    before anything is written."""
    from wgbcore.config import check_fields

    out = {}
    for r in runs:
        try:
            cfg = make(r)
            if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
                check_fields(type(cfg), {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.init},
                             source="")
            if callable(getattr(cfg, "validate", None)):
                cfg.validate()
        except (ValueError, TypeError, KeyError) as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            unknown = re.search(r"unexpected keyword argument '(\w+)'", msg) if isinstance(exc, TypeError) else None
            if unknown:   # a --set of a field no run config has
                msg = f"unknown training field {unknown.group(1)!r} (--set {unknown.group(1)}=...)"
            raise ValueError(f"run {r.name}: {msg}") from None
        out[r.name] = cfg
    return out


def refuse_other_finished_runs(run_dirs: Mapping[str, Path], train_configs: Mapping[str, Any]) -> None:
    """A finished run (``DONE``) is reused only when its recorded config has the identity of the
    one the grid would train (``differences``, as the trainer checks an unfinished one): a run
    folder from another config, say a linked run of another selector, is a one-line error naming
    it, before any work."""
    for name, d in run_dirs.items():
        want, d = train_configs.get(name), Path(d)
        if not callable(getattr(want, "differences", None)) or not (d / "DONE").exists() \
                or not (d / "config.json").exists():
            continue
        try:
            diff = want.differences(type(want).from_json(d / "config.json", record=True))
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"{d / 'config.json'}: unreadable run config ({exc})") from None
        if diff:
            raise ValueError(f"{d}: a finished run of another config (fields {diff} differ); "
                             "choose another --runs-dir or move it away")


def split_readable(runs: Mapping[Any, Path | list[Path]]) -> tuple[dict, dict[str, str]]:
    """(runs whose stored evaluations all pass :func:`stored_problem`, {path: one-line error} of
    those that do not): an unreadable or changed count file is reported, never silently dropped
    from the verdicts (and :func:`eval_current` has the run evaluated again)."""
    ok, bad = {}, {}
    for key, dirs in runs.items():
        problems = []
        for d in (dirs if isinstance(dirs, (list, tuple)) else [dirs]):
            why = stored_problem(d)
            if why is not None:
                path, _, rest = why.partition(": ")
                problems.append((path, rest))
        if problems:
            bad.update(problems)
        else:
            ok[key] = dirs
    return ok, bad


def missing_line(missing: list[str], n_runs: int, unreadable: Mapping[str, str]) -> str | None:
    """The findings line that says which runs the verdicts lack (None when none)."""
    if not missing:
        return None
    shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
    text = (f"{len(missing)} of {n_runs} runs are missing from these verdicts (not finished, failed or "
            f"unreadable): {shown}; rerun the same command to finish them.")
    if unreadable:
        text += " Unreadable count files: " + "; ".join(f"{p} ({e})" for p, e in sorted(unreadable.items())[:3]) + "."
    return text
