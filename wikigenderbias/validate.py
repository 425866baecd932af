"""The data files of a benchmark folder against the dataset's features (:mod:`wikigenderbias.schema`).

Opening a parquet file says little: a split may lack a column, hold one of another type, or a
class id no label has (a relation id 99). :func:`check_data_files` reads every file's schema and
its class-label columns and refuses, naming the file, the column and the first bad row, anything
the features do not describe; ``wgb data refresh-card`` runs it before it records a fingerprint.
"""
from __future__ import annotations

import os
from pathlib import Path

from wgbcore.fileio import reading

from wikigenderbias.schema import CONFIGS, PARQUET_NAME, SPLITS, features_for

__all__ = ["check_data_files", "check_data_file"]


def check_data_file(path: str | os.PathLike, config: str) -> None:
    """One data file of configuration ``config``: its columns and their types as the features say,
    and every class id within its labels (a one-line ``ValueError`` naming file, column and row)."""
    import numpy as np
    import pyarrow.parquet as pq
    from datasets import ClassLabel

    path = Path(path)
    feats = features_for(config)
    want = feats.arrow_schema
    with reading(path, "parquet file"):
        schema = pq.read_schema(path)
    missing = [n for n in want.names if n not in schema.names]
    if missing:
        raise ValueError(f"{path}: column(s) {missing} missing; the {config!r} configuration has {want.names}")
    extra = [n for n in schema.names if n not in want.names]
    if extra:
        raise ValueError(f"{path}: column(s) {extra} are not features of the {config!r} configuration "
                         f"({want.names})")
    for field in want:
        got = schema.field(field.name).type
        if not got.equals(field.type):
            raise ValueError(f"{path}: column {field.name!r} has type {got}, the features say {field.type}")
    labels = {name: f for name, f in feats.items() if isinstance(f, ClassLabel)}
    if not labels:
        return
    with reading(path, "parquet file"):
        table = pq.read_table(path, columns=list(labels))
    for name, f in labels.items():
        col = table[name]
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"{path}: row {row}: column {name!r} is empty; expected a class id of {f.names}")
        values = col.to_numpy()
        bad = np.flatnonzero((values < 0) | (values >= f.num_classes))
        if bad.size:
            row = int(bad[0])
            raise ValueError(f"{path}: row {row}: column {name!r} holds {int(values[row])}, not a class id of "
                             f"{f.names} (0..{f.num_classes - 1}; {bad.size} such row(s))")


def check_data_files(folder: str | os.PathLike) -> None:
    """Every data file of a benchmark folder (all configurations and splits), by :func:`check_data_file`."""
    folder = Path(folder)
    for config in CONFIGS:
        for split in SPLITS:
            check_data_file(folder / "data" / config / PARQUET_NAME.format(split=split), config)
