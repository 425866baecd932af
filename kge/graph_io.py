"""Graph file formats (all loaders return a :class:`~kge.knowledge_graph.KnowledgeGraph`):

- :func:`load_openke` / :func:`save_openke` -- OpenKE folder (``entity2id.txt``,
  ``relation2id.txt``, ``train2id.txt``, ``valid2id.txt``, ``test2id.txt``; first line = count,
  then ``head tail relation`` per line; ``.txt.gz`` accepted too).
- :func:`load_tsv` -- labelled triples ``head<TAB>relation<TAB>tail`` in ``train/valid/test``
  files (``.tsv``/``.txt``, optionally gzipped) or one file (all train).
- :func:`load_graph_dir` -- the graph dir format written by :meth:`KnowledgeGraph.save`.
- :func:`load_triples_jsonl` -- the JSON lines written by ``wgb re extract``.

Bad input raises :class:`GraphFormatError` naming the file and line. Import these from
:mod:`kge.graph`, which also detects the format of a path (:func:`kge.graph.load_graph`).
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from wgbcore.atomicio import atomic_write_text

from kge.knowledge_graph import SPLITS, KnowledgeGraph

__all__ = ["GraphFormatError", "GENDER_RELATION", "find_file", "load_openke", "save_openke", "load_tsv",
           "load_graph_dir", "load_triples_jsonl"]


class GraphFormatError(ValueError):
    """Malformed graph input; the message names the file (and line where there is one)."""


# ------------------------------------------------------------------------------------------
# file helpers
# ------------------------------------------------------------------------------------------
def find_file(folder: Path, stem: str, exts: Sequence[str]) -> Path | None:
    """``folder/<stem><ext>`` or its ``.gz``, for the first ``ext`` that exists (None if none)."""
    for ext in exts:
        for suffix in ("", ".gz"):
            p = folder / f"{stem}{ext}{suffix}"
            if p.exists():
                return p
    return None


def _read_text(path: Path) -> str:
    """The UTF-8 text of a (gzipped) file; bytes that are not UTF-8 are an error naming file:line."""
    try:
        if str(path).endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError) as e:  # a truncated or corrupt .gz
        raise GraphFormatError(f"{path}: cannot read ({e})") from None
    return _decode(data, path)


def _decode(data: bytes, path: Path | str) -> str:
    try:  # newlines as text mode reads them (\r\n and \r -> \n)
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise GraphFormatError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x})") from None


def _lines(path: Path) -> list[str]:
    return _read_text(path).splitlines()


# ------------------------------------------------------------------------------------------
# OpenKE
# ------------------------------------------------------------------------------------------
def _read_openke_names(path: Path) -> list[str]:
    lines = _lines(path)
    if not lines:
        raise GraphFormatError(f"{path}:1: empty file, expected a count line")
    try:
        n = int(lines[0].strip())
    except ValueError:
        raise GraphFormatError(f"{path}:1: expected the number of names, got {lines[0]!r}") from None
    body = [ln for ln in lines[1:]]
    while body and not body[-1].strip():
        body.pop()
    if len(body) != n:
        raise GraphFormatError(f"{path}:1: count line says {n} but the file has {len(body)} name lines")
    names: list[str | None] = [None] * n
    for lineno, ln in enumerate(body, start=2):
        parts = ln.rstrip("\r\n").split("\t")
        if len(parts) != 2:
            parts = ln.split()
        if len(parts) != 2:
            raise GraphFormatError(f"{path}:{lineno}: expected 'name<TAB>id', got {ln!r}")
        name, idx = parts
        try:
            i = int(idx)
        except ValueError:
            raise GraphFormatError(f"{path}:{lineno}: id {idx!r} is not an integer") from None
        if not 0 <= i < n:
            raise GraphFormatError(f"{path}:{lineno}: id {i} out of range [0, {n})")
        if names[i] is not None:
            raise GraphFormatError(f"{path}:{lineno}: id {i} assigned twice")
        names[i] = name
    return names  # type: ignore[return-value]


def _read_openke_triples(path: Path, num_entities: int, num_relations: int) -> np.ndarray:
    """``count`` line, then ``head tail relation`` ids; returns ``[N, 3]`` as (h, r, t)."""
    text = _read_text(path)
    first, _, rest = text.partition("\n")
    try:
        n = int(first.strip())
    except ValueError:
        raise GraphFormatError(f"{path}:1: expected the number of triples, got {first!r}") from None
    arr = None
    try:  # fast path: whole body as integers
        flat = np.array(rest.split(), dtype=np.int64)
        if flat.size == 3 * n:
            arr = flat.reshape(n, 3)
    except ValueError:
        pass
    if arr is None:  # slow path finds and names the bad line
        body = rest.splitlines()
        rows = []
        for lineno, ln in enumerate(body, start=2):
            if not ln.strip():
                continue
            parts = ln.split()
            if len(parts) != 3:
                raise GraphFormatError(f"{path}:{lineno}: expected 'head tail relation' (3 ids), got {ln!r}")
            try:
                rows.append([int(p) for p in parts])
            except ValueError:
                raise GraphFormatError(f"{path}:{lineno}: non-integer id in {ln!r}") from None
        if len(rows) != n:
            raise GraphFormatError(f"{path}:1: count line says {n} but the file has {len(rows)} triples")
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    h, t, r = arr[:, 0], arr[:, 1], arr[:, 2]
    bad = (h < 0) | (h >= num_entities) | (t < 0) | (t >= num_entities) | (r < 0) | (r >= num_relations)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise GraphFormatError(
            f"{path}:{_line_of_row(rest, i) + 1}: id out of range in triple (head={h[i]}, tail={t[i]}, "
            f"relation={r[i]}); {num_entities} entities, {num_relations} relations")
    return np.ascontiguousarray(np.stack([h, r, t], axis=1))


def _line_of_row(body: str, row: int) -> int:
    """1-based line number (within body) of the row-th non-empty line."""
    k = -1
    for lineno, ln in enumerate(body.splitlines(), start=1):
        if ln.strip():
            k += 1
            if k == row:
                return lineno
    return row + 1


def load_openke(path: str | os.PathLike, name: str | None = None) -> KnowledgeGraph:
    """Load an OpenKE folder (``entity2id.txt``, ``relation2id.txt``, ``{train,valid,test}2id.txt``,
    each optionally ``.gz``). Missing valid/test files give empty splits."""
    folder = Path(path)
    ent_p = find_file(folder, "entity2id", [".txt"])
    rel_p = find_file(folder, "relation2id", [".txt"])
    if ent_p is None or rel_p is None:
        raise GraphFormatError(f"{folder}: not an OpenKE folder (entity2id.txt / relation2id.txt missing)")
    entities = _read_openke_names(ent_p)
    relations = _read_openke_names(rel_p)
    splits = {}
    for split in SPLITS:
        p = find_file(folder, f"{split}2id", [".txt"])
        if p is None:
            if split == "train":
                raise GraphFormatError(f"{folder}: train2id.txt missing")
            splits[split] = None
        else:
            splits[split] = _read_openke_triples(p, len(entities), len(relations))
    return KnowledgeGraph(entities, relations, name=name or folder.name, **splits)


def save_openke(graph: KnowledgeGraph, path: str | os.PathLike) -> Path:
    """Write ``graph`` as an OpenKE folder (plain text)."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    for fname, names in (("entity2id.txt", graph.entities), ("relation2id.txt", graph.relations)):
        atomic_write_text(folder / fname, f"{len(names)}\n" + "".join(f"{n}\t{i}\n" for i, n in enumerate(names)))
    for split in SPLITS:
        a = graph.split(split)
        body = "".join(f"{h}\t{t}\t{r}\n" for h, r, t in a.tolist())
        atomic_write_text(folder / f"{split}2id.txt", f"{len(a)}\n" + body)
    return folder


