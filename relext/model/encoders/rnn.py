"""RNN and BiRNN sentence encoders (GRU or LSTM over word + position embeddings).

The sentence representation is the final hidden state (BiRNN: forward and backward final states
concatenated), as in OpenNRE's TensorFlow RNN encoders; padding is skipped.

The parameters live in a plain ``nn.GRU`` / ``nn.LSTM`` (``self.rnn``), so state dicts keep
their layout (``rnn.weight_ih_l0``, ``rnn.weight_hh_l0_reverse``, ...) and checkpoints written
before the fused path load unchanged. What runs on CPU is not that module's forward but
:class:`FusedGRU` / :class:`FusedLSTM`, with the same equations and parameters:

* the sentences of a batch are sorted by length (longest first) and their real tokens packed time
  major (packed-sequence layout), so at step ``t`` the sentences still running are a prefix of
  the batch and no padding is embedded or computed;
* the input projection of every token (both directions) is one matrix product before the loop;
  each time step is one (batched over directions) product with the recurrent weights plus a few
  element-wise ops, written straight into preallocated per-step buffers;
* the backward pass is written by hand (BPTT over the same buffers); the gradient of the
  recurrent weights is one matrix product over all steps after the loop.

The reverse direction reads each sentence reversed within its own length, so both directions
share the packing and run in the same loop. torch's own CPU RNN over a packed sequence slices
its input once per step, and the backward of every slice fills a zero tensor as large as the
whole packed input (work of steps x tokens per batch): 65% of the CPU time in a profile of two
training batches, hence the fused path (``benchmarks/re_speed.py``). On CUDA the module's own
(cuDNN) forward is used; ``impl = "fused"`` / ``"gather"`` / ``"module"`` on an encoder forces one path.

Two CPU paths, picked by ``rnn_impl`` (``ExtractorConfig.rnn_impl``, part of a run's identity
when it is not ``"fused"``): ``"fused"`` (above; every committed run) and ``"gather"``
(:mod:`relext.model.encoders.rnn_gather`: the same function in real arithmetic, input projections
gathered from per-word rows and a backward step of two operations; not bit for bit).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from relext.model.encoders.embedding import WordPositionEmbedding
from relext.model.encoders.rnn_gather import GATHER, gathered_inputs

CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}
#: The CPU recurrence's implementations (``ExtractorConfig.rnn_impl``): "fused", every committed run
#: (the first is the legacy one), and "gather" (:mod:`relext.model.encoders.rnn_gather`).
RNN_IMPLS = ("fused", "gather")


def _steps(batch_sizes: list[int]) -> list[tuple[int, int, int]]:
    """``(offset, rows, previous offset)`` of every time step in the packed layout (previous
    offset -1 at step 0, whose previous state is zero)."""
    out, off, prev = [], 0, -1
    for bs in batch_sizes:
        out.append((off, bs, prev))
        prev, off = off, off + bs
    return out


def _previous_states(out: torch.Tensor, steps: list[tuple[int, int, int]]) -> torch.Tensor:
    """``[D, T, H]``: the state each packed row started its step from (zero at step 0)."""
    hprev = torch.empty_like(out)
    hprev[:, : steps[0][1]] = 0
    for off, bs, prev in steps[1:]:
        hprev[:, off:off + bs] = out[:, prev:prev + bs]
    return hprev


_tanh_backward = torch.ops.aten.tanh_backward.grad_input        # grad * (1 - y^2), into a view
_sigmoid_backward = torch.ops.aten.sigmoid_backward.grad_input  # grad * y * (1 - y), into a view


class FusedGRU(torch.autograd.Function):
    """GRU recurrence over packed, length-sorted sequences for ``D`` directions at once.

    ``gi [D, T, 3H]``: input projections ``x W_ih^T + b_ih`` in packed order (gates r, z, n as
    in ``nn.GRU``); ``w_hh [D, 3H, H]``, ``b_hh [D, 3H]``; ``batch_sizes``: rows per step
    (non-increasing); ``order``: batch row of each sorted sentence; ``last``: packed row of each
    batch row's last step. Returns the final states ``[D, n, H]`` in batch order; zero initial
    state. ``save``: keep what the backward pass needs.
    """

    @staticmethod
    def forward(ctx, gi, w_hh, b_hh, batch_sizes, order, last, save):
        d, t_total, h3 = gi.shape
        h = h3 // 3
        steps = _steps(batch_sizes)
        w_t = w_hh.transpose(1, 2)                                 # [D, H, 3H]
        out = gi.new_empty(d, t_total, h)                          # every step's state, packed
        rz = gi.new_empty(d, t_total, 2 * h)
        nn_ = gi.new_empty(d, t_total, h)
        ghn = gi.new_empty(d, t_total, h) if save else None       # h_prev W_hn^T + b_hn
        bias = b_hh.unsqueeze(1)
        for off, bs, prev in steps:
            sl = slice(off, off + bs)
            g = gi[:, sl]
            if prev < 0:                                           # h_prev = 0: gh = b_hh
                gh = (g[..., :2 * h] + bias[..., :2 * h], bias[..., 2 * h:].expand(d, bs, h))
                hp = None
            else:
                hp = out[:, prev:prev + bs]
                full = torch.baddbmm(bias, hp, w_t)
                gh = (full[..., :2 * h].add_(g[..., :2 * h]), full[..., 2 * h:])
            r_z = torch.sigmoid(gh[0], out=rz[:, sl])
            n = torch.tanh(torch.addcmul(g[..., 2 * h:], r_z[..., :h], gh[1]), out=nn_[:, sl])
            if save:
                ghn[:, sl].copy_(gh[1])
            if hp is None:                                         # h = (1 - z) n
                torch.mul(n, 1 - r_z[..., h:], out=out[:, sl])
            else:                                                  # h = n + z (h_prev - n)
                torch.lerp(n, hp, r_z[..., h:], out=out[:, sl])
        if save:
            ctx.save_for_backward(w_hh, out, rz, nn_, ghn, order)
            ctx.steps = steps
        return out.index_select(1, last)

    @staticmethod
    def backward(ctx, grad_final):
        w_hh, out, rz, nn_, ghn, order = ctx.saved_tensors
        d, t_total, h = out.shape
        steps = ctx.steps
        dgh = out.new_empty(d, t_total, 3 * h)         # gradient of h_prev W_hh^T + b_hh, per step
        dgin = out.new_empty(d, t_total, h)            # gradient of the n gate's input part
        # carry[:, j]: gradient reaching the state of sorted sentence j; it starts as the gradient
        # of its final state, which nothing touches before its last step
        carry = grad_final.index_select(1, order)
        for off, bs, prev in reversed(steps):
            sl = slice(off, off + bs)
            dht = carry[:, :bs]
            r_z, n = rz[:, sl], nn_[:, sl]
            r, z = r_z[..., :h], r_z[..., h:]
            dhz = dht * z
            dn_pre = _tanh_backward(dht - dhz, n, grad_input=dgin[:, sl])         # d(gi_n + r gh_n)
            _sigmoid_backward(dn_pre * ghn[:, sl], r, grad_input=dgh[:, sl, :h])
            dz = dht * (out[:, prev:prev + bs] - n) if prev >= 0 else -(dht * n)
            _sigmoid_backward(dz, z, grad_input=dgh[:, sl, h:2 * h])
            torch.mul(dn_pre, r, out=dgh[:, sl, 2 * h:])
            if prev >= 0:
                torch.baddbmm(dhz, dgh[:, sl], w_hh, out=dht)
        grad_w = torch.bmm(dgh.transpose(1, 2), _previous_states(out, steps))
        grad_b = dgh.sum(1)
        dgh[..., 2 * h:] = dgin                        # r and z: the same gradient for gi and gh
        return dgh, grad_w, grad_b, None, None, None, None


class FusedLSTM(torch.autograd.Function):
    """LSTM recurrence as :class:`FusedGRU` (same arguments): ``gi [D, T, 4H]`` (gates i, f,
    g, o as in ``nn.LSTM``), ``w_hh [D, 4H, H]``, ``b_hh [D, 4H]``; zero initial state and cell."""

    @staticmethod
    def forward(ctx, gi, w_hh, b_hh, batch_sizes, order, last, save):
        d, t_total, h4 = gi.shape
        h = h4 // 4
        steps = _steps(batch_sizes)
        w_t = w_hh.transpose(1, 2)
        out = gi.new_empty(d, t_total, h)
        cell = gi.new_empty(d, t_total, h)
        acts = gi.new_empty(d, t_total, h4)
        tanh_c = gi.new_empty(d, t_total, h)
        bias = b_hh.unsqueeze(1)
        for off, bs, prev in steps:
            sl = slice(off, off + bs)
            pre = gi[:, sl] + bias if prev < 0 else torch.baddbmm(bias, out[:, prev:prev + bs], w_t).add_(gi[:, sl])
            a = acts[:, sl]
            torch.sigmoid(pre[..., :2 * h], out=a[..., :2 * h])
            torch.tanh(pre[..., 2 * h:3 * h], out=a[..., 2 * h:3 * h])
            torch.sigmoid(pre[..., 3 * h:], out=a[..., 3 * h:])
            i, f, g, o = a.split(h, -1)
            c = torch.mul(i, g, out=cell[:, sl])
            if prev >= 0:
                c.addcmul_(f, cell[:, prev:prev + bs])
            torch.mul(o, torch.tanh(c, out=tanh_c[:, sl]), out=out[:, sl])
        if save:
            ctx.save_for_backward(w_hh, out, cell, acts, tanh_c, order)
            ctx.steps = steps
        return out.index_select(1, last)

    @staticmethod
    def backward(ctx, grad_final):
        w_hh, out, cell, acts, tanh_c, order = ctx.saved_tensors
        d, t_total, h = out.shape
        steps = ctx.steps
        dpre = out.new_empty(d, t_total, 4 * h)
        carry_h = grad_final.index_select(1, order)
        carry_c = torch.zeros_like(carry_h)
        for off, bs, prev in reversed(steps):
            sl = slice(off, off + bs)
            dht = carry_h[:, :bs]
            i, f, g, o = acts[:, sl].split(h, -1)
            tc = tanh_c[:, sl]
            dc = carry_c[:, :bs].add_(_tanh_backward(dht * o, tc, grad_input=torch.empty_like(tc)))
            di, df, dg, do = dpre[:, sl].split(h, -1)
            _sigmoid_backward(dc * g, i, grad_input=di)
            if prev >= 0:
                _sigmoid_backward(dc * cell[:, prev:prev + bs], f, grad_input=df)
            else:
                df.zero_()
            _tanh_backward(dc * i, g, grad_input=dg)
            _sigmoid_backward(dht * tc, o, grad_input=do)
            if prev >= 0:
                dc.mul_(f)
                torch.bmm(dpre[:, sl], w_hh, out=dht)
        grad_w = torch.bmm(dpre.transpose(1, 2), _previous_states(out, steps))
        return dpre, grad_w, dpre.sum(1), None, None, None, None


FUSED = {"gru": FusedGRU, "lstm": FusedLSTM}


def packing(lengths: torch.Tensor):
    """The packed layout of a batch: ``(order, row, col, col_reversed, batch_sizes, last)``.

    Sentences are ordered longest first (stable; ``order[j]``: the batch row of the ``j``-th
    longest); packed row ``k`` is token ``col[k]`` of batch
    row ``row[k]`` (``col_reversed[k]``: the same step of the sentence read backwards);
    ``last[j]``: the packed row of the last step of the ``j``-th sentence of the batch.
    """
    order = torch.argsort(lengths, descending=True, stable=True)
    ls = lengths.index_select(0, order)
    steps = torch.arange(int(ls[0]), device=lengths.device)
    t, j = torch.nonzero(steps.unsqueeze(1) < ls.unsqueeze(0), as_tuple=True)   # time major
    batch_sizes = torch.bincount(t, minlength=len(steps))
    offsets = torch.cumsum(batch_sizes, 0) - batch_sizes
    row = order.index_select(0, j)
    last_sorted = offsets.index_select(0, ls - 1) + torch.arange(len(ls), device=lengths.device)
    last = torch.empty_like(last_sorted)
    last[order] = last_sorted
    return order, row, t, ls.index_select(0, j) - 1 - t, batch_sizes.tolist(), last


def reverse_index(row: torch.Tensor, col: torch.Tensor, col_reversed: torch.Tensor, n: int) -> torch.Tensor:
    """For every packed row ``k`` of the reversed reading, the packed row of the forward reading
    that holds the same token (sentence ``row[k]``, token ``col_reversed[k]``)."""
    where = torch.empty((n, int(col.max()) + 1), dtype=torch.long, device=row.device)
    where[row, col] = torch.arange(len(row), device=row.device)
    return where[row, col_reversed]


class RNNEncoder(nn.Module):
    """Final hidden state(s) of a GRU/LSTM; ``rnn_impl``: the CPU recurrence, ``"fused"`` or
    ``"gather"`` (see the module docstring; the same function, other float rounding)."""

    features = "words"
    bidirectional = False
    rnn_impls = RNN_IMPLS

    def __init__(self, num_words: int, *, word_dim: int = 50, pos_dim: int = 5, max_length: int = 120,
                 hidden: int = 230, cell: str = "gru", vectors=None, rnn_impl: str = "fused", **_: object) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"unknown rnn cell {cell!r}; expected one of {sorted(CELLS)}")
        if rnn_impl not in RNN_IMPLS:
            raise ValueError(f"rnn_impl must be one of {list(RNN_IMPLS)}, got {rnn_impl!r}")
        self.rnn_impl = rnn_impl
        self.embed = WordPositionEmbedding(num_words, word_dim, pos_dim, max_length, vectors)
        self.rnn = CELLS[cell](self.embed.out_dim, hidden, batch_first=True, bidirectional=self.bidirectional)
        self.cell = cell
        self.hidden = hidden
        self.out_dim = hidden * (2 if self.bidirectional else 1)
        #: "auto": ``rnn_impl`` on CPU, the module's own forward (cuDNN) on CUDA; "fused" / "gather" /
        #: "module" force one (benchmarks)
        self.impl = "auto"

    def _directions(self) -> list[str]:
        return ["", "_reverse"] if self.bidirectional else [""]

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        lengths = batch["lengths"].clamp(min=1)
        impl = self.impl
        if impl == "auto":
            impl = "module" if lengths.device.type == "cuda" else self.rnn_impl
        elif impl not in ("fused", "gather", "module"):
            raise ValueError(f"rnn impl must be 'auto', 'fused', 'gather' or 'module', got {impl!r}")
        if impl == "module":
            return self.module_forward(batch)
        if lengths.numel() == 0:
            return self.embed.word.weight.new_zeros(0, self.out_dim)
        if impl == "gather":
            return self.gather_forward(batch, lengths)
        order, row, col, col_rev, batch_sizes, last = packing(lengths)
        x = self.embed({k: batch[k][row, col] for k in ("tokens", "pos1", "pos2")})     # [T, C]
        sfx = self._directions()
        if self.bidirectional:     # the reversed reading takes the same embedded tokens in its order
            x = torch.stack([x, x.index_select(0, reverse_index(row, col, col_rev, len(lengths)))])
        else:
            x = x.unsqueeze(0)
        w_ih = torch.stack([getattr(self.rnn, f"weight_ih_l0{s}") for s in sfx])      # [D, G, C]
        b_ih = torch.stack([getattr(self.rnn, f"bias_ih_l0{s}") for s in sfx])
        gi = torch.baddbmm(b_ih.unsqueeze(1), x, w_ih.transpose(1, 2))                 # [D, T, G]
        w_hh = torch.stack([getattr(self.rnn, f"weight_hh_l0{s}") for s in sfx])
        b_hh = torch.stack([getattr(self.rnn, f"bias_hh_l0{s}") for s in sfx])
        save = torch.is_grad_enabled() and any(p.requires_grad for p in (gi, w_hh, b_hh))
        final = FUSED[self.cell].apply(gi, w_hh, b_hh, batch_sizes, order, last, save)  # [D, n, H]
        return torch.cat(list(final), -1)

    def gather_forward(self, batch: dict[str, torch.Tensor], lengths: torch.Tensor) -> torch.Tensor:
        """``rnn_impl="gather"`` (:mod:`relext.model.encoders.rnn_gather`): the same packing, the gate
        inputs gathered from per-word projections, the lean recurrence."""
        order, row, col, col_rev, batch_sizes, last = packing(lengths)
        packed = {k: batch[k][row, col] for k in ("tokens", "pos1", "pos2")}
        read = [torch.arange(len(row), device=row.device)]
        if self.bidirectional:
            read.append(reverse_index(row, col, col_rev, len(lengths)))
        packed["read"] = read
        sfx = self._directions()
        gi = gathered_inputs(self.embed, self.rnn, sfx, packed)                       # [D, T, G]
        w_hh = torch.stack([getattr(self.rnn, f"weight_hh_l0{s}") for s in sfx])
        b_hh = torch.stack([getattr(self.rnn, f"bias_hh_l0{s}") for s in sfx])
        save = torch.is_grad_enabled() and any(p.requires_grad for p in (gi, w_hh, b_hh))
        final = GATHER[self.cell].apply(gi, w_hh, b_hh, batch_sizes, order, last, save)
        return torch.cat(list(final), -1)

    def module_forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The reference: the module's own forward over a packed sequence (what ran before the
        fused path; cuDNN on CUDA)."""
        x = self.embed(batch)
        packed = pack_padded_sequence(x, batch["lengths"].clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        if self.cell == "lstm":
            h = h[0]
        # h: [directions, n, hidden] (rows already back in the input order)
        return torch.cat(list(h), -1)


class BiRNNEncoder(RNNEncoder):
    bidirectional = True
