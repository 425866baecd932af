"""Knowledge graphs: entity/relation id maps, train/valid/test splits, and their loaders.

A :class:`KnowledgeGraph` holds names and three ``int64`` arrays ``[N, 3]`` of
``(head, relation, tail)`` ids. Loaders (all return a ``KnowledgeGraph``):

- :func:`load_openke` -- OpenKE folder (``entity2id.txt``, ``relation2id.txt``, ``train2id.txt``,
  ``valid2id.txt``, ``test2id.txt``; first line = count, then ``head tail relation`` per line;
  ``.txt.gz`` accepted too). FB13 ships in this format (:func:`load_fb13`).
- :func:`load_tsv` -- labelled triples ``head<TAB>relation<TAB>tail`` in ``train/valid/test``
  files (``.tsv``/``.txt``, optionally gzipped) or one file (all train).
- :func:`load_triples_jsonl` -- the JSON lines written by ``wgb re extract``.
- :func:`load_graph_dir` / :meth:`KnowledgeGraph.save` -- the graph dir format
  (``triples/{train,valid,test}.tsv``, ``entities.tsv``, ``relations.tsv``).
- :func:`from_pykeen` / :func:`to_pykeen` in :mod:`kge.pykeen_io`.

:func:`load_graph` detects the format of a path. Bad input raises :class:`GraphFormatError`
naming the file and line.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from wgbcore.atomicio import atomic_write_text

SPLITS = ("train", "valid", "test")
DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = [
    "KnowledgeGraph", "GraphFormatError", "SPLITS", "load_graph", "load_openke", "load_tsv",
    "load_triples_jsonl", "load_graph_dir", "load_fb13", "save_openke",
]


class GraphFormatError(ValueError):
    """Malformed graph input; the message names the file (and line where there is one)."""


# ------------------------------------------------------------------------------------------
# the graph
# ------------------------------------------------------------------------------------------
def _as_triples(a, what: str = "triples") -> np.ndarray:
    if a is None:
        return np.zeros((0, 3), dtype=np.int64)
    if hasattr(a, "detach"):  # torch tensor
        a = a.detach().cpu().numpy()
    a = np.asarray(a, dtype=np.int64)
    if a.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{what}: expected an array of shape [N, 3], got {tuple(a.shape)}")
    return np.ascontiguousarray(a)


@dataclass
class KnowledgeGraph:
    """Entity and relation names plus ``(head, relation, tail)`` id triples per split.

    ``train``/``valid``/``test`` are ``int64`` numpy arrays ``[N, 3]`` (torch tensors and lists
    are converted). Ids index ``entities`` and ``relations``.
    """

    entities: list[str]
    relations: list[str]
    train: np.ndarray
    valid: np.ndarray = None  # type: ignore[assignment]
    test: np.ndarray = None  # type: ignore[assignment]
    name: str = ""
    entity_to_id: dict[str, int] = field(init=False, repr=False)
    relation_to_id: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.entities = list(self.entities)
        self.relations = list(self.relations)
        self.entity_to_id = {n: i for i, n in enumerate(self.entities)}
        self.relation_to_id = {n: i for i, n in enumerate(self.relations)}
        if len(self.entity_to_id) != len(self.entities):
            raise ValueError(f"graph {self.name!r}: duplicate entity names")
        if len(self.relation_to_id) != len(self.relations):
            raise ValueError(f"graph {self.name!r}: duplicate relation names")
        for split in SPLITS:
            a = _as_triples(getattr(self, split), f"{split} triples")
            if len(a):
                if a.min() < 0 or a[:, [0, 2]].max() >= len(self.entities) or a[:, 1].max() >= len(self.relations):
                    raise ValueError(f"graph {self.name!r}: {split} triples hold ids out of range "
                                     f"({len(self.entities)} entities, {len(self.relations)} relations)")
            setattr(self, split, a)

    # -- sizes and look-ups ------------------------------------------------------------------
    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        return len(self.relations)

    def split(self, name: str) -> np.ndarray:
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; expected one of {list(SPLITS)}")
        return getattr(self, name)

    def all_triples(self) -> np.ndarray:
        """Train, valid and test triples stacked (the filter set of filtered evaluation)."""
        return np.concatenate([self.train, self.valid, self.test])

    def relation_id(self, name: str) -> int:
        try:
            return self.relation_to_id[name]
        except KeyError:
            raise KeyError(f"relation {name!r} is not in graph {self.name or '(unnamed)'}; "
                           f"relations: {self.relations}") from None

    def entity_id(self, name: str) -> int:
        try:
            return self.entity_to_id[name]
        except KeyError:
            raise KeyError(f"entity {name!r} is not in graph {self.name or '(unnamed)'} "
                           f"({self.num_entities} entities)") from None

    def fingerprint(self) -> dict:
        """Counts, a hash of the names (in id order) and a hash of the id triples (in split and
        file order): identifies which graph an embedding or a training run belongs to. The same
        graph file with its lines shuffled has other ids or another triple order, so another
        fingerprint."""
        h = hashlib.sha256()
        for n in self.entities:
            h.update(n.encode("utf-8") + b"\n")
        h.update(b"\x00")
        for n in self.relations:
            h.update(n.encode("utf-8") + b"\n")
        t = hashlib.sha256()
        for split in SPLITS:
            a = np.ascontiguousarray(getattr(self, split), dtype="<i8")
            t.update(f"{split}:{len(a)}:".encode())
            t.update(a.tobytes())
        return {"num_entities": self.num_entities, "num_relations": self.num_relations,
                "num_train": int(len(self.train)), "num_valid": int(len(self.valid)),
                "num_test": int(len(self.test)), "names_sha256": h.hexdigest()[:16],
                "triples_sha256": t.hexdigest()[:16]}

    def labelled(self, split: str = "train") -> list[tuple[str, str, str]]:
        """Triples of a split as ``(head, relation, tail)`` names."""
        e, r = self.entities, self.relations
        return [(e[h], r[rr], e[t]) for h, rr, t in self.split(split).tolist()]

    def __repr__(self) -> str:
        return (f"KnowledgeGraph(name={self.name!r}, entities={self.num_entities}, "
                f"relations={self.num_relations}, train={len(self.train)}, valid={len(self.valid)}, "
                f"test={len(self.test)})")

    # -- writing -----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the graph dir format: ``triples/{train,valid,test}.tsv``, ``entities.tsv``,
        ``relations.tsv`` (one name per line, line order = id)."""
        path = Path(path)
        (path / "triples").mkdir(parents=True, exist_ok=True)
        atomic_write_text(path / "entities.tsv", "".join(n + "\n" for n in self.entities))
        atomic_write_text(path / "relations.tsv", "".join(n + "\n" for n in self.relations))
        for split in SPLITS:
            lines = "".join(f"{h}\t{r}\t{t}\n" for h, r, t in self.labelled(split))
            atomic_write_text(path / "triples" / f"{split}.tsv", lines)
        return path


