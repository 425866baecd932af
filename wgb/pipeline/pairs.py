"""The candidate pairs of a run and the names they are joined by (:func:`norm`: as the knowledge
graph stores them).

The nulls need each person's *opportunities*: every (person, tail) pair the extractor scores (one
evaluation bag, :func:`relext.model.bags.evaluation_bags`) with its gold relations (a *negative* pair has
none: NA), and what the graph holds for it. :func:`candidate_pairs` reads them from the benchmark's
rows of the splits the run extracts (grouped as the evaluation bags are), :func:`pairs_of` keeps
those of the study's persons, and :func:`pair_outcomes` joins a graph's triples to them by
(person, tail): :class:`Pairs`. :func:`wgb.pipeline.propagation.build_study` does this for every
graph of a run, :func:`wgb.pipeline.propagation.study_from_pairs` builds a study from pairs alone
(simulations, tests), and :mod:`wgb.pipeline.nulls` re-places each null's errors on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from wgb.pipeline.config import TEST_SPLITS


def norm(s: Any) -> str:
    """Names as the knowledge graph stores them (runs of whitespace are one space)."""
    return " ".join(str(s).split())


@dataclass
class Pairs:
    """The candidate pairs of a study: every (person, tail) pair the extractors score, the same
    for every seed and extractor (the test articles are never transformed), with what each graph
    holds for it.

    ``entity`` (P,) int: the person's row in the study; ``gold`` (P, R) bool: the pair's gold
    relations over ``RELATIONS`` (column 0 alone: a negative pair); ``tail`` (P,) str (as the graph
    stores names, :func:`norm`); ``extracted[seed][variant]`` (P, R) bool: the relations of the
    extracted graph's triples for the pair (column 0 always False)."""

    entity: np.ndarray
    gold: np.ndarray
    tail: np.ndarray
    extracted: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.entity = np.asarray(self.entity, dtype=np.int64)
        self.gold = np.asarray(self.gold, dtype=bool)
        self.tail = np.asarray(self.tail, dtype=object)
        n = len(self.entity)
        if self.gold.shape[0] != n or self.tail.shape != (n,):
            raise ValueError(f"pairs: {n} entities, gold {self.gold.shape}, tails {self.tail.shape}")
        if n and not self.gold.any(1).all():
            raise ValueError("pairs: a pair without a gold label (a negative pair has NA, column 0)")
        for s, by in self.extracted.items():
            for v, x in by.items():
                if x.shape != self.gold.shape:
                    raise ValueError(f"pairs: seed {s} / {v}: extracted {x.shape}, expected {self.gold.shape}")

    def __len__(self) -> int:
        return len(self.entity)

    def kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """(kind (P,) int, table (T, R) bool): a pair's *kind* is its set of gold relations
        (negative, one relation, or rarely two)."""
        table, kind = np.unique(self.gold, axis=0, return_inverse=True)
        return np.asarray(kind).reshape(-1), table

    def subset(self, keep: np.ndarray) -> "Pairs":
        """The pairs of the persons ``keep`` (E,) bool, renumbered as in ``counts.subset``."""
        keep = np.asarray(keep, bool)
        row = np.cumsum(keep) - 1
        sel = keep[self.entity]
        return Pairs(row[self.entity[sel]], self.gold[sel], self.tail[sel],
                     {s: {v: x[sel] for v, x in by.items()} for s, by in self.extracted.items()})


def candidate_pairs(dataset, splits: Sequence[str] = TEST_SPLITS) -> list[tuple[str, str, tuple[int, ...]]]:
    """The candidate pairs of ``splits``: (head, tail, gold relation ids) per (head, tail), names as
    the graph stores them; the pair's labels are its positive relations, ``(0,)`` (NA) when it
    has none: the evaluation bags of :func:`relext.model.bags.evaluation_bags`, one per entity pair."""
    rels: dict[tuple[str, str], set[int]] = {}
    for split in splits:
        for row in dataset[split].select_columns(["head", "tail", "relation"]):
            if not row["tail"]:
                continue
            rels.setdefault((norm(row["head"]), norm(row["tail"])), set()).add(int(row["relation"]))
    return [(h, t, tuple(sorted(r - {0})) or (0,)) for (h, t), r in rels.items()]


def pairs_of(candidates: Sequence[tuple[str, str, Sequence[int]]], entity_ids: Sequence[str],
             head_entity: Mapping[str, str]) -> tuple[Pairs, int]:
    """:class:`Pairs` (no graph yet) of the candidates whose head is a person of the study; and
    the number left out (a head of no person)."""
    from wikigenderbias.schema import RELATIONS

    pos = {e: i for i, e in enumerate(entity_ids)}
    ent, tails, labels, left = [], [], [], 0
    for h, t, labs in candidates:
        i = pos.get(head_entity.get(norm(h), ""))
        if i is None:
            left += 1
            continue
        ent.append(i)
        tails.append(norm(t))
        labels.append(labs)
    gold = np.zeros((len(ent), len(RELATIONS)), dtype=bool)
    for k, labs in enumerate(labels):
        gold[k, list(labs)] = True
    return Pairs(np.array(ent, dtype=np.int64), gold, np.array(tails, dtype=object)), left


def pair_outcomes(pairs: Pairs, triples: Sequence[Mapping], entity_ids: Sequence[str],
                  head_entity: Mapping[str, str]) -> tuple[np.ndarray, int]:
    """(P, R) bool: the relations ``triples`` hold for each candidate pair, joined by (person,
    tail) as :func:`wgb.pipeline.propagation.graph_entity_counts` maps heads; and the number of
    triples of a person that match no candidate pair (0 for triples extracted from the same bags)."""
    from wikigenderbias.schema import RELATIONS

    pos = {e: i for i, e in enumerate(entity_ids)}
    rel = {r: j for j, r in enumerate(RELATIONS)}
    row = {(int(e), t): k for k, (e, t) in enumerate(zip(pairs.entity.tolist(), pairs.tail.tolist()))}
    out = np.zeros(pairs.gold.shape, dtype=bool)
    unpaired = 0
    for t in triples:
        i = pos.get(head_entity.get(norm(t["head"]), ""))
        j = rel.get(t["relation"])
        if i is None or not j:
            continue
        k = row.get((i, norm(t["tail"])))
        if k is None:
            unpaired += 1
        else:
            out[k, j] = True
    return out, unpaired
