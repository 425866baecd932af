"""The runs of one study, checked as a set before anything is scored (``wgb re score``, grids and
studies).

A study combines runs -- the seeds of an extractor, or the K fold runs of each seed -- and its
intervals count each as an independent draw. Paired by bag id alone, a set that is not one goes
through: the same run given twice, a cross-fitted run with folds missing, runs whose gold labels
disagree. :func:`read_study` (prediction sets) and :func:`check_run_folders` (a grid's run
folders) run the checks of :data:`CHECKS`, in order, and raise :class:`RunSetError`, a one-line
``ValueError`` that starts with the name of the check that failed:

============== ===========================================================================
check          refused
============== ===========================================================================
distinct       a run folder given twice (the same path, through a symlink, or a run folder
               and its ``predictions/``); two runs with the same config (one seed twice);
               two runs with identical decisions on every bag and no config to tell them apart
complete       a cross-fitted run without all K folds its fold configs name (``folds: K``;
               without configs: up to its highest fold); a fold run given as a plain run;
               folds of one run with other seeds or a config of another fold
fold-seed      cross-fitted runs dealt with different fold seeds (their configs' ``fold_seed``,
               or, without configs, persons predicted in different folds)
current        a run folder's predictions that its ``predictions/provenance.json`` does not
               vouch for (as ``wgb re eval`` checks them)
gold-valid     a bag whose gold is empty or mixes NA with a relation (``["NA", "spouse"]``)
duplicate-bags the same bag (entity, head and tail, or sentences) twice in a run under new ids
same-bags      runs that do not predict the same bags
gold-agree     a bag whose gold labels differ between two runs
coverage       runs that score a subset of the test bags of the data (refused unless
               ``allow_subset``, then a warning)
============== ===========================================================================

Errors name the runs, files (``file:line``) and bags concerned.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from relext.evaluation.prediction_sets import (SENTENCE_KEY, RunPredictions, fold_sets, merge_folds, read_prediction_set,
                                    run_from_rows)
from wikigenderbias.schema import RELATIONS

CHECKS = ("distinct", "complete", "fold-seed", "current", "gold-valid", "duplicate-bags", "same-bags",
          "gold-agree", "coverage")
#: config fields that do not make two runs different draws
_NOT_IDENTITY = frozenset({"threads", "cache_dir", "eval_batch_size", "device", "bucket_size", "fold"})


class RunSetError(ValueError):
    """A set of runs that is not one study's; ``check`` names the check that failed."""

    def __init__(self, check: str, message: str):
        self.check = check
        super().__init__(f"{check}: {message}")


@dataclass
class Part:
    """One prediction set of a run (the run itself, or one of its folds) and what is known of it."""

    run: str                    # the run's name (the path given)
    fold: int | None            # fold<k> of a cross-fitted set; None for a plain set
    path: Path                  # the prediction set: a file, a predictions folder or a run folder
    run_dir: Path | None        # the run folder holding config.json, when there is one
    config: dict | None


def _run_dir(path: Path) -> Path | None:
    if path.is_dir():
        if (path / "config.json").is_file():
            return path
        if path.name == "predictions" and (path.parent / "config.json").is_file():
            return path.parent
    return None


def _config(run_dir: Path | None) -> dict | None:
    if run_dir is None:
        return None
    path = run_dir / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: expected a JSON object (a run config)")
    return cfg


def parts_of(path: str | Path) -> list[Part]:
    """The prediction sets of one run as given: itself, or its ``fold<k>`` sets."""
    path = Path(path)
    folds = fold_sets(path)
    items = [(None, path)] if folds is None else folds
    return [Part(str(path), k, p, _run_dir(p), _config(_run_dir(p))) for k, p in items]


def _identity(cfg: dict) -> str:
    return json.dumps({k: v for k, v in cfg.items() if k not in _NOT_IDENTITY}, sort_keys=True, default=str)


# --------------------------------------------------------------------------------------------
# Checks of what the runs are (before their predictions are read)
# --------------------------------------------------------------------------------------------
def _distinct_folders(runs: Sequence[list[Part]]) -> None:
    seen: dict[str, Part] = {}
    for parts in runs:
        for p in parts:
            real = os.path.realpath(p.run_dir or p.path)
            if real in seen:
                q = seen[real]
                same = f"{p.path} is given twice" if str(p.path) == str(q.path) else \
                    f"{p.path} and {q.path} are the same run folder ({real})"
                raise RunSetError("distinct", f"{same}; each run of a study is given once")
            seen[real] = p
    ids: dict[str, Part] = {}
    for parts in runs:
        cfg = parts[0].config
        if cfg is None or (parts[0].fold is None and cfg.get("folds") is not None):
            continue   # a fold run given as a plain run: 'complete' says so (two folds share a config)
        key = _identity(cfg)
        if key in ids and ids[key].run != parts[0].run:
            raise RunSetError("distinct", f"{parts[0].run} and {ids[key].run} hold the same config (seed "
                              f"{cfg.get('seed')}): one run given twice counts as two seeds")
        ids.setdefault(key, parts[0])


