"""Loading the benchmark for the extractor and turning splits into tensors and bags."""
from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from relext.model.bags import Bags, SentenceTable, SplitRows, check_dataset, evaluation_bags, training_bags
from wikigenderbias.schema import SPLITS


def load_dataset_dict(path: str | os.PathLike | None = None, dataset=None):
    """``dataset`` when given, else the folder ``path`` (a benchmark folder, or a DatasetDict saved
    with ``save_to_disk``), else the embedded release.

    A benchmark folder is loaded by :func:`wikigenderbias.load`, which checks the rows per split
    and the data fingerprint of what ``datasets`` returned (possibly from its cache) against the
    folder's own ``report.json``, reloads without the cache on a mismatch, and raises
    ``ValueError`` if the rows still differ: what is trained on is what the folder holds."""
    if dataset is not None:
        return dataset
    if path is not None and (Path(path) / "dataset_dict.json").is_file():  # DatasetDict.save_to_disk
        from datasets import load_from_disk

        from wgbcore.fileio import reading

        with reading(path, "saved DatasetDict"):
            return load_from_disk(str(path))
    import wikigenderbias

    try:
        return wikigenderbias.load("sentences", path=path)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"benchmark {path or '(embedded)'}: {exc}") from None


@dataclass
class PreparedSplit:
    name: str
    rows: SplitRows
    table: SentenceTable
    bags: Bags


def prepare_split(split_ds, name: str, *, encoder: str, vocab, max_length: int, kind: str,
                  unlocated: str = "start", featurize_options: dict[str, Any] | None = None) -> PreparedSplit:
    from relext.model.encoders import featurize

    rows = SplitRows.from_dataset(split_ds, name)
    table = featurize(encoder, rows.tokens, rows.head_span, rows.tail_span, vocab=vocab,
                      max_length=max_length, **(featurize_options or {}))
    bags = training_bags(rows, unlocated=unlocated) if kind == "train" else evaluation_bags(rows)
    return PreparedSplit(name, rows, table, bags)


def apply_dataset_transforms(dataset, transforms: Sequence[Callable], *, seed: int):
    splits = [s for s in SPLITS if s in dataset]
    for fn in transforms:
        dataset = fn(dataset, seed=seed)
        check_dataset(dataset, splits, source=f"dataset after transform {getattr(fn, '__name__', fn)!r}")
    return dataset


def resolve_transforms(names: Sequence[str], stage: str) -> list[Callable]:
    """Debiasers by name (``relext.debias.get_debiaser``), for ``stage`` "dataset" or "vectors".

    Contract: ``get_debiaser(name)`` returns an object; for the dataset stage it is called as
    ``obj.transform_dataset(dataset_dict, seed=...)`` (or ``obj(dataset_dict, seed=...)`` when it
    has no such method) and must return a DatasetDict of the canonical form; for the vectors stage
    ``obj.transform_vectors(keyed_vectors, seed=...)`` (or ``obj(kv, seed=...)``) returns
    KeyedVectors.
    """
    if not names:
        return []
    try:
        from relext.debias import get_debiaser
    except ImportError as exc:
        raise ValueError(f"{stage}_transform {list(names)} needs relext.debias.get_debiaser ({exc})") from None
    out = []
    for name in names:
        obj = get_debiaser(name)
        fn = getattr(obj, f"transform_{stage}", None) or (obj if callable(obj) else None)
        if fn is None:
            raise ValueError(f"debiaser {name!r} cannot transform {stage}")
        out.append(fn)
    return out
