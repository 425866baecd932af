"""Helpers on top of the model interface (``kge.models.base.KGEModel``) shared by the measures."""
from __future__ import annotations

import torch


def model_name(model) -> str:
    if model is None:
        return "data"
    return str(getattr(model, "name", type(model).__name__))


def entity_matrix(model) -> torch.Tensor:
    return model.entity.weight.detach()


def hyperplane_normal(model, rel: int) -> torch.Tensor | None:
    """The unit normal of relation ``rel``'s hyperplane for TransH-like models, else None.

    Looks for (in order) a ``normal_vector(rel_ids)`` method, or an ``nn.Embedding`` attribute
    named ``normal``, ``normals``, ``norm_vector`` or ``w``."""
    fn = getattr(model, "normal_vector", None)
    if callable(fn):
        w = fn(torch.tensor([rel]))[0]
    else:
        w = None
        for attr in ("normal", "normals", "norm_vector", "w"):
            emb = getattr(model, attr, None)
            if isinstance(emb, torch.nn.Embedding):
                w = emb.weight[rel]
                break
        if w is None:
            return None
    w = w.detach().float()
    return w / w.norm().clamp_min(1e-12)


def project(model, vecs: torch.Tensor, rel: int) -> torch.Tensor:
    """Entity vectors as the model sees them under relation ``rel``: projected onto the relation
    hyperplane for TransH (``e - (w.e) w``), unchanged for every other model."""
    w = hyperplane_normal(model, rel)
    if w is None:
        return vecs
    return vecs - (vecs @ w)[..., None] * w


def chunk_size(n_cols: int, dim: int, budget: int = 1 << 23) -> int:
    """Rows per chunk so that a ``[rows, n_cols, dim]`` float tensor stays within ``budget``
    elements (32 MiB by default)."""
    return max(1, budget // max(1, n_cols * dim))


def _query_candidates(model, H: torch.Tensor, rel: int, T: torch.Tensor):
    """Write ``score(h, rel, t)`` as ``f(q(h), c(t))`` with ``f`` a distance or a dot product, so
    all pairs take one matrix product. Returns ``(q, c, kind, p)`` or None for unknown models."""
    name = getattr(model, "name", "")
    r = torch.tensor([rel])
    p = int(getattr(model, "p_norm", 2))
    if name == "transe":
        return H + model.relation.weight[rel], T, "dist", p
    if name == "transh" and hasattr(model, "normals"):
        w = model.normals(r)[0]
        return H - (H @ w)[:, None] * w + model.relation.weight[rel], T - (T @ w)[:, None] * w, "dist", p
    if name == "rotate" and hasattr(model, "rotate"):
        return model.rotate(H, r.expand(H.shape[0])), T, "dist", 2
    if name == "distmult":
        return H * model.relation.weight[rel], T, "dot", 0
    if name == "complex":
        d = H.shape[-1] // 2
        rr, ri = model.relation.weight[rel, :d], model.relation.weight[rel, d:]
        hr, hi = H[:, :d], H[:, d:]
        return torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], -1), T, "dot", 0
    return None


def pairwise_scores(model, H: torch.Tensor, rel: int, T: torch.Tensor, *, exact: bool = False) -> torch.Tensor:
    """Scores ``[P, Q]`` of every head vector in ``H [P, d]`` with every tail vector in ``T [Q, d]``
    under relation ``rel``, as ``model.score_emb`` would give them. Known models (TransE, TransH,
    RotatE, DistMult, ComplEx) use one float64 matrix product (L2: ``|q|^2 + |c|^2 - 2 q.c``);
    others, or ``exact=True``, broadcast ``score_emb`` (memory ``P x Q x d``)."""
    with torch.no_grad():
        dec = None if exact else _query_candidates(model, H, rel, T)
        if dec is None:
            rt = torch.full((1, T.shape[0]), rel, dtype=torch.long)
            return model.score_emb(H[:, None, :], rt, T[None, :, :]).double()
        q, c, kind, p = dec
        q, c = q.double(), c.double()
        if kind == "dot":
            return q @ c.T
        if p == 2:
            sq = (q * q).sum(1)[:, None] + (c * c).sum(1)[None, :] - 2.0 * (q @ c.T)
            return -sq.clamp_min(0).sqrt()
        return -torch.cdist(q, c, p=float(p))


def score_change(model, H: torch.Tensor, H2: torch.Tensor, rel: int, T: torch.Tensor) -> torch.Tensor | None:
    """``score(H2[i], rel, T[j]) - score(H[i], rel, T[j])`` for all pairs (``[P, Q]``), computed in
    float32 without cancellation: for dot-product scores ``(q2 - q1).c``; for L2 distances
    ``(d1^2 - d2^2) / (d1 + d2)`` with ``d1^2 - d2^2 = 2 delta.c - 2 delta.q1 - |delta|^2``
    (``delta = q2 - q1``). None for models without a known decomposition (or L1 distances)."""
    with torch.no_grad():
        a = _query_candidates(model, H, rel, T)
        if a is None or (a[2] == "dist" and a[3] != 2):
            return None
        q1, c, kind, _ = a
        q2 = _query_candidates(model, H2, rel, T)[0]
        delta = q2 - q1
        dc = delta @ c.T  # [P, Q]
        if kind == "dot":
            return dc
        qc = q1 @ c.T
        cc = (c * c).sum(1)[None, :]
        d1sq = ((q1 * q1).sum(1)[:, None] + cc - 2 * qc).clamp_min(0)
        num = 2 * dc - (2 * (delta * q1).sum(1) + (delta * delta).sum(1))[:, None]  # d1^2 - d2^2
        d2sq = (d1sq - num).clamp_min(0)
        return num / (d1sq.sqrt() + d2sq.sqrt()).clamp_min(1e-12)
