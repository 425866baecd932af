"""Losses on positive scores ``pos [B]`` and negative scores ``neg [B, k]`` (higher = more
plausible), each averaged over the batch.

- ``margin``: margin ranking, ``mean(relu(margin - pos + neg))`` over all B x k pairs.
- ``softmax``: cross-entropy of the positive against its k negatives
  (``logsumexp([pos, neg]) - pos``); with k = 1000 this is the loss of Fisher et al. 2020.
- ``softplus``: logistic loss ``softplus(-pos) + mean_k softplus(neg)`` (binary cross-entropy).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from wgbcore.registry import Registry

__all__ = ["LOSSES", "get_loss", "margin_loss", "softmax_loss", "softplus_loss"]


def margin_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    return F.relu(margin - pos[:, None] + neg).mean()


def softmax_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    logits = torch.cat([pos[:, None], neg], dim=1)
    return (torch.logsumexp(logits, dim=1) - pos).mean()


def softplus_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    return F.softplus(-pos).mean() + F.softplus(neg).mean()


LOSSES: Registry = Registry("loss")
LOSSES.register("margin", margin_loss)
LOSSES.register("softmax", softmax_loss)
LOSSES.register("softplus", softplus_loss)


def get_loss(name: str):
    """The loss function registered as ``name``."""
    return LOSSES.get(name)
