"""Reading prediction sets for ``wgb re score``: one run's bags from a JSON-lines file, a
``predictions/`` folder or a run folder, in the ``scores`` or the ``predicted`` form, and a
cross-fitted set (``fold0`` .. ``fold<K-1>``) joined into one run. The formats are those of
:mod:`relext.evaluation.score` (its module docstring); errors name the file and line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wikigenderbias.schema import GENDERS, RELATIONS

RULES = ("argmax", "threshold")
TEST_FILES = ("male_test.jsonl", "female_test.jsonl")
VALIDATION_FILE = "validation.jsonl"
_NOT_SCORED = ("validation", "train")
#: the start of a bag's key made of its sentences (rows without head and tail)
SENTENCE_KEY = "sentences\x1e"


# --------------------------------------------------------------------------------------------
# Reading prediction sets
# --------------------------------------------------------------------------------------------
@dataclass
class RunPredictions:
    """The test bags of one run: ids, gender, gold and predicted relations (``(n, R)`` bool)."""

    name: str
    bag_ids: np.ndarray
    entity_ids: np.ndarray
    genders: np.ndarray
    y_true: np.ndarray
    y_pred: np.ndarray
    form: str                      # "scores" or "predicted"
    thresholds: list[float] | None = None
    #: cross-fitted sets: the fold whose model predicted each bag (None: one model)
    folds: np.ndarray | None = None
    #: ``file:line`` of each bag's row (errors of :mod:`relext.evaluation.run_sets` name it)
    wheres: np.ndarray | None = None
    #: what makes each bag that bag whatever its id: ``entity_id``, ``head``, ``tail`` (or the
    #: sorted ``sentence_ids``) joined; None when the rows carry neither
    pairs: np.ndarray | None = None


def _relation_id(value: Any, where: str, field_name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{where}: field {field_name!r} holds {value!r}, not a relation")
    if isinstance(value, int):
        if 0 <= value < len(RELATIONS):
            return value
        raise ValueError(f"{where}: field {field_name!r} holds relation id {value}; ids are 0..{len(RELATIONS) - 1} "
                         f"({', '.join(RELATIONS)})")
    if isinstance(value, str) and value in RELATIONS:
        return RELATIONS.index(value)
    raise ValueError(f"{where}: field {field_name!r} holds unknown relation {value!r}; expected one of "
                     f"{list(RELATIONS)} or their ids")


def _relations(row: Mapping, key: str, where: str) -> list[int]:
    value = row[key]
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"{where}: field {key!r} must be a list of relations, got {value!r:.80}")
    return [_relation_id(v, where, key) for v in value]


def _check_row(row: Any, where: str) -> str:
    """The row's form ("scores" or "predicted"); a ``ValueError`` naming ``where`` otherwise."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key in ("bag_id", "entity_id", "gender", "labels"):
        if key not in row:
            raise ValueError(f"{where}: missing field {key!r}")
    if row["gender"] not in GENDERS:
        raise ValueError(f"{where}: field 'gender' is {row['gender']!r}; expected one of {list(GENDERS)}")
    for key in ("bag_id", "entity_id"):
        if not isinstance(row[key], (str, int)) or isinstance(row[key], bool) or str(row[key]) == "":
            raise ValueError(f"{where}: field {key!r} must be a non-empty string, got {row[key]!r:.80}")
    has_scores, has_pred = "scores" in row, "predicted" in row
    if has_scores == has_pred:
        raise ValueError(f"{where}: a row holds either 'scores' (one per relation) or 'predicted' "
                         f"(relation labels), {'not both' if has_scores else 'found neither'}")
    if has_scores:
        s = row["scores"]
        if not isinstance(s, list) or len(s) != len(RELATIONS) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in s):
            raise ValueError(f"{where}: field 'scores' must be a list of {len(RELATIONS)} finite numbers "
                             f"(one per relation {list(RELATIONS)}), got {s!r:.80}")
        return "scores"
    return "predicted"


def _read_rows(path: Path) -> list[tuple[str, dict]]:
    from wgbcore.atomicio import iter_jsonl

    return list(iter_jsonl(path))


