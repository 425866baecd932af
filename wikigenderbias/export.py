"""Writing a benchmark folder: both configurations as parquet, the dataset card, the build report.

:func:`write_benchmark_stream` is the one writer every benchmark goes through (the embedded
release and ``wgb data build``): it consumes ``(split, entity record)`` pairs one at a time,
derives the ``sentences`` configuration from them (tokens and spans), appends both
configurations in chunks to one parquet file per split (memory bounded by the chunk size, not by
the benchmark; the rows are encoded with pyarrow straight into the schema of the dataset's
``datasets.Features``, ClassLabels as their integer ids), counts the span and count reports as it
goes, fingerprints the written data files
(``report.json`` and the card's YAML, see :mod:`wikigenderbias.card`: the ``datasets`` cache key
changes with the data), and renames the temporary sibling folder into place at the end, so a
reader never sees a half-written benchmark.
:func:`write_benchmark` is the in-memory form (entity lists per split) on top of it.

Spans: a relation of a record may carry ``located``, one entry per sentence,
``[head_start, head_end, tail_start, tail_end, head_match, tail_match]`` (and the sentence's tokens
as a 7th item when they differ from ``text.split()``): the mentions found while the record was
built (:func:`locate_record`, run by `wgb data build` in the process that read the article). The
writer then takes them as they are and searches nothing; a relation without them (the embedded
release, records written by hand) is located here with :func:`wikigenderbias.spans.locate`, the
same rules. ``located`` is not part of the ``entities`` configuration.
"""
from __future__ import annotations

import gc
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

from wikigenderbias.reports import CountsReport, SpanReport, counts_report, span_report  # noqa: F401 (re-exported)
from wikigenderbias.schema import CONFIGS, GENDERS, RELATIONS, SOURCES, SPLITS, features_for, gender_id, relation_id
from wikigenderbias.spans import locate, tokenize

from wikigenderbias.schema import PARQUET_NAME  # noqa: E402,F401  (where the data files live)


def sentence_id(entity_id: str, text: str) -> str:
    """Stable id of one sentence of one article: the same text of the same head, the same id."""
    return f"{entity_id}-s{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}"


def _located(tokens: list[str], text: str, head: str, tail: str, relation: str) -> list:
    loc = locate(tokens, head, tail, relation)
    out = [*loc.head_span, *loc.tail_span, loc.head_match, loc.tail_match]
    if tokens != text.split():
        out.append(tokens)
    return out


def locate_record(entity: dict[str, Any]) -> dict[str, Any]:
    """Add ``located`` (see the module docstring) to every relation of ``entity`` that has none,
    in place; returns ``entity``."""
    head = entity["entity"]
    for rel in entity["relations"]:
        if "located" not in rel:
            rel["located"] = [_located(tokenize(t), t, head, rel["tail"], rel["relation"]) for t in rel["sentences"]]
    return entity


def without_located(entity: dict[str, Any]) -> dict[str, Any]:
    """``entity`` without the writer's ``located`` entries (the ``entities`` form), in place."""
    for rel in entity["relations"]:
        rel.pop("located", None)
    return entity


def sentence_rows(entity: dict[str, Any], *, source: str = "distant") -> Iterable[dict[str, Any]]:
    """Rows of the ``sentences`` configuration for one entity record; spans from the relation's
    ``located`` entries when it has them, else located now (:func:`wikigenderbias.spans.locate`)."""
    eid = entity["entity_id"]
    head = entity["entity"]
    gender = entity["gender"]
    names = [rel["relation"] for rel in entity["relations"]]
    for j, rel in enumerate(entity["relations"]):
        name = rel["relation"]
        relation_id(name)  # unknown relation -> clear error
        # a relation listed more than once for an entity (e.g. two NA tails) gets its entry index
        prefix = f"{eid}-{name}" if names.count(name) == 1 else f"{eid}-{name}-{j:02d}"
        tail = rel["tail"]
        found = rel.get("located")
        src = rel.get("source", source)
        for k, text in enumerate(rel["sentences"]):
            if found is None:
                tokens = tokenize(text)
                loc = _located(tokens, text, head, tail, name)
            else:
                loc = found[k]
                tokens = loc[6] if len(loc) > 6 else text.split()
            yield {
                "id": f"{prefix}-{k:03d}",
                "entity_id": eid,
                "sentence_id": sentence_id(eid, text),
                "head": head,
                "tail": tail,
                "relation": name,
                "gender": gender,
                "text": text,
                "tokens": tokens,
                "head_span": loc[0:2],
                "tail_span": loc[2:4],
                "head_match": loc[4],
                "tail_match": loc[5],
                "source": src,
            }


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
            if r.get("source", "distant") not in SOURCES:
                raise ValueError(f"unknown source {r['source']!r}; expected one of {SOURCES}")
        except ValueError as err:
            raise ValueError(f"{where} ({e['entity']!r}): {err}") from None
        located = r.get("located")
        if located is not None and (len(located) != len(r["sentences"])
                                    or not all(isinstance(x, list) and 6 <= len(x) <= 7 for x in located)):
            raise ValueError(f"{where} ({e['entity']!r}), relation #{j}: 'located' must hold one "
                             "[head_start, head_end, tail_start, tail_end, head_match, tail_match] per sentence")


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


_SCHEMAS: dict[str, Any] = {}
_RELATION_IDS = {name: i for i, name in enumerate(RELATIONS)}
_SOURCE_IDS = {name: i for i, name in enumerate(SOURCES)}
_GENDER_IDS = {name: i for i, name in enumerate(GENDERS)}


