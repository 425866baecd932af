"""Optimizers of :mod:`kge.train`: every update of the entity table is row-sparse.

The entity table (the big one) is updated by a :class:`RowOptimizer`: the batch's unique rows and
their optimizer state are gathered into one dense block, updated there and scattered back, so a
step costs time in proportion to the batch, not to the graph. Three are registered
(``ROW_OPTIMIZERS``), each with the semantics of its lazy/sparse torch counterpart (the state of
rows not in a batch is left as it is):

- ``adam``: :class:`RowAdam` (``torch.optim.SparseAdam``: global step count for the bias
  correction; the update is torch's fused Adam kernel where it exists);
- ``adagrad``: :class:`RowAdagrad` (``torch.optim.Adagrad`` on sparse gradients);
- ``sgd``: :class:`RowSGD`.

The small per-relation tables (relations, TransH normals) get dense gradients and the dense torch
optimizer of the same name (:func:`make_optimizer`; :class:`DenseAdam` densifies sparse gradients).
Everything lives on the weight's device (CPU or CUDA).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from wgbcore.registry import Registry

__all__ = ["RowOptimizer", "RowAdam", "RowAdagrad", "RowSGD", "ROW_OPTIMIZERS", "make_row_optimizer",
           "DenseAdam", "make_optimizer", "unique_rows"]


class _UniqueRows:
    """Sorted unique ids and the inverse map of an id batch. On CPU an ``O(N)`` bitmap scan (no sort,
    ~10x faster than ``torch.unique`` for FB13-sized batches); elsewhere ``torch.unique``. Both give
    the same sorted order, so CPU and GPU runs update rows in the same order."""

    def __init__(self, num: int) -> None:
        self._mark = np.zeros(num, dtype=bool)
        self._pos = np.zeros(num, dtype=np.int64)

    def __call__(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if ids.device.type != "cpu":
            return torch.unique(ids, sorted=True, return_inverse=True)
        ids_np = ids.numpy()
        self._mark[ids_np] = True
        uniq = np.flatnonzero(self._mark)
        self._mark[uniq] = False
        self._pos[uniq] = np.arange(len(uniq))
        return torch.from_numpy(uniq), torch.from_numpy(self._pos[ids_np])


_POOL: list = []


def _helper_thread():
    """One worker thread shared by every row optimizer of the process (created on first use)."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(1, thread_name_prefix="kge-rows"))
    return _POOL[0]


