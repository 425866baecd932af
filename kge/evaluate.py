"""Filtered link-prediction evaluation: MRR and Hits@k, head and tail side, vectorised on the
model's device (CPU or CUDA).

For a test triple ``(h, r, t)`` the tail-side rank of ``t`` is computed among all entities after
removing (filtering) every other known tail ``t'`` with ``(h, r, t')`` in train, valid or test;
the head side likewise. Ties count half (the "realistic" rank of PyKEEN:
``1 + #better + #equal / 2``).

Speed: queries are deduplicated (FB13's 23,733 test triples hold 22,827 distinct ``(h, r)`` but
only 1,126 distinct ``(r, t)``), each distinct query is scored against all entities once with the
model's one-to-all fast path (``score_t`` / ``score_h``, a matrix product for most models; or
``rank_scores_t`` / ``rank_scores_h`` where a model has them: scores that are a strictly increasing
function of the true score within each row, e.g. ``2 q.t - |t|^2`` for L2 distances), the
filter is a CSR index (sorted query keys -> known answers) applied by one scatter per chunk.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from kge.graph import KnowledgeGraph

__all__ = ["FilterIndex", "RankingMetrics", "filtered_ranks", "rank_metrics", "evaluate", "evaluate_triples", "type_masks"]

HITS_AT = (1, 3, 10)


class FilterIndex:
    """CSR index of the known answers of every query, for one side.

    ``side="tail"``: key ``h * R + r`` -> known tails; ``side="head"``: key ``t * R + r`` -> heads.
    """

    def __init__(self, triples: np.ndarray, num_relations: int, side: str) -> None:
        if side not in ("head", "tail"):
            raise ValueError(f"side must be 'head' or 'tail', got {side!r}")
        triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        self.side, self.num_relations = side, num_relations
        q, a = (triples[:, 0], triples[:, 2]) if side == "tail" else (triples[:, 2], triples[:, 0])
        keys = q * num_relations + triples[:, 1]
        order = np.lexsort((a, keys))
        keys, a = keys[order], a[order]
        # drop duplicate (key, answer) pairs
        keep = np.ones(len(keys), dtype=bool)
        keep[1:] = (keys[1:] != keys[:-1]) | (a[1:] != a[:-1])
        keys, a = keys[keep], a[keep]
        self.keys, starts = np.unique(keys, return_index=True)
        self.offsets = np.append(starts, len(keys)).astype(np.int64)
        self.answers = a

    def lookup(self, query_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(row, answer)`` pairs: for each ``query_keys[row]`` every known answer."""
        query_keys = np.asarray(query_keys, dtype=np.int64)
        if len(self.keys) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        pos_c = np.minimum(np.searchsorted(self.keys, query_keys), len(self.keys) - 1)
        found = self.keys[pos_c] == query_keys
        start = np.where(found, self.offsets[pos_c], 0)
        length = np.where(found, self.offsets[pos_c + 1] - self.offsets[pos_c], 0)
        total = int(length.sum())
        rows = np.repeat(np.arange(len(query_keys)), length)
        within = np.arange(total) - np.repeat(np.cumsum(length) - length, length)
        return rows, self.answers[np.repeat(start, length) + within]


@dataclass
class RankingMetrics:
    """Link-prediction metrics over both sides (``head``/``tail`` hold each side's own)."""

    mrr: float
    hits_at_1: float
    hits_at_3: float
    hits_at_10: float
    mean_rank: float
    num_triples: int
    num_ranks: int
    filtered: bool = True
    seconds: float = 0.0
    sides: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def rank_metrics(ranks: np.ndarray) -> dict:
    ranks = np.asarray(ranks, dtype=np.float64)
    if len(ranks) == 0:
        return {"mrr": float("nan"), **{f"hits_at_{k}": float("nan") for k in HITS_AT}, "mean_rank": float("nan")}
    out = {"mrr": float(np.mean(1.0 / ranks))}
    for k in HITS_AT:
        out[f"hits_at_{k}"] = float(np.mean(ranks <= k))
    out["mean_rank"] = float(ranks.mean())
    return out