def _complete(runs: Sequence[list[Part]]) -> None:
    for parts in runs:
        name = parts[0].run
        if parts[0].fold is None:
            cfg = parts[0].config or {}
            if cfg.get("folds") is not None:
                raise RunSetError("complete", f"{name} is fold {cfg.get('fold')} of a {cfg['folds']}-fold run "
                                  "(its config says folds: {0}); give the folder of its {0} fold runs "
                                  "(fold0 .. fold{1})".format(cfg["folds"], int(cfg["folds"]) - 1))
            continue
        ks = [p.fold for p in parts]
        declared = {int(p.config["folds"]) for p in parts if p.config and p.config.get("folds") is not None}
        if len(declared) > 1:
            raise RunSetError("complete", f"{name}: its fold configs disagree on the number of folds "
                              f"({sorted(declared)})")
        k_all = declared.pop() if declared else max(ks) + 1
        missing = sorted(set(range(k_all)) - set(ks))
        if missing or max(ks) >= k_all:
            said = f"its fold configs say folds: {k_all}" if any(p.config for p in parts) else \
                f"it holds folds {ks}"
            what = f"fold(s) {missing} of {k_all} missing" if missing else \
                f"fold(s) {[k for k in ks if k >= k_all]} beyond its {k_all} folds"
            raise RunSetError("complete", f"{name}: {what} ({said}); a cross-fitted set holds fold0 .. fold<K-1>")
        for p in parts:
            if p.config and p.config.get("fold") is not None and int(p.config["fold"]) != p.fold:
                raise RunSetError("complete", f"{p.path}: its config says fold {p.config['fold']}, "
                                  f"its name fold{p.fold}")
        seeds = {p.config.get("seed") for p in parts if p.config}
        if len(seeds) > 1:
            raise RunSetError("complete", f"{name}: its folds come from different seeds {sorted(map(str, seeds))}; "
                              "one cross-fitted run's folds share one seed")


def _fold_seed_configs(runs: Sequence[list[Part]]) -> None:
    first: tuple[str, Any] | None = None
    for parts in runs:
        if parts[0].fold is None:
            continue
        dealt = {p.config.get("fold_seed", 0) for p in parts if p.config}
        if len(dealt) > 1:
            raise RunSetError("fold-seed", f"{parts[0].run}: its folds were dealt with different fold seeds "
                              f"{sorted(map(str, dealt))}")
        if not dealt:
            continue
        seed = dealt.pop()
        if first is None:
            first = (parts[0].run, seed)
        elif seed != first[1]:
            raise RunSetError("fold-seed", f"{parts[0].run} was dealt into folds with fold seed {seed}, "
                              f"{first[0]} with fold seed {first[1]}; one study's runs share one dealing")


def _current(runs: Sequence[list[Part]]) -> None:
    """Run folders with a model: their predictions as recorded in provenance.json."""
    from relext.evaluation.evaluate import EVAL_SPLITS, prediction_path
    from relext.training.predict import model_file, verify_predictions

    for parts in runs:
        for p in parts:
            if p.run_dir is None or not model_file(p.run_dir).exists():
                continue
            try:
                stale = verify_predictions(p.run_dir, [s for s in EVAL_SPLITS
                                                       if prediction_path(p.run_dir, s).exists()])
            except (ValueError, FileNotFoundError) as exc:
                raise RunSetError("current", str(exc).splitlines()[0]) from None
            for split, why in stale.items():
                raise RunSetError("current", f"{prediction_path(p.run_dir, split)}: not the run's current "
                                  f"predictions ({why}); `wgb re eval {p.run_dir}` predicts them again")


META_CHECKS: tuple[Callable[[Sequence[list[Part]]], None], ...] = (
    _distinct_folders, _complete, _fold_seed_configs)


# --------------------------------------------------------------------------------------------
# Checks of the predictions
# --------------------------------------------------------------------------------------------
def _labels(row: np.ndarray) -> list[str]:
    return [RELATIONS[j] for j in np.flatnonzero(row)]


def _at(run: RunPredictions, i: int) -> str:
    return str(run.wheres[i]) if run.wheres is not None else run.name


def _gold_valid(runs: Sequence[RunPredictions]) -> None:
    for run in runs:
        n_gold = run.y_true.sum(axis=1)
        bad = np.flatnonzero((n_gold == 0) | (run.y_true[:, 0] & (n_gold > 1)))
        if len(bad):
            i = int(bad[0])
            got = _labels(run.y_true[i])
            why = "no gold label" if not got else f"gold labels {got}, which mix NA with a relation"
            raise RunSetError("gold-valid", f"{_at(run, i)}: bag {run.bag_ids[i]!r} has {why}; a bag's gold is "
                              f"NA alone or relations of {list(RELATIONS[1:])}")


