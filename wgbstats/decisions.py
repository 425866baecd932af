"""Decision rules over class scores (argmax, thresholds chosen on validation) and the metrics of
decisions and score curves (per-class P/R/F1, micro and macro F1, the ranked PR curve and its AUC).

Class 0 is the negative class (a relation extractor's NA): thresholds never predict it and micro
F1 and the PR curve are over the positive classes. Relation extraction binds the class names
(``relext.evaluation.decisions.per_relation_prf``) and applies these to prediction files (``relext.evaluation.evaluate``).
"""
from __future__ import annotations

import math

import numpy as np

from typing import Sequence

from wgbstats.metrics import _div, class_counts, micro_f1_from_counts, prf_from_counts

#: How the threshold variant picks its threshold(s) on validation.
THRESHOLD_MODES: tuple[str, ...] = ("global", "per_relation")


# --------------------------------------------------------------------------------------------
# Decision rules
# --------------------------------------------------------------------------------------------
def argmax_decisions(scores: np.ndarray) -> np.ndarray:
    """(n, R) bool: one-hot of the highest-scoring class, NA included (ties: lowest id)."""
    scores = np.asarray(scores)
    out = np.zeros(scores.shape, dtype=bool)
    out[np.arange(len(scores)), scores.argmax(axis=1)] = True
    return out


def threshold_decisions(scores: np.ndarray, thresholds: np.ndarray | float) -> np.ndarray:
    """(n, R) bool: class r > 0 predicted when ``scores[:, r] >= thresholds[r]``; NA never."""
    scores = np.asarray(scores)
    t = np.broadcast_to(np.asarray(thresholds, dtype=np.float64), (scores.shape[1],))
    out = scores >= t[None, :]
    out[:, 0] = False
    return out


def _best_cut(scores: np.ndarray, gold: np.ndarray) -> float:
    """Threshold maximising F1 when predicting ``scores >= threshold`` (ties in score kept)."""
    if gold.sum() == 0 or scores.size == 0:
        return math.inf  # nothing to find: predict nothing
    order = np.argsort(-scores, kind="stable")
    s, g = scores[order], gold[order]
    tp = np.cumsum(g)
    k = np.arange(1, len(s) + 1)
    # only cut after the last of a run of equal scores
    last = np.r_[s[1:] != s[:-1], True]
    f1 = np.where(last, 2 * tp / (k + gold.sum()), -1.0)
    return float(s[int(np.argmax(f1))])


def best_thresholds(y_true: np.ndarray, scores: np.ndarray, *, mode: str = "global") -> np.ndarray:
    """Thresholds (one per class id; index 0 unused) maximising validation F1.

    ``mode="global"``: one threshold maximising micro F1 over all (item, positive class) pairs;
    ``mode="per_relation"``: one per class maximising that class's F1.
    """
    y_true, scores = np.asarray(y_true, bool), np.asarray(scores, float)
    r = scores.shape[1]
    if mode == "global":
        t = _best_cut(scores[:, 1:].ravel(), y_true[:, 1:].ravel())
        out = np.full(r, t)
    elif mode == "per_relation":
        out = np.array([math.inf] + [_best_cut(scores[:, j], y_true[:, j]) for j in range(1, r)])
    else:
        raise ValueError(f"unknown threshold mode {mode!r}; expected one of {list(THRESHOLD_MODES)}")
    out[0] = math.inf
    return out


# --------------------------------------------------------------------------------------------
# Plain metric functions (y_true: (n, R) multi-hot gold, y_pred: (n, R) decisions)
# --------------------------------------------------------------------------------------------
def per_class_prf(y_true, y_pred, labels: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """``{class: {precision, recall, f1, support, predicted}}`` for the positive classes, named by
    ``labels`` (all R classes, class 0 first; None: "0" .. "R-1")."""
    counts = class_counts(y_true, y_pred)
    p, r, f = prf_from_counts(counts)
    labels = [str(j) for j in range(len(counts))] if labels is None else list(labels)
    if len(labels) != len(counts):
        raise ValueError(f"{len(labels)} class labels for {len(counts)} classes")
    out = {}
    for j, name in enumerate(labels):
        if j == 0:
            continue
        tp, fp, fn = (int(x) for x in counts[j])
        out[name] = {"precision": float(p[j]), "recall": float(r[j]), "f1": float(f[j]),
                     "support": tp + fn, "predicted": tp + fp}
    return out


def micro_f1(y_true, y_pred) -> float:
    return float(micro_f1_from_counts(class_counts(y_true, y_pred)))


def macro_f1(y_true, y_pred) -> float:
    return float(prf_from_counts(class_counts(y_true, y_pred))[2][1:].mean())


def pr_curve(y_true, scores) -> tuple[np.ndarray, np.ndarray]:
    """OpenNRE's precision-recall curve over all (item, positive class) pairs, ranked."""
    y = np.asarray(y_true, bool)[:, 1:].ravel()
    s = np.asarray(scores, float)[:, 1:].ravel()
    order = np.argsort(-s, kind="stable")
    correct = np.cumsum(y[order])
    k = np.arange(1, len(s) + 1)
    total = max(int(y.sum()), 1)
    return correct / k, correct / total  # precision, recall


def pr_auc(y_true, scores) -> float:
    """Area under OpenNRE's PR curve (trapezoid rule over recall, as ``sklearn.metrics.auc``)."""
    prec, rec = pr_curve(y_true, scores)
    if len(prec) < 2 or not np.asarray(y_true, bool)[:, 1:].any():
        return 0.0
    return float(np.trapezoid(prec, rec))


def curve_max_f1(y_true, scores) -> float:
    """Best micro F1 on the PR curve (what OpenNRE prints as micro F1; test-tuned)."""
    prec, rec = pr_curve(y_true, scores)
    return float(np.max(_div(2 * prec * rec, prec + rec))) if len(prec) else 0.0
