"""Du et al. 2022, "Understanding Gender Bias in Knowledge Base Embeddings".

What this module computes (``psi`` is the link-prediction *error*, i.e. ``-model.score_emb``, so it
works for every registered model; for TransE with squared L2 it is the paper's ``||h + r - t||^2``):

* **Group bias** of an occupation ``o`` (paper §3.1)::

      B_gr(o) = mean_{s in B(o)} psi(s, r_p, o) - mean_{s in A(o)} psi(s, r_p, o)

  ``A(o)`` / ``B(o)``: persons whose training gender triple is ``a`` / ``b`` (paper: male /
  female) and who have a training triple ``(s, r_p, o)``. Positive = biased towards ``a``.

* **Individual bias** of ``(s, r_p, o)`` (paper §3.2, Corollary 4): the change of
  ``psi(s, r_p, o)`` when ``s``'s gender triple is flipped and the model retrained, estimated by
  the influence function with the diagonal TransE Hessian (Lemma 1 / Remark 2)::

      B_in(s, o) = psi|_b - psi|_a
                 ~ <grad_s psi(s, r_p, o), grad_s psi(s, r_g, a) - grad_s psi(s, r_g, b)> / alpha_s

  For squared-L2 TransE this is exactly the paper's closed form
  ``-4 (s + r_p - o)^T (a - b) / alpha_s`` (see :func:`transe_individual_bias`). Gradients are taken
  through the model's own ``score_emb`` with autograd, vectorised over all pairs at once, so the
  same code runs on every model (for non-TransE models the diagonal Hessian is the TransE-derived
  approximation, not an exact one).

  ``alpha_e = N_e - 2|G|/|E|`` (expected Hessian of the margin loss with one uniformly corrupted
  negative per positive, ``N_e`` = degree of ``e`` in the training graph); it can be zero or
  negative for low-degree entities, so (Remark 3) we add a damping ``lambda``; with
  ``hessian="du"`` we use ``max(alpha_e, 0) + lambda`` (negative values would flip signs), with
  ``hessian="degree"`` ``N_e + lambda`` (no negative-sample term: exact when negatives are past the
  margin, as at convergence).

  **Scale.** Removing a training triple ``z`` from the *summed* loss moves the optimum by
  ``H_sum^{-1} grad L(z)``, and ``alpha_e`` above is a coefficient of ``H_sum``; the paper's
  Eq. 5 additionally divides by ``|G|`` (it mixes the averaged-loss ``epsilon = -1/|G|`` with the
  summed-loss Hessian). ``scale="consistent"`` (default) omits that factor, ``scale="paper"``
  applies it. It is a constant factor: rankings and correlations are identical.

* **Aggregation** per occupation: vanilla mean of ``B_in`` and the paper's gender-weighted
  average ``mean_{A(o)} B_in + mean_{B(o)} B_in`` (§3.3, printed as the sum of the two means).

* **Influence of each training triple on B_gr** (§3.1)::

      delta_z B_gr = sum_{e in {h, t}} <grad_e B_gr, grad_e psi(z)> / alpha_e

  = the first-order change of ``B_gr`` when ``z`` is removed and the model retrained (positive =
  removal pushes ``B_gr`` towards ``a``). Relation parameters are left out: their expected Hessian
  block is zero (Lemma 1), so only triples whose head or tail takes part in ``B_gr`` (``o`` and
  its persons) have non-zero influence, as the paper states. The negative sample paired with ``z``
  is not stored by our trainer and is left out (in expectation it touches ``B_gr``'s entities with
  probability ``~|persons| / |E|``).

* **Debiasing** (§4.3): adding ``c * |A - B|`` dummy entities linked only to the minority gender
  and ``o`` (``c = 0.5``, at most 10,000 per occupation), or removing the ``k`` training triples
  whose removal moves ``B_gr`` most towards zero; both followed by retraining (any
  ``train_fn(graph) -> model``, by default :func:`kge.train.train`).

* **Validation** (§4.2): remove the top-``k`` triples for several ``k``, retrain, and correlate the
  summed predicted ``delta_z B_gr`` with the real change of ``B_gr`` (Pearson r).
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import torch

MEASURE_GROUP = "du_group"
MEASURE_INDIVIDUAL = "du_individual"
MEASURE_INDIVIDUAL_VANILLA = "du_individual_vanilla"

HESSIANS = ("du", "degree")
SCALES = ("consistent", "paper")


def _version() -> str:
    try:
        return importlib.metadata.version("wgb")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "unknown"


# ---------------------------------------------------------------------------------------------
# graph access (kept small so any object with train triples and name lists works)
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# the persons / occupations the measures are computed over
# ---------------------------------------------------------------------------------------------
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


def check_model(model, groups: DuGroups) -> None:
    """Embeddings whose entity count differs from the graph's are an error naming both."""
    n = int(model.entity.weight.shape[0])
    if n != groups.num_entities:
        raise ValueError(f"embeddings have {n} entities but the graph has {groups.num_entities}; "
                         "were they trained on another graph?")


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