def _no_duplicate_bags(runs: Sequence[RunPredictions]) -> None:
    for run in runs:
        if run.pairs is None:
            continue
        first: dict[str, int] = {}
        for i, key in enumerate(run.pairs.tolist()):
            j = first.setdefault(key, i)
            if j != i:
                raise RunSetError("duplicate-bags", f"{_at(run, i)}: bag {run.bag_ids[i]!r} repeats bag "
                                  f"{run.bag_ids[j]!r} ({_at(run, j)}) under a new id (same entity, head and "
                                  "tail); a run holds each bag once")


def _fold_seed_persons(runs: Sequence[RunPredictions]) -> None:
    crossfit = [r for r in runs if r.folds is not None]
    if len(crossfit) < 2:
        return
    ref = crossfit[0]
    fold_of = dict(zip(ref.entity_ids.tolist(), ref.folds.tolist()))
    for run in crossfit[1:]:
        for e, k in zip(run.entity_ids.tolist(), run.folds.tolist()):
            if e in fold_of and fold_of[e] != k:
                raise RunSetError("fold-seed", f"{run.name} deals persons into other folds than {ref.name} "
                                  f"(person {e!r}: fold {k} here, fold {fold_of[e]} there): dealt with another "
                                  "fold seed; one study's runs share one dealing")


def _same_bags(runs: Sequence[RunPredictions]) -> None:
    first = runs[0]
    ref = set(first.bag_ids.tolist())
    for run in runs[1:]:
        bags = set(run.bag_ids.tolist())
        if bags != ref:
            missing, extra = sorted(ref - bags), sorted(bags - ref)
            what = (f"lacks {len(missing)} bag(s) of {first.name} (first: {missing[0]!r})" if missing
                    else f"has {len(extra)} bag(s) {first.name} lacks (first: {extra[0]!r})")
            raise RunSetError("same-bags", f"{run.name}: {what}; every run must predict the same test bags")


def _gold_agrees(runs: Sequence[RunPredictions]) -> None:
    first = runs[0]
    index = {b: i for i, b in enumerate(first.bag_ids.tolist())}
    for run in runs[1:]:
        order = np.array([index[b] for b in run.bag_ids.tolist()], dtype=np.int64)
        differ = np.flatnonzero((first.y_true[order] != run.y_true).any(axis=1))
        if len(differ):
            i = int(differ[0])
            j = int(order[i])
            raise RunSetError("gold-agree", f"bag {run.bag_ids[i]!r}: gold {_labels(first.y_true[j])} in "
                              f"{first.name} ({_at(first, j)}) but {_labels(run.y_true[i])} in {run.name} "
                              f"({_at(run, i)}); the runs of a study share one gold standard")


def _same_decisions(runs: Sequence[RunPredictions], configs: Sequence[dict | None]) -> None:
    digests: dict[str, int] = {}
    for i, run in enumerate(runs):
        order = np.argsort(run.bag_ids.astype(str))
        h = hashlib.sha256("\n".join(run.bag_ids[order].astype(str)).encode())
        h.update(np.ascontiguousarray(run.y_true[order]).tobytes())
        h.update(np.ascontiguousarray(run.y_pred[order]).tobytes())
        j = digests.setdefault(h.hexdigest(), i)
        if j != i and configs[i] is None and configs[j] is None:
            raise RunSetError("distinct", f"{run.name} and {runs[j].name} make identical decisions on every bag "
                              "and no config tells them apart: one run given twice counts as two seeds")


# --------------------------------------------------------------------------------------------
# Coverage of the test set
# --------------------------------------------------------------------------------------------
@dataclass
class TestSet:
    """The evaluation bags a study's runs are scored against: ``(entity_id, head, tail)`` keys and
    persons (:func:`test_set`)."""

    name: str
    pairs: frozenset
    persons: frozenset


def test_set(data: str | os.PathLike | None = None, *, crossfit: bool = False, dataset=None) -> TestSet:
    """The evaluation bags of the test splits of ``data`` (a benchmark folder; None: the embedded
    release), or of every split for a cross-fitted study (every person is some fold's test person)."""
    from relext.protocols.crossfit import TEST_SPLITS

    if dataset is None:
        from relext.protocols.data import load_dataset_dict

        dataset = load_dataset_dict(data)
    splits = list(dataset) if crossfit else list(TEST_SPLITS)
    pairs, persons = set(), set()
    for s in splits:
        cols = dataset[s].select_columns(["entity_id", "head", "tail"]).to_dict()
        pairs.update("\x1f".join(map(str, t)) for t in zip(cols["entity_id"], cols["head"], cols["tail"]))
        persons.update(map(str, cols["entity_id"]))
    name = str(data) if data else "the embedded release"
    return TestSet(f"{name} ({'every split' if crossfit else 'male_test + female_test'})",
                   frozenset(pairs), frozenset(persons))