# ------------------------------------------------------------------------------------------
# file helpers
# ------------------------------------------------------------------------------------------
def _find(folder: Path, stem: str, exts: Sequence[str]) -> Path | None:
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
    ent_p = _find(folder, "entity2id", [".txt"])
    rel_p = _find(folder, "relation2id", [".txt"])
    if ent_p is None or rel_p is None:
        raise GraphFormatError(f"{folder}: not an OpenKE folder (entity2id.txt / relation2id.txt missing)")
    entities = _read_openke_names(ent_p)
    relations = _read_openke_names(rel_p)
    splits = {}
    for split in SPLITS:
        p = _find(folder, f"{split}2id", [".txt"])
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
            p = _find(path, split, [".tsv", ".txt"])
            if p is None and split == "valid":
                p = _find(path, "dev", [".tsv", ".txt"])
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
    ent_p, rel_p = _find(path, "entities", [".tsv"]), _find(path, "relations", [".tsv"])
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
    """
    path = Path(path)
    ent, rel = _Vocab(what="entity"), _Vocab(what="relation")
    seen: set[tuple[int, int, int]] = set()
    rows: list[tuple[int, int, int]] = []
    genders: dict[str, str] = {}
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
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
            if score is not None and not isinstance(score, (int, float)):
                raise GraphFormatError(f"{where}: field 'score' is not a number: {score!r}")
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


# ------------------------------------------------------------------------------------------
# FB13 and format detection
# ------------------------------------------------------------------------------------------
def load_fb13() -> KnowledgeGraph:
    """FB13 (Socher et al. 2013; Freebase, CC BY), shipped in ``kge/data/fb13`` (OpenKE format,
    gzipped): 75,043 entities, 13 relations, 316,232 / 5,908 / 23,733 triples."""
    return load_openke(DATA_DIR / "fb13", name="fb13")


def load_graph(path: str | os.PathLike | None = None, min_score: float | None = None) -> KnowledgeGraph:
    """Load a graph, detecting the format: ``None`` or ``"fb13"`` = shipped FB13; a folder with
    ``entity2id.txt`` = OpenKE; with ``triples/`` = graph dir; with ``train.tsv``/``train.txt`` =
    labelled TSV; a ``.jsonl``/``.json``(``.gz``) file = extracted triples; any other file =
    labelled TSV (all train)."""
    if path is None or str(path).lower() == "fb13":
        return load_fb13()
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"graph {p} does not exist")
    if p.is_dir():
        if _find(p, "entity2id", [".txt"]) is not None:
            return load_openke(p)
        if (p / "triples").is_dir():
            return load_graph_dir(p)
        if _find(p, "train", [".tsv", ".txt"]) is not None:
            return load_tsv(p)
        raise GraphFormatError(f"{p}: cannot tell the graph format (expected entity2id.txt (OpenKE), "
                               f"triples/ (graph dir) or train.tsv (labelled TSV))")
    suffixes = [s.lower() for s in p.suffixes]
    if ".jsonl" in suffixes or ".json" in suffixes:
        return load_triples_jsonl(p, min_score=min_score)
    return _not_empty(load_tsv(p), p)


def _not_empty(graph: KnowledgeGraph, path: Path) -> KnowledgeGraph:
    if not (len(graph.train) or len(graph.valid) or len(graph.test)):
        raise GraphFormatError(f"{path}: no triples (empty graph file)")
    return graph
