"""Count-based metrics: (tp, fp, fn) per class and the precision / recall / F1 computed from
them, vectorised over any leading axes (bootstrap replicates, seeds, units), and the file of a
run's per-unit counts (the study design's input), read plainly (a package above may read it its own way: a
:class:`wgbstats.counts.StudyCounts` subclass's ``read_counts``).

Class 0 is the negative class (no label; a relation extractor's NA): micro F1 is over the
positive classes 1..R-1. Nothing here knows what a class or a unit is.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def class_counts(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """(..., R, 3) counts of (tp, fp, fn) per class from (..., n, R) bool arrays."""
    y_true, y_pred = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    tp = (y_true & y_pred).sum(axis=-2)
    fp = (~y_true & y_pred).sum(axis=-2)
    fn = (y_true & ~y_pred).sum(axis=-2)
    return np.stack([tp, fp, fn], axis=-1)


#: The name relation extraction knows it by (one class per relation).
relation_counts = class_counts


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def prf_from_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 from (..., 3) counts (tp, fp, fn); 0/0 is 0."""
    counts = np.asarray(counts, float)
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    return _div(tp, tp + fp), _div(tp, tp + fn), _div(2 * tp, 2 * tp + fp + fn)


def micro_f1_from_counts(counts: np.ndarray) -> np.ndarray:
    """Micro F1 over the positive classes (ids 1..R-1) of (..., R, 3) counts."""
    return prf_from_counts(np.asarray(counts)[..., 1:, :].sum(axis=-2))[2]


#: Per-unit counts of a run's evaluation (the study design's input), next to its eval.json.
UNIT_COUNTS = ENTITY_COUNTS = "entity_counts.npz"


def read_unit_counts(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a per-unit counts file (refusing pickled objects; one-line error naming it),
    checked against the sha256 recorded when it was written (``wgbcore.provenance``; a file without
    a record is read as it is)."""
    from wgbcore.fileio import reading
    from wgbcore.provenance import output_status

    output_status(path)
    with reading(path, "entity counts (.npz without pickles)"), np.load(Path(path), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}

