"""Writing a benchmark folder: both configurations as parquet, the dataset card, the build report.

:func:`write_benchmark_stream` is the one writer every benchmark goes through (the embedded
release and ``wgb data build``): it consumes ``(split, entity record)`` pairs one at a time,
derives the ``sentences`` configuration from them (tokens and recomputed spans), appends both
configurations in chunks to one parquet file per split (memory bounded by the chunk size, not by
the benchmark), counts the span and count reports as it goes, fingerprints the written data files
(``report.json`` and the card's YAML, see :mod:`wikigenderbias.card`: the ``datasets`` cache key
changes with the data), and renames the temporary sibling folder into place at the end, so a
reader never sees a half-written benchmark.
:func:`write_benchmark` is the in-memory form (entity lists per split) on top of it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from wikigenderbias.schema import CONFIGS, GENDERS, RELATIONS, SPLITS, features_for, gender_id, relation_id
from wikigenderbias.spans import locate, tokenize

from wikigenderbias.schema import PARQUET_NAME  # noqa: E402,F401  (where the data files live)


def sentence_id(entity_id: str, text: str) -> str:
    """Stable id of one sentence of one article: the same text of the same head, the same id."""
    return f"{entity_id}-s{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}"


def sentence_rows(entity: dict[str, Any], *, source: str = "distant") -> Iterable[dict[str, Any]]:
    """Rows of the ``sentences`` configuration for one entity record, spans recomputed."""
    eid = entity["entity_id"]
    head = entity["entity"]
    gender = entity["gender"]
    names = [rel["relation"] for rel in entity["relations"]]
    for j, rel in enumerate(entity["relations"]):
        name = rel["relation"]
        relation_id(name)  # unknown relation -> clear error
        # a relation listed more than once for an entity (e.g. two NA tails) gets its entry index
        prefix = f"{eid}-{name}" if names.count(name) == 1 else f"{eid}-{name}-{j:02d}"
        for k, text in enumerate(rel["sentences"]):
            tokens = tokenize(text)
            loc = locate(tokens, head, rel["tail"], name)
            yield {
                "id": f"{prefix}-{k:03d}",
                "entity_id": eid,
                "sentence_id": sentence_id(eid, text),
                "head": head,
                "tail": rel["tail"],
                "relation": name,
                "gender": gender,
                "text": text,
                "tokens": tokens,
                "head_span": list(loc.head_span),
                "tail_span": list(loc.tail_span),
                "head_match": loc.head_match,
                "tail_match": loc.tail_match,
                "source": rel.get("source", source),
            }


class SpanReport:
    """Counts of located mentions per relation and gender (and per split), and match kinds;
    ``add(split, row)`` one sentence row at a time, ``result()`` the report."""

    def __init__(self) -> None:
        self.per_rel_gender: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(self._empty))
        self.per_split: dict[str, dict[str, int]] = defaultdict(self._empty)
        self.kinds: dict[str, Counter] = {"head": Counter(), "tail": Counter()}

    @staticmethod
    def _empty() -> dict[str, int]:
        return {"rows": 0, "head_located": 0, "tail_located": 0, "both_located": 0}

    def add(self, split: str, r: dict[str, Any]) -> None:
        for bucket in (self.per_rel_gender[r["relation"]][r["gender"]], self.per_split[split]):
            bucket["rows"] += 1
            h = r["head_match"] != "none"
            t = r["tail_match"] != "none"
            bucket["head_located"] += h
            bucket["tail_located"] += t
            bucket["both_located"] += h and t
        self.kinds["head"][r["head_match"]] += 1
        self.kinds["tail"][f'{r["relation"]}:{r["tail_match"]}'] += 1

    def result(self) -> dict[str, Any]:
        def with_rates(b: dict[str, int]) -> dict[str, float | int]:
            out: dict[str, float | int] = dict(b)
            for key in ("head_located", "tail_located", "both_located"):
                out[key.replace("located", "rate")] = round(b[key] / b["rows"], 4) if b["rows"] else 0.0
            return out

        total = self._empty()
        for b in self.per_split.values():
            for k in total:
                total[k] += b[k]
        per_rel_gender = self.per_rel_gender
        return {
            "total": with_rates(total),
            "per_relation_gender": {
                rel: {g: with_rates(per_rel_gender[rel][g]) for g in GENDERS if g in per_rel_gender[rel]}
                for rel in RELATIONS if rel in per_rel_gender
            },
            "per_split": {s: with_rates(self.per_split[s]) for s in SPLITS if s in self.per_split},
            "match_kinds": {side: dict(sorted(c.items())) for side, c in self.kinds.items()},
        }


def span_report(rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Counts of located mentions per relation and gender (and per split), and match kinds."""
    acc = SpanReport()
    for split, rows in rows_by_split.items():
        for r in rows:
            acc.add(split, r)
    return acc.result()


