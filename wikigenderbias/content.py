"""Content fingerprints of loaded splits: what a cached result was computed from.

A benchmark folder's own fingerprint (:func:`wikigenderbias.card.fingerprint`) hashes its data
files; a cache (predictions, a pipeline's finished stages) needs the fingerprint of the rows it
was computed from, whatever they were loaded from (a benchmark folder, a ``save_to_disk`` folder,
an in-memory ``DatasetDict``, the embedded release). :func:`split_sha256` hashes a split's
features and rows (JSON, in order), so the same rows give the same digest however they were
loaded, and a relabelled row (``wgb data annotate-import`` in place) changes it.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

__all__ = ["split_sha256", "dataset_sha256"]

_BATCH = 2048


def split_sha256(split: Any) -> str:
    """sha256 over a ``datasets.Dataset``'s features and rows (a few seconds per 100k sentences)."""
    ds = split.with_format(None) if hasattr(split, "with_format") else split
    h = hashlib.sha256()
    feats = getattr(ds, "features", None)
    h.update(json.dumps(feats.to_dict() if hasattr(feats, "to_dict") else None, sort_keys=True,
                        default=str).encode())
    h.update(f"rows={len(ds)}".encode())
    for batch in ds.iter(batch_size=_BATCH):
        h.update(json.dumps(batch, sort_keys=True, ensure_ascii=False, default=str).encode())
    return h.hexdigest()


def dataset_sha256(dataset: Any, splits: Iterable[str] | None = None, *, source: str = "dataset") -> dict[str, str]:
    """``{split: split_sha256}`` for ``splits`` (default: every split) of a ``DatasetDict``; a
    ``ValueError`` naming ``source`` when one is missing."""
    names = list(dataset) if splits is None else list(splits)
    missing = [s for s in names if s not in dataset]
    if missing:
        raise ValueError(f"{source}: no split(s) {missing}; it has {sorted(dataset)}")
    return {s: split_sha256(dataset[s]) for s in names}