# ------------------------------------------------------------------------------------------
# labelled TSV
# ------------------------------------------------------------------------------------------
class _Vocab:
    def __init__(self, names: Sequence[str] | None = None, frozen: bool = False, what: str = "entity"):
        self.names: list[str] = list(names or [])
        self.ids = {n: i for i, n in enumerate(self.names)}
        self.frozen = frozen
        self.what = what

    def __call__(self, name: str, where: str) -> int:
        i = self.ids.get(name)
        if i is None:
            if self.frozen:
                raise GraphFormatError(f"{where}: unknown {self.what} {name!r} (not in the {self.what} list)")
            i = self.ids[name] = len(self.names)
            self.names.append(name)
        return i


def _parse_tsv_triples(path: Path, ent: _Vocab, rel: _Vocab) -> np.ndarray:
    rows = []
    for lineno, ln in enumerate(_lines(path), start=1):
        if not ln.strip() or ln.startswith("#"):
            continue
        parts = ln.rstrip("\r\n").split("\t")
        if len(parts) != 3 or any(not p.strip() for p in parts):
            raise GraphFormatError(f"{path}:{lineno}: expected 'head<TAB>relation<TAB>tail', got {ln!r}")
        h, r, t = (p.strip() for p in parts)
        where = f"{path}:{lineno}"
        rows.append((ent(h, where), rel(r, where), ent(t, where)))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def load_tsv(path: str | os.PathLike, name: str | None = None, entities: Sequence[str] | None = None,
             relations: Sequence[str] | None = None) -> KnowledgeGraph:
    """Labelled triples ``head<TAB>relation<TAB>tail``: a folder with ``train``/``valid``/``test``
    (``.tsv``/``.txt``/``.tsv.gz``) or a single file (all train). Ids are assigned in order of
    first appearance unless ``entities``/``relations`` fix them (then unknown names are errors)."""
    path = Path(path)
    ent = _Vocab(entities, frozen=entities is not None, what="entity")
    rel = _Vocab(relations, frozen=relations is not None, what="relation")
    splits: dict[str, np.ndarray | None] = {}
    if path.is_dir():
        for split in SPLITS:
            p = find_file(path, split, [".tsv", ".txt"])
            if p is None and split == "valid":
                p = find_file(path, "dev", [".tsv", ".txt"])
            if p is None:
                if split == "train":
                    raise GraphFormatError(f"{path}: no train.tsv / train.txt")
                splits[split] = None
            else:
                splits[split] = _parse_tsv_triples(p, ent, rel)
    else:
        splits = {"train": _parse_tsv_triples(path, ent, rel), "valid": None, "test": None}
    return KnowledgeGraph(ent.names, rel.names, name=name or path.stem, **splits)


