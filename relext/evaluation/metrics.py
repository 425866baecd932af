"""Count-based metrics: (tp, fp, fn) per relation and the precision / recall / F1 computed from
them, vectorised over any leading axes (bootstrap replicates, seeds, entities): those of
:mod:`wgbstats.metrics` (moved there, issue #42), and the file of a run's per-entity counts.

The bottom of ``relext``'s evaluation: :mod:`relext.evaluation.evaluate`, :mod:`relext.evaluation.fairness` and
:mod:`relext.evaluation.study_counts` all read these, and this module imports none of them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

# the count metrics are the statistics package's (wgbstats.metrics); relext's names kept
from wgbstats.metrics import (_div, class_counts, micro_f1_from_counts,  # noqa: F401
                              prf_from_counts, relation_counts)


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
    """A run's ``entity_counts.npz``, checked against its recorded sha256 (an edited or copied-over
    file is an ``OutputChanged`` naming it; one without a record is read as it is)."""
    from wgbcore.fileio import reading
    from wgbcore.provenance import output_status

    output_status(path)
    with reading(path, "entity counts (.npz without pickles)"), np.load(Path(path), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
