"""The in-memory knowledge graph: entity/relation names and ``(head, relation, tail)`` id triples
per split (:class:`KnowledgeGraph`), its fingerprint and the graph dir writer
(:meth:`KnowledgeGraph.save`). Reading files: :mod:`kge.graph_io`; :mod:`kge.graph` is the public
face of both (``from kge.graph import KnowledgeGraph, load_graph``).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wgbcore.atomicio import atomic_write_text

SPLITS = ("train", "valid", "test")

__all__ = ["KnowledgeGraph", "SPLITS"]


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
