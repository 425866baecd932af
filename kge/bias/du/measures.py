"""Du et al.: group bias ``B_gr`` and individual bias ``B_in`` per occupation (paper §3.1-3.3)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import torch

from wgbcore.provenance import package_version

from kge.bias.context import check_model
from kge.bias.du.groups import (MEASURE_GROUP, MEASURE_INDIVIDUAL, MEASURE_INDIVIDUAL_VANILLA, SCALES, DuGroups,
                                build_groups, hessian_diagonal)
from kge.bias.du.psi import _device, _ids, psi, psi_grads, resolve_psi

@dataclass
class DuResult:
    """Per-occupation Du et al. scores plus the per-pair individual biases."""

    model: str
    groups: DuGroups = field(repr=False)
    items: np.ndarray  # [K] occupation entity ids
    group_bias: np.ndarray  # [K] B_gr
    individual_weighted: np.ndarray  # [K] mean_A B_in + mean_B B_in
    individual_vanilla: np.ndarray  # [K] mean B_in
    count_a: np.ndarray
    count_b: np.ndarray
    pair_bias: np.ndarray | None  # [P] B_in per (person, occupation) pair
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=package_version)

    def rows(self, measures: Iterable[str] = (MEASURE_GROUP, MEASURE_INDIVIDUAL, MEASURE_INDIVIDUAL_VANILLA)
             ) -> list[dict]:
        """Report rows ``{measure, model, sensitive_relation, a, b, target_relation, item, score,
        count_a, count_b}``, one per measure x occupation."""
        ents = self.groups.names["entity_names"]
        source = {MEASURE_GROUP: self.group_bias, MEASURE_INDIVIDUAL: self.individual_weighted,
                  MEASURE_INDIVIDUAL_VANILLA: self.individual_vanilla}
        rows = []
        for m in measures:
            if m not in source:
                raise ValueError(f"unknown Du measure {m!r}; expected one of {list(source)}")
            vals = source[m]
            for i, item in enumerate(self.items):
                rows.append({
                    "measure": m, "model": self.model,
                    "sensitive_relation": self.groups.names["sensitive_relation"],
                    "a": self.groups.names["a"], "b": self.groups.names["b"],
                    "target_relation": self.groups.names["target_relation"],
                    "item": ents[int(item)], "score": float(vals[i]),
                    "count_a": int(self.count_a[i]), "count_b": int(self.count_b[i]),
                })
        return rows


def _model_name(model) -> str:
    return getattr(model, "name", type(model).__name__)


def _sums_by_item(groups: DuGroups, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(items, count_a, count_b, sum_a, sum_b)``: per occupation (sorted ids), the numbers of its
    (person, occupation) pairs with value a / b and the sums of ``values`` (one per pair) over them."""
    items, inv = np.unique(groups.pair_item, return_inverse=True)
    is_a = groups.pair_is_a
    n = len(items)
    return (items, np.bincount(inv, weights=is_a, minlength=n), np.bincount(inv, weights=~is_a, minlength=n),
            np.bincount(inv, weights=values * is_a, minlength=n), np.bincount(inv, weights=values * ~is_a, minlength=n))