# ---------------------------------------------------------------------------------------------
# psi and its gradients, vectorised
# ---------------------------------------------------------------------------------------------
PSIS = ("auto", "negscore", "squared")


def _entity_weight(model) -> torch.Tensor:
    return model.entity.weight.detach()


def _device(model) -> torch.device:
    return model.entity.weight.device


def resolve_psi(model, psi: str = "auto") -> str:
    """The link-prediction error used: ``negscore`` = ``-score``; ``squared`` = ``score^2`` (for a
    distance model, the squared distance: the paper's ``||h + r - t||_2^2`` for L2 TransE).
    ``auto``: ``squared`` for TransE with the L2 norm, ``negscore`` for every other model."""
    if psi not in PSIS:
        raise ValueError(f"unknown psi {psi!r}; expected one of {list(PSIS)}")
    if psi != "auto":
        return psi
    if getattr(model, "name", "") == "transe" and getattr(model, "p_norm", 2) == 2:
        return "squared"
    return "negscore"


def _error(model, hv, r, tv, psi: str) -> torch.Tensor:
    s = model.score_emb(hv, r, tv)
    return s * s if psi == "squared" else -s


def psi(model, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, *, kind: str = "auto",
        chunk: int = 65536) -> torch.Tensor:
    """Link-prediction error of id triples (see :func:`resolve_psi`), without gradients, chunked."""
    kind = resolve_psi(model, kind)
    w = _entity_weight(model)
    out = []
    with torch.no_grad():
        for i in range(0, len(h), chunk):
            out.append(_error(model, w[h[i:i + chunk]], r[i:i + chunk], w[t[i:i + chunk]], kind))
    return torch.cat(out) if out else torch.zeros(0, dtype=w.dtype)


