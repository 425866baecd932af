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


def unique_rows(ids: torch.Tensor, num: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sorted unique ids, inverse)`` of ``ids`` (values in ``[0, num)``)."""
    return _UniqueRows(num)(ids)


class RowOptimizer:
    """A lazy optimizer on the rows of one embedding table.

    The rows' vectors and each of their ``slots`` state vectors are interleaved in one contiguous
    store ``[N, 1 + slots, d]`` (``tables[i]``: the ``[N, d]`` view of slot ``i``; ``tables[0]``:
    the vectors), so a row's vector and its optimizer state are one run of memory.
    :meth:`gather` copies the batch's unique rows of every slot into contiguous blocks (kept
    between batches) with ``index_select`` and returns them with the inverse map; :meth:`step`
    updates the blocks with the rows' summed gradients ``[U, d]`` (optionally projecting the
    vectors in place, e.g. TransE's unit sphere), interleaves them and writes them back with one
    ``index_copy_``. All torch ops, parallel on torch's own threads and the same on every device
    (a numpy gather/scatter split over a Python helper thread was half as fast on 2 cores: it
    competed with torch's spinning OpenMP threads; ``benchmarks/results/kge_speed*.md``). The
    model's weight is refreshed from the table by :meth:`sync` (done every epoch).
    """

    slots = 0
    name = "row"

    def __init__(self, weight: torch.Tensor, lr: float) -> None:
        self.weight, self.lr = weight, lr
        n, d = weight.shape
        k = 1 + self.slots
        if weight.device.type == "cpu" and weight.dtype == torch.float32:  # numpy's large allocations
            self.store = torch.from_numpy(np.zeros((n, k, d), dtype=np.float32))  # are advised as huge pages
        else:
            self.store = torch.zeros((n, k, d), dtype=weight.dtype, device=weight.device)
        self.tables = [self.store[:, i] for i in range(k)]
        self.tables[0].copy_(weight.detach())
        self.step_count = 0
        self._unique = _UniqueRows(n)
        self._buf = self._ibuf = None

    def unique(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._unique(ids)

    def gather(self, ids: torch.Tensor):
        """``(vectors [U, d], inverse [len(ids)], handle)`` for the unique rows of ``ids``."""
        uniq, inv = self._unique(ids)
        uniq = uniq.to(self.store.device)
        u = len(uniq)
        if self._buf is None or self._buf.shape[1] < u:  # buffers kept: no page faults for fresh memory
            cap, (n, k, d) = max(len(ids), u), self.store.shape
            self._buf = torch.empty((k, cap, d), dtype=self.store.dtype, device=self.store.device)
            self._ibuf = torch.empty((cap, k, d), dtype=self.store.dtype, device=self.store.device)
        blocks = [torch.index_select(t, 0, uniq, out=self._buf[i, :u]) for i, t in enumerate(self.tables)]
        return blocks[0], inv.to(self.store.device), (uniq, blocks)

    @torch.no_grad()
    def step(self, handle, grad: torch.Tensor, project=None) -> None:
        """One update of the gathered rows with their summed gradients ``grad [U, d]``."""
        uniq, blocks = handle
        self.step_count += 1
        self._update(blocks, grad)
        if project is not None:  # in place (the model's project_entities)
            project(blocks[0])
        block = torch.stack(blocks, dim=1, out=self._ibuf[:len(uniq)])
        self.store.index_copy_(0, uniq, block)

    def _update(self, blocks: list, grad: torch.Tensor) -> None:
        raise NotImplementedError

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
    first (a dense step over ~R rows costs nothing and avoids SparseAdam's coalescing).

    With ``fused=True`` and plain settings (no amsgrad, weight decay or maximize, a float lr),
    once every parameter has its state, a step is the two kernels ``torch.optim.Adam`` itself runs
    (``_foreach_add_`` on the step counts, ``_fused_adam_``) without its per-step Python
    machinery: the same numbers (a test checks bit equality), a tenth of the time on FB13's
    13 x 100 relation table, where the machinery was 5% of a training epoch."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    p.grad = p.grad.to_dense()
        if closure is None and self._fast_step():
            return None
        return super().step(closure)

    def _fast_step(self) -> bool:
        work = []
        for g in self.param_groups:
            ps = [p for p in g["params"] if p.grad is not None]
            if not ps:
                continue
            if (not g.get("fused") or g["amsgrad"] or g["weight_decay"] or g["maximize"] or g.get("capturable")
                    or g.get("decoupled_weight_decay") or not isinstance(g["lr"], float)
                    or any(len(self.state[p]) == 0 for p in ps)):
                return False
            work.append((g, ps))
        for g, ps in work:
            st = [self.state[p] for p in ps]
            steps = [s["step"] for s in st]
            torch._foreach_add_(steps, 1)
            b1, b2 = g["betas"]
            torch._fused_adam_(ps, [p.grad for p in ps], [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                               [], steps, amsgrad=False, lr=g["lr"], beta1=b1, beta2=b2, weight_decay=0.0,
                               eps=g["eps"], maximize=False, grad_scale=None, found_inf=None)
        return True


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
