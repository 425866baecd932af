"""The parts of `wgb data build`: what each unit of work reads, and the cache folder
``<out>.parts/`` of finished parts.

A part (:class:`PartSpec`) is a Wikipedia dump file, or a byte range of a multistream dump cut at
its stream offsets (:func:`plan_parts`, :mod:`wikigenderbias.multistream`), so that one
``pages-articles-multistream.xml.bz2`` is read in parallel and resumed range by range.

Each finished part is two files, named by the part's key (:func:`part_key`: a hash of the part
file and byte range, the DBpedia files and the configuration):

- ``<key>.records.jsonl``: the part's entity records sorted by ``entity_id`` (stable: articles
  of the same head keep their dump order), one JSON object per line;
- ``<key>.summary.json``: a :class:`PartSummary` (counters, skipped items, timings and, per
  record, its ``entity_id``, gender and source page), written last: it marks the part finished.

Both are plain JSON, read with ``json.loads``: a crafted cache file cannot run code (the cache
once held pickles, which could); an unreadable summary means the part is read again
(:func:`load_part` returns None), an unreadable records file is an error naming ``file:line``.
Both are written atomically (temp name + rename) by :func:`save_part`. :func:`merged_records`
reads the record files of all parts merged by ``entity_id`` (:func:`heapq.merge`, one record per
part in memory).
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import heapq
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from operator import itemgetter
from pathlib import Path

from wgbcore.atomicio import atomic_open
from wgbcore.provenance import package_version

from wikigenderbias.dbpedia import Issues
from wikigenderbias.distant import DistantConfig
from wikigenderbias.multistream import index_for, plan_ranges

__all__ = ["PartSpec", "plan_parts", "PartResult", "PartSummary", "cache_dir", "part_key", "records_file",
           "summary_file", "save_part", "load_part", "read_records", "merged_records", "remove_stale_files", "MIN_RANGES",
           "fewer_collections"]


@dataclass(frozen=True)
class PartSpec:
    """One unit of work: a dump file, or the bytes ``[start, end)`` of a multistream dump."""

    path: str
    byte_range: tuple[int, int] | None = None

    @property
    def label(self) -> str:
        """The part's name in summaries and reports: the path, with ``@start-end`` for a range."""
        return self.path if self.byte_range is None else f"{self.path}@{self.byte_range[0]}-{self.byte_range[1]}"


#: A build's multistream dumps are cut into at least this many byte ranges in all (if they hold
#: that many streams): enough to keep a few workers busy, the same whatever ``workers`` is, so
#: that a build resumed with another number of workers finds its finished parts.
MIN_RANGES = 16


