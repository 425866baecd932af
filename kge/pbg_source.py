"""Training triples read in chunks from graph files, for the PyTorch-BigGraph export.

:func:`open_source` gives a :class:`TripleSource` for what ``wgb kge train`` accepts as GRAPH (the
same id assignment as :func:`kge.graph.load_graph`, so an embedding dir written from it fits the
graph ``load_graph`` returns), without ever holding a whole split's triples:

=================== ===================================================================== =========
GRAPH               how it is read                                                        streamed
=================== ===================================================================== =========
OpenKE folder, FB13 ``entity2id``/``relation2id`` names, ``{split}2id.txt(.gz)`` id rows      yes
graph dir           ``entities.tsv``/``relations.tsv`` + ``triples/{split}.tsv`` names      yes
labelled TSV        ``train/valid/test.tsv`` (or one file); ids by first appearance          yes
``.jsonl`` triples  :func:`kge.graph.load_triples_jsonl` (merges duplicates: needs them all) no
in-memory graph     a ``KnowledgeGraph`` (or anything with names and ``train``)               chunks
=================== ===================================================================== =========

What stays in memory is O(entities): the entity names (and, for named triples, a name -> id
dict). :meth:`TripleSource.scan` reads everything once, checks it (bad lines are errors naming
file and line, before any training) and counts the splits; :meth:`TripleSource.chunks` then
yields ``int64 [n, 3]`` ``(head, relation, tail)`` blocks of a split.
"""
from __future__ import annotations

import gzip
import hashlib
import os
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from kge.graph import GraphFormatError, find_file
from kge.graph_io import _Vocab  # the names -> ids table of load_tsv: one rule for both readers
from kge.knowledge_graph import SPLITS

CHUNK_ROWS = 1 << 20
__all__ = ["TripleSource", "open_source", "CHUNK_ROWS"]


def _open_bin(path: Path):
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def _names_file(path: Path, what: str, openke: bool) -> list[str]:
    """Names in id order: OpenKE ``name<TAB>id`` after a count line, or one name per line."""
    from kge.graph_io import _read_name_list, _read_openke_names

    return _read_openke_names(path) if openke else _read_name_list(path, what)


