"""What every bias measure needs from a graph: names, facts, groups and counts.

:class:`GraphView` adapts any graph object (``kge.graph.KnowledgeGraph``, ``kge.synthetic``
graphs, or anything with entity/relation names and ``[N, 3]`` ``(head, relation, tail)`` id
triples) and answers the questions the measures share: who the persons are (heads of the target
relation), who has attribute value ``a`` and not ``b`` (the groups of Bourli's Table 6.2), how many
of each group hold each target item (``C_a``, ``C_b``). Unknown names are clear errors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from kge.bias.result import BiasSpec

SPLITS = ("train", "valid", "test")


def _names(obj: Any, *attrs: str) -> list[str] | None:
    for a in attrs:
        v = getattr(obj, a, None)
        if v is None:
            continue
        if isinstance(v, dict):  # name -> id
            names = [None] * len(v)
            for k, i in v.items():
                names[int(i)] = k
            return names
        return [str(x) for x in v]
    return None


def _triples(obj: Any, split: str) -> np.ndarray | None:
    v = getattr(obj, split, None)
    if v is None:
        t = getattr(obj, "triples", None)
        if isinstance(t, dict):
            v = t.get(split)
    if v is None:
        return None
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    v = np.asarray(v, dtype=np.int64)
    if v.size == 0:
        return v.reshape(0, 3)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"graph split '{split}' has shape {tuple(v.shape)}; expected [N, 3] (head, relation, tail)")
    return v


def check_model(model: Any, num_entities: int, num_relations: int | None = None) -> None:
    """Embeddings of another graph (entity count, and relation count when given, differing from
    the graph's) are an error naming both counts."""
    n = int(model.entity.weight.shape[0])
    if n != num_entities:
        raise ValueError(f"embeddings have {n} entities but the graph has {num_entities}; "
                         "were they trained on another graph?")
    nr = getattr(model, "num_relations", None)
    if num_relations is not None and nr is not None and int(nr) != num_relations:
        raise ValueError(f"embeddings have {nr} relations but the graph has {num_relations}")


@dataclass
class GraphView:
    entity_names: list[str]
    relation_names: list[str]
    splits: dict[str, np.ndarray]
    fact_splits: tuple[str, ...] = ("train",)
    entity_index: dict[str, int] = field(init=False)
    relation_index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.entity_index = {n: i for i, n in enumerate(self.entity_names)}
        self.relation_index = {n: i for i, n in enumerate(self.relation_names)}
        ne, nr = len(self.entity_names), len(self.relation_names)
        for s, t in self.splits.items():
            if t.size and (t[:, [0, 2]].min() < 0 or t[:, [0, 2]].max() >= ne):
                raise ValueError(f"graph split '{s}': entity id out of range [0, {ne})")
            if t.size and (t[:, 1].min() < 0 or t[:, 1].max() >= nr):
                raise ValueError(f"graph split '{s}': relation id out of range [0, {nr})")
        missing = [s for s in self.fact_splits if s not in self.splits]
        if missing:
            raise ValueError(f"graph has no split(s) {missing}; it has {sorted(self.splits)}")
        self.facts = np.concatenate([self.splits[s] for s in self.fact_splits], axis=0)
        self._by_rel: dict[int, np.ndarray] = {}

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_graph(cls, graph: Any, fact_splits: Sequence[str] = ("train",)) -> "GraphView":
        if isinstance(graph, GraphView):
            if tuple(fact_splits) == graph.fact_splits:
                return graph
            return cls(graph.entity_names, graph.relation_names, graph.splits, tuple(fact_splits))
        ents = _names(graph, "entity_names", "entities", "entity_to_id", "entity2id")
        rels = _names(graph, "relation_names", "relations", "relation_to_id", "relation2id")
        if ents is None or rels is None:
            raise TypeError(f"cannot read entity/relation names from {type(graph).__name__}")
        splits = {s: t for s in SPLITS if (t := _triples(graph, s)) is not None}
        return cls(ents, rels, splits, tuple(fact_splits))

    @property
    def num_entities(self) -> int:
        return len(self.entity_names)

    # -- names ----------------------------------------------------------------------------------
    def relation_id(self, name: str, role: str = "relation") -> int:
        if name in self.relation_index:
            return self.relation_index[name]
        raise ValueError(f"{role} '{name}' is not in the graph; relations: {self.relation_names[:30]}")

    def entity_id(self, name: str, role: str = "entity") -> int:
        if name in self.entity_index:
            return self.entity_index[name]
        raise ValueError(f"{role} '{name}' is not in the graph")

    def check_model(self, model: Any) -> None:
        """Embeddings whose shape does not match the graph are an error naming both shapes."""
        check_model(model, self.num_entities, len(self.relation_names))

    # -- facts -----------------------------------------------------------------------------------
    def rel_triples(self, rel: int, split: str | None = None) -> np.ndarray:
        if split is not None:
            t = self.splits.get(split)
            if t is None:
                raise ValueError(f"graph has no '{split}' split")
            return t[t[:, 1] == rel]
        if rel not in self._by_rel:
            self._by_rel[rel] = self.facts[self.facts[:, 1] == rel]
        return self._by_rel[rel]

    def persons(self, target_rel: int) -> np.ndarray:
        """Persons = heads of at least one target-relation fact (sorted ids)."""
        return np.unique(self.rel_triples(target_rel)[:, 0])

    def holders(self, rel: int, value: int) -> np.ndarray:
        t = self.rel_triples(rel)
        return np.unique(t[t[:, 2] == value, 0])

    def values(self, rel: int) -> np.ndarray:
        """Distinct tails of ``rel`` sorted by frequency (most frequent first), ties by id."""
        t = self.rel_triples(rel)[:, 2]
        vals, counts = np.unique(t, return_counts=True)
        order = np.lexsort((vals, -counts))
        return vals[order]

    def targets(self, target_rel: int) -> np.ndarray:
        return np.unique(self.rel_triples(target_rel)[:, 2])


@dataclass
class Groups:
    """Resolved spec: ids, the person groups A (a and not b) and B (b and not a), target items and
    the per-item counts C_a, C_b over the fact splits."""

    spec: BiasSpec
    s_rel: int
    t_rel: int
    a_id: int
    b_ids: np.ndarray  # one id, or all other values when spec.b is None
    persons: np.ndarray  # all persons (heads of the target relation)
    group_a: np.ndarray  # persons with a and not b
    group_b: np.ndarray  # persons with b and not a
    items: np.ndarray  # target tails
    count_a: np.ndarray  # [len(items)]
    count_b: np.ndarray
    item_names: list[str]


def resolve(view: GraphView, spec: BiasSpec, *, need_values: bool = True) -> Groups:
    t_rel = view.relation_id(spec.target_relation, "target relation")
    s_rel = view.relation_id(spec.sensitive_relation, "sensitive relation")
    if need_values and spec.a is None:
        raise ValueError(f"attribute value a is required for sensitive relation '{spec.sensitive_relation}'")
    values = view.values(s_rel)
    a_id = -1
    if spec.a is not None:
        a_id = view.entity_id(spec.a, f"attribute value a of '{spec.sensitive_relation}'")
        if a_id not in set(values.tolist()):
            raise ValueError(f"attribute value '{spec.a}' never occurs as a tail of '{spec.sensitive_relation}'")
    if spec.b is not None:
        b = view.entity_id(spec.b, f"attribute value b of '{spec.sensitive_relation}'")
        if b not in set(values.tolist()):
            raise ValueError(f"attribute value '{spec.b}' never occurs as a tail of '{spec.sensitive_relation}'")
        if b == a_id:
            raise ValueError(f"a and b are the same value '{spec.b}'")
        b_ids = np.array([b])
    else:
        b_ids = values[values != a_id]
        if need_values and b_ids.size == 0:
            raise ValueError(f"'{spec.sensitive_relation}' has no value other than '{spec.a}'")
    persons = view.persons(t_rel)
    if persons.size == 0:
        raise ValueError(f"target relation '{spec.target_relation}' has no facts in {view.fact_splits}")
    st = view.rel_triples(s_rel)
    has_a = np.unique(st[st[:, 2] == a_id, 0])
    has_b = np.unique(st[np.isin(st[:, 2], b_ids), 0])
    group_a = np.intersect1d(np.setdiff1d(has_a, has_b), persons)
    group_b = np.intersect1d(np.setdiff1d(has_b, has_a), persons)
    tt = view.rel_triples(t_rel)
    items = np.unique(tt[:, 2])
    pos = np.searchsorted(items, tt[:, 2])
    # count persons (not triples): deduplicate (person, item) pairs first
    pairs = np.unique(np.stack([tt[:, 0], pos], 1), axis=0) if tt.size else np.zeros((0, 2), np.int64)
    in_a = np.isin(pairs[:, 0], group_a)
    in_b = np.isin(pairs[:, 0], group_b)
    count_a = np.bincount(pairs[in_a, 1], minlength=items.size)
    count_b = np.bincount(pairs[in_b, 1], minlength=items.size)
    return Groups(spec, s_rel, t_rel, a_id, b_ids, persons, group_a, group_b, items,
                  count_a, count_b, [view.entity_names[i] for i in items])
