"""The study design's counts for relation extraction: :class:`wgbstats.counts.StudyCounts` with the
benchmark's relations as its class labels (so the base metrics are named ``f1_gap:spouse``,
``eo_gap:birthDate``, ...) and a run's ``entity_counts.npz`` read by :mod:`relext.evaluation.metrics`.

Every study of ``relext`` and ``wgb`` that builds counts of extractions uses this class; the
design, its estimates and verdicts are :mod:`wgbstats.design`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from relext.evaluation.metrics import read_entity_counts
from wgbstats.counts import POPULATIONS, StudyCounts as UnitCounts  # noqa: F401 (the generic class)
from wikigenderbias.schema import RELATIONS


@dataclass
class StudyCounts(UnitCounts):
    """Per-person counts of a relation-extraction study (:class:`wgbstats.counts.StudyCounts`),
    labelled with the benchmark's relations (``RELATIONS``, "NA" first)."""

    labels: tuple[str, ...] | None = tuple(RELATIONS)

    @staticmethod
    def read_counts(path: str | Path) -> dict[str, np.ndarray]:
        return read_entity_counts(path)