def plan_parts(files: list[str], workers: int) -> tuple[list[PartSpec], list[str]]:
    """The parts of a build, in file order, and warnings. A multistream dump whose index lies
    beside it is cut into byte ranges (:data:`MIN_RANGES` over all files at least, none much
    larger than :data:`~wikigenderbias.multistream.RANGE_BYTES`; the cut does not depend on
    ``workers``); any other file is one part. With several workers and a single part, the
    warning says why the file cannot be read in parallel."""
    per_file = -(-MIN_RANGES // len(files))
    specs: list[PartSpec] = []
    for f in files:
        index = index_for(f)
        ranges = plan_ranges(f, index, per_file) if index is not None and f.endswith(".bz2") else []
        specs += [PartSpec(f, r) for r in ranges] if len(ranges) > 1 else [PartSpec(f)]
    warnings = []
    if workers > 1 and len(specs) == 1:
        name = os.path.basename(files[0])
        why = ("its index is not beside it (Wikimedia's name: ...-multistream-index.txt.bz2)"
               if "multistream" in name else
               "it is not a multistream dump with its index (pages-articles-multistream.xml.bz2 + "
               "...-multistream-index.txt.bz2), and a single-stream file can only be read from its start")
        warnings.append(f"{name} is read by one process although {workers} workers were asked for: {why}. "
                        "Give the multistream dump with its index, or the dump's part files, to read in parallel.")
    return specs, warnings


@dataclass
class PartResult:
    """What one Wikipedia dump part produced (records carry their ``source_page``)."""

    path: str
    entities: list[dict]
    stats: dict[str, int]
    distant: dict[str, int]
    issues: Issues
    seconds: float
    no_examples: list[str]
    cpu_seconds: float = 0.0


@dataclass
class PartSummary:
    """What the main process keeps of a finished part: everything but the records, which are in
    the part's records file; ``heads`` is ``(entity_id, gender, source_page)`` of each record, in
    dump order."""

    path: str
    stats: dict[str, int]
    distant: dict[str, int]
    issues: Issues
    seconds: float
    no_examples: list[str]
    cpu_seconds: float
    heads: list[tuple[str, str, str]]


def cache_dir(out: str | os.PathLike) -> Path:
    """The parts cache of the benchmark folder ``out``: ``<out>.parts/``."""
    return Path(str(out).rstrip("/\\") + ".parts")


def _fingerprint(paths: list[str]) -> list:
    return [(os.path.abspath(p), os.path.getsize(p), int(os.path.getmtime(p))) for p in paths]


def part_key(part: str | PartSpec, db_files: list[str], *, require: tuple[str, ...], distant: DistantConfig) -> str:
    """The cache key of one dump part: changes with the part file (and byte range), the DBpedia
    files, the required relations, the distant supervision rules and the version of wgb."""
    spec = part if isinstance(part, PartSpec) else PartSpec(part)
    blob = json.dumps({"part": _fingerprint([spec.path]), "dbpedia": _fingerprint(db_files),
                       "range": spec.byte_range, "require": require, "distant": distant.to_dict(),
                       "version": package_version()}, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


_STALE = re.compile(r"^\.[0-9a-f]{16}\.(?:records\.jsonl|summary\.json)\.[a-z0-9_]{8}\.tmp$")


def remove_stale_files(cache: Path) -> list[Path]:
    """Remove the temporary files that a killed build left in its cache folder (the atomic
    writes of :func:`save_part`, by their name pattern); returns the paths removed. A build owns
    its cache: call this only when no other build writes the same ``out``."""
    if not cache.is_dir():
        return []
    removed = [p for p in cache.iterdir() if _STALE.match(p.name) and p.is_file()]
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def records_file(cache: Path, key: str) -> Path:
    return cache / f"{key}.records.jsonl"


def summary_file(cache: Path, key: str) -> Path:
    return cache / f"{key}.summary.json"


def _summary_to_json(summary: PartSummary) -> dict:
    d = asdict(summary)  # Issues is a dataclass too: {"limit", "counts", "examples"}
    d["heads"] = [list(h) for h in summary.heads]
    return d


def _summary_from_json(d: dict) -> PartSummary:
    """The summary written by :func:`save_part`; anything else raises (KeyError, TypeError, ValueError)."""
    issues = d["issues"]
    heads = [tuple(h) for h in d["heads"]]
    if not all(len(h) == 3 and all(isinstance(x, str) for x in h) for h in heads):
        raise ValueError("heads must be [entity_id, gender, source_page] strings")
    return PartSummary(path=str(d["path"]), stats=dict(d["stats"]), distant=dict(d["distant"]),
                       issues=Issues(limit=int(issues["limit"]), counts=dict(issues["counts"]),
                                     examples={k: list(v) for k, v in issues["examples"].items()}),
                       seconds=float(d["seconds"]), no_examples=list(d["no_examples"]),
                       cpu_seconds=float(d["cpu_seconds"]), heads=heads)


@contextlib.contextmanager
def fewer_collections(gen0: int = 100_000) -> Iterator[None]:
    """Collect young objects (generation 0) at most every ``gen0`` allocations inside the block:
    reading and writing records makes millions of short-lived acyclic objects, and the default
    (700) spends much of a part's time in the collector; cycles, if any, are still collected."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], gen0), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def save_part(cache: Path, key: str, res: PartResult) -> PartSummary:
    """Write a part's records (sorted by ``entity_id``) and then its summary, each atomically."""
    with fewer_collections():
        return _save_part(cache, key, res)


def _save_part(cache: Path, key: str, res: PartResult) -> PartSummary:
    cache.mkdir(parents=True, exist_ok=True)
    heads = []
    for rec in res.entities:
        heads.append((rec["entity_id"], rec["gender"], rec.pop("source_page", "")))
    res.entities.sort(key=itemgetter("entity_id"))
    summary = PartSummary(res.path, res.stats, res.distant, res.issues, res.seconds, res.no_examples,
                          res.cpu_seconds, heads)
    with atomic_open(records_file(cache, key), "w", newline="\n") as fh:
        for rec in res.entities:  # json escapes every control character: one record per line
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
            fh.write("\n")
    with atomic_open(summary_file(cache, key), "w", newline="\n") as fh:
        json.dump(_summary_to_json(summary), fh, ensure_ascii=False)
    return summary


def load_part(cache: Path, key: str) -> PartSummary | None:
    """The summary of a finished part, or None (not finished, or unreadable: the part is read again)."""
    if not records_file(cache, key).is_file():
        return None
    try:
        with open(summary_file(cache, key), encoding="utf-8") as fh:
            return _summary_from_json(json.load(fh))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # JSONDecodeError is a ValueError
        return None


def read_records(path: Path) -> Iterator[dict]:
    """The records of one part file, one line at a time (malformed lines name ``file:line``)."""
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                rec = json.loads(line.decode("utf-8"))
            except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
                raise ValueError(f"{path}:{lineno}: unreadable build cache record ({exc}); delete "
                                 f"{path.parent} and build again") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("entity_id"), str):
                raise ValueError(f"{path}:{lineno}: not an entity record; delete {path.parent} and build again")
            yield rec


def merged_records(files: list[Path]) -> Iterator[dict]:
    """The records of all parts in ``entity_id`` order, the first occurrence of each head only
    (``heapq.merge`` is stable: for equal ids, earlier files and earlier records come first)."""
    last = None
    for rec in heapq.merge(*map(read_records, files), key=itemgetter("entity_id")):
        if rec["entity_id"] != last:
            last = rec["entity_id"]
            yield rec