def type_masks(train: np.ndarray, num_entities: int, num_relations: int) -> dict[str, torch.Tensor]:
    """``{"head": bool [R, N], "tail": bool [R, N]}``: the entities seen on each side of each
    relation in ``train`` (OpenKE's ``type_constrain``: a query ranks only those candidates)."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    out = {}
    for side, col in (("head", 0), ("tail", 2)):
        m = torch.zeros((num_relations, num_entities), dtype=torch.bool)
        m[torch.from_numpy(train[:, 1]), torch.from_numpy(train[:, col])] = True
        out[side] = m
    return out


@torch.no_grad()
def _side_ranks(model, triples: np.ndarray, filt: FilterIndex | None, side: str, num_relations: int,
                batch_size: int, bar, allowed: torch.Tensor | None = None) -> np.ndarray:
    R = num_relations
    if side == "tail":
        q_ent, ans = triples[:, 0], triples[:, 2]
    else:
        q_ent, ans = triples[:, 2], triples[:, 0]
    keys = q_ent * R + triples[:, 1]
    uq, inv = np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(uq) + 1))
    counts = np.diff(bounds)
    ranks = np.empty(len(triples), dtype=np.float64)
    dev = model.entity.weight.device

    def T(a: np.ndarray) -> torch.Tensor:  # index arrays on the model's device
        return torch.from_numpy(a).to(dev)

    for u0 in range(0, len(uq), batch_size):
        u1 = min(u0 + batch_size, len(uq))
        qk = uq[u0:u1]
        e_ids = T(qk // R)
        r_ids = T(qk % R)
        if side == "tail":
            scores = (getattr(model, "rank_scores_t", None) or model.score_t)(e_ids, r_ids)
        else:
            scores = (getattr(model, "rank_scores_h", None) or model.score_h)(r_ids, e_ids)
        scores = scores.float().contiguous()
        sel = order[bounds[u0]:bounds[u1]]  # test triples whose query is in this chunk
        loc = inv[sel] - u0
        true = scores[T(loc), T(ans[sel])]
        if filt is not None:
            rows, cols = filt.lookup(qk)
            scores[T(rows), T(cols)] = float("-inf")
        if allowed is not None:  # candidates of another type rank below every allowed one
            scores.masked_fill_(~allowed.to(dev)[r_ids], float("-inf"))
        # realistic rank 1 + #better + #equal/2 = 1 + (sum(sign(s - s_true)) + n) / 2: one fused pass
        # (masked entries are -inf: "worse"; unfiltered, the answer itself is one "equal")
        n = scores.shape[1] - (0 if filt is not None else 1)
        multi = counts[u0:u1][loc] > 1
        # queries with several answers: gather one row per answer (in blocks)
        m_idx = np.flatnonzero(multi)
        for s0 in range(0, len(m_idx), batch_size):
            j = m_idx[s0:s0 + batch_size]
            block = scores.index_select(0, T(loc[j]))
            sgn = block.sub_(true[T(j)][:, None]).sign_().sum(1).double()
            ranks[sel[j]] = (1.0 + 0.5 * (sgn + n)).cpu().numpy()
        # queries with one answer: their score rows in place
        s_idx = np.flatnonzero(~multi)
        if len(s_idx):
            tv = torch.zeros(scores.shape[0], device=dev)
            tv[T(loc[s_idx])] = true[T(s_idx)]
            sgn = scores.sub_(tv[:, None]).sign_().sum(1).double()
            ranks[sel[s_idx]] = (1.0 + 0.5 * (sgn[T(loc[s_idx])] + n)).cpu().numpy()
        bar.update(len(sel))
    return ranks


def filtered_ranks(model, triples, filter_triples=None, num_relations: int | None = None,
                   batch_size: int = 128, sides=("head", "tail"), progress: bool | None = None,
                   type_constrain: dict | None = None) -> dict:
    """Ranks of each triple's head and tail: ``{"head": float64 [N], "tail": float64 [N]}``.

    ``filter_triples`` (e.g. ``graph.all_triples()``) are filtered out; ``None`` = raw ranks.
    ``type_constrain`` (:func:`type_masks` of the training triples): rank each answer only among
    the entities seen on that side of the relation (OpenKE's ``type_constrain=True``); the answer
    itself always counts.
    """
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    R = num_relations or getattr(model, "num_relations")
    was_training = model.training
    model.eval()
    out = {}
    bar = tqdm(total=len(triples) * len(sides), desc="evaluating", unit="rank", leave=False,
               disable=None if progress is None else not progress)
    try:
        for side in sides:
            filt = None
            if filter_triples is not None:
                filt = FilterIndex(np.concatenate([np.asarray(filter_triples).reshape(-1, 3), triples]), R, side)
            out[side] = _side_ranks(model, triples, filt, side, R, batch_size, bar,
                                    None if type_constrain is None else type_constrain[side])
    finally:
        bar.close()
        model.train(was_training)
    return out


def evaluate_triples(model, triples, filter_triples=None, num_relations=None, batch_size: int = 128,
                     progress: bool | None = None, type_constrain: dict | None = None) -> RankingMetrics:
    t0 = time.perf_counter()
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    ranks = filtered_ranks(model, triples, filter_triples, num_relations, batch_size, progress=progress,
                           type_constrain=type_constrain)
    both = np.concatenate([ranks["head"], ranks["tail"]])
    m = rank_metrics(both)
    return RankingMetrics(**m, num_triples=len(triples), num_ranks=len(both), filtered=filter_triples is not None,
                          seconds=time.perf_counter() - t0,
                          sides={s: rank_metrics(r) for s, r in ranks.items()})


def evaluate(model, graph: KnowledgeGraph, split: str = "test", filtered: bool = True, batch_size: int = 128,
             max_triples: int | None = None, seed: int = 0, progress: bool | None = None,
             type_constrain: bool = False) -> RankingMetrics:
    """Filtered (default) MRR and Hits@1/3/10 of ``model`` on a split of ``graph``, both sides.

    ``max_triples`` evaluates a seeded random subset (e.g. for quick validation). An empty split
    (or ``max_triples < 1``) is an error: its metrics would be NaN. ``type_constrain``: rank each
    answer only among the entities seen on its side of the relation in ``graph.train`` (OpenKE's
    ``type_constrain=True``).
    """
    if max_triples is not None and max_triples < 1:
        raise ValueError(f"max_triples must be >= 1, got {max_triples}")
    if model.num_entities != graph.num_entities or model.num_relations != graph.num_relations:
        raise ValueError(f"model has {model.num_entities} entities / {model.num_relations} relations but graph "
                         f"{graph.name!r} has {graph.num_entities} / {graph.num_relations}")
    triples = graph.split(split)
    if len(triples) == 0:
        raise ValueError(f"graph {graph.name!r} has no {split} triples: nothing to evaluate "
                         f"(its metrics would be NaN)")
    if max_triples is not None and len(triples) > max_triples:
        idx = np.sort(np.random.default_rng(seed).choice(len(triples), max_triples, replace=False))
        triples = triples[idx]
    if type_constrain:  # a relation with no training triple has no candidates: its ranks would mean nothing
        unseen = sorted(set(np.unique(triples[:, 1]).tolist()) - set(np.unique(graph.train[:, 1]).tolist()))
        if unseen:
            names = [graph.relations[r] for r in unseen[:10]]
            raise ValueError(f"graph {graph.name!r}: type-constrained ranking takes each relation's candidates from "
                             f"its training triples, but {split} relation(s) {names} never occur in training (their "
                             f"ranks would mean nothing); evaluate without --type-constrain")
    masks = type_masks(graph.train, graph.num_entities, graph.num_relations) if type_constrain else None
    return evaluate_triples(model, triples, graph.all_triples() if filtered else None, graph.num_relations,
                            batch_size, progress=progress, type_constrain=masks)
