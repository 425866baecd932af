"""Bourli (2021), "Bias in Knowledge Graph Embeddings", ch. 4-5: embedding-side measures.

All use the bias direction ``d = b - a`` between the two attribute-value entities (for TransH
both projected onto the sensitive relation's hyperplane; with ``b=None`` the mean of all other
values stands in for b) and, where they need "a-items" and "b-items", the data-bias labels of
:mod:`kge.bias.data` (equal opportunity, difference; neutral band at the knee).

* ``bourli_projection``: ``|o . d_hat|`` per item, its orientation (cosine with a vs with b),
  and the Pearson correlation of embedding bias with data bias (Tables 6.4-6.7);
* ``bourli_analogy``: pairs (x, y) for "b is to x as a is to y", scored
  ``cos(a - b, y - x)`` when ``||x - y|| < delta`` (Table 6.8);
* ``bourli_topk``: for each item, the a/b persons in the model's top-K heads vs the expected
  ``K * A_o / (A_o + B_o)`` (Tables 6.9-6.10);
* ``bourli_clustering``: KMeans on person and on item embeddings, K by the elbow of the SSE curve,
  per-cluster share of a vs the population share (Figs. 6.8-6.11, Table 6.11);
* ``bourli_debias``: ``o' = o - lambda * (o . d_hat) d_hat`` for every item, with its effect on
  projection, cosine and filtered Hits@k of the target relation (Tables 6.12-6.14).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from kge.bias.context import GraphView, Groups, resolve
from kge.bias.data import data_bias_scores, label
from kge.bias.embedding import entity_matrix, model_name, pairwise_scores, project
from kge.bias.knee import choose_neutral_band, knee_index
from kge.bias.result import BiasResult, BiasRow, BiasSpec


# -- shared pieces ---------------------------------------------------------------------------------
def bias_direction(model, g: Groups) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(a_vec, b_vec, d_hat)`` in the sensitive relation's (hyperplane) space."""
    E = entity_matrix(model).float()
    a = project(model, E[g.a_id], g.s_rel)
    b = project(model, E[torch.as_tensor(g.b_ids)].mean(0), g.s_rel)
    d = b - a
    n = d.norm()
    if float(n) == 0.0:
        raise ValueError("the embeddings of a and b are identical: no bias direction")
    return a, b, d / n


def item_vectors(model, g: Groups) -> torch.Tensor:
    return project(model, entity_matrix(model).float()[torch.as_tensor(g.items)], g.s_rel)


def data_labels(g: Groups, b_label: str) -> tuple[np.ndarray, list[str], float]:
    """EO-difference data bias per item, its labels (a / b / neutral) and the band t."""
    phi = data_bias_scores(g.count_a, g.count_b, len(g.group_a), len(g.group_b))["eo_difference"]
    observed = (g.count_a + g.count_b) > 0
    t = choose_neutral_band(phi[observed])[0] if observed.any() else 0.0
    labs = label(phi, t, g.spec.a, b_label)
    labs = [lab if o else "unobserved" for lab, o in zip(labs, observed)]
    return phi, labs, t


def _cos(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x @ y) / (x.norm(dim=-1) * y.norm()).clamp_min(1e-12)


def _pearson(x, y) -> float:
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.size < 2 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _row(measure, model_lbl, spec, item, score, ca=None, cb=None, **extra) -> BiasRow:
    return BiasRow(measure, model_lbl, spec.sensitive_relation, spec.a, spec.b, spec.target_relation, item,
                   float(score), None if ca is None else int(ca), None if cb is None else int(cb), extra=extra)


def _result(measure, model, spec, rows, summary, config, seed, model_label):
    return BiasResult(measure, model_label or model_name(model), spec, rows, summary, config=config, seed=seed)