def unique_rows(ids: torch.Tensor, num: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sorted unique ids, inverse)`` of ``ids`` (values in ``[0, num)``)."""
    return _UniqueRows(num)(ids)


class RowOptimizer:
    """A lazy optimizer on the rows of one embedding table.

    The rows' vectors and each of their ``slots`` state vectors live in tables of their own
    (``tables[0]``: the vectors; each ``[N, d]``, contiguous). :meth:`gather` returns the batch's
    unique rows of every table as dense blocks and the inverse map; :meth:`step` updates the blocks
    with the rows' summed gradients ``[U, d]`` (optionally projecting the vectors in place, e.g.
    TransE's unit sphere) and scatters them back. On the CPU the gather and scatter are numpy's ``take`` and
    fancy assignment on the tables' shared memory (one ``memcpy`` per row: ~3x faster here than
    torch's ``index_copy_``); on other devices ``index_select`` / ``index_copy_``. The model's
    weight is refreshed from the table by :meth:`sync` (done every epoch).
    """

    slots = 0
    name = "row"

    def __init__(self, weight: torch.Tensor, lr: float) -> None:
        self.weight, self.lr = weight, lr
        n, d = weight.shape
        self.cpu = weight.device.type == "cpu"
        if self.cpu:  # numpy's large allocations are advised as transparent huge pages: fewer TLB misses
            self.tables = [torch.from_numpy(np.zeros((n, d), dtype=np.float32)).to(weight.dtype)
                           for _ in range(1 + self.slots)]
        else:
            self.tables = [torch.zeros((n, d), dtype=weight.dtype, device=weight.device) for _ in range(1 + self.slots)]
        self.tables[0].copy_(weight.detach())
        self._np = [t.numpy() for t in self.tables] if self.cpu else None
        self.step_count = 0
        self._unique = _UniqueRows(n)
        self._buf = None

    def unique(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._unique(ids)

    def gather(self, ids: torch.Tensor):
        """``(vectors [U, d], inverse [len(ids)], handle)`` for the unique rows of ``ids``."""
        uniq, inv = self._unique(ids)
        if self.cpu:  # into buffers kept between batches (no page faults for fresh memory)
            u = uniq.numpy()
            if self._buf is None or len(self._buf[0]) < len(u):
                self._buf = [np.empty((max(len(ids), len(u)), a.shape[1]), dtype=a.dtype) for a in self._np]
            out = [buf[:len(u)] for buf in self._buf]
            self._rows(u, out, gather=True)
            blocks = [torch.from_numpy(b) for b in out]
        else:
            blocks = [t.index_select(0, uniq) for t in self.tables]
        return blocks[0], inv, (uniq, blocks)

    @torch.no_grad()
    def step(self, handle, grad: torch.Tensor, project=None) -> None:
        """One update of the gathered rows with their summed gradients ``grad [U, d]``."""
        uniq, blocks = handle
        self.step_count += 1
        self._update(blocks, grad)
        if project is not None:  # in place (the model's project_entities)
            project(blocks[0])
        if self.cpu:
            self._rows(uniq.numpy(), [b.numpy() for b in blocks], gather=False)
        else:
            for t, b in zip(self.tables, blocks):
                t.index_copy_(0, uniq, b)

    def _update(self, blocks: list, grad: torch.Tensor) -> None:
        raise NotImplementedError

    def _rows(self, u: np.ndarray, blocks: list, gather: bool) -> None:
        """CPU: rows ``u`` of every table into ``blocks`` (numpy ``take``) or back (fancy
        assignment). Where torch runs several threads the rows are split with a helper thread
        (numpy releases the GIL for both; the halves are disjoint, so the result is the same)."""
        def work(lo: int, hi: int) -> None:
            for a, b in zip(self._np, blocks):
                if gather:
                    a.take(u[lo:hi], axis=0, out=b[lo:hi], mode="clip")
                else:
                    a[u[lo:hi]] = b[lo:hi]

        n = len(u)
        if n >= 4096 and torch.get_num_threads() > 1:
            half = n // 2
            helper = _helper_thread().submit(work, 0, half)
            work(half, n)
            helper.result()
        else:
            work(0, n)

    @torch.no_grad()
    def sync(self) -> None:
        """Copy the trained rows into the model's weight."""
        self.weight.copy_(self.tables[0])

    def state_dict(self) -> dict:
        return {"step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        """State from ``state``; vectors from the (already restored) model weight."""
        self.tables[0].copy_(self.weight.detach())
        self.step_count = int(state["step"])


class RowSGD(RowOptimizer):
    """Plain SGD on the batch's rows: ``w -= lr * g``."""

    name = "sgd"

    def _update(self, blocks, grad):
        blocks[0].add_(grad, alpha=-self.lr)


class RowAdagrad(RowOptimizer):
    """Adagrad on the batch's rows (``torch.optim.Adagrad`` with sparse gradients):
    ``s += g^2; w -= lr * g / (sqrt(s) + eps)``."""

    slots = 1
    name = "adagrad"

    def __init__(self, weight: torch.Tensor, lr: float, eps: float = 1e-10) -> None:
        super().__init__(weight, lr)
        self.eps = eps

    def _update(self, blocks, grad):
        w, s = blocks
        s.addcmul_(grad, grad)
        w.addcdiv_(grad, s.sqrt().add_(self.eps), value=-self.lr)

    def state_dict(self) -> dict:
        return {"sum": self.tables[1].cpu().clone(), "step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.tables[1].copy_(state["sum"])


class RowAdam(RowOptimizer):
    """Lazy Adam on the rows of one embedding table (the semantics of ``torch.optim.SparseAdam``):
    only the batch's rows' moments are updated; the step count (bias correction) is global. The
    update is torch's fused Adam kernel where available (one pass over the block), else the same
    formula in separate operations."""

    slots = 2
    name = "adam"

    def __init__(self, weight: torch.Tensor, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__(weight, lr)
        self.betas, self.eps = betas, eps
        self._step_t = torch.zeros((), dtype=torch.float32, device=weight.device)
        self._fused = hasattr(torch, "_fused_adam_")

    def _update(self, blocks, grad):
        w, m, v = blocks
        b1, b2 = self.betas
        if self._fused:
            self._step_t.fill_(self.step_count)
            try:
                torch._fused_adam_([w], [grad.contiguous()], [m], [v], [], [self._step_t], amsgrad=False,
                                   lr=self.lr, beta1=b1, beta2=b2, weight_decay=0.0, eps=self.eps, maximize=False)
                return
            except (RuntimeError, TypeError, NotImplementedError):  # an older/other build: plain ops
                self._fused = False
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        bc1 = 1 - b1 ** self.step_count
        bc2 = 1 - b2 ** self.step_count
        denom = (v.sqrt() / bc2 ** 0.5).add_(self.eps)
        w.addcdiv_(m, denom, value=-self.lr / bc1)

    def state_dict(self) -> dict:
        """``{"moments": [N, 2, d], "step": int}`` (the layout of earlier versions' checkpoints)."""
        return {"moments": torch.stack([self.tables[1], self.tables[2]], dim=1).cpu(), "step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        moments = state["moments"]
        self.tables[1].copy_(moments[:, 0])
        self.tables[2].copy_(moments[:, 1])


ROW_OPTIMIZERS: Registry[type[RowOptimizer]] = Registry("optimizer")
ROW_OPTIMIZERS.register("adam", RowAdam)
ROW_OPTIMIZERS.register("adagrad", RowAdagrad)
ROW_OPTIMIZERS.register("sgd", RowSGD)


def make_row_optimizer(name: str, weight: torch.Tensor, lr: float) -> RowOptimizer:
    """The row optimizer registered as ``name`` for ``weight``."""
    return ROW_OPTIMIZERS.get(name)(weight, lr)


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


def make_optimizer(model: nn.Module, lr: float, exclude: tuple = (), kind: str = "adam") -> list[torch.optim.Optimizer]:
    """The dense optimizer ``kind`` (adam: :class:`DenseAdam`; adagrad; sgd) for every parameter but
    ``exclude`` (the entity table, handled by a :class:`RowOptimizer`)."""
    skip = {id(p) for p in exclude}
    params = [p for p in model.parameters() if id(p) not in skip]
    if not params:
        return []
    kind = ROW_OPTIMIZERS.canonical(kind)
    if kind == "adam":
        try:  # torch's fused kernel: one pass, a fraction of the per-step overhead
            return [DenseAdam(params, lr=lr, fused=True)]
        except (RuntimeError, TypeError, ValueError):
            return [DenseAdam(params, lr=lr)]
    if kind == "adagrad":
        return [torch.optim.Adagrad(params, lr=lr, eps=1e-10)]
    return [torch.optim.SGD(params, lr=lr)]