def read_prediction_set(path: str | Path) -> list[tuple[str, dict]]:
    """``(where, row)`` of every row of one run's predictions: a JSON-lines file, a folder with
    ``male_test.jsonl`` + ``female_test.jsonl`` (+ ``validation.jsonl``), or a run folder with a
    ``predictions/`` folder. Rows from ``validation.jsonl`` get ``split: validation``."""
    path = Path(path)
    if path.is_dir():
        folder = path / "predictions" if (path / "predictions").is_dir() else path
        missing = [f for f in TEST_FILES if not (folder / f).is_file()]
        if missing:
            raise ValueError(f"{path}: a predictions folder holds {' and '.join(TEST_FILES)}; missing {missing}")
        out = []
        for name in (VALIDATION_FILE, *TEST_FILES):
            if (folder / name).is_file():
                split = name.removesuffix(".jsonl")
                out += [(w, {**r, "split": split} if isinstance(r, dict) else r)
                        for w, r in _read_rows(folder / name)]
        return out
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such predictions file or folder")
    return _read_rows(path)


def run_from_rows(rows: Sequence[tuple[str, dict]], *, name: str = "run", rule: str = "argmax",
                  threshold_mode: str = "global") -> RunPredictions:
    """Check the rows (errors name file and line) and turn them into one run's decisions."""
    from relext.evaluation.evaluate import argmax_decisions, best_thresholds, threshold_decisions

    if rule not in RULES:
        raise ValueError(f"unknown decision rule {rule!r}; expected one of {list(RULES)}")
    forms: set[str] = set()
    seen: dict[str, str] = {}
    gender_of: dict[str, tuple[str, str]] = {}
    test, val = [], []
    for where, row in rows:
        form = _check_row(row, where)
        forms.add(form)
        if len(forms) > 1:
            raise ValueError(f"{where}: this row has {form!r} but earlier rows of {name} the other form; "
                             "one run uses one form")
        if row.get("split") in _NOT_SCORED:
            val.append((where, row))
            continue
        bag = str(row["bag_id"])
        if bag in seen:
            raise ValueError(f"{where}: duplicate bag_id {bag!r} (first at {seen[bag]})")
        seen[bag] = where
        ent = str(row["entity_id"])
        if ent in gender_of and gender_of[ent][0] != row["gender"]:
            raise ValueError(f"{where}: entity {ent!r} is {row['gender']!r} here but {gender_of[ent][0]!r} "
                             f"at {gender_of[ent][1]}; the gender is the article's subject's")
        gender_of.setdefault(ent, (row["gender"], where))
        test.append((where, row))
    if not test:
        raise ValueError(f"{name}: no test rows (rows of split validation/train are not scored)")
    form = forms.pop()
    n, r = len(test), len(RELATIONS)
    y_true = np.zeros((n, r), dtype=bool)
    for i, (where, row) in enumerate(test):
        y_true[i, _relations(row, "labels", where)] = True
    thresholds = None
    if form == "predicted":
        if rule != "argmax":
            raise ValueError(f"{name}: the 'predicted' form holds decisions already; the threshold rule needs scores")
        y_pred = np.zeros((n, r), dtype=bool)
        for i, (where, row) in enumerate(test):
            y_pred[i, _relations(row, "predicted", where)] = True
        y_pred[~y_pred[:, 1:].any(axis=1), 0] = True   # no positive relation: NA
    else:
        scores = np.array([row["scores"] for _, row in test], dtype=float)
        if rule == "argmax":
            y_pred = argmax_decisions(scores)
        else:
            if not val:
                raise ValueError(f"{name}: the threshold rule picks its threshold on validation rows "
                                 "(split 'validation' or validation.jsonl); there are none")
            vt = np.zeros((len(val), r), dtype=bool)
            for i, (where, row) in enumerate(val):
                vt[i, _relations(row, "labels", where)] = True
            vs = np.array([row["scores"] for _, row in val], dtype=float)
            t = best_thresholds(vt, vs, mode=threshold_mode)
            y_pred = threshold_decisions(scores, t)
            thresholds = [float(x) for x in t]
    return RunPredictions(
        name=name,
        bag_ids=np.array([str(row["bag_id"]) for _, row in test], dtype=object),
        entity_ids=np.array([str(row["entity_id"]) for _, row in test], dtype=object),
        genders=np.array([row["gender"] for _, row in test], dtype=object),
        y_true=y_true, y_pred=y_pred, form=form, thresholds=thresholds,
        wheres=np.array([where for where, _ in test], dtype=object), pairs=_pair_keys([row for _, row in test]))