def psi_grads(model, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, *, kind: str = "auto",
              chunk: int = 65536, need_tail: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-triple gradients of the error w.r.t. the head and tail vectors, ``[N, entity_dim]`` each.

    Each row's head/tail vector is its own leaf, so one backward pass gives all per-triple
    gradients at once. Model parameters get no gradient.
    """
    kind = resolve_psi(model, kind)
    w = _entity_weight(model)
    gh, gt = [], []
    for i in range(0, len(h), chunk):
        hv = w[h[i:i + chunk]].clone().requires_grad_(True)
        tv = w[t[i:i + chunk]].clone().requires_grad_(need_tail)
        with torch.enable_grad():
            val = _error(model, hv, r[i:i + chunk], tv, kind)
            grads = torch.autograd.grad(val.sum(), [hv, tv] if need_tail else [hv])
        gh.append(grads[0])
        if need_tail:
            gt.append(grads[1])
    if not gh:
        z = torch.zeros(0, w.shape[1], dtype=w.dtype)
        return z, (z if need_tail else None)
    return torch.cat(gh), (torch.cat(gt) if need_tail else None)


def _ids(x: np.ndarray, device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.int64), device=device)


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
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
    version: str = field(default_factory=_version)

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


def group_bias(model, groups: DuGroups, *, min_count: int = 1, psi_kind: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(items, B_gr, count_a, count_b)`` for every occupation with >= ``min_count`` persons of
    each value (vectorised over all pairs)."""
    dev = _device(model)
    s, o = _ids(groups.pair_person, dev), _ids(groups.pair_item, dev)
    r = torch.full_like(s, groups.target_relation)
    err = psi(model, s, r, o, kind=psi_kind).double().cpu().numpy()
    items, inv = np.unique(groups.pair_item, return_inverse=True)
    is_a = groups.pair_is_a
    ca = np.bincount(inv, weights=is_a, minlength=len(items))
    cb = np.bincount(inv, weights=~is_a, minlength=len(items))
    sa = np.bincount(inv, weights=err * is_a, minlength=len(items))
    sb = np.bincount(inv, weights=err * ~is_a, minlength=len(items))
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
    check_model(model, groups)
    items, bgr, ca, cb = group_bias(model, groups, min_count=min_count, psi_kind=psi_kind)
    k = len(items)
    w_ind = np.full(k, np.nan)
    v_ind = np.full(k, np.nan)
    pair = None
    if individual:
        pair = pair_individual_bias(model, groups, hessian=hessian, damping=damping, scale=scale, psi_kind=psi_kind)
        all_items, inv = np.unique(groups.pair_item, return_inverse=True)
        is_a = groups.pair_is_a
        na = np.bincount(inv, weights=is_a, minlength=len(all_items))
        nb = np.bincount(inv, weights=~is_a, minlength=len(all_items))
        sa = np.bincount(inv, weights=pair * is_a, minlength=len(all_items))
        sb = np.bincount(inv, weights=pair * ~is_a, minlength=len(all_items))
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


# ---------------------------------------------------------------------------------------------
# influence of training triples on B_gr
# ---------------------------------------------------------------------------------------------
@dataclass
class InfluenceResult:
    """``delta`` = first-order change of ``B_gr(item)`` when training triple ``triple_index`` is
    removed and the model retrained; only triples with non-zero influence are listed."""

    item: int
    group_bias: float
    triple_index: np.ndarray  # [K] row into the training triples
    delta: np.ndarray  # [K]
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=_version)

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
    check_model(model, groups)
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


# ---------------------------------------------------------------------------------------------
# debiasing and validation (each followed by retraining through train_fn)
# ---------------------------------------------------------------------------------------------
TrainFn = Callable[[Any], Any]  # graph -> trained KGEModel


def with_train_triples(graph: Any, train: np.ndarray, entity_names: list[str] | None = None) -> Any:
    """A copy of ``graph`` with other training triples (and optionally more entities)."""
    changes: dict[str, Any] = {}
    train_attr = "train" if hasattr(graph, "train") else "train_triples"
    changes[train_attr] = np.asarray(train, dtype=np.int64)
    if entity_names is not None:
        attr = "entity_names" if hasattr(graph, "entity_names") else "entities"
        changes[attr] = list(entity_names)
    if dataclasses.is_dataclass(graph):
        return dataclasses.replace(graph, **changes)
    import copy
    new = copy.copy(graph)
    for k, val in changes.items():
        setattr(new, k, val)
    return new


def remove_triples(graph: Any, rows: np.ndarray) -> Any:
    """``graph`` without the given training rows (entities are kept, so ids stay valid)."""
    tr = train_triples(graph)
    keep = np.ones(len(tr), bool)
    keep[np.asarray(rows, dtype=np.int64)] = False
    return with_train_triples(graph, tr[keep])