class TripleSource:
    """Names plus a chunked reader per split. ``streamed`` is False where the whole graph had to
    be loaded (``.jsonl`` triples); ``ids_known`` where ids exist before the first pass."""

    def __init__(self, name: str, entities: list[str] | None, relations: list[str] | None,
                 readers: dict[str, Callable[[int], Iterator[np.ndarray]]], *, streamed: bool,
                 describe: str) -> None:
        self.name = name
        self.entities = entities
        self.relations = relations
        self._readers = readers
        self.streamed = streamed
        self.describe = describe
        self.ids_known = entities is not None and relations is not None
        self.counts: dict[str, int] | None = None
        self.ids_sha256: str | None = None

    @property
    def num_entities(self) -> int:
        return len(self.entities or ())

    @property
    def num_relations(self) -> int:
        return len(self.relations or ())

    def chunks(self, split: str = "train", rows: int = CHUNK_ROWS) -> Iterator[np.ndarray]:
        """``int64 [n, 3]`` blocks of ``(head, relation, tail)`` ids of ``split``, in file order."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}")
        reader = self._readers.get(split)
        if reader is None:
            return iter(())
        return reader(rows)

    def scan(self, on_train: Callable[[np.ndarray], None] | None = None, rows: int = CHUNK_ROWS) -> dict[str, int]:
        """One pass over every split: checks every line, assigns first-appearance ids (labelled
        TSV), counts the triples and hashes the ids; ``on_train`` sees each train chunk when the
        ids were known before the pass (``ids_known``). Returns the counts per split."""
        counts, h = {}, hashlib.sha256()
        for split in SPLITS:
            n = 0
            for c in self.chunks(split, rows):
                n += len(c)
                h.update(split.encode() + np.ascontiguousarray(c, dtype="<i8").tobytes())
                if on_train is not None and split == "train" and self.ids_known:
                    on_train(c)
            counts[split] = n
        if counts["train"] == 0:
            raise GraphFormatError(f"{self.describe}: no training triples")
        self.counts, self.ids_sha256 = counts, h.hexdigest()[:16]
        self.ids_known = True
        return counts

    def names_sha256(self) -> str:
        """The names hash of :meth:`kge.knowledge_graph.KnowledgeGraph.fingerprint`."""
        h = hashlib.sha256()
        for n in self.entities or ():
            h.update(n.encode("utf-8") + b"\n")
        h.update(b"\x00")
        for n in self.relations or ():
            h.update(n.encode("utf-8") + b"\n")
        return h.hexdigest()[:16]

    def fingerprint(self, rows: int = CHUNK_ROWS) -> dict:
        """:meth:`KnowledgeGraph.fingerprint` computed by streaming (needs :meth:`scan` first)."""
        if self.counts is None:
            self.scan(rows=rows)
        t = hashlib.sha256()
        for split in SPLITS:
            t.update(f"{split}:{self.counts[split]}:".encode())
            for c in self.chunks(split, rows):
                t.update(np.ascontiguousarray(c, dtype="<i8").tobytes())
        return {"num_entities": self.num_entities, "num_relations": self.num_relations,
                "num_train": self.counts["train"], "num_valid": self.counts["valid"],
                "num_test": self.counts["test"], "names_sha256": self.names_sha256(),
                "triples_sha256": t.hexdigest()[:16]}


# ------------------------------------------------------------------------------------------
# readers
# ------------------------------------------------------------------------------------------
def _openke_reader(path: Path, num_entities: int, num_relations: int) -> Callable[[int], Iterator[np.ndarray]]:
    """``count`` line, then ``head tail relation`` per line -> (h, r, t) blocks."""

    def read(rows: int) -> Iterator[np.ndarray]:
        with _open_bin(path) as f:
            first = f.readline()
            try:
                n = int(first.strip())
            except ValueError:
                raise GraphFormatError(f"{path}:1: expected the number of triples, got {first!r}") from None
            seen, lineno = 0, 1
            while True:
                lines = list(islice(f, rows))
                if not lines:
                    break
                block = b"".join(lines)
                try:
                    flat = np.fromstring(block.decode("ascii"), dtype=np.int64, sep=" ") if block.strip() \
                        else np.zeros(0, np.int64)
                    ok = flat.size % 3 == 0 and flat.size // 3 == sum(1 for ln in lines if ln.strip())
                except (ValueError, UnicodeDecodeError):
                    ok = False
                if not ok:
                    _openke_bad_line(path, lines, lineno)
                arr = flat.reshape(-1, 3)
                h, t, r = arr[:, 0], arr[:, 1], arr[:, 2]
                bad = (h < 0) | (h >= num_entities) | (t < 0) | (t >= num_entities) | (r < 0) | (r >= num_relations)
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    k = [j for j, ln in enumerate(lines) if ln.strip()][i]
                    raise GraphFormatError(
                        f"{path}:{lineno + k + 1}: id out of range in triple (head={h[i]}, tail={t[i]}, "
                        f"relation={r[i]}); {num_entities} entities, {num_relations} relations")
                seen += len(arr)
                lineno += len(lines)
                yield np.ascontiguousarray(np.stack([h, r, t], axis=1))
            if seen != n:
                raise GraphFormatError(f"{path}:1: count line says {n} but the file has {seen} triples")

    return read


def _openke_bad_line(path: Path, lines: list[bytes], lineno: int) -> None:
    for k, raw in enumerate(lines):
        try:
            ln = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise GraphFormatError(f"{path}:{lineno + k + 1}: not UTF-8 text (byte 0x{raw[e.start]:02x})") from None
        if not ln.strip():
            continue
        parts = ln.split()
        if len(parts) != 3:
            raise GraphFormatError(f"{path}:{lineno + k + 1}: expected 'head tail relation' (3 ids), got {ln!r}")
        try:
            [int(p) for p in parts]
        except ValueError:
            raise GraphFormatError(f"{path}:{lineno + k + 1}: non-integer id in {ln!r}") from None
    raise GraphFormatError(f"{path}:{lineno + 1}: cannot read the id rows")  # pragma: no cover


def _tsv_reader(path: Path, ent: _Vocab, rel: _Vocab) -> Callable[[int], Iterator[np.ndarray]]:
    """``head<TAB>relation<TAB>tail`` lines (blank and ``#`` lines skipped), as :func:`kge.graph.load_tsv`."""

    def read(rows: int) -> Iterator[np.ndarray]:
        buf = np.empty((rows, 3), dtype=np.int64)
        k = 0
        with _open_bin(path) as fb:
            lineno = 0
            for raw in fb:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise GraphFormatError(f"{path}:{lineno + 1}: not UTF-8 text (byte 0x{raw[e.start]:02x})") from None
                for ln in text.splitlines() or [""]:
                    lineno += 1
                    if not ln.strip() or ln.startswith("#"):
                        continue
                    parts = ln.split("\t")
                    if len(parts) != 3 or any(not p.strip() for p in parts):
                        raise GraphFormatError(f"{path}:{lineno}: expected 'head<TAB>relation<TAB>tail', got {ln!r}")
                    where = f"{path}:{lineno}"
                    h, r, t = (p.strip() for p in parts)
                    buf[k] = (ent(h, where), rel(r, where), ent(t, where))
                    k += 1
                    if k == rows:
                        yield buf.copy()
                        k = 0
        if k:
            yield buf[:k].copy()

    return read


def _memory_reader(arr: np.ndarray) -> Callable[[int], Iterator[np.ndarray]]:
    def read(rows: int) -> Iterator[np.ndarray]:
        for s in range(0, len(arr), rows):
            yield np.asarray(arr[s:s + rows], dtype=np.int64)

    return read


def _split_files(folder: Path, stem: Callable[[str], str], exts: list[str], dev_alias: bool) -> dict[str, Path]:
    out = {}
    for split in SPLITS:
        p = find_file(folder, stem(split), exts)
        if p is None and split == "valid" and dev_alias:
            p = find_file(folder, "dev", exts)
        if p is not None:
            out[split] = p
    if "train" not in out:
        raise GraphFormatError(f"{folder}: no {stem('train')}{exts[0]}")
    return out


def from_graph(graph, name: str | None = None) -> TripleSource:
    """A source over an in-memory graph (``entities``/``relations`` names and ``train``/``valid``/``test``)."""
    ents = list(getattr(graph, "entities", None) or getattr(graph, "entity_names"))
    rels = list(getattr(graph, "relations", None) or getattr(graph, "relation_names"))
    readers = {}
    for split in SPLITS:
        a = getattr(graph, split, None)
        if a is not None and len(a):
            a = np.asarray(a, dtype=np.int64)
            if a.ndim != 2 or a.shape[1] != 3:
                raise ValueError(f"{split} triples must have shape [N, 3], got {a.shape}")
            readers[split] = _memory_reader(a)
    return TripleSource(name if name is not None else getattr(graph, "name", ""), ents, rels, readers,
                        streamed=False, describe=f"graph {getattr(graph, 'name', '') or '(in memory)'}")


def open_source(graph=None, min_score: float | None = None) -> TripleSource:
    """The triple source of GRAPH as ``wgb kge train`` reads it (``None``/``"fb13"`` = FB13, a path,
    or an in-memory graph)."""
    if graph is not None and not isinstance(graph, (str, os.PathLike)):
        return from_graph(graph)
    if graph is None or str(graph).lower() == "fb13":
        from kge.graph import DATA_DIR

        return _openke_source(DATA_DIR / "fb13", "fb13")
    p = Path(graph)
    if not p.exists():
        raise FileNotFoundError(f"graph {p} does not exist")
    if p.is_dir():
        if find_file(p, "entity2id", [".txt"]) is not None:
            return _openke_source(p, p.name)
        if (p / "triples").is_dir():
            ent_p, rel_p = find_file(p, "entities", [".tsv"]), find_file(p, "relations", [".tsv"])
            ents = _names_file(ent_p, "entity", False) if ent_p else None
            rels = _names_file(rel_p, "relation", False) if rel_p else None
            return _tsv_source(_split_files(p / "triples", str, [".tsv", ".txt"], True), ents, rels, p.name,
                               f"graph dir {p}")
        if find_file(p, "train", [".tsv", ".txt"]) is not None:
            return _tsv_source(_split_files(p, str, [".tsv", ".txt"], True), None, None, p.stem, f"TSV folder {p}")
        raise GraphFormatError(f"{p}: cannot tell the graph format (expected entity2id.txt (OpenKE), "
                               f"triples/ (graph dir) or train.tsv (labelled TSV))")
    suffixes = [s.lower() for s in p.suffixes]
    if ".jsonl" in suffixes or ".json" in suffixes:
        from kge.graph import load_triples_jsonl

        src = from_graph(load_triples_jsonl(p, min_score=min_score))
        src.describe = f"{p} (loaded whole: duplicate triples are merged)"
        return src
    return _tsv_source({"train": p}, None, None, p.stem, f"TSV file {p}")


def _openke_source(folder: Path, name: str) -> TripleSource:
    ent_p = find_file(folder, "entity2id", [".txt"])
    rel_p = find_file(folder, "relation2id", [".txt"])
    if ent_p is None or rel_p is None:
        raise GraphFormatError(f"{folder}: not an OpenKE folder (entity2id.txt / relation2id.txt missing)")
    ents, rels = _names_file(ent_p, "entity", True), _names_file(rel_p, "relation", True)
    files = _split_files(folder, lambda s: f"{s}2id", [".txt"], False)
    readers = {s: _openke_reader(f, len(ents), len(rels)) for s, f in files.items()}
    return TripleSource(name, ents, rels, readers, streamed=True, describe=f"OpenKE folder {folder}")


def _tsv_source(files: dict[str, Path], ents: list[str] | None, rels: list[str] | None, name: str,
                describe: str) -> TripleSource:
    ev = _Vocab(ents, frozen=ents is not None, what="entity")
    rv = _Vocab(rels, frozen=rels is not None, what="relation")
    readers = {s: _tsv_reader(f, ev, rv) for s, f in files.items()}
    src = TripleSource(name, ev.names, rv.names, readers, streamed=True, describe=describe)
    src.ids_known = ev.frozen and rv.frozen  # first-appearance ids exist only after a pass
    return src