def _coverage(run: RunPredictions, ref: TestSet, allow_subset: bool) -> list[str]:
    by_pair = run.pairs is not None and not str(run.pairs[0]).startswith(SENTENCE_KEY)
    have = set(run.pairs.tolist()) if by_pair else set(run.entity_ids.tolist())
    want, unit = (ref.pairs, "test bags") if by_pair else (ref.persons, "test persons")
    covered = len(have & want)
    if covered == 0:
        return [f"coverage not checked: none of the {unit} of {run.name} is in {ref.name}; give the data the runs "
                "were predicted on (--data)"]
    notes = []
    if len(have - want):
        notes.append(f"{run.name}: {len(have - want)} of its {len(have)} {unit} are not in {ref.name}")
    if covered < len(want):
        first = sorted(want - have)[0].replace("\x1f", " / ")
        text = (f"{run.name} scores {covered:,} of the {len(want):,} {unit} of {ref.name} "
                f"({len(want) - covered:,} missing, first: {first!r})")
        if not allow_subset:
            raise RunSetError("coverage", f"{text}; gaps on a subset are not the benchmark's: score every "
                              "test bag, or pass --allow-subset to score this subset")
        notes.append(f"SUBSET: {text}; its gaps are not the benchmark's")
    return notes


# --------------------------------------------------------------------------------------------
# The sets
# --------------------------------------------------------------------------------------------
def check_run_folders(groups: Mapping[Any, Path | Sequence[Path]]) -> None:
    """A grid's or study's finished runs (key -> run folder, or a cross-fitted run's fold run
    folders): distinct, complete, dealt with one fold seed (per variant: the keys' first element
    when they are tuples). :class:`RunSetError` otherwise."""
    by_variant: dict[Any, list[list[Part]]] = {}
    for key, dirs in groups.items():
        crossfit = isinstance(dirs, (list, tuple))
        parts = []
        for d in (dirs if crossfit else [dirs]):
            d = Path(d)
            cfg = _config(d) if (d / "config.json").is_file() else None
            fold = (int(cfg["fold"]) if cfg and cfg.get("fold") is not None else len(parts)) if crossfit else None
            name = (f"{key[0]} seed {key[1]}" if isinstance(key, tuple) and len(key) == 2 else str(key)) \
                if crossfit else str(d)
            parts.append(Part(name, fold, d, d, cfg))
        by_variant.setdefault(key[0] if isinstance(key, tuple) else None, []).append(parts)
    every = [p for runs in by_variant.values() for p in runs]
    _distinct_folders(every)
    for runs in by_variant.values():
        _complete(runs)
    _fold_seed_configs(every)


def check_runs(runs: Sequence[RunPredictions], configs: Sequence[dict | None] | None = None) -> None:
    """The checks of the runs' predictions (``configs``: each run's, or None where there is none:
    identical decisions without a config to tell two runs apart are one run given twice)."""
    _same_decisions(runs, list(configs) if configs is not None else [None] * len(runs))
    for check in (_gold_valid, _no_duplicate_bags, _fold_seed_persons, _same_bags, _gold_agrees):
        check(runs)


def read_study(paths: Sequence[str | Path], *, rule: str = "argmax", threshold_mode: str = "global",
               reference: TestSet | None = None, allow_subset: bool = False,
               current: bool = True) -> tuple[list[RunPredictions], list[str]]:
    """Read one prediction set per path as the runs of one study, every check of :data:`CHECKS`
    passed (``current``: run folders against their provenance; ``reference``: the coverage of its
    test bags); returns the runs and the warnings to show (a subset scored, coverage unchecked)."""
    sets = [parts_of(p) for p in paths]
    if len({parts[0].fold is None for parts in sets}) > 1:
        raise ValueError("mix of cross-fitted and plain prediction sets; score them separately")
    for check in META_CHECKS:
        check(sets)
    if current:
        _current(sets)
    runs = []
    for parts in sets:
        read = [(p.fold, run_from_rows(read_prediction_set(p.path), name=str(p.path), rule=rule,
                                       threshold_mode=threshold_mode)) for p in parts]
        runs.append(read[0][1] if parts[0].fold is None else merge_folds(read, name=parts[0].run))
    check_runs(runs, [parts[0].config for parts in sets])
    notes = _coverage(runs[0], reference, allow_subset) if reference is not None else []
    return runs, notes
