"""The RNN/BiRNN recurrence with gathered input projections and a lean step (``rnn_impl="gather"``).

The same function as the ``"fused"`` path of :mod:`relext.model.encoders.rnn` (the same parameters, the
same packed, length-sorted layout: no padding is embedded or computed), restructured where a
profile of two training batches (``benchmarks/re_rnn_profile.py``) put the time:

* **Input projection by gathers.** ``x W_ih^T`` over ``x = [word; pos1; pos2]`` is
  ``Ww word + W1 pos1 + W2 pos2``: every *distinct word of the batch* is projected once (both
  directions at once) and the two position tables once, and each token's gate input is the sum
  of three gathered rows (``embedding_bag``; its backward sums every token's gradient into the
  rows it read, then two small matrix products; :class:`relext.model.encoders.conv_gather.GatherConv`,
  shared with the CNN's gather path). A BiRNN's reversed reading only permutes the gather
  indices. Padding rows (word or position id 0) read the table as before but pass no gradient
  to it, as ``nn.Embedding(padding_idx=0)``.
* **A step of fewer operations.** The recurrent bias (and, for the GRU, the input part of the
  r and z gates) is added to the step buffers in one vectorized pass before the loop, so each
  step is one in-place matrix product that lands on its pre-activations, then the gate
  non-linearities in place. The backward first computes every step's local derivatives in a
  few vectorized passes over all tokens (``d gate pre-activations / d h``), so each step of the
  backward loop is one broadcast multiply and one matrix product (GRU); the gradients of the
  recurrent weights stay one matrix product over all steps.

Exact in real arithmetic: outputs and gradients equal the fused path's up to float summation
order (fixed for a batch: deterministic); ``tests/relext/test_rnn_gather.py``.
"""
from __future__ import annotations

import torch

from relext.model.encoders.conv_gather import GatherConv


def _steps(batch_sizes: list[int]) -> list[tuple[int, int, int]]:
    """``(offset, rows, previous offset)`` per time step of the packed layout (-1 at step 0)."""
    out, off, prev = [], 0, -1
    for bs in batch_sizes:
        out.append((off, bs, prev))
        prev, off = off, off + bs
    return out


