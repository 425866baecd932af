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


def expected_data(folder: str | os.PathLike, config: str) -> dict[str, Any] | None:
    """What a benchmark folder's own ``report.json`` says configuration ``config`` holds: ``rows``
    per split and, for a fingerprinted folder, the size and sha256 of each data file (``files``;
    None for a folder written before folders carried a fingerprint). None without a report.

    Raises ``ValueError`` when the data files on disk differ from the recorded fingerprint (the
    folder was changed after it was written, so its card no longer keys the cache on its data)."""
    from wikigenderbias.card import config_fingerprint

    folder = Path(folder)
    report_file = folder / "report.json"
    if not report_file.is_file():
        return None
    try:
        report = json.loads(report_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{report_file}: malformed JSON ({err})") from None
    fp = report.get("fingerprint", {}).get("configs", {}).get(config)
    if fp:
        now = config_fingerprint(folder, config)
        changed = [f for f in sorted(set(fp["files"]) | set(now["files"])) if fp["files"].get(f) != now["files"].get(f)]
        if changed:
            raise ValueError(
                f"{folder}: data file(s) {', '.join(changed)} differ from the fingerprint in report.json and "
                f"README.md (changed after the folder was written?): the `datasets` cache could serve stale rows. "
                f"Rebuild the folder, or record its current data with `wgb data refresh-card --dataset {folder}`")
        return {"rows": dict(fp["rows"]), "files": fp["files"]}
    counts = report.get("counts")
    if counts and all(s in counts for s in SPLITS):
        key = "sentences" if config == "sentences" else "entities"
        return {"rows": {s: counts[s][key] for s in SPLITS}, "files": None}
    return None


def mismatches(loaded, expected: dict[str, Any], split: str | None = None) -> list[str]:
    """How a loaded ``DatasetDict`` (or one ``Dataset``, ``split``) differs from
    :func:`expected_data`: row counts per split and the data fingerprint the cache entry carries."""
    import datasets

    if isinstance(loaded, datasets.DatasetDict):
        parts = dict(loaded)
        wanted = expected["rows"]
    elif isinstance(loaded, datasets.Dataset) and isinstance(split, str):
        parts = {split: loaded}
        wanted = {split: expected["rows"][split]} if split in expected["rows"] else {}
    else:  # a list of splits, streaming or sliced loads: nothing to compare
        return []
    out = []
    if isinstance(loaded, datasets.DatasetDict) and set(parts) != set(wanted):
        out.append(f"splits {sorted(parts)} loaded, the folder has {sorted(wanted)}")
    for name, ds in parts.items():
        if name in wanted and ds.num_rows != wanted[name]:
            out.append(f"{name}: {ds.num_rows} rows loaded, the folder holds {wanted[name]}")
    if expected["files"] is not None:  # the card's checksums, carried into every split's info
        wrong = sorted({_short(ds.info.download_checksums) for ds in parts.values()
                        if (ds.info.download_checksums or {}) != expected["files"]})
        if wrong:
            out.append(f"the loaded data carry fingerprint {', '.join(wrong)} but the folder's data files "
                       f"have {_short(expected['files'])}")
    return out


def _short(files: dict[str, Any]) -> str:
    import hashlib

    if not files:
        return "none"
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:12]


def load(config: str = "sentences", path: str | os.PathLike | None = None, **kwargs: Any):
    """The benchmark as a ``datasets.DatasetDict`` with splits train/validation/male_test/female_test.

    ``path`` defaults to the embedded release; any folder written by ``wgb data build`` works.
    Extra keyword arguments go to ``datasets.load_dataset``.

    What comes back is what the folder holds: the rows per split and the data fingerprint of the
    loaded (possibly cached) dataset are checked against the folder's ``report.json``; on a
    mismatch (a cache entry of another folder, e.g. one written before folders carried a
    fingerprint) the folder is loaded again without the cache (``download_mode="force_redownload"``,
    which rebuilds that cache entry from this folder), and if it still differs a ``ValueError``
    says how. A folder whose data files differ from its recorded fingerprint is refused
    (:func:`expected_data`). Loads with ``data_files``, ``data_dir`` or ``streaming`` are not checked.
    """
    import warnings

    import datasets

    if config not in CONFIGS:
        raise ValueError(f"unknown configuration {config!r}; expected one of {CONFIGS}")
    folder = check_folder(path if path is not None else data_dir())
    expected = expected_data(folder, config)
    from wgbcore.fileio import reading

    if expected is None or any(kwargs.get(k) for k in ("data_files", "data_dir", "streaming")):
        with reading(folder, "benchmark folder"):
            return datasets.load_dataset(str(folder), config, **kwargs)
    if expected["files"] is None:
        warnings.warn(f"{folder}: report.json and README.md carry no data fingerprint (written by an older "
                      f"wgb), so the `datasets` cache key does not follow the data; loaded rows are checked "
                      f"against the report's counts only. Add one with `wgb data refresh-card --dataset {folder}`",
                      stacklevel=2)
    split = kwargs.get("split")
    with reading(folder, "benchmark folder"):
        ds = datasets.load_dataset(str(folder), config, **kwargs)
    problems = mismatches(ds, expected, split)
    if problems and kwargs.get("download_mode") not in ("force_redownload", datasets.DownloadMode.FORCE_REDOWNLOAD):
        warnings.warn(f"{folder}: the `datasets` cache served other data ({'; '.join(problems)}); "
                      "loading the folder again without the cache", stacklevel=2)
        # no_checks: datasets would compare the new rows with the split sizes of the stale entry's
        # dataset_info.json (it reads them before rebuilding); the rows are checked here instead
        with reading(folder, "benchmark folder"):
            ds = datasets.load_dataset(str(folder), config, **{**kwargs, "download_mode": "force_redownload",
                                                              "verification_mode": "no_checks"})
        problems = mismatches(ds, expected, split)
    if problems:
        raise ValueError(f"{folder}: the loaded {config!r} data do not match the folder's report.json: "
                         + "; ".join(problems))
    return ds
