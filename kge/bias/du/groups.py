"""Du et al.: the persons and occupations the measures are computed over.

:func:`build_groups` resolves the names of a graph (any object with training triples and
entity/relation name lists: see :func:`train_triples`) to ids and collects the (person,
occupation) pairs; :func:`hessian_diagonal` is ``alpha_e`` per entity (Lemma 1 + Remark 3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

MEASURE_GROUP = "du_group"
MEASURE_INDIVIDUAL = "du_individual"
MEASURE_INDIVIDUAL_VANILLA = "du_individual_vanilla"

HESSIANS = ("du", "degree")
SCALES = ("consistent", "paper")


def _first_attr(obj: Any, names: Sequence[str]) -> Any:
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(f"{type(obj).__name__} has none of the attributes {list(names)}")


def train_triples(graph: Any) -> np.ndarray:
    """The training triples ``[N, 3]`` (head, relation, tail) of ``graph`` as int64."""
    splits = getattr(graph, "splits", None)  # kge.bias.context.GraphView
    arr = splits["train"] if isinstance(splits, dict) and "train" in splits else \
        _first_attr(graph, ("train", "train_triples"))
    if isinstance(arr, torch.Tensor):
        arr = arr.cpu().numpy()
    arr = np.asarray(arr, dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"training triples must have shape [N, 3], got {arr.shape}")
    return arr


def _name_list(graph: Any, kind: str) -> list[str]:
    names = _first_attr(graph, (f"{kind}_names", f"{kind}s" if kind == "relation" else "entities"))
    if isinstance(names, dict):  # name -> id
        out = [""] * len(names)
        for name, idx in names.items():
            out[int(idx)] = name
        return out
    return list(names)


def _lookup(names: list[str], name: str | int, what: str) -> int:
    if isinstance(name, (int, np.integer)):
        if not 0 <= int(name) < len(names):
            raise ValueError(f"{what} id {name} out of range [0, {len(names)})")
        return int(name)
    try:
        return names.index(name)
    except ValueError:
        close = [n for n in names if name.lower() in n.lower()][:10]
        hint = f"; similar: {close}" if close else (f"; expected one of {names}" if len(names) <= 50 else "")
        raise ValueError(f"{what} {name!r} is not in the graph{hint}") from None


@dataclass
class DuGroups:
    """Persons with one training gender value (``a`` or ``b``) and their training occupations."""

    sensitive_relation: int
    target_relation: int
    a: int  # entity id of value a (e.g. male)
    b: int  # entity id of value b (e.g. female)
    pair_person: np.ndarray  # [P] person entity id per (person, occupation) pair
    pair_item: np.ndarray  # [P] occupation entity id
    pair_is_a: np.ndarray  # [P] bool, True where the person has value a
    degree: np.ndarray  # [E] N_e: occurrences of each entity in the training triples
    num_triples: int
    num_entities: int
    names: dict[str, str] = field(default_factory=dict)  # human-readable a/b/relations

    @property
    def items(self) -> np.ndarray:
        return np.unique(self.pair_item)


def build_groups(graph: Any, sensitive_relation: str | int = "gender", a: str | int = "male",
                 b: str | int = "female", target_relation: str | int = "profession") -> DuGroups:
    """Resolve names to ids and collect the (person, occupation) pairs of the training graph.

    Persons carrying both ``a`` and ``b`` are dropped. Raises ``ValueError`` naming any relation or
    value that is not in the graph, or a sensitive relation that never links a person to ``a``/``b``.
    """
    ents, rels = _name_list(graph, "entity"), _name_list(graph, "relation")
    rg = _lookup(rels, sensitive_relation, "sensitive relation")
    rp = _lookup(rels, target_relation, "target relation")
    ea = _lookup(ents, a, "attribute value a")
    eb = _lookup(ents, b, "attribute value b")
    if ea == eb:
        raise ValueError(f"attribute values a and b must differ, both are {a!r}")
    tr = train_triples(graph)
    num_entities = len(ents)
    if tr.size and (tr[:, [0, 2]].max() >= num_entities or tr.min() < 0):
        raise ValueError("training triples hold entity ids outside the graph's entity list")
    g = tr[tr[:, 1] == rg]
    has_a = np.zeros(num_entities, bool)
    has_b = np.zeros(num_entities, bool)
    has_a[g[g[:, 2] == ea, 0]] = True
    has_b[g[g[:, 2] == eb, 0]] = True
    if not has_a.any() or not has_b.any():
        raise ValueError(f"no training triple (person, {rels[rg]!r}, {ents[ea]!r}) or "
                         f"(person, {rels[rg]!r}, {ents[eb]!r}): nothing to measure")
    only_a, only_b = has_a & ~has_b, has_b & ~has_a
    p = tr[tr[:, 1] == rp]
    p = np.unique(p, axis=0)
    keep = only_a[p[:, 0]] | only_b[p[:, 0]]
    p = p[keep]
    degree = np.bincount(tr[:, 0], minlength=num_entities) + np.bincount(tr[:, 2], minlength=num_entities)
    return DuGroups(
        sensitive_relation=rg, target_relation=rp, a=ea, b=eb,
        pair_person=p[:, 0].copy(), pair_item=p[:, 2].copy(), pair_is_a=only_a[p[:, 0]].copy(),
        degree=degree.astype(np.float64), num_triples=len(tr), num_entities=num_entities,
        names={"sensitive_relation": rels[rg], "target_relation": rels[rp], "a": ents[ea], "b": ents[eb],
               "entity_names": ents},
    )


def hessian_diagonal(groups: DuGroups, *, hessian: str = "du", damping: float = 1.0) -> np.ndarray:
    """``alpha_e`` per entity (Lemma 1 + Remark 3), damped, strictly positive."""
    if hessian not in HESSIANS:
        raise ValueError(f"unknown hessian {hessian!r}; expected one of {list(HESSIANS)}")
    if damping <= 0:
        raise ValueError(f"damping must be > 0, got {damping}")
    n = groups.degree
    if hessian == "du":
        return np.maximum(n - 2.0 * groups.num_triples / groups.num_entities, 0.0) + damping
    return n + damping