# -- projection and orientation --------------------------------------------------------------------
@dataclass
class Projection:
    """Registered as ``bourli_projection``. Row score: ``|o . d_hat|`` signed by orientation
    (+ when the item is closer in cosine to a, - when closer to b)."""

    name: str = "bourli_projection"
    needs_model: bool = True

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        a, b, d = bias_direction(model, g)
        O = item_vectors(model, g)
        proj = (O @ d).numpy()
        cos_a, cos_b = _cos(O, a).numpy(), _cos(O, b).numpy()
        orient_a = cos_a > cos_b
        phi, labs, t = data_labels(g, spec.b_label())
        mlbl = model_label or model_name(model)
        rows = [_row(self.name, mlbl, spec, n, abs(p) * (1 if oa else -1), ca, cb, projection=float(p),
                     cos_a=float(x), cos_b=float(y), orientation=spec.a if oa else spec.b_label(),
                     data_phi=float(f), data_label=lab)
                for n, p, x, y, oa, f, lab, ca, cb in zip(g.item_names, proj, cos_a, cos_b, orient_a, phi, labs,
                                                          g.count_a, g.count_b)]
        labs_arr = np.array(labs)
        is_a, is_b = labs_arr == spec.a, labs_arr == spec.b_label()
        summary = {
            "t": t, "items_a": int(is_a.sum()), "items_b": int(is_b.sum()),
            "pearson_a": _pearson(np.abs(phi[is_a]), np.abs(proj[is_a])),
            "pearson_b": _pearson(np.abs(phi[is_b]), np.abs(proj[is_b])),
            "agree_a_pct": float(100 * orient_a[is_a].mean()) if is_a.any() else float("nan"),
            "agree_b_pct": float(100 * (~orient_a[is_b]).mean()) if is_b.any() else float("nan"),
        }
        return _result(self.name, model, spec, rows, summary, {}, seed, model_label)