# ------------------------------------------------------------------------------------------
# graph dir
# ------------------------------------------------------------------------------------------
def _read_name_list(path: Path, what: str) -> list[str]:
    names = []
    for lineno, ln in enumerate(_lines(path), start=1):
        n = ln.rstrip("\r\n")
        if not n:
            raise GraphFormatError(f"{path}:{lineno}: empty {what} name")
        if "\t" in n:
            raise GraphFormatError(f"{path}:{lineno}: expected one {what} name per line, got {n!r}")
        names.append(n)
    return names


def load_graph_dir(path: str | os.PathLike, name: str | None = None) -> KnowledgeGraph:
    """The graph dir format written by :meth:`KnowledgeGraph.save`."""
    path = Path(path)
    ent_p, rel_p = find_file(path, "entities", [".tsv"]), find_file(path, "relations", [".tsv"])
    entities = _read_name_list(ent_p, "entity") if ent_p else None
    relations = _read_name_list(rel_p, "relation") if rel_p else None
    g = load_tsv(path / "triples", entities=entities, relations=relations)
    g.name = name or path.name
    return g


# ------------------------------------------------------------------------------------------
# triples.jsonl from `wgb re extract`
# ------------------------------------------------------------------------------------------
GENDER_RELATION = "gender"


def load_triples_jsonl(path: str | os.PathLike, min_score: float | None = None, name: str | None = None,
                       gender_relation: str = GENDER_RELATION, valid_fraction: float = 0.0,
                       test_fraction: float = 0.0, seed: int = 0) -> KnowledgeGraph:
    """Triples extracted by ``wgb re extract``: one JSON object per line with ``head``,
    ``relation``, ``tail`` (required), ``score``, ``head_gender``, ``source`` (optional).

    Duplicate triples are merged. Each head with a ``head_gender`` gets a triple
    ``(head, "gender", "male"/"female")``. ``min_score`` drops extracted triples scored below it
    (gender triples are kept). By default everything is train; ``valid_fraction``/``test_fraction``
    hold out a seeded random share of the extracted (non-gender) triples.

    Refused, naming the line: a ``score`` that is not a finite number (``true``, ``NaN``, text),
    a head given two genders, and a ``gender`` triple whose tail contradicts the head's
    ``head_gender`` (on its own line or another).
    """
    import math

    path = Path(path)
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))
                                  or not math.isfinite(min_score)):
        raise GraphFormatError(f"min_score must be a finite number, got {min_score!r}")
    stated: dict[str, tuple[str, str]] = {}  # head -> (gender, where) from gender triples
    ent, rel = _Vocab(what="entity"), _Vocab(what="relation")
    seen: set[tuple[int, int, int]] = set()
    rows: list[tuple[int, int, int]] = []
    genders: dict[str, str] = {}
    from wgbcore.fileio import reading

    opener = gzip.open if str(path).endswith(".gz") else open
    with reading(path, "triples file"), opener(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            where = f"{path}:{lineno}"
            try:
                ln = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise GraphFormatError(f"{where}: not UTF-8 text (byte 0x{raw[e.start]:02x})") from None
            if not ln.strip():
                continue
            try:
                obj = json.loads(ln)
            except json.JSONDecodeError as e:
                raise GraphFormatError(f"{where}: malformed JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise GraphFormatError(f"{where}: expected a JSON object")
            for key in ("head", "relation", "tail"):
                v = obj.get(key)
                if not isinstance(v, str) or not v.strip():
                    raise GraphFormatError(f"{where}: field {key!r} missing or not a non-empty string")
            score = obj.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
                raise GraphFormatError(f"{where}: field 'score' is not a number: {score!r}")
            if score is not None and not math.isfinite(score):
                raise GraphFormatError(f"{where}: field 'score' is not a finite number: {score!r}")
            # whitespace runs (tabs and newlines included, which graph dirs cannot hold) become one
            # space: e.g. the release's spouse tail "Donna Courtney \nNancy Courtney"
            head, relation, tail = (" ".join(obj[k].split()) for k in ("head", "relation", "tail"))
            g = obj.get("head_gender")
            if g is not None:
                if not isinstance(g, str) or g.strip().lower() not in ("male", "female"):
                    raise GraphFormatError(f"{where}: field 'head_gender' must be 'male' or 'female', got {g!r}")
                g = g.strip().lower()
                if genders.setdefault(head, g) != g:
                    raise GraphFormatError(f"{where}: head {head!r} has gender {g!r} here but "
                                           f"{genders[head]!r} on an earlier line")
                if head in stated and stated[head][0] != g:
                    raise GraphFormatError(f"{where}: head {head!r} has head_gender {g!r} but its "
                                           f"{gender_relation!r} triple at {stated[head][1]} says {stated[head][0]!r}")
            if relation == gender_relation:  # an extracted gender triple must agree with head_gender
                t = tail.strip().lower()
                if head in genders and t in ("male", "female") and genders[head] != t:
                    raise GraphFormatError(f"{where}: triple ({head!r}, {gender_relation!r}, {tail!r}) contradicts "
                                           f"the head_gender {genders[head]!r} given for {head!r}")
                if t in ("male", "female"):
                    if head in stated and stated[head][0] != t:
                        raise GraphFormatError(f"{where}: head {head!r} has {gender_relation!r} {t!r} here but "
                                               f"{stated[head][0]!r} at {stated[head][1]}")
                    stated.setdefault(head, (t, where))
            if min_score is not None and score is not None and score < min_score:
                continue
            key = (ent(head, where), rel(relation, where), ent(tail, where))
            if key not in seen:
                seen.add(key)
                rows.append(key)
    extracted = np.array(rows, dtype=np.int64).reshape(-1, 3)
    gender_rows = []
    if genders:
        gid = rel(gender_relation, str(path))
        for head, g in genders.items():
            gender_rows.append((ent(head, str(path)), gid, ent(g, str(path))))
    gender_arr = np.array(gender_rows, dtype=np.int64).reshape(-1, 3)
    valid = test = None
    if valid_fraction or test_fraction:
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(extracted))
        nv, nt = int(round(valid_fraction * len(extracted))), int(round(test_fraction * len(extracted)))
        valid, test = extracted[perm[:nv]], extracted[perm[nv:nv + nt]]
        extracted = extracted[np.sort(perm[nv + nt:])]
    train = np.concatenate([extracted, gender_arr])
    return KnowledgeGraph(ent.names, rel.names, train, valid, test, name=name or path.stem)