class CountsReport:
    """Entities and sentences per split and gender (the numbers of the dataset card), counted
    one entity (``add_entity``) and one sentence row (``add``) at a time."""

    def __init__(self) -> None:
        self.entities: Counter = Counter()
        self.genders: dict[str, Counter] = {s: Counter() for s in SPLITS}
        self.relations: dict[str, Counter] = {s: Counter() for s in SPLITS}

    def add_entity(self, split: str, e: dict[str, Any]) -> None:
        self.entities[split] += 1
        self.genders[split][e["gender"].lower()] += 1

    def add(self, split: str, row: dict[str, Any]) -> None:
        self.relations[split][row["relation"]] += 1

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for split in SPLITS:
            g, rel = self.genders[split], self.relations[split]
            out[split] = {
                "entities": self.entities[split],
                "entities_by_gender": {k: g.get(k, 0) for k in GENDERS},
                "sentences": sum(rel.values()),
                "sentences_by_relation": {k: rel.get(k, 0) for k in RELATIONS},
            }
        return out


def counts_report(entities_by_split: dict[str, list[dict[str, Any]]],
                  rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Entities and sentences per split and gender (the numbers of the dataset card)."""
    acc = CountsReport()
    for split in SPLITS:
        for e in entities_by_split[split]:
            acc.add_entity(split, e)
        for r in rows_by_split[split]:
            acc.add(split, r)
    return acc.result()


def _validate_entity(split: str, i: int, e: dict[str, Any]) -> None:
    where = f"split {split!r}, entity #{i}"
    for field in ("entity_id", "entity", "gender", "relations"):
        if field not in e:
            raise ValueError(f"{where}: missing field {field!r}")
    gender_id(e["gender"])
    for j, r in enumerate(e["relations"]):
        for field in ("relation", "tail", "sentences"):
            if field not in r:
                raise ValueError(f"{where} ({e['entity']!r}), relation #{j}: missing field {field!r}")
        try:
            relation_id(r["relation"])
        except ValueError as err:
            raise ValueError(f"{where} ({e['entity']!r}): {err}") from None


def _empty_split(split: str) -> ValueError:
    return ValueError(f"split {split!r} is empty: every split needs at least one entity "
                      "(datasets cannot load an empty parquet split)")


def _entity_row(e: dict[str, Any]) -> dict[str, Any]:
    return {
        "entity_id": e["entity_id"],
        "entity": e["entity"],
        "gender": e["gender"].lower(),
        "relations": [
            {
                "relation": r["relation"],
                "tail": r["tail"],
                "sentences": list(r["sentences"]),
                "positions": [
                    {"head": list(p.get("head", [])), "tail": list(p.get("tail", []))} for p in r.get("positions", [])
                ],
            }
            for r in e["relations"]
        ],
    }


def _arrow_table(rows: list[dict[str, Any]], config: str):
    """The rows as an arrow table whose schema carries the `datasets` features (ClassLabels)."""
    from datasets import Dataset

    features = features_for(config)
    ds = Dataset.from_list(rows, features=features) if rows else Dataset.from_dict(
        {k: [] for k in features}, features=features)
    return ds.data.table


def _write_parquet(rows: list[dict[str, Any]], config: str, writer) -> None:
    """Append ``rows`` of ``config`` to an open ``pyarrow.parquet.ParquetWriter``."""
    writer.write_table(_arrow_table(rows, config))


#: Rows buffered per parquet file before they are appended (sentence rows; entity rows are larger).
CHUNK_ROWS = {"sentences": 20_000, "entities": 2_000}


class _SplitFiles:
    """One parquet file per (configuration, split) in ``folder``, appended to in chunks."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.buffers: dict[tuple[str, str], list[dict[str, Any]]] = {(c, s): [] for c in CONFIGS for s in SPLITS}
        self.writers: dict[tuple[str, str], Any] = {}

    def add(self, config: str, split: str, row: dict[str, Any]) -> None:
        buf = self.buffers[config, split]
        buf.append(row)
        if len(buf) >= CHUNK_ROWS[config]:
            self.flush(config, split)

    def flush(self, config: str, split: str) -> None:
        import pyarrow.parquet as pq

        key = (config, split)
        if key not in self.writers:
            path = self.folder / "data" / config / PARQUET_NAME.format(split=split)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writers[key] = pq.ParquetWriter(str(path), _arrow_table([], config).schema,
                                                 compression="zstd", compression_level=9)
        if self.buffers[key]:
            _write_parquet(self.buffers[key], config, self.writers[key])
            self.buffers[key] = []

    def close(self) -> None:
        """Write what is buffered and close every file (one without rows holds just the schema)."""
        for config in CONFIGS:
            for split in SPLITS:
                self.flush(config, split)
        self.abort()

    def abort(self) -> None:
        for w in self.writers.values():
            w.close()
        self.writers = {}


def write_benchmark_stream(
    folder: str | os.PathLike,
    records: Iterable[tuple[str, dict[str, Any]]],
    *,
    description: str,
    report: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    sizes: dict[str, int] | None = None,
) -> Path:
    """Write a benchmark folder loadable with ``datasets.load_dataset(folder)`` from a stream of
    ``(split, entity record)`` pairs (records as in :func:`write_benchmark`); each split's rows
    are written in the order they come. Memory is bounded by :data:`CHUNK_ROWS`, not by the stream.

    ``sizes`` (entities per split, when known beforehand) sets the progress total and makes an
    empty split fail before anything is written; an empty split found at the end fails too. A bad
    record is a ``ValueError`` naming its split, index in the split and field. On any error,
    nothing is left behind (an existing ``folder`` replaced with ``overwrite`` stays intact).
    """
    from tqdm.auto import tqdm

    folder = Path(folder)
    if folder.exists() and not overwrite:
        raise FileExistsError(f"{folder} exists; pass overwrite=True (--overwrite) to replace it")
    for split in SPLITS:
        if sizes is not None and not sizes.get(split):
            raise _empty_split(split)

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    files = _SplitFiles(tmp)
    bar = tqdm(total=sum(sizes.values()) if sizes else None, desc="locating mentions", unit="entity",
               disable=None if progress else True)
    try:
        spans, counts = SpanReport(), CountsReport()
        for split, e in records:
            if split not in SPLITS:
                raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
            _validate_entity(split, counts.entities[split], e)
            counts.add_entity(split, e)
            for row in sentence_rows(e):
                spans.add(split, row)
                counts.add(split, row)
                files.add("sentences", split, row)
            files.add("entities", split, _entity_row(e))
            bar.update(1)
        for split in SPLITS:
            if not counts.entities[split]:
                raise _empty_split(split)
        files.close()

        from wgbcore.atomicio import atomic_write_json, atomic_write_text, replace_dir
        from wikigenderbias.card import fingerprint, render_card

        full_report = dict(report or {})
        full_report["spans"] = spans.result()
        full_report["counts"] = counts.result()
        # the data's fingerprint, also in the card's YAML: the `datasets` cache key follows the data
        full_report["fingerprint"] = fingerprint(tmp)
        atomic_write_json(tmp / "report.json", full_report, indent=2, sort_keys=True)
        atomic_write_text(tmp / "README.md", render_card(description=description, report=full_report))
        replace_dir(tmp, folder)
    except BaseException:
        files.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        bar.close()
    return folder


def write_benchmark(
    folder: str | os.PathLike,
    entities_by_split: dict[str, list[dict[str, Any]]],
    *,
    description: str,
    report: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Write a benchmark folder loadable with ``datasets.load_dataset(folder)``.

    ``entities_by_split`` maps each of ``SPLITS`` to entity records in the form of
    :func:`wikigenderbias.schema.entity_features` (gender as "female"/"male", relations with
    ``relation``, ``tail``, ``sentences`` and optionally the original ``positions``).
    ``description`` is the "how it was built" section of the dataset card; ``report`` extra
    facts recorded in ``report.json`` (the span and count reports are added here). Every record
    is checked before anything is written.
    """
    folder = Path(folder)
    missing = [s for s in SPLITS if s not in entities_by_split]
    unknown = [s for s in entities_by_split if s not in SPLITS]
    if missing or unknown:
        raise ValueError(f"splits must be exactly {SPLITS}; missing {missing}, unknown {unknown}")
    if folder.exists() and not overwrite:
        raise FileExistsError(f"{folder} exists; pass overwrite=True (--overwrite) to replace it")
    for split, ents in entities_by_split.items():
        if not ents:
            raise _empty_split(split)
        for i, e in enumerate(ents):
            _validate_entity(split, i, e)
    return write_benchmark_stream(folder, ((s, e) for s in SPLITS for e in entities_by_split[s]),
                                  description=description, report=report, overwrite=overwrite, progress=progress,
                                  sizes={s: len(entities_by_split[s]) for s in SPLITS})


def read_entities(folder: str | os.PathLike) -> dict[str, list[dict[str, Any]]]:
    """The entity records of every split of a benchmark folder (the ``entities`` configuration,
    gender as "female"/"male"): the records :func:`write_benchmark` was given, in file order.
    Holds the whole benchmark in memory."""
    import pyarrow.parquet as pq

    out: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        rows = pq.read_table(str(Path(folder) / "data" / "entities" / PARQUET_NAME.format(split=split))).to_pylist()
        for r in rows:
            r["gender"] = GENDERS[r["gender"]]
        out[split] = rows
    return out


__all__ = ["write_benchmark", "write_benchmark_stream", "read_entities", "sentence_rows", "span_report",
           "counts_report", "SpanReport", "CountsReport", "sentence_id", "PARQUET_NAME", "CHUNK_ROWS"]
