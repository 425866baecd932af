"""Optimizers of :mod:`kge.train`: every update is sparse.

The entity table (the big one) is updated by :class:`RowAdam`, a lazy Adam on the batch's unique
rows gathered into one dense block, with the semantics of :class:`torch.optim.SparseAdam` (moments
of rows not in a batch are not decayed); the small per-relation tables (relations, TransH normals)
get dense gradients during training and plain Adam (:class:`DenseAdam`, :func:`make_optimizer`).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = ["RowAdam", "DenseAdam", "make_optimizer"]


class RowAdam:
    """Lazy Adam on the rows of one embedding table (the semantics of ``torch.optim.SparseAdam``).

    Each row's vector and both Adam moments live side by side in one ``[N, 3, d]`` array, so a
    step is one gather of the batch's unique rows (:meth:`gather`, a dense leaf block whose
    gradient needs no sparse tensors and no coalescing) and one scatter back (:meth:`step`).
    Only those rows' moments are updated; the step count (bias correction) is global, as in
    SparseAdam. An optional ``project`` (e.g. TransE's unit sphere) is applied to updated rows.
    The model's weight is refreshed from the table by :meth:`sync` (done every epoch).
    """

    def __init__(self, weight: torch.Tensor, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        self.weight, self.lr, self.betas, self.eps = weight, lr, betas, eps
        n, d = weight.shape
        self.table = np.zeros((n, 3, d), dtype=np.float32)
        self.table[:, 0] = weight.detach().cpu().numpy()
        self.step_count = 0
        self._mark = np.zeros(n, dtype=bool)
        self._pos = np.zeros(n, dtype=np.int64)

    def gather(self, ids: torch.Tensor):
        """``(leaf [U, d] requiring grad, inverse [len(ids)], handle)`` for the unique rows of ids."""
        ids_np = ids.numpy()
        self._mark[ids_np] = True
        uniq = np.flatnonzero(self._mark)  # sorted unique ids without a sort: O(N) bitmap scan
        self._mark[uniq] = False
        self._pos[uniq] = np.arange(len(uniq))
        inv = torch.from_numpy(self._pos[ids_np])
        block = torch.from_numpy(self.table.take(uniq, axis=0))
        leaf = block[:, 0].requires_grad_()
        return leaf, inv, (uniq, block)

    @torch.no_grad()
    def step(self, handle, grad: torch.Tensor, project=None) -> None:
        uniq, block = handle
        self.step_count += 1
        b1, b2 = self.betas
        w, m, v = block[:, 0], block[:, 1], block[:, 2]
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        bc1 = 1 - b1 ** self.step_count
        bc2 = 1 - b2 ** self.step_count
        denom = (v / bc2).sqrt_().add_(self.eps)
        w.addcdiv_(m, denom, value=-self.lr / bc1)
        if project is not None:
            w.copy_(project(w))
        self.table[uniq] = block.numpy()

    @torch.no_grad()
    def sync(self) -> None:
        """Copy the trained rows into the model's weight."""
        self.weight.copy_(torch.from_numpy(self.table[:, 0]))

    def state_dict(self) -> dict:
        return {"moments": torch.from_numpy(self.table[:, 1:].copy()), "step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        """Moments from ``state``; vectors from the (already restored) model weight."""
        self.table[:, 0] = self.weight.detach().cpu().numpy()
        self.table[:, 1:] = state["moments"].numpy()
        self.step_count = int(state["step"])


class DenseAdam(torch.optim.Adam):
    """Adam for the small tables (relations, TransH normals): sparse gradients are densified
    first (a dense step over ~R rows costs nothing and avoids SparseAdam's coalescing)."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    p.grad = p.grad.to_dense()
        return super().step(closure)


def make_optimizer(model: nn.Module, lr: float, exclude: tuple = ()) -> list[torch.optim.Optimizer]:
    """Adam (densifying sparse gradients) for every parameter but ``exclude`` (the entity table,
    handled by :class:`RowAdam`)."""
    skip = {id(p) for p in exclude}
    params = [p for p in model.parameters() if id(p) not in skip]
    return [DenseAdam(params, lr=lr)] if params else []
