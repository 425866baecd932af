"""Helpers shared by the model modules: sparse embeddings and their initialisation."""
from __future__ import annotations

import math

import torch
from torch import nn


def sparse_embedding(num: int, dim: int, init: str = "xavier", bound: float | None = None) -> nn.Embedding:
    """An ``nn.Embedding(sparse=True)``: gradients touch only the rows of a batch, so
    :class:`torch.optim.SparseAdam` updates in time proportional to the batch, not the graph."""
    emb = nn.Embedding(num, dim, sparse=True)
    with torch.no_grad():
        if init == "xavier":
            b = math.sqrt(6.0 / (num + dim)) if bound is None else bound
            emb.weight.uniform_(-b, b)
        elif init == "uniform":
            b = bound if bound is not None else 6.0 / math.sqrt(dim)
            emb.weight.uniform_(-b, b)
        elif init == "normal":
            emb.weight.normal_(0.0, bound if bound is not None else 1.0)
        elif init == "phase":
            emb.weight.uniform_(-math.pi, math.pi)
        else:
            raise ValueError(f"unknown init {init!r}")
    return emb


def normalize_rows_(weight: torch.Tensor, ids: torch.Tensor | None = None, maxnorm: bool = False) -> None:
    """Project rows (all, or ``ids``) of ``weight`` onto the unit L2 sphere (or into the ball)."""
    with torch.no_grad():
        if ids is None:
            n = weight.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            weight.div_(n.clamp_min(1.0) if maxnorm else n)
        else:
            ids = torch.unique(ids)
            rows = weight[ids]
            n = rows.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            weight[ids] = rows / (n.clamp_min(1.0) if maxnorm else n)


def neg_sq_dist_all(q: torch.Tensor, cand: torch.Tensor, cand_sq: torch.Tensor | None = None) -> torch.Tensor:
    """``-||q_i - c_j||_2`` for every pair via one matrix product (``[B, d] x [C, d] -> [B, C]``)."""
    if cand_sq is None:
        cand_sq = (cand * cand).sum(-1)
    d2 = torch.addmm(cand_sq[None, :], q, cand.T, alpha=-2.0)
    d2.add_((q * q).sum(-1, keepdim=True))
    return d2.clamp_min_(0.0).sqrt_().neg_()


def rank_sq_dist_all(q: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
    """``2 q.c - |c|^2`` = ``-||q - c||^2 + |q|^2``: per row a strictly increasing function of
    ``-||q - c||``, so it ranks candidates exactly like the distance score, in one ``addmm``."""
    return torch.addmm((cand * cand).sum(-1).neg_()[None, :], q, cand.T, alpha=2.0)


def distance(x: torch.Tensor, p_norm: int) -> torch.Tensor:
    """``||x||_p`` over the last dimension (p = 1 or 2)."""
    return torch.linalg.vector_norm(x, ord=p_norm, dim=-1)


def distance_grad(x: torch.Tensor, norm: torch.Tensor, coef: torch.Tensor, p_norm: int) -> torch.Tensor:
    """``coef * d||x||_p / dx`` (``coef`` of the shape of ``norm``); 0 where ``x`` is 0, as autograd."""
    if p_norm == 1:
        return torch.sign(x).mul_(coef[..., None])
    return x * (coef / norm.clamp_min(1e-12))[..., None]


def translation_grads(gp: torch.Tensor, gn: torch.Tensor, corrupt_head: torch.Tensor, sign: torch.Tensor):
    """Gradients of a translation ``D = head_part + rel_part - tail_part`` scored for positives and
    their negatives, from ``gp = dL/dD_pos [B, d]`` and ``gn = dL/dD_neg [B, k, d]`` (a negative's
    replaced side holds the new entity, its other side the positive's own; ``sign [B, k, 1]`` is +1
    where the head was replaced, -1 where the tail was). Returns ``(per_id [B * (2 + k), d], g_rel
    [B, d])``: the gradients of the head, tail and new-entity vectors (in that order, one buffer,
    as the trainer scatters them) and of the translation."""
    b, k, d = gn.shape
    out = torch.empty((b * (2 + k), d), dtype=gn.dtype, device=gn.device)
    g_h, g_t, g_e = out[:b], out[b:2 * b], out[2 * b:].view(b, k, d)
    torch.mul(gn, sign, out=g_e)
    if k == 1:  # no sums over the negatives: views
        gn_all = gn[:, 0]
        gn_head = (gn_all + g_e[:, 0]).mul_(0.5)  # gn where the head was replaced, else 0
    else:
        gn_all = gn.sum(1)
        gn_head = (gn_all + g_e.sum(1)).mul_(0.5)
    # head: gp + negatives with the tail replaced; tail: -(gp + negatives with the head replaced)
    torch.add(gp, gn_all, out=g_h).sub_(gn_head)
    torch.add(gp, gn_head, out=g_t).neg_()
    return out, gp + gn_all