def add_dummy_entities(graph: Any, items: Sequence[str | int], *, groups: DuGroups | None = None,
                       sensitive_relation: str | int = "gender", a: str | int = "male", b: str | int = "female",
                       target_relation: str | int = "profession", c: float = 0.5, cap: int = 10000
                       ) -> tuple[Any, dict[str, int]]:
    """Strategy 1: for each occupation add ``min(round(c * |A - B|), cap - 1)`` new entities, each
    with one triple to the minority value and one to the occupation. New entities get ids after the
    existing ones, so measures on the original persons stay comparable."""
    if groups is None:
        groups = build_groups(graph, sensitive_relation, a, b, target_relation)
    if c <= 0:
        raise ValueError(f"c must be > 0, got {c}")
    ents = list(groups.names["entity_names"])
    tr = train_triples(graph)
    new_rows, added = [], {}
    for item in items:
        o = _lookup(ents, item, "occupation") if not isinstance(item, (int, np.integer)) else int(item)
        sel = groups.pair_item == o
        na, nb = int(groups.pair_is_a[sel].sum()), int((~groups.pair_is_a[sel]).sum())
        n = min(int(round(c * abs(na - nb))), max(cap - 1, 0))
        minority = groups.b if na > nb else groups.a
        name = groups.names["entity_names"][o]
        for j in range(n):
            eid = len(ents)
            ents.append(f"__du_dummy__{name}__{j}")
            new_rows.append((eid, groups.sensitive_relation, minority))
            new_rows.append((eid, groups.target_relation, o))
        added[name] = n
    if new_rows:
        tr = np.concatenate([tr, np.asarray(new_rows, dtype=np.int64)])
    return with_train_triples(graph, tr, ents), added


def retrain_fn(config: Any = None, out_dir: str | None = None) -> TrainFn:
    """``graph -> model``: retraining with :func:`kge.train.train` under ``config`` (default
    ``TrainConfig()``), the retraining step of the debiasing strategies below."""
    def fn(graph):
        import tempfile
        from kge.train import TrainConfig, train  # KGE-CORE's trainer

        cfg = config if config is not None else TrainConfig()
        with tempfile.TemporaryDirectory() as tmp:
            res = train(graph, cfg, out_dir or tmp)
        return getattr(res, "model", res)
    return fn


@dataclass
class DebiasResult:
    strategy: str
    items: list[str]
    before: dict[str, float]  # B_gr per occupation before
    after: dict[str, float]  # B_gr per occupation after retraining
    changed: dict[str, int]  # triples removed / dummy entities added per occupation
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=_version)


def _bgr_for(model, groups: DuGroups, items: Sequence[int], psi_kind: str = "auto") -> dict[int, float]:
    it, bgr, _, _ = group_bias(model, groups, psi_kind=psi_kind)
    d = dict(zip(it.tolist(), bgr.tolist()))
    return {int(o): d.get(int(o), float("nan")) for o in items}


def _groups_for(graph, groups: DuGroups | None, names: dict) -> DuGroups:
    return groups if groups is not None else build_groups(graph, **names)


def debias_by_adding(graph: Any, model, items: Sequence[str | int], train_fn: TrainFn, *,
                     c: float = 0.5, cap: int = 10000, groups: DuGroups | None = None, psi_kind: str = "auto",
                     **names) -> DebiasResult:
    """Strategy 1 followed by retraining; ``B_gr`` measured on the original persons.
    ``names``: ``sensitive_relation``, ``a``, ``b``, ``target_relation``."""
    groups = _groups_for(graph, groups, names)
    ents = groups.names["entity_names"]
    ids = [_lookup(ents, i, "occupation") if not isinstance(i, (int, np.integer)) else int(i) for i in items]
    before = _bgr_for(model, groups, ids, psi_kind)
    new_graph, added = add_dummy_entities(graph, ids, groups=groups, c=c, cap=cap)
    new_model = train_fn(new_graph)
    after = _bgr_for(new_model, groups, ids, psi_kind)
    return DebiasResult("add", [ents[o] for o in ids], {ents[o]: before[o] for o in ids},
                        {ents[o]: after[o] for o in ids}, added, {"c": c, "cap": cap})


