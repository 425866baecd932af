"""The authors' released WikiGenderBias: conversion into the canonical form, and loading.

The converted release ships inside this package (``wikigenderbias/data/wikigenderbias``) and is
the default benchmark of the whole toolkit: :func:`load` returns it as a ``datasets.DatasetDict``.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from wikigenderbias.schema import CONFIGS, SPLITS

#: The release's split names -> ours.
RELEASE_SPLITS = {"train": "train", "dev": "validation", "male_test": "male_test", "female_test": "female_test"}
RELEASE_URL = "https://github.com/AndrewJGaut/Towards-Understanding-Gender-Bias-in-Neural-Relation-Extraction"

DESCRIPTION = f"""Converted by `scripts/convert_release.py` from the authors' public release
(`WikiGenderBias.zip`, file `Wikigender.json`, {RELEASE_URL}). The authors built it from the
English Wikipedia dump and DBpedia: for each person with a gender and the relations spouse,
hypernym, birthDate and birthPlace, every sentence of the person's article that mentions the tail
entity is an example of the relation; sentences mentioning the tail of parents, deathDate or
almaMater (and no positive tail) are `NA` examples. Head entities never repeat across splits.

The conversion keeps every entity, relation, tail and sentence of the release (config
`entities`, which also keeps the release's character `positions` verbatim) and derives the
`sentences` config from it. The release's `dev` split is named `validation` here. Entity ids are
`<split>-<index in the release>`. Token spans were recomputed: the release's offsets are
character offsets that cover the full name in only ~17% of sentences, are `[0, 0]` or `[-1, -1]`
in over 1,600 sentences, and birth dates never occur in the text in the release's
"November 2, 1924" form."""


def data_dir() -> Path:
    """The shipped benchmark folder (loadable with ``datasets.load_dataset``)."""
    return Path(__file__).resolve().parent / "data" / "wikigenderbias"


def read_release(path: str | os.PathLike) -> dict[str, list[dict[str, Any]]]:
    """Entity records per split (our split names) from the release's ``Wikigender.json[.gz]``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: release file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read ({err})") from err
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from err
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a JSON object with splits {sorted(RELEASE_SPLITS)}")
    missing = [s for s in RELEASE_SPLITS if s not in raw]
    if missing:
        raise ValueError(f"{path}: missing split(s) {missing}")
    out: dict[str, list[dict[str, Any]]] = {}
    for rsplit, split in RELEASE_SPLITS.items():
        ents = []
        for i, item in enumerate(raw[rsplit]):
            where = f"{path}: {rsplit}[{i}]"
            for field in ("entity1", "gender_of_entity1", "relations"):
                if field not in item:
                    raise ValueError(f"{where}: missing field {field!r}")
            rels = []
            for j, r in enumerate(item["relations"]):
                for field in ("relation_name", "entity2", "sentences"):
                    if field not in r:
                        raise ValueError(f"{where}.relations[{j}]: missing field {field!r}")
                positions = [{"head": p.get("entity1", []), "tail": p.get("entity2", [])} for p in r.get("positions", [])]
                rels.append({"relation": r["relation_name"], "tail": r["entity2"], "sentences": r["sentences"],
                             "positions": positions})
            ents.append({"entity_id": f"{split}-{i:05d}", "entity": item["entity1"],
                         "gender": item["gender_of_entity1"].lower(), "relations": rels})
        out[split] = ents
    return out


def convert_release(src: str | os.PathLike, folder: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Convert the release into a canonical benchmark folder."""
    from wikigenderbias.export import write_benchmark

    src = Path(src)
    entities = read_release(src)
    report = {"source": {"file": src.name, "url": RELEASE_URL, "kind": "release"}}
    return write_benchmark(folder, entities, description=DESCRIPTION, report=report, overwrite=overwrite)


def check_folder(folder: str | os.PathLike) -> Path:
    """Raise a clear error naming the file if a benchmark folder is missing or corrupt."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: benchmark folder not found")
    card = folder / "README.md"
    if not card.is_file():
        raise FileNotFoundError(f"{card}: dataset card missing (the folder is not a wgb benchmark)")
    for config in CONFIGS:
        for split in SPLITS:
            f = folder / "data" / config / f"{split}-00000-of-00001.parquet"
            if not f.is_file():
                raise FileNotFoundError(f"{f}: data file missing")
            try:
                pq.read_metadata(f)
            except Exception as err:  # pyarrow raises several types for corrupt files
                raise ValueError(f"{f}: corrupt parquet file ({err})") from err
    return folder


def load(config: str = "sentences", path: str | os.PathLike | None = None, **kwargs: Any):
    """The benchmark as a ``datasets.DatasetDict`` with splits train/validation/male_test/female_test.

    ``path`` defaults to the embedded release; any folder written by ``wgb data build`` works.
    Extra keyword arguments go to ``datasets.load_dataset``.
    """
    import datasets

    if config not in CONFIGS:
        raise ValueError(f"unknown configuration {config!r}; expected one of {CONFIGS}")
    folder = check_folder(path if path is not None else data_dir())
    return datasets.load_dataset(str(folder), config, **kwargs)
