"""Losses on positive scores ``pos [B]`` and negative scores ``neg [B, k]`` (higher = more
plausible), each averaged over the batch.

- ``margin``: margin ranking, ``mean(relu(margin - pos + neg))`` over all B x k pairs.
- ``softmax``: cross-entropy of the positive against its k negatives
  (``logsumexp([pos, neg]) - pos``); with k = 1000 this is the loss of Fisher et al. 2020.
- ``softplus``: logistic loss ``softplus(-pos) + mean_k softplus(neg)`` (binary cross-entropy).

Each loss also has a closed-form derivative (:func:`get_loss_grad`): ``(loss, dL/dpos [B],
dL/dneg [B, k])`` in one pass, used by the trainer's fast path (no autograd graph).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from wgbcore.registry import Registry

__all__ = ["LOSSES", "get_loss", "get_loss_grad", "margin_loss", "softmax_loss", "softplus_loss"]


def margin_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    return F.relu(margin - pos[:, None] + neg).mean()


def softmax_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    logits = torch.cat([pos[:, None], neg], dim=1)
    return (torch.logsumexp(logits, dim=1) - pos).mean()


def softplus_loss(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    return F.softplus(-pos).mean() + F.softplus(neg).mean()


def margin_loss_grad(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0):
    viol = (neg - pos[:, None]).add_(margin)
    loss = viol.clamp_min(0.0).mean()
    dneg = (viol > 0).to(pos.dtype).div_(neg.numel())
    return loss, -dneg.sum(1), dneg


def softmax_loss_grad(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0):
    logits = torch.cat([pos[:, None], neg], dim=1)
    lse = torch.logsumexp(logits, dim=1, keepdim=True)
    p = (logits - lse).exp_().div_(len(pos))
    return (lse[:, 0] - pos).mean(), p[:, 0] - 1.0 / len(pos), p[:, 1:]


def softplus_loss_grad(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0):
    loss = F.softplus(-pos).mean() + F.softplus(neg).mean()
    return loss, torch.sigmoid(-pos).neg_().div_(len(pos)), torch.sigmoid(neg).div_(neg.numel())


_GRADS = {margin_loss: margin_loss_grad, softmax_loss: softmax_loss_grad, softplus_loss: softplus_loss_grad}

LOSSES: Registry = Registry("loss")
LOSSES.register("margin", margin_loss)
LOSSES.register("softmax", softmax_loss)
LOSSES.register("softplus", softplus_loss)


def get_loss(name: str):
    """The loss function registered as ``name``."""
    return LOSSES.get(name)


def get_loss_grad(name: str):
    """``fn(pos, neg, margin) -> (loss, dL/dpos, dL/dneg)`` of the loss registered as ``name``, or
    None where it has no closed form (then the trainer takes gradients with autograd)."""
    return _GRADS.get(LOSSES.get(name))