def debias_by_removing(graph: Any, model, item: str | int, k: int, train_fn: TrainFn, *,
                       exclude_relations: Sequence[str | int] | None = None, hessian: str = "du",
                       damping: float = 1.0, groups: DuGroups | None = None, psi_kind: str = "auto",
                       random_baseline: bool = False, seed: int = 0, **names) -> DebiasResult:
    """Strategy 2 (IF-REMOVE): remove the ``k`` triples whose removal moves ``B_gr(item)`` most
    towards zero (gender triples excluded by default, so the groups stay defined), then retrain.
    ``random_baseline=True`` removes ``k`` random training triples instead (Random-REMOVE)."""
    groups = _groups_for(graph, groups, names)
    infl = triple_influence(model, graph, item, groups=groups, hessian=hessian, damping=damping,
                            psi_kind=psi_kind)
    if random_baseline:
        rows = np.random.default_rng(seed).choice(len(train_triples(graph)), size=k, replace=False)
    else:
        rows = _removal_rows(graph, groups, infl, k, exclude_relations)
    new_model = train_fn(remove_triples(graph, rows))
    after = _bgr_for(new_model, groups, [infl.item], psi_kind)[infl.item]
    name = groups.names["entity_names"][infl.item]
    return DebiasResult("random_remove" if random_baseline else "remove", [name], {name: infl.group_bias},
                        {name: after}, {name: int(len(rows))},
                        {"k": k, "hessian": hessian, "damping": damping, "seed": seed,
                         "predicted_change": infl.predicted_change(rows)})


def _removal_rows(graph, groups: DuGroups, infl: InfluenceResult, k: int,
                  exclude_relations: Sequence[str | int] | None) -> np.ndarray:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    rels = _name_list(graph, "relation")
    excl = [groups.sensitive_relation] if exclude_relations is None else [
        _lookup(rels, r, "relation") if not isinstance(r, (int, np.integer)) else int(r) for r in exclude_relations]
    tr = train_triples(graph)
    order = infl.debiasing_order()
    order = order[~np.isin(tr[order, 1], excl)]
    return order[:k]


@dataclass
class ValidationResult:
    """Predicted (summed influence) vs actual (retrained) change of ``B_gr`` per ``k``."""

    item: str
    ks: list[int]
    predicted: list[float]
    actual: list[float]
    group_bias: float
    pearson_r: float
    p_value: float
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=_version)


def validate_influence(graph: Any, model, item: str | int, ks: Sequence[int], train_fn: TrainFn, *,
                       exclude_relations: Sequence[str | int] | None = None, hessian: str = "du",
                       damping: float = 1.0, groups: DuGroups | None = None, psi_kind: str = "auto",
                       progress: bool | None = None, **names) -> ValidationResult:
    """Leave-k-out check of the influence approximation (paper §4.2): for each ``k`` remove the
    top-``k`` triples, retrain with ``train_fn`` and compare the real change of ``B_gr`` with the sum
    of the predicted ``delta_z B_gr`` (Pearson r over the ``k``). ``model`` must be
    ``train_fn(graph)`` (same seed and config), so that only the removal differs."""
    from scipy import stats
    from tqdm.auto import tqdm

    groups = _groups_for(graph, groups, names)
    infl = triple_influence(model, graph, item, groups=groups, hessian=hessian, damping=damping,
                            psi_kind=psi_kind)
    pred, act = [], []
    for k in tqdm(list(ks), desc="leave-k-out", disable=None if progress is None else not progress):
        rows = _removal_rows(graph, groups, infl, k, exclude_relations)
        pred.append(infl.predicted_change(rows))
        m = train_fn(remove_triples(graph, rows))
        act.append(_bgr_for(m, groups, [infl.item], psi_kind)[infl.item] - infl.group_bias)
    if len(ks) >= 3 and np.std(pred) > 0 and np.std(act) > 0:
        r, p = stats.pearsonr(pred, act)
    else:
        r, p = float("nan"), float("nan")
    return ValidationResult(item=groups.names["entity_names"][infl.item], ks=[int(k) for k in ks],
                            predicted=[float(x) for x in pred], actual=[float(x) for x in act],
                            group_bias=infl.group_bias, pearson_r=float(r), p_value=float(p),
                            config={"hessian": hessian, "damping": damping, "psi": resolve_psi(model, psi_kind)})


