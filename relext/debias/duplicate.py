"""The equal-budget control for CDA: every training row twice, unchanged.

CDA doubles the training split (original + gender-swapped copies as new bags), so a CDA run makes
twice the updates per epoch of a baseline run. ``duplicate`` adds an unchanged copy of every
training row instead (ids ``<id>~dup``, ``<entity_id>~dup``, ``<sentence_id>~dup``: new bags, same
text, same gender), so the number of bags, batches and updates equals CDA's. The paired difference
``cda - duplicate`` is then the effect of *swapping*, separated from the effect of training longer
(``duplicate - none``). Validation and test splits are never touched; Word2Vec sees each distinct
sentence once either way, so its corpus is the baseline's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from relext.debias.base import Memo, check_dataset_dict, package_version

SUFFIX = "~dup"
_MEMO = Memo()


@dataclass
class Duplicate:
    """Training rows twice (see the module docstring)."""

    splits: tuple[str, ...] = ("train",)
    name: str = field(default="duplicate", init=False)

    def __post_init__(self) -> None:
        from relext.debias.cda import TEST_SPLITS

        self.splits = tuple(self.splits)
        bad = [s for s in self.splits if s in TEST_SPLITS]
        if bad:
            raise ValueError(f"duplicate never touches test splits; remove {bad} from splits")
        self._stats: dict[str, Any] = {}

    def transform_dataset(self, dsdict, *, seed: int = 0):
        from datasets import DatasetDict, concatenate_datasets

        check_dataset_dict(dsdict, who="duplicate")
        key = Memo.key(dsdict, "duplicate", self.splits)
        hit = _MEMO.get(key)
        if hit is not None:
            out, self._stats = hit
            return out
        out, stats = {}, {}
        for split, ds in dsdict.items():
            if split not in self.splits:
                out[split] = ds
                continue
            copy = ds.map(lambda r: {"id": r["id"] + SUFFIX, "entity_id": r["entity_id"] + SUFFIX,
                                     "sentence_id": r["sentence_id"] + SUFFIX},
                          load_from_cache_file=False, desc=None)
            clash = set(copy["id"]) & set(ds["id"])
            if clash:
                raise ValueError(f"duplicate: split {split!r} already has a row with id {sorted(clash)[0]!r}; "
                                 "was the dataset duplicated twice?")
            out[split] = concatenate_datasets([ds, copy])
            stats[split] = {"original": len(ds), "copies": len(copy)}
        self._stats = stats
        result = DatasetDict(out)
        _MEMO.put(key, (result, stats))
        return result

    def transform_vectors(self, kv, *, seed: int = 0):
        return kv

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "splits": list(self.splits),
                             "purpose": "equal-budget control for cda (same bags and updates, no swapping)",
                             "wgb_version": package_version()}
        if self._stats:
            d["stats"] = self._stats
        return d
