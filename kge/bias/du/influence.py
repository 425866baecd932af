"""Du et al.: the influence of each training triple on ``B_gr`` (paper §3.1), with one shared
cache of per-triple gradients for many occupations."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

from wgbcore.provenance import package_version

from kge.bias.context import check_model
from kge.bias.du.groups import DuGroups, _lookup, build_groups, hessian_diagonal, train_triples
from kge.bias.du.measures import group_bias
from kge.bias.du.psi import _device, _ids, psi, psi_grads, resolve_psi

@dataclass
class InfluenceResult:
    """``delta`` = first-order change of ``B_gr(item)`` when training triple ``triple_index`` is
    removed and the model retrained; only triples with non-zero influence are listed."""

    item: int
    group_bias: float
    triple_index: np.ndarray  # [K] row into the training triples
    delta: np.ndarray  # [K]
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=package_version)

    def debiasing_order(self, exclude: np.ndarray | None = None) -> np.ndarray:
        """Training-row indices whose removal moves ``B_gr`` most towards 0, best first."""
        direction = -np.sign(self.group_bias) or -1.0
        gain = direction * self.delta
        order = np.argsort(-gain, kind="stable")
        order = order[gain[order] > 0]
        idx = self.triple_index[order]
        if exclude is not None and len(exclude):
            idx = idx[~np.isin(idx, exclude)]
        return idx

    def predicted_change(self, removed: np.ndarray) -> float:
        """Summed influence of removing the given training rows (group influence, Koh & Liang)."""
        m = np.isin(self.triple_index, removed)
        return float(self.delta[m].sum())


class TripleGradients:
    """Per-training-triple gradients of the error w.r.t. head and tail (``[N, d]`` each), computed
    once, plus an entity -> triple-rows index: makes the influence of every triple on every
    occupation's ``B_gr`` one gather per occupation (see :func:`influence_all`)."""

    def __init__(self, model, graph: Any, *, psi_kind: str = "auto", chunk: int = 65536) -> None:
        self.triples = train_triples(graph)
        dev = _device(model)
        t = self.triples
        self.gh, self.gt = psi_grads(model, _ids(t[:, 0], dev), _ids(t[:, 1], dev), _ids(t[:, 2], dev),
                                     kind=psi_kind, chunk=chunk)
        n = int(max(t[:, [0, 2]].max() + 1, 1)) if len(t) else 1
        ends = np.concatenate([t[:, 0], t[:, 2]])
        rows = np.concatenate([np.arange(len(t)), np.arange(len(t))])
        order = np.argsort(ends, kind="stable")
        self._rows = rows[order]
        self._ptr = np.searchsorted(ends[order], np.arange(n + 1))
        self.num_entities_seen = n

    def rows_touching(self, entities: np.ndarray) -> np.ndarray:
        ents = np.asarray(entities)
        ents = ents[ents < self.num_entities_seen]
        if not len(ents):
            return np.zeros(0, np.int64)
        parts = [self._rows[self._ptr[e]:self._ptr[e + 1]] for e in ents]
        return np.unique(np.concatenate(parts))