# ---------------------------------------------------------------------------------------------
# measure objects for the kge.bias resolver (protocol of kge.bias: ``run(view, model, spec)``)
# ---------------------------------------------------------------------------------------------
def _to_bias_result(res: DuResult, measure: str, spec, seed: int, model_label: str, extra_summary: dict):
    from kge.bias.result import BiasResult, BiasRow

    rows = [BiasRow(r["measure"], model_label or r["model"], spec.sensitive_relation, spec.a, spec.b,
                    spec.target_relation, r["item"], r["score"], r["count_a"], r["count_b"])
            for r in res.rows([measure])]
    return BiasResult(measure, model_label or res.model, spec, rows, summary=extra_summary, config=res.config,
                      seed=seed)


def _check_spec(spec) -> None:
    if spec.a is None or spec.b is None:
        raise ValueError("Du et al.'s measures compare two attribute values: set both a and b "
                         f"(got a={spec.a!r}, b={spec.b!r})")


@dataclass
class DuGroupBias:
    """Registered as ``du_group``: B_gr per occupation (rows with counts C_a, C_b)."""

    min_count: int = 1
    name: str = MEASURE_GROUP
    needs_model: bool = True

    def run(self, view, model, spec, *, seed: int = 0, model_label: str = ""):
        import time
        _check_spec(spec)
        t0 = time.perf_counter()
        res = du_bias(model, view, sensitive_relation=spec.sensitive_relation, a=spec.a, b=spec.b,
                      target_relation=spec.target_relation, min_count=self.min_count, individual=False)
        return _to_bias_result(res, MEASURE_GROUP, spec, seed, model_label,
                               {"items": int(len(res.items)), "pairs": int(len(res.groups.pair_person)),
                                "compute_seconds": time.perf_counter() - t0})


@dataclass
class DuIndividualBias:
    """Registered as ``du_individual`` (gender-weighted average of B_in per occupation, §3.3) and
    ``du_individual_vanilla`` (``weighted=False``: plain mean)."""

    weighted: bool = True
    hessian: str = "du"
    damping: float = 1.0
    scale: str = "consistent"
    min_count: int = 1
    name: str = ""
    needs_model: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            self.name = MEASURE_INDIVIDUAL if self.weighted else MEASURE_INDIVIDUAL_VANILLA

    def run(self, view, model, spec, *, seed: int = 0, model_label: str = ""):
        import time
        _check_spec(spec)
        t0 = time.perf_counter()
        res = du_bias(model, view, sensitive_relation=spec.sensitive_relation, a=spec.a, b=spec.b,
                      target_relation=spec.target_relation, hessian=self.hessian, damping=self.damping,
                      scale=self.scale, min_count=self.min_count)
        measure = MEASURE_INDIVIDUAL if self.weighted else MEASURE_INDIVIDUAL_VANILLA
        out = _to_bias_result(res, measure, spec, seed, model_label,
                              {"items": int(len(res.items)), "pairs": int(len(res.groups.pair_person)),
                               "compute_seconds": time.perf_counter() - t0})
        out.measure = self.name
        for r in out.rows:
            r.measure = self.name
        return out


@dataclass
class DuIndividualVanilla(DuIndividualBias):
    """Registered as ``du_individual_vanilla``: plain mean of B_in per occupation."""

    weighted: bool = False


#: entries for the ``kge.bias`` resolver (name -> factory)
MEASURES = {MEASURE_GROUP: DuGroupBias, MEASURE_INDIVIDUAL: DuIndividualBias,
            MEASURE_INDIVIDUAL_VANILLA: DuIndividualVanilla}
