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