def triple_influence(model, graph: Any, item: str | int, *, groups: DuGroups | None = None,
                     sensitive_relation: str | int = "gender", a: str | int = "male", b: str | int = "female",
                     target_relation: str | int = "profession", hessian: str = "du", damping: float = 1.0,
                     scale: str = "consistent", psi_kind: str = "auto",
                     cache: "TripleGradients | None" = None) -> InfluenceResult:
    """``delta_z B_gr(item)`` for every training triple ``z`` touching ``item`` or its persons.

    ``cache`` (:class:`TripleGradients`) reuses per-triple gradients across occupations."""
    if groups is None:
        groups = build_groups(graph, sensitive_relation, a, b, target_relation)
    ents = groups.names["entity_names"]
    o = _lookup(ents, item, "occupation") if not isinstance(item, (int, np.integer)) else int(item)
    sel = groups.pair_item == o
    if not (groups.pair_is_a[sel].any() and (~groups.pair_is_a[sel]).any()):
        raise ValueError(f"occupation {ents[o]!r} needs persons of both {groups.names['a']!r} and "
                         f"{groups.names['b']!r} in the training graph")
    check_model(model, groups.num_entities)
    alpha = torch.as_tensor(hessian_diagonal(groups, hessian=hessian, damping=damping))
    dev = _device(model)
    persons, is_a = groups.pair_person[sel], groups.pair_is_a[sel]
    na, nb = is_a.sum(), (~is_a).sum()
    s = _ids(persons, dev)
    oo = torch.full_like(s, o)
    r = torch.full_like(s, groups.target_relation)
    err = psi(model, s, r, oo, kind=psi_kind).double().cpu().numpy()
    bgr = float(err[~is_a].mean() - err[is_a].mean())
    gs, go = psi_grads(model, s, r, oo, kind=psi_kind)
    coef = torch.as_tensor(np.where(is_a, -1.0 / na, 1.0 / nb), dtype=gs.dtype, device=dev)[:, None]
    # grad of B_gr per support entity (persons, then o), divided by alpha -> v_e = H^-1 grad B_gr
    support = np.append(persons, o)
    uniq, inv = np.unique(support, return_inverse=True)
    v = torch.zeros(len(uniq), gs.shape[1], dtype=gs.dtype, device=dev)
    v[_ids(inv[:-1], dev)] = coef * gs  # persons of one occupation are distinct (pairs are unique)
    v[inv[-1]] += (coef * go).sum(0)
    v = v / alpha[uniq].to(v.dtype).to(dev)[:, None]
    if cache is None:
        tr = train_triples(graph)
        rows = np.flatnonzero(np.isin(tr[:, 0], uniq) | np.isin(tr[:, 2], uniq))
        z = tr[rows]
        gh, gt = psi_grads(model, _ids(z[:, 0], dev), _ids(z[:, 1], dev), _ids(z[:, 2], dev), kind=psi_kind)
    else:
        rows = cache.rows_touching(uniq)
        z = cache.triples[rows]
        gh, gt = cache.gh[_ids(rows, cache.gh.device)], cache.gt[_ids(rows, cache.gt.device)]
    lut = np.full(groups.num_entities, -1, np.int64)
    lut[uniq] = np.arange(len(uniq))
    vz = torch.cat([v, torch.zeros(1, v.shape[1], dtype=v.dtype, device=dev)])  # row -1 -> zeros
    hi, ti = _ids(lut[z[:, 0]], dev), _ids(lut[z[:, 2]], dev)
    delta = ((vz[hi] * gh).sum(-1) + (vz[ti] * gt).sum(-1)).double().cpu().numpy()
    if scale == "paper":
        delta = delta / groups.num_triples
    nz = delta != 0
    return InfluenceResult(item=o, group_bias=bgr, triple_index=rows[nz], delta=delta[nz],
                           config={"item": ents[o], "hessian": hessian, "damping": damping, "scale": scale,
                                   "psi": resolve_psi(model, psi_kind),
                                   **{k: groups.names[k] for k in ("sensitive_relation", "a", "b", "target_relation")}})


def influence_all(model, graph: Any, items: Sequence[str | int] | None = None, *, groups: DuGroups | None = None,
                  hessian: str = "du", damping: float = 1.0, scale: str = "consistent", psi_kind: str = "auto",
                  min_count: int = 1, progress: bool | None = None, **names) -> list[InfluenceResult]:
    """:func:`triple_influence` for many occupations (default: every one with >= ``min_count``
    persons of each value), sharing one :class:`TripleGradients`."""
    from tqdm.auto import tqdm

    groups = groups if groups is not None else build_groups(graph, **names)
    if items is None:
        its, _, ca, cb = group_bias(model, groups, min_count=min_count, psi_kind=psi_kind)
        items = [int(i) for i in its]
    cache = TripleGradients(model, graph, psi_kind=psi_kind)
    return [triple_influence(model, graph, it, groups=groups, hessian=hessian, damping=damping, scale=scale,
                             psi_kind=psi_kind, cache=cache)
            for it in tqdm(items, desc="influence", disable=None if progress is None else not progress)]