def arrow_schema(config: str):
    """The arrow schema of a configuration: its `datasets` features (ClassLabels as int64 ids,
    the features in the schema's metadata), as ``datasets`` itself writes it."""
    if config not in _SCHEMAS:
        _SCHEMAS[config] = features_for(config).arrow_schema
    return _SCHEMAS[config]


def _ids(values: list[str], ids: dict[str, int], what: str) -> list[int]:
    try:
        return [ids[v] for v in values]
    except KeyError:
        if what == "gender":  # "Female" is accepted, as by the record check
            return [gender_id(v) for v in values]
        bad = next(v for v in values if v not in ids)
        raise ValueError(f"unknown {what} {bad!r}; expected one of {list(ids)}") from None


def _arrow_table(rows: list[dict[str, Any]], config: str):
    """The rows as an arrow table of :func:`arrow_schema` (class names -> ids; pyarrow converts
    the nested lists and structs in C)."""
    import pyarrow as pa

    schema = arrow_schema(config)
    cols = {name: [r[name] for r in rows] for name in schema.names}
    cols["gender"] = _ids(cols["gender"], _GENDER_IDS, "gender")
    if config == "sentences":
        cols["relation"] = _ids(cols["relation"], _RELATION_IDS, "relation")
        cols["source"] = _ids(cols["source"], _SOURCE_IDS, "source")
    return pa.Table.from_pydict(cols, schema=schema)


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
            self.writers[key] = pq.ParquetWriter(str(path), arrow_schema(config),
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


_TEMP_NAME = r"^\.{name}\.(?:tmp-(?:(?P<pid>\d+)-)?[a-z0-9_]{{8}}|old-(?P<old>\d+))$"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def remove_stale_temp(folder: str | os.PathLike) -> list[Path]:
    """Remove what an interrupted write of ``folder`` left beside it (a SIGTERM or a crash
    skips the cleanup): the temporary folders ``.<name>.tmp-<pid>-<random>`` of this writer and
    ``.<name>.old-<pid>`` of :func:`wgbcore.atomicio.replace_dir`, when process ``<pid>`` is no
    longer running on this machine (and ``.<name>.tmp-<random>`` of writers before the pid was in
    the name). Nothing else is touched. Returns the paths removed."""
    folder = Path(folder)
    parent = folder.parent
    if not parent.is_dir():
        return []
    pattern = re.compile(_TEMP_NAME.format(name=re.escape(folder.name)))
    removed = []
    for p in parent.iterdir():
        m = pattern.match(p.name)
        if m is None or not p.is_dir() or p.is_symlink():
            continue
        pid = m["pid"] or m["old"]
        if pid is not None and _alive(int(pid)):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def write_benchmark_stream(
    folder: str | os.PathLike,
    records: Iterable[tuple[str, dict[str, Any]]],
    *,
    description: str,
    report: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    sizes: dict[str, int] | None = None,
    finalize_report: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """Write a benchmark folder loadable with ``datasets.load_dataset(folder)`` from a stream of
    ``(split, entity record)`` pairs (records as in :func:`write_benchmark`); each split's rows
    are written in the order they come. Memory is bounded by :data:`CHUNK_ROWS`, not by the stream.

    ``sizes`` (entities per split, when known beforehand) sets the progress total and makes an
    empty split fail before anything is written; an empty split found at the end fails too. A bad
    record is a ``ValueError`` naming its split, index in the split and field. On any error,
    nothing is left behind (an existing ``folder`` replaced with ``overwrite`` stays intact);
    what a killed earlier write left is removed first (:func:`remove_stale_temp`).
    ``finalize_report(report)`` is called with the full report just before ``report.json`` is
    written (e.g. to record the time the writing took).
    """
    from tqdm.auto import tqdm

    folder = Path(folder)
    if folder.exists() and not overwrite:
        raise FileExistsError(f"{folder} exists; pass overwrite=True (--overwrite) to replace it")
    for split in SPLITS:
        if sizes is not None and not sizes.get(split):
            raise _empty_split(split)

    folder.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp(folder)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-{os.getpid()}-", dir=folder.parent))
    files = _SplitFiles(tmp)
    bar = tqdm(total=sum(sizes.values()) if sizes else None, desc="writing", unit="entity",
               disable=None if progress else True)
    # the buffered rows are millions of short-lived objects: collect young objects 100x less
    # often (the writer's time halves; cycles, if any, are still collected)
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], 100_000), *threshold[1:])
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
        if finalize_report is not None:
            finalize_report(full_report)
        atomic_write_json(tmp / "report.json", full_report, indent=2, sort_keys=True)
        atomic_write_text(tmp / "README.md", render_card(description=description, report=full_report))
        replace_dir(tmp, folder)
    except BaseException:
        files.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        gc.set_threshold(*threshold)
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

    from wgbcore.fileio import reading

    out: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        path = Path(folder) / "data" / "entities" / PARQUET_NAME.format(split=split)
        with reading(path, "parquet file"):
            rows = pq.read_table(str(path)).to_pylist()
        for r in rows:
            r["gender"] = GENDERS[r["gender"]]
        out[split] = rows
    return out


__all__ = ["write_benchmark", "write_benchmark_stream", "read_entities", "sentence_rows", "span_report",
           "counts_report", "SpanReport", "CountsReport", "sentence_id", "PARQUET_NAME", "CHUNK_ROWS",
           "locate_record", "without_located", "arrow_schema", "remove_stale_temp"]