def _gemm_(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """``c += a @ b`` in place, per direction (``[D, m, k] @ [D, k, n]``); one direction as a
    plain matrix product."""
    if c.shape[0] == 1:
        c[0].addmm_(a[0], b[0])
    else:
        c.baddbmm_(a, b)


def _gemm(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """``out = c + a @ b`` per direction, one plain matrix product each (``out[i]`` is contiguous
    where a batched product's output, strided across directions, would be copied)."""
    for i in range(c.shape[0]):
        torch.addmm(c[i], a[i], b[i], out=out[i])


def _previous_states(out: torch.Tensor, steps) -> torch.Tensor:
    """``[D, T, H]``: the state each packed row started its step from (zero at step 0)."""
    hprev = torch.empty_like(out)
    hprev[:, : steps[0][1]] = 0
    for off, bs, prev in steps[1:]:
        hprev[:, off:off + bs] = out[:, prev:prev + bs]
    return hprev


def _final_rows(grad_final: torch.Tensor, last: torch.Tensor, t_total: int) -> torch.Tensor:
    """``[D, T, H]`` gradient buffer holding each sentence's final-state gradient at its last
    packed row; every other row is written by the backward loop before it is read."""
    d, _, h = grad_final.shape
    buf = grad_final.new_empty(d, t_total, h)
    buf[:, last] = grad_final
    return buf


class GatherGRU(torch.autograd.Function):
    """GRU over packed, length-sorted sequences for ``D`` directions (arguments as
    :class:`relext.model.encoders.rnn.FusedGRU`): ``gi [D, T, 3H]`` (gates r, z, n), ``w_hh [D, 3H, H]``,
    ``b_hh [D, 3H]``, ``batch_sizes``, ``order``, ``last``, ``save``. Returns ``[D, n, H]`` in
    batch order; zero initial state.

    Each forward step's matrix product lands in a small scratch buffer that stays in cache
    (``[r_pre, z_pre, h_prev W_hn^T + b_hn]``, the input part of r and z and the recurrent bias
    added before the loop); with ``save`` the step also writes its local derivatives while they
    are in cache, ``coef[k] = [a ghn r (1 - r), (h_prev - n) z (1 - z), a r, a, z]`` with
    ``a = (1 - z)(1 - n^2)``: the gradient of ``h`` scaled by them is ``[dr_pre, dz_pre,
    d(gh_n), dn_pre, d(h_prev) through z]``, so a backward step is one broadcast multiply and one
    matrix product (whose operand and added term are columns of that product)."""

    @staticmethod
    def forward(ctx, gi, w_hh, b_hh, batch_sizes, order, last, save):
        d, t_total, h3 = gi.shape
        h = h3 // 3
        steps = _steps(batch_sizes)
        w_t = w_hh.transpose(1, 2)                                 # [D, H, 3H]
        pre = torch.empty_like(gi)                                 # [gi_r + b_hr, gi_z + b_hz, b_hn]
        torch.add(gi[..., :2 * h], b_hh[:, None, :2 * h], out=pre[..., :2 * h])
        pre[..., 2 * h:] = b_hh[:, None, 2 * h:]
        gin = gi[..., 2 * h:]
        out = gi.new_empty(d, t_total, h)
        scratch = gi.new_empty(d * steps[0][1] * h3)          # a step's products, contiguous per direction
        coef = gi.new_empty(d, t_total, 5, h) if save else None
        one = gi.new_ones(())
        for off, bs, prev in steps:
            sl = slice(off, off + bs)
            s = scratch[:d * bs * h3].view(d, bs, h3)
            if prev >= 0:
                hp = out[:, prev:prev + bs]
                _gemm(pre[:, sl], hp, w_t, out=s)
            else:
                hp = None
                s.copy_(pre[:, sl])
            rz = s[..., :2 * h].sigmoid_()
            r, z = rz[..., :h], rz[..., h:]
            ghn = s[..., 2 * h:]
            n = torch.addcmul(gin[:, sl], r, ghn).tanh_()
            h_out = out[:, sl]
            if hp is not None:                                     # h = n + z (h_prev - n)
                torch.lerp(n, hp, z, out=h_out)
            else:                                                  # h_prev = 0: h = (1 - z) n
                torch.mul(n, 1 - z, out=h_out)
            if save:                                               # in place, few operations
                c = coef[:, sl]
                a = torch.addcmul(one, n, n, value=-1, out=c[..., 3, :])       # 1 - n^2
                a.addcmul_(z, a, value=-1)                                     # a = (1 - z)(1 - n^2)
                ar = torch.mul(a, r, out=c[..., 2, :])                         # a r
                torch.addcmul(ar, ar, r, value=-1, out=c[..., 0, :]).mul_(ghn)  # a r (1 - r) ghn
                dz = torch.neg(n, out=c[..., 1, :]) if hp is None else torch.sub(hp, n, out=c[..., 1, :])
                dz.mul_(z)
                dz.addcmul_(dz, z, value=-1)                                   # (h_prev - n) z (1 - z)
                c[..., 4, :] = z
        if save:
            ctx.save_for_backward(w_hh, out, coef, last)
            ctx.steps = steps
        return out.index_select(1, last)

    @staticmethod
    def backward(ctx, grad_final):
        w_hh, out, coef, last = ctx.saved_tensors
        d, t_total, h = out.shape
        steps = ctx.steps
        dh = _final_rows(grad_final, last, t_total)               # gradient reaching each state
        blk = torch.empty_like(coef)                              # [dr, dz, d(gh_n), dn_pre, dh z]
        flat = blk.view(d, t_total, 5 * h)
        for off, bs, prev in reversed(steps):
            sl = slice(off, off + bs)
            torch.mul(dh[:, sl].unsqueeze(-2), coef[:, sl], out=blk[:, sl])
            if prev >= 0:
                f = flat[:, sl]
                _gemm(f[..., 4 * h:], f[..., :3 * h], w_hh, out=dh[:, prev:prev + bs])
        dgh = flat[..., :3 * h]
        grad_w = torch.bmm(dgh.transpose(1, 2), _previous_states(out, steps))
        grad_b = dgh.sum(1)
        dgi = torch.cat([flat[..., :2 * h], flat[..., 3 * h:4 * h]], -1)   # r and z: as for gh
        return dgi, grad_w, grad_b, None, None, None, None


class GatherLSTM(torch.autograd.Function):
    """LSTM as :class:`GatherGRU` (same arguments): ``gi [D, T, 4H]`` (gates i, f, g, o as in
    ``nn.LSTM``), ``w_hh [D, 4H, H]``, ``b_hh [D, 4H]``; zero initial state and cell."""

    @staticmethod
    def forward(ctx, gi, w_hh, b_hh, batch_sizes, order, last, save):
        d, t_total, h4 = gi.shape
        h = h4 // 4
        steps = _steps(batch_sizes)
        w_t = w_hh.transpose(1, 2)
        acts = torch.add(gi, b_hh.unsqueeze(1))                   # pre-activations, then activations
        out = gi.new_empty(d, t_total, h)
        cell = gi.new_empty(d, t_total, h)
        tanh_c = gi.new_empty(d, t_total, h)
        for off, bs, prev in steps:
            sl = slice(off, off + bs)
            a = acts[:, sl]
            if prev >= 0:
                _gemm_(a, out[:, prev:prev + bs], w_t)
            a[..., :2 * h].sigmoid_()
            a[..., 2 * h:3 * h].tanh_()
            a[..., 3 * h:].sigmoid_()
            c = torch.mul(a[..., :h], a[..., 2 * h:3 * h], out=cell[:, sl])
            if prev >= 0:
                c.addcmul_(a[..., h:2 * h], cell[:, prev:prev + bs])
            torch.mul(a[..., 3 * h:], torch.tanh(c, out=tanh_c[:, sl]), out=out[:, sl])
        if save:
            ctx.save_for_backward(w_hh, out, cell, acts, tanh_c, last)
            ctx.steps = steps
        return out.index_select(1, last)

    @staticmethod
    def backward(ctx, grad_final):
        w_hh, out, cell, acts, tanh_c, last = ctx.saved_tensors
        d, t_total, h = out.shape
        steps = ctx.steps
        i, f, g, o = acts.split(h, -1)
        cprev = _previous_states(cell, steps)
        hprev = _previous_states(out, steps)
        # local derivatives: dc = dc_carry + dh o (1 - tanh(c)^2); d[i, f, g]_pre = dc [g i (1 - i),
        # c_prev f (1 - f), i (1 - g^2)]; do_pre = dh tanh(c) o (1 - o); dc_prev = dc f
        k_c = o * (1 - tanh_c * tanh_c)
        k_o = tanh_c * o * (1 - o)
        coef = out.new_empty(d, t_total, 3, h)
        torch.mul(g, i * (1 - i), out=coef[:, :, 0])
        torch.mul(cprev, f * (1 - f), out=coef[:, :, 1])
        torch.mul(i, 1 - g * g, out=coef[:, :, 2])
        dh = _final_rows(grad_final, last, t_total)
        dc = torch.empty_like(dh)
        dc[:, last] = 0
        dpre = out.new_empty(d, t_total, 4 * h)
        for off, bs, prev in reversed(steps):
            sl = slice(off, off + bs)
            dht, dct = dh[:, sl], dc[:, sl]
            dct.addcmul_(dht, k_c[:, sl])
            p = dpre[:, sl]
            torch.mul(dct.unsqueeze(-2), coef[:, sl], out=p[..., :3 * h].unflatten(-1, (3, h)))
            torch.mul(dht, k_o[:, sl], out=p[..., 3 * h:])
            if prev >= 0:
                torch.mul(dct, f[:, sl], out=dc[:, prev:prev + bs])
                if d == 1:
                    torch.mm(p[0], w_hh[0], out=dh[0, prev:prev + bs])
                else:
                    torch.bmm(p, w_hh, out=dh[:, prev:prev + bs])
        grad_w = torch.bmm(dpre.transpose(1, 2), hprev)
        return dpre, grad_w, dpre.sum(1), None, None, None, None


GATHER = {"gru": GatherGRU, "lstm": GatherLSTM}


def _no_grad_at_zero(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` with row 0 (padding) detached: read as it is, never given a gradient."""
    return torch.cat([weight[:1].detach(), weight[1:]])


def gathered_inputs(embed, rnn, directions: list[str], packed: dict[str, torch.Tensor]) -> torch.Tensor:
    """The gate inputs ``x W_ih^T + b_ih`` ``[D, T, G]`` of every packed token for each direction
    ``directions[d]`` (parameter suffix of ``rnn``: ``""`` or ``"_reverse"``), read in the packed
    order ``packed["read"][d]`` (``[T]``: the token each packed row of direction ``d`` reads).

    ``packed``: ``tokens``, ``pos1``, ``pos2`` ``[T]`` of the packed tokens (forward reading)."""
    wd = embed.word.embedding_dim
    pd = embed.pos1.embedding_dim
    n_dir = len(directions)
    w_ih = [getattr(rnn, f"weight_ih_l0{s}") for s in directions]            # [G, C] each
    b_ih = [getattr(rnn, f"bias_ih_l0{s}") for s in directions]
    g = w_ih[0].shape[0]
    tok = packed["tokens"]
    uniq, inv = torch.unique(tok, return_inverse=True)
    eu = embed.word.weight.index_select(0, uniq)
    if bool((uniq == 0).any()):                                 # padding id: read, not trained
        eu = torch.where((uniq == 0).unsqueeze(1), eu.detach(), eu)
    wc = torch.cat([w[:, :wd].t() for w in w_ih], 1)                          # [wd, D * G]
    p1, p2 = _no_grad_at_zero(embed.pos1.weight), _no_grad_at_zero(embed.pos2.weight)
    rows1 = [p1 @ w[:, wd:wd + pd].t() + b for w, b in zip(w_ih, b_ih)]       # the bias folded in
    rows2 = [p2 @ w[:, wd + pd:].t() for w in w_ih]
    npos = p1.shape[0]
    small = torch.cat([*rows1, *rows2])
    nw = uniq.shape[0] * n_dir
    idx = []
    for d in range(n_dir):
        k = packed["read"][d]
        idx.append(torch.stack([inv.index_select(0, k) * n_dir + d,
                                nw + d * npos + packed["pos1"].index_select(0, k),
                                nw + (n_dir + d) * npos + packed["pos2"].index_select(0, k)], 1))
    return GatherConv.apply(eu, wc, small, torch.cat(idx)).view(n_dir, -1, g)