# -- analogy puzzle ----------------------------------------------------------------------------------
@dataclass
class Analogy:
    """Registered as ``bourli_analogy``: "b is to x as a is to y". Row item ``x : y``."""

    delta: float = 2.0
    top: int = 20
    observed_only: bool = True  # only items someone in A or B holds
    name: str = "bourli_analogy"
    needs_model: bool = True

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        a, b, _ = bias_direction(model, g)
        O = item_vectors(model, g)
        keep = np.ones(len(g.items), bool) if not self.observed_only else (g.count_a + g.count_b) > 0
        idx = np.flatnonzero(keep)
        O = O[torch.as_tensor(idx)]
        seed_dir = (a - b) / (a - b).norm().clamp_min(1e-12)
        diff = O[None, :, :] - O[:, None, :]  # [x, y, d] = y - x
        dist = diff.norm(dim=-1)
        cs = (diff @ seed_dir) / dist.clamp_min(1e-12)
        cs = torch.where((dist < self.delta) & (dist > 0), cs, torch.zeros_like(cs))
        flat = cs.flatten()
        k = min(self.top, int((flat > 0).sum()))
        vals, pos = torch.topk(flat, k) if k > 0 else (flat[:0], flat[:0].long())
        n = O.shape[0]
        mlbl = model_label or model_name(model)
        rows = []
        for v, p in zip(vals.tolist(), pos.tolist()):
            x, y = idx[p // n], idx[p % n]
            rows.append(_row(self.name, mlbl, spec, f"{g.item_names[x]} : {g.item_names[y]}", v,
                             x=g.item_names[x], y=g.item_names[y], distance=float(dist[p // n, p % n]),
                             count_a_x=int(g.count_a[x]), count_b_x=int(g.count_b[x]),
                             count_a_y=int(g.count_a[y]), count_b_y=int(g.count_b[y])))
        summary = {"ordered_pairs_within_delta": int(((dist < self.delta) & (dist > 0)).sum()), "items": int(n)}
        return _result(self.name, model, spec, rows, summary, {"delta": self.delta, "top": self.top}, seed,
                       model_label)


# -- top-K prediction amplification --------------------------------------------------------------------
def top_heads(model, cand: np.ndarray, t_rel: int, items: np.ndarray, k: int, item_vecs=None) -> np.ndarray:
    """Indices into ``cand`` of the k best-scoring heads for each item (``[Q, k]``)."""
    E = entity_matrix(model)
    H = E[torch.as_tensor(cand)]
    T = E[torch.as_tensor(items)] if item_vecs is None else item_vecs
    Q = T.shape[0]
    k = min(k, H.shape[0])
    best_s = torch.full((Q, 0), -float("inf"), dtype=torch.float64)
    best_i = torch.zeros((Q, 0), dtype=torch.long)
    step = max(1, (1 << 22) // max(1, Q))
    for i in range(0, H.shape[0], step):
        s = pairwise_scores(model, H[i:i + step], t_rel, T).T  # [Q, c]
        ids = torch.cat([best_i, torch.arange(i, i + s.shape[1]).expand(Q, -1)], 1)
        s = torch.cat([best_s, s], 1)
        best_s, p = torch.topk(s, min(k, s.shape[1]), dim=1)
        best_i = torch.gather(ids, 1, p)
    return best_i.numpy()


@dataclass
class TopK:
    """Registered as ``bourli_topk``. Row score: ``(predicted_a - expected_a) / K`` (positive =
    the model over-predicts a-persons for the item) for each item and K."""

    ks: tuple[int, ...] = (10, 50, 100)
    most_biased: int = 5
    name: str = "bourli_topk"
    needs_model: bool = True

    def __post_init__(self) -> None:
        ks = (self.ks,) if isinstance(self.ks, int) and not isinstance(self.ks, bool) else self.ks
        if (not isinstance(ks, (tuple, list)) or not ks
                or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in ks)):
            raise ValueError(f"bourli_topk: ks must be whole numbers >= 1 (the K of top-K), got {self.ks!r}")
        if isinstance(self.most_biased, bool) or not isinstance(self.most_biased, int) or self.most_biased < 1:
            raise ValueError(f"bourli_topk: most_biased must be a whole number >= 1, got {self.most_biased!r}")
        self.ks = tuple(ks)

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        keep = np.flatnonzero((g.count_a + g.count_b) > 0)
        cand = np.concatenate([g.group_a, g.group_b])
        is_a = np.zeros(cand.size, bool)
        is_a[: g.group_a.size] = True
        kmax = max(self.ks)
        best = top_heads(model, cand, g.t_rel, g.items[keep], kmax)
        phi, labs, t = data_labels(g, spec.b_label())
        mlbl = model_label or model_name(model)
        rows, amp = [], {}
        for j, q in enumerate(keep):
            ca, cb = g.count_a[q], g.count_b[q]
            for k in self.ks:
                k_eff = min(k, best.shape[1])
                pa = int(is_a[best[j, :k_eff]].sum())
                ea = k_eff * ca / (ca + cb)
                rows.append(_row(self.name, mlbl, spec, g.item_names[q], (pa - ea) / k_eff, ca, cb, K=k,
                                 predicted_a=pa, predicted_b=k_eff - pa, expected_a=float(ea),
                                 expected_b=float(k_eff - ea), data_phi=float(phi[q]), data_label=labs[q]))
                amp[(q, k)] = 100.0 * (pa - ea) / k_eff
        # Table 6.9: mean (predicted - expected), in % of K, over the most biased a- (b-) items
        order = keep[np.argsort(-phi[keep])]
        top_a = [q for q in order if labs[q] == spec.a][: self.most_biased]
        top_b = [q for q in order[::-1] if labs[q] == spec.b_label()][: self.most_biased]
        summary = {"t": t, "candidates": int(cand.size), "amplification_pct": {
            str(k): {"a": float(np.mean([amp[(q, k)] for q in top_a])) if top_a else float("nan"),
                     "b": float(np.mean([-amp[(q, k)] for q in top_b])) if top_b else float("nan")}
            for k in self.ks}}
        return _result(self.name, model, spec, rows, summary,
                       {"ks": list(self.ks), "most_biased": self.most_biased}, seed, model_label)


# -- clustering fairness ----------------------------------------------------------------------------------
def elbow_kmeans(X: np.ndarray, k_range, seed: int, n_init: int = 3):
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    ks = [k for k in k_range if 1 < k < len(X)]
    if not ks:
        raise ValueError(f"too few points ({len(X)}) to cluster")
    # one OpenMP thread: on a shared 2-core machine more threads made KMeans 50x slower
    with threadpool_limits(1):
        fits = [KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(X) for k in ks]
    sse = [float(f.inertia_) for f in fits]
    i = knee_index(ks, sse)
    return fits[i], ks, sse


@dataclass
class Clustering:
    """Registered as ``bourli_clustering``. Row items ``persons:cK`` (score: share of a among the
    cluster's A/B persons minus the population share) and ``items:cK`` (score: share of a-items
    among the cluster's labelled items minus the overall share; ``extra.mean_distance`` is the
    mean pairwise distance of the cluster's items, Table 6.11)."""

    k_range: tuple[int, int] = (2, 12)
    max_persons: int = 20000
    n_init: int = 3
    name: str = "bourli_clustering"
    needs_model: bool = True

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        rng = np.random.default_rng(seed)
        E = entity_matrix(model).float()
        persons = np.concatenate([g.group_a, g.group_b])
        is_a = np.r_[np.ones(g.group_a.size, bool), np.zeros(g.group_b.size, bool)]
        if persons.size > self.max_persons:
            pick = np.sort(rng.choice(persons.size, self.max_persons, replace=False))
            persons, is_a = persons[pick], is_a[pick]
        ks = range(self.k_range[0], self.k_range[1] + 1)
        X = E[torch.as_tensor(persons)].numpy()
        fit, kk, sse = elbow_kmeans(X, ks, seed, self.n_init)
        base = float(is_a.mean())
        mlbl = model_label or model_name(model)
        rows = []
        for c in range(fit.n_clusters):
            m = fit.labels_ == c
            na, nb = int(is_a[m].sum()), int((~is_a[m]).sum())
            rows.append(_row(self.name, mlbl, spec, f"persons:c{c}", na / max(1, na + nb) - base, na, nb,
                             size=int(m.sum()), ratio_a_b=na / nb if nb else None, population_ratio_a_b=
                             len(g.group_a) / len(g.group_b) if len(g.group_b) else None))
        phi, labs, t = data_labels(g, spec.b_label())
        lab_keep = np.array([lab in (spec.a, spec.b_label()) for lab in labs])
        idx = np.flatnonzero(lab_keep)
        summary = {"persons": int(persons.size), "k_persons": int(fit.n_clusters),
                   "sse_persons": {"k": kk, "sse": sse}, "t": t}
        if idx.size >= 3:
            O = item_vectors(model, g)[torch.as_tensor(idx)].numpy()
            ks_items = range(self.k_range[0], min(self.k_range[1], max(2, idx.size // 3)) + 1)
            ifit, ikk, isse = elbow_kmeans(O, ks_items, seed, self.n_init)
            item_a = np.array([labs[i] == spec.a for i in idx])
            ibase = float(item_a.mean())
            for c in range(ifit.n_clusters):
                m = ifit.labels_ == c
                na, nb = int(item_a[m].sum()), int((~item_a[m]).sum())
                P = O[m]
                md = float(np.mean([np.linalg.norm(P[i] - P[j]) for i in range(len(P)) for j in range(i + 1, len(P))])) \
                    if len(P) > 1 else 0.0
                members = [g.item_names[i] for i in idx[m]][:10]
                rows.append(_row(self.name, mlbl, spec, f"items:c{c}", na / max(1, na + nb) - ibase, na, nb,
                                 size=int(m.sum()), mean_distance=md, members=members))
            summary.update({"k_items": int(ifit.n_clusters), "sse_items": {"k": ikk, "sse": isse}})
        return _result(self.name, model, spec, rows, summary,
                       {"k_range": list(self.k_range), "max_persons": self.max_persons, "n_init": self.n_init},
                       seed, model_label)


# -- projection debiasing -------------------------------------------------------------------------------------
def debias_items(model, g: Groups, lam: float, d_hat: torch.Tensor | None = None) -> torch.Tensor:
    """``o' = o - lambda (o . d_hat) d_hat`` for every item (raw entity space; for TransH d_hat lies
    in the hyperplane so the projected item moves by the same amount)."""
    if d_hat is None:
        d_hat = bias_direction(model, g)[2]
    O = entity_matrix(model).float()[torch.as_tensor(g.items)]
    return O - lam * (O @ d_hat)[:, None] * d_hat


def hits_at_k(model, view: GraphView, g: Groups, item_vecs: torch.Tensor, k: int, only_items=None) -> tuple[float, float, int]:
    """Filtered Hits@k and MRR of tail prediction for the target relation's test facts, ranking the
    true item among all target items (the other known items of the head are filtered out)."""
    test = view.splits.get("test")
    if test is None:
        return float("nan"), float("nan"), 0
    test = test[test[:, 1] == g.t_rel]
    pos = np.searchsorted(g.items, test[:, 2])
    ok = (pos < g.items.size) & (g.items[np.minimum(pos, g.items.size - 1)] == test[:, 2])
    if only_items is not None:
        ok &= np.isin(test[:, 2], only_items)
    test, pos = test[ok], pos[ok]
    if test.size == 0:
        return float("nan"), float("nan"), 0
    known: dict[int, list[int]] = {}
    for s in view.splits.values():
        t = s[s[:, 1] == g.t_rel]
        p = np.searchsorted(g.items, t[:, 2])
        for h, q in zip(t[:, 0].tolist(), p.tolist()):
            known.setdefault(h, []).append(q)
    E = entity_matrix(model)
    ranks = []
    step = max(1, (1 << 20) // max(1, item_vecs.shape[0]))
    with torch.no_grad():
        for i in range(0, len(test), step):
            h = torch.as_tensor(test[i:i + step, 0])
            s = pairwise_scores(model, E[h], g.t_rel, item_vecs)  # [c, Q]
            true = torch.as_tensor(pos[i:i + step])
            ts = s[torch.arange(len(h)), true]
            for j, hh in enumerate(h.tolist()):
                others = [q for q in known.get(hh, []) if q != int(true[j])]
                if others:
                    s[j, others] = -float("inf")
            ranks.append(1 + (s > ts[:, None]).sum(1))
    r = torch.cat(ranks).double()
    return float((r <= k).double().mean()), float((1 / r).mean()), int(r.numel())


@dataclass
class Debias:
    """Registered as ``bourli_debias``. One row per lambda; score = filtered Hits@k on the test
    facts of the ``most_biased`` items (all items when 0)."""

    lambdas: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0)
    hits_k: int = 10
    most_biased: int = 20
    name: str = "bourli_debias"
    needs_model: bool = True

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        a, b, d = bias_direction(model, g)
        phi, labs, t = data_labels(g, spec.b_label())
        observed = np.flatnonzero((g.count_a + g.count_b) > 0)
        only = None
        if self.most_biased:
            only = g.items[observed[np.argsort(-np.abs(phi[observed]))][: self.most_biased]]
        labs_arr = np.array(labs)
        mlbl = model_label or model_name(model)
        rows = []
        for lam in self.lambdas:
            O = debias_items(model, g, lam, d)
            Op = project(model, O, g.s_rel)
            proj = (Op @ d).abs().numpy()
            ca_, cb_ = _cos(Op, a).numpy(), _cos(Op, b).numpy()
            extra = {"lambda": lam}
            for key, lab in (("a", spec.a), ("b", spec.b_label()), ("neutral", "neutral")):
                m = labs_arr == lab
                extra[f"projection_{key}"] = float(proj[m].mean()) if m.any() else None
                extra[f"cos_a_{key}"] = float(ca_[m].mean()) if m.any() else None
                extra[f"cos_b_{key}"] = float(cb_[m].mean()) if m.any() else None
            hits, mrr, n = hits_at_k(model, view, g, O, self.hits_k, only)
            extra.update({"mrr": mrr, "test_facts": n, f"hits@{self.hits_k}": hits})
            rows.append(_row(self.name, mlbl, spec, f"lambda={lam:g}", hits, **extra))
        summary = {"t": t, "hits_k": self.hits_k, "evaluated_items": None if only is None else
                   [view.entity_names[i] for i in only]}
        if rows and rows[0].score == rows[0].score:
            summary["hits_cost"] = {r.item: rows[0].score - r.score for r in rows}
        return _result(self.name, model, spec, rows, summary,
                       {"lambdas": list(self.lambdas), "hits_k": self.hits_k, "most_biased": self.most_biased},
                       seed, model_label)
