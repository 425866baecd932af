"""One training batch of :mod:`kge.train`: negatives, the entity rows it touches, the loss and its
gradients, and the updates.

Per batch of ``B`` positives with ``k`` negatives each, only ``B * (2 + k)`` entity vectors are
read: a negative replaces one side of its positive, whose other side is the positive's own vector
(:meth:`~kge.models.base.KGEModel.score_pairs`). The batch's unique entity rows (with their
optimizer state) are gathered once by the :class:`~kge.optim.RowOptimizer`, their gradients summed
per row with one ``index_add_`` and scattered back after the update.

Two ways to the gradients, with the same numbers up to float rounding (a test checks):

- **closed form** (the fast path): where the model has ``score_pairs_grad`` (TransE, TransH) and
  the loss a closed-form derivative (:func:`kge.losses.get_loss_grad`) and there is no
  regularization: no autograd graph, a handful of passes over the batch's vectors;
- **autograd**: every other model or setting.
"""
from __future__ import annotations

import torch

from kge.losses import get_loss, get_loss_grad
from kge.models import KGEModel
from kge.optim import RowOptimizer
from kge.sampling import NegativeSampler

__all__ = ["BatchStep"]


class BatchStep:
    """``step(batch [B, 3], generator) -> loss * B`` (a 0-dim tensor): negatives, gradients, updates."""

    def __init__(self, model: KGEModel, row_opt: RowOptimizer, dense_opts: list, sampler: NegativeSampler, *,
                 loss: str, margin: float, negatives: int, regularization: float = 0.0) -> None:
        self.model, self.row_opt, self.dense_opts, self.sampler = model, row_opt, dense_opts, sampler
        self.loss_fn, self.loss_grad = get_loss(loss), get_loss_grad(loss)
        self.margin, self.k, self.reg = margin, negatives, regularization
        self.project = getattr(model, "project_entities", None)
        self.closed_form = (hasattr(model, "score_pairs_grad") and self.loss_grad is not None
                            and not regularization)

    def __call__(self, batch: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        e_ids, corrupt_head = self.sampler.corrupt(batch, self.k, generator)
        b = batch.shape[0]
        h, r, t = batch[:, 0], batch[:, 1], batch[:, 2]
        rows, inv, handle = self.row_opt.gather(torch.cat([h, t, e_ids.reshape(-1)]))
        if self.closed_form:
            loss, grad = self._closed_form(rows, inv, r, corrupt_head, b)
        else:
            loss, grad = self._autograd(rows, inv, r, corrupt_head, b)
        for o in self.dense_opts:
            o.step()
        self.row_opt.step(handle, grad, self.project)
        return loss.detach() * b

    def _split(self, vec: torch.Tensor, b: int):
        d = vec.shape[1]
        return vec[:b], vec[b:2 * b], vec[2 * b:].view(b, self.k, d)

    @torch.no_grad()
    def _closed_form(self, rows, inv, r, corrupt_head, b):
        hv, tv, ev = self._split(rows.index_select(0, inv), b)
        pos, neg, backward = self.model.score_pairs_grad(hv, r, tv, ev, corrupt_head)
        loss, dpos, dneg = self.loss_grad(pos, neg, self.margin)
        per_id, dense = backward(dpos, dneg)
        for o in self.dense_opts:
            o.zero_grad(set_to_none=True)
        for p, g in dense:
            p.grad = g
        return loss, torch.zeros_like(rows).index_add_(0, inv, per_id)

    def _autograd(self, rows, inv, r, corrupt_head, b):
        leaf = rows.requires_grad_()
        for o in self.dense_opts:
            o.zero_grad(set_to_none=True)
        hv, tv, ev = self._split(leaf.index_select(0, inv), b)
        pos, neg = self.model.score_pairs(hv, r, tv, ev, corrupt_head)
        loss = self.loss_fn(pos, neg, self.margin)
        if self.reg:
            rv = self.model.relation(r)
            loss = loss + self.reg * ((hv * hv).sum(-1) + (tv * tv).sum(-1) + (rv * rv).sum(-1)).mean()
        loss.backward()
        grad = leaf.grad
        leaf.grad = None
        leaf.requires_grad_(False)
        return loss, grad
