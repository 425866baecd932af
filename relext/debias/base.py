"""The debiaser protocol shared by every debiasing method, and the do-nothing debiaser.

A debiaser changes what a relation extractor learns from, at two points of a training run:

* ``transform_dataset(dsdict, *, seed)`` -- the benchmark (a ``datasets.DatasetDict`` with the
  ``sentences`` features of :mod:`wikigenderbias.schema`) before Word2Vec is trained on it and the
  model is trained; it returns a new DatasetDict with the same splits and features;
* ``transform_vectors(kv, *, seed)`` -- the trained Word2Vec ``KeyedVectors``; it returns new vectors.

Either may be the identity. ``describe()`` returns a JSON-serialisable dict recorded in the run's
config and results (which word lists, which NER model and version, what was changed).
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from wgbcore.provenance import package_version

__all__ = ["Debiaser", "NoDebias", "Memo", "check_dataset_dict", "package_version"]


@runtime_checkable
class Debiaser(Protocol):
    name: str

    def transform_dataset(self, dsdict, *, seed: int = 0):
        ...

    def transform_vectors(self, kv, *, seed: int = 0):
        ...

    def describe(self) -> dict[str, Any]:
        ...


class NoDebias:
    """The baseline: changes nothing."""

    name = "none"

    def transform_dataset(self, dsdict, *, seed: int = 0):
        return dsdict

    def transform_vectors(self, kv, *, seed: int = 0):
        return kv

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def check_dataset_dict(dsdict, *, who: str) -> None:
    """Raise a clear error when ``dsdict`` lacks the columns a dataset debiaser needs."""
    from datasets import DatasetDict

    if not isinstance(dsdict, DatasetDict):
        raise TypeError(f"{who}: expected a datasets.DatasetDict, got {type(dsdict).__name__}")
    needed = ("id", "entity_id", "sentence_id", "head", "tail", "relation", "gender", "text",
              "tokens", "head_span", "tail_span")
    for split, ds in dsdict.items():
        missing = [c for c in needed if c not in ds.column_names]
        if missing:
            raise ValueError(f"{who}: split {split!r} lacks the column(s) {missing}")


class Memo:
    """A small in-process memo of dataset transforms, keyed by the splits' fingerprints.

    Training and prediction of one run (and every seed of a study) apply the same deterministic
    transform to the same DatasetDict; the memo makes the second and later calls free.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._items: dict[tuple, Any] = {}

    @staticmethod
    def key(dsdict, *config: Any) -> tuple | None:
        prints = []
        for split, ds in dsdict.items():
            fp = getattr(ds, "_fingerprint", None)
            if fp is None:
                return None
            prints.append((split, fp))
        return (tuple(prints), *config)

    def get(self, key):
        return None if key is None else self._items.get(key)

    def put(self, key, value) -> None:
        if key is None:
            return
        self._items[key] = value
        while len(self._items) > self.size:
            self._items.pop(next(iter(self._items)))
