"""Count-based metrics: (tp, fp, fn) per relation and the precision / recall / F1 computed from
them, vectorised over any leading axes (bootstrap replicates, seeds, entities).

The bottom of ``relext``'s evaluation: :mod:`relext.evaluate`, :mod:`relext.fairness` and
:mod:`relext.design` all read these, and this module imports none of them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def relation_counts(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """(..., R, 3) counts of (tp, fp, fn) per relation from (..., n, R) bool arrays."""
    y_true, y_pred = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    tp = (y_true & y_pred).sum(axis=-2)
    fp = (~y_true & y_pred).sum(axis=-2)
    fn = (y_true & ~y_pred).sum(axis=-2)
    return np.stack([tp, fp, fn], axis=-1)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def prf_from_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 from (..., 3) counts (tp, fp, fn); 0/0 is 0."""
    counts = np.asarray(counts, float)
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    return _div(tp, tp + fp), _div(tp, tp + fn), _div(2 * tp, 2 * tp + fp + fn)


def micro_f1_from_counts(counts: np.ndarray) -> np.ndarray:
    """Micro F1 over the positive relations (ids 1..R-1) of (..., R, 3) counts."""
    return prf_from_counts(np.asarray(counts)[..., 1:, :].sum(axis=-2))[2]


#: Per-entity counts of a run's evaluation (the study-design layer's input), next to eval.json.
ENTITY_COUNTS = "entity_counts.npz"


def write_entity_counts(path: str | Path, counts: dict) -> Path:
    """``entity_ids``, ``gender`` (E,) and ``counts_<rule>`` (E, R, 3) int32 as a compressed npz
    (no pickled objects: read back with ``allow_pickle=False``); temp file + rename."""
    import io

    from wgbcore.atomicio import atomic_write_bytes

    buf = io.BytesIO()
    np.savez_compressed(buf, **counts)
    return atomic_write_bytes(path, buf.getvalue())


def read_entity_counts(path: str | Path) -> dict[str, np.ndarray]:
    from wgbcore.fileio import reading

    with reading(path, "entity counts (.npz without pickles)"), np.load(Path(path), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