def _pair_keys(rows: Sequence[Mapping]) -> np.ndarray | None:
    """Each bag's identity apart from its id (``entity_id``, ``head``, ``tail``; else its sorted
    ``sentence_ids``), or None when some row carries neither."""
    if all(isinstance(r.get("head"), str) and isinstance(r.get("tail"), str) for r in rows):
        return np.array(["\x1f".join((str(r["entity_id"]), r["head"], r["tail"])) for r in rows], dtype=object)
    if all(isinstance(r.get("sentence_ids"), list) and r["sentence_ids"] for r in rows):
        return np.array([SENTENCE_KEY + "\x1f".join([str(r["entity_id"]), *sorted(map(str, r["sentence_ids"]))])
                         for r in rows], dtype=object)
    return None


def fold_sets(path: str | Path) -> list[tuple[int, Path]] | None:
    """The fold prediction sets of a cross-fitted set -- a folder whose children are named
    ``fold<k>`` (a prediction set each: a JSON-lines file ``fold<k>.jsonl``, or a folder as
    :func:`read_prediction_set` reads, e.g. the fold's run directory) -- or None for a plain set."""
    import re

    path = Path(path)
    if not path.is_dir() or any((path / f).is_file() for f in TEST_FILES) or (path / "predictions").is_dir():
        return None
    found = []
    for child in sorted(path.iterdir()):
        m = re.fullmatch(r"(?:.*-)?fold(\d+)(?:\.jsonl)?", child.name)
        if m:
            found.append((int(m.group(1)), child))
    if not found:
        return None
    ks = [k for k, _ in found]
    if len(set(ks)) != len(ks):
        raise ValueError(f"{path}: fold sets {ks}; a cross-fitted set holds fold0 .. fold<K-1>, each once")
    return found   # every fold of K there: relext.evaluation.run_sets (check "complete")


def merge_folds(parts: Sequence[tuple[int, RunPredictions]], *, name: str) -> RunPredictions:
    """One run from its folds' predictions: persons must be disjoint across folds (each person is
    predicted once, by the model of its own fold); bag ids are prefixed with the fold."""
    owner: dict[str, int] = {}
    for k, run in parts:
        for e in set(run.entity_ids.tolist()):
            if e in owner:
                raise ValueError(f"{name}: person {e!r} is predicted in fold {owner[e]} and fold {k}; "
                                 "cross-fitted folds hold disjoint persons")
            owner[e] = k
    forms = {run.form for _, run in parts}
    if len(forms) > 1:
        raise ValueError(f"{name}: folds mix the 'scores' and 'predicted' forms")
    cat = lambda attr: np.concatenate([getattr(run, attr) for _, run in parts])  # noqa: E731
    have = lambda attr: all(getattr(run, attr) is not None for _, run in parts)  # noqa: E731
    return RunPredictions(
        name=name, bag_ids=np.concatenate([np.array([f"fold{k}/{b}" for b in run.bag_ids], dtype=object)
                                           for k, run in parts]),
        entity_ids=cat("entity_ids"), genders=cat("genders"), y_true=cat("y_true"), y_pred=cat("y_pred"),
        form=forms.pop(), thresholds=None,
        folds=np.concatenate([np.full(len(run.bag_ids), k, dtype=np.int64) for k, run in parts]),
        wheres=cat("wheres") if have("wheres") else None, pairs=cat("pairs") if have("pairs") else None)


def read_run(path: str | Path, *, rule: str = "argmax", threshold_mode: str = "global") -> RunPredictions:
    """One run's predictions: a plain prediction set, or a cross-fitted one (:func:`fold_sets`;
    the threshold rule picks each fold's threshold on that fold's own validation rows)."""
    folds = fold_sets(path)
    if folds is None:
        return run_from_rows(read_prediction_set(path), name=str(path), rule=rule, threshold_mode=threshold_mode)
    ks = [k for k, _ in folds]
    if sorted(ks) != list(range(len(ks))):
        raise ValueError(f"{path}: fold sets {ks}; a cross-fitted set holds fold0 .. fold<K-1>, each once")
    parts = [(k, run_from_rows(read_prediction_set(p), name=str(p), rule=rule, threshold_mode=threshold_mode))
             for k, p in folds]
    return merge_folds(parts, name=str(path))