def group_bias(model, groups: DuGroups, *, min_count: int = 1, psi_kind: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(items, B_gr, count_a, count_b)`` for every occupation with >= ``min_count`` persons of
    each value (vectorised over all pairs)."""
    dev = _device(model)
    s, o = _ids(groups.pair_person, dev), _ids(groups.pair_item, dev)
    r = torch.full_like(s, groups.target_relation)
    err = psi(model, s, r, o, kind=psi_kind).double().cpu().numpy()
    items, ca, cb, sa, sb = _sums_by_item(groups, err)
    keep = (ca >= min_count) & (cb >= min_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        bgr = sb / cb - sa / ca
    return items[keep], bgr[keep], ca[keep].astype(int), cb[keep].astype(int)


def pair_individual_bias(model, groups: DuGroups, *, hessian: str = "du", damping: float = 1.0,
                         scale: str = "consistent", psi_kind: str = "auto") -> np.ndarray:
    """``B_in`` for every (person, occupation) pair (Corollary 4 through autograd), ``[P]``."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; expected one of {list(SCALES)}")
    alpha = hessian_diagonal(groups, hessian=hessian, damping=damping)
    dev = _device(model)
    persons, pinv = np.unique(groups.pair_person, return_inverse=True)
    ps = _ids(persons, dev)
    rg = torch.full_like(ps, groups.sensitive_relation)
    ga, _ = psi_grads(model, ps, rg, torch.full_like(ps, groups.a), kind=psi_kind, need_tail=False)
    gb, _ = psi_grads(model, ps, rg, torch.full_like(ps, groups.b), kind=psi_kind, need_tail=False)
    diff = ga - gb  # [persons, d]
    s, o = _ids(groups.pair_person, dev), _ids(groups.pair_item, dev)
    go, _ = psi_grads(model, s, torch.full_like(s, groups.target_relation), o, kind=psi_kind, need_tail=False)
    pinv_t = _ids(pinv, dev)
    val = (go * diff[pinv_t]).sum(-1).double().cpu().numpy() / alpha[groups.pair_person]
    if scale == "paper":
        val = val / groups.num_triples
    return val


def transe_individual_bias(entity: np.ndarray, relation: np.ndarray, groups: DuGroups, *,
                           hessian: str = "du", damping: float = 1.0, scale: str = "consistent") -> np.ndarray:
    """The paper's closed form (Eq. 5) for squared-L2 TransE: ``-4 (s + r_p - o)^T (a - b) / alpha_s``.

    Pure numpy on embedding matrices; equals :func:`pair_individual_bias` for a TransE whose score
    is ``-||h + r - t||_2^2``.
    """
    alpha = hessian_diagonal(groups, hessian=hessian, damping=damping)
    e = np.asarray(entity, dtype=np.float64)
    resid = e[groups.pair_person] + np.asarray(relation, dtype=np.float64)[groups.target_relation] - e[groups.pair_item]
    val = -4.0 * (resid @ (e[groups.a] - e[groups.b])) / alpha[groups.pair_person]
    return val / groups.num_triples if scale == "paper" else val


def du_bias(model, graph: Any = None, *, groups: DuGroups | None = None, sensitive_relation: str | int = "gender",
            a: str | int = "male", b: str | int = "female", target_relation: str | int = "profession",
            hessian: str = "du", damping: float = 1.0, scale: str = "consistent", min_count: int = 1,
            individual: bool = True, psi_kind: str = "auto") -> DuResult:
    """All Du et al. measures for one model: B_gr, and B_in per pair aggregated per occupation."""
    if groups is None:
        if graph is None:
            raise ValueError("pass a graph or prebuilt groups")
        groups = build_groups(graph, sensitive_relation, a, b, target_relation)
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count}")
    check_model(model, groups.num_entities)
    items, bgr, ca, cb = group_bias(model, groups, min_count=min_count, psi_kind=psi_kind)
    k = len(items)
    w_ind = np.full(k, np.nan)
    v_ind = np.full(k, np.nan)
    pair = None
    if individual:
        pair = pair_individual_bias(model, groups, hessian=hessian, damping=damping, scale=scale, psi_kind=psi_kind)
        all_items, na, nb, sa, sb = _sums_by_item(groups, pair)
        pos = np.searchsorted(all_items, items)
        with np.errstate(invalid="ignore", divide="ignore"):
            w_ind = (sa / na + sb / nb)[pos]
            v_ind = ((sa + sb) / (na + nb))[pos]
    cfg = {"sensitive_relation": groups.names["sensitive_relation"], "a": groups.names["a"],
           "b": groups.names["b"], "target_relation": groups.names["target_relation"], "hessian": hessian,
           "damping": damping, "scale": scale, "min_count": min_count, "psi": resolve_psi(model, psi_kind)}
    return DuResult(model=_model_name(model), groups=groups, items=items, group_bias=bgr,
                    individual_weighted=w_ind, individual_vanilla=v_ind, count_a=ca, count_b=cb,
                    pair_bias=pair, config=cfg)
