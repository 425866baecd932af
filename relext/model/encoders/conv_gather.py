"""The CNN/PCNN convolution as gathers of per-word projections (``conv_impl="gather"``).

A window-``k`` convolution over ``x_j = [word_j; pos1_j; pos2_j]`` is a sum of per-tap products:

    y_i = b + sum_t W_t x_{i+t-p}          (p = k // 2; x_j = 0 outside the sentence)
        = b + sum_t (Ww_t word_{i+t-p} + W1_t pos1_{i+t-p} + W2_t pos2_{i+t-p})

so every *distinct word of the batch* is projected once for all taps (``[U, word_dim] @
[word_dim, k * H]``: a batch of 160 training bags has ~15,000 tokens but ~3,300 distinct words),
and each token's output is a sum of gathered rows (one ``embedding_bag`` in ``sum`` mode, which
adds the rows without materializing the ``[N, k, H]`` taps). Gradients flow back through the
gathers: the output gradient of every token is summed into the rows it read (again an
``embedding_bag``, over the entries sorted by row), then two small matrix products give the
word vectors' and the filters' gradients (:class:`GatherConv`).

Positions: inside a sentence the position ids of neighbours are consecutive (``pos(i + d) =
pos(i) + d``: :func:`relext.model.bags.word_features` never clips within the ``max_length`` window), so
the ``k`` taps of one position table collapse into one row per ``(edge case, position id)``:
``R[v, q] = sum_{t present} W1_t pos1[q + t - p]``, where the edge case ``v`` counts the taps that
fall before the sentence's start and after its end (they contribute zero, like the dense path's
zero padding: its padding ids embed to zero rows). The bias is folded into the first table. So a
token reads ``k + 2`` rows (``k`` word taps, two position rows). A batch whose position ids are
not consecutive within a sentence (never from ``word_features``; possible from hand-made inputs)
takes the general form: one row per tap and table, and the bias as a row of its own.

Only the real tokens of the batch are computed (packed rows, sentence after sentence: no length
buckets, no padding positions). Everything is exact in real arithmetic: the outputs and gradients
equal the dense path's (:class:`relext.model.encoders.cnn.Im2colConv`) up to float summation order,
which is fixed for a given batch (deterministic).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


class GatherConv(torch.autograd.Function):
    """``y[i] = sum_s table[idx[i, s]]`` with ``table = [eu @ wc as [U * k, H] rows; small]``
    (row ``u * k + t``: distinct word ``u`` through tap ``t``; ``small``: the position rows, the
    bias and a zero row). ``eu [U, word_dim]``, ``wc [word_dim, k * H]``, ``small [R, H]``,
    ``idx [N, s]`` -> ``[N, H]``.

    The backward sorts the entries of ``idx`` by table row once (stable: every row sums its
    tokens in ascending order, so the result is deterministic) and sums each row's tokens' output
    gradients with ``embedding_bag`` (about 2x faster on CPU than ``embedding_bag``'s own dense
    backward at these sizes: ~75,000 entries into ~11,000 rows of 230); the word rows' gradient
    then goes through the projection by two matrix products.
    """

    @staticmethod
    def forward(ctx, eu: torch.Tensor, wc: torch.Tensor, small: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        u, h = eu.shape[0], small.shape[1]
        uk = u * (wc.shape[1] // h)
        table = small.new_empty(uk + small.shape[0], h)
        torch.mm(eu, wc, out=table[:uk].view(u, wc.shape[1]))     # no copy: the product lands in the table
        table[uk:].copy_(small)
        ctx.save_for_backward(eu, wc, idx)
        ctx.rows, ctx.uk = table.shape[0], uk
        return F.embedding_bag(idx, table, mode="sum")

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        eu, wc, idx = ctx.saved_tensors
        flat = idx.reshape(-1)
        _, order = torch.sort(flat, stable=True)
        counts = torch.bincount(flat, minlength=ctx.rows)
        offsets = counts.cumsum(0) - counts
        tokens = order.div_(idx.shape[1], rounding_mode="floor")
        gt = F.embedding_bag(tokens, grad.contiguous(), offsets, mode="sum")      # [rows, H]
        gz = gt[: ctx.uk].view(eu.shape[0], wc.shape[1])
        geu = gz @ wc.t() if ctx.needs_input_grad[0] else None
        gwc = eu.t() @ gz if ctx.needs_input_grad[1] else None
        gsmall = gt[ctx.uk :] if ctx.needs_input_grad[2] else None
        return geu, gwc, gsmall, None


class PackedPiecewiseMax(torch.autograd.Function):
    """ReLU of the max over the packed tokens of each slot: ``y [N, H]``, ``slot [N]`` (0 = not
    pooled, ``1..S`` = the slot) -> ``[S, H]``; an empty slot gives 0.

    The semantics of :class:`relext.model.encoders.cnn.PiecewiseMax` with ``relu=True`` (each output's
    gradient goes to the token(s) holding its maximum, none where the ReLU cut it; a float tie,
    probability ~0 for convolution outputs, sends it to each tied token; tokens of slot 0 get
    none), for the gather path's packed rows. The backward builds the maximum mask in float with
    ``eq(out=)`` and multiplies (``torch.where`` with a scattered boolean mask was 3x slower on
    CPU); a masked-out token's gradient may be ``-0.0`` where PiecewiseMax writes ``+0.0``.
    """

    @staticmethod
    def forward(ctx, y: torch.Tensor, slot: torch.Tensor, slots: int) -> torch.Tensor:
        h = y.shape[1]
        out = y.new_full((slots + 1, h), float("-inf"))
        out = out.scatter_reduce(0, slot.unsqueeze(1).expand(-1, h), y, reduce="amax", include_self=True)
        out.clamp_(min=0)
        ctx.save_for_backward(y, slot, out)
        return out[1:]

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        y, slot, out = ctx.saved_tensors
        full = torch.cat([grad.new_zeros(1, grad.shape[1]), grad]) * (out > 0)     # slot 0: not pooled
        at = out.index_select(0, slot)
        torch.eq(y, at, out=at)                                    # 1.0 where the token holds the max
        return at.mul_(full.index_select(0, slot)), None, None


def packed_tokens(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The real tokens of a batch, sentence after sentence: ``tokens``, ``pos1``, ``pos2``,
    ``pieces`` ``[N]``, ``sent`` (the token's row in the batch), ``index`` (its position in its
    sentence) and ``length`` (its sentence's length). Positions ``>= lengths`` are padding and
    are dropped."""
    tokens = batch["tokens"]
    n, w = tokens.shape
    lengths = batch["lengths"].clamp(max=w)
    ar = torch.arange(w, device=tokens.device)
    keep = (ar.unsqueeze(0) < lengths.unsqueeze(1)).reshape(-1).nonzero().squeeze(1)
    out = {k: batch[k].reshape(-1).index_select(0, keep) for k in ("tokens", "pos1", "pos2", "pieces")}
    out["sent"] = keep.div(w, rounding_mode="floor")
    out["index"] = keep - out["sent"] * w
    out["length"] = lengths.index_select(0, out["sent"])
    return out


def _consecutive(ids: torch.Tensor, sent: torch.Tensor) -> bool:
    """Do the position ids step by +1 from one token to the next within every sentence?"""
    if ids.numel() < 2:
        return True
    return bool(((ids[1:] - ids[:-1] == 1) | (sent[1:] != sent[:-1])).all())


def _taps(weight: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Channels ``lo:hi`` of a ``Conv1d`` weight ``[H, C, k]`` as ``[hi - lo, k * H]``: column
    ``t * H + j`` = ``weight[j, channel, t]``."""
    h, _, k = weight.shape
    return weight[:, lo:hi, :].permute(1, 2, 0).reshape(hi - lo, k * h)


def _edge_rows(table: torch.Tensor, weight: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Position rows of every edge case: ``[(p + 1)^2 * P, H]``, row ``v * P + q`` = the sum over
    the taps ``t`` present in edge case ``v = a * (p + 1) + c`` (taps ``a .. k - 1 - c``) of
    ``W_t table[q + t - p]`` (ids outside the table: zero), as one product of masked windows of
    the embedding table with the filters' position channels."""
    h, _, k = weight.shape
    p = k // 2
    P, d = table.shape
    win = F.pad(table, (0, 0, p, p)).unfold(0, k, 1).transpose(1, 2)            # [P, k, d]: table[q + t - p]
    t = torch.arange(k, device=table.device)
    cases = [(a, c) for a in range(p + 1) for c in range(p + 1)]
    present = torch.stack([(t >= a) & (t <= k - 1 - c) for a, c in cases]).to(table.dtype)   # [V, k]
    rows = (win.unsqueeze(0) * present[:, None, :, None]).reshape(len(cases) * P, k * d)
    taps = weight[:, lo:hi, :].permute(2, 1, 0).reshape(k * d, h)              # row t * d + c
    return rows @ taps


def gather_conv(embed, weight: torch.Tensor, bias: torch.Tensor, packed: dict[str, torch.Tensor]) -> torch.Tensor:
    """The convolution's output ``[N, H]`` at the real tokens of ``packed`` (see
    :func:`packed_tokens`), for ``embed`` (:class:`~relext.model.encoders.embedding.WordPositionEmbedding`)
    and a ``Conv1d``'s ``weight [H, C, k]`` and ``bias [H]``."""
    h, _, k = weight.shape
    p = k // 2
    wd, pd = embed.word.embedding_dim, embed.pos1.embedding_dim
    tok, sent, index, length = packed["tokens"], packed["sent"], packed["index"], packed["length"]
    pos1, pos2 = packed["pos1"], packed["pos2"]
    n_tok = tok.shape[0]
    if n_tok == 0:
        return weight.new_zeros(0, h)
    uniq, inv = torch.unique(tok, return_inverse=True)
    eu = embed.word.weight.index_select(0, uniq)
    nw = uniq.shape[0] * k
    P = embed.pos1.num_embeddings
    fast = _consecutive(pos1, sent) and _consecutive(pos2, sent)
    if fast:
        r1 = _edge_rows(embed.pos1.weight, weight, wd, wd + pd) + bias       # the bias folded in
        r2 = _edge_rows(embed.pos2.weight, weight, wd + pd, wd + 2 * pd)
        small = torch.cat([r1, r2, bias.new_zeros(1, h)])
    else:
        z1 = (embed.pos1.weight @ _taps(weight, wd, wd + pd)).view(-1, h)   # row q * k + t
        z2 = (embed.pos2.weight @ _taps(weight, wd + pd, wd + 2 * pd)).view(-1, h)
        small = torch.cat([z1, z2, bias.unsqueeze(0), bias.new_zeros(1, h)])
    zero = nw + small.shape[0] - 1
    flat = torch.arange(n_tok, device=tok.device)
    cols = []
    for t in range(k):
        d = t - p
        src = (flat + d).clamp_(0, n_tok - 1)
        inside = (index + d >= 0) & (index + d < length)
        cols.append(torch.where(inside, inv.index_select(0, src) * k + t, zero))
        if not fast:
            cols.append(torch.where(inside, nw + pos1.index_select(0, src) * k + t, zero))
            cols.append(torch.where(inside, nw + P * k + pos2.index_select(0, src) * k + t, zero))
    if fast:
        v = (p - index).clamp(min=0) * (p + 1) + (index + p - (length - 1)).clamp(min=0)
        cols.append(nw + v * P + pos1)
        cols.append(nw + (p + 1) ** 2 * P + v * P + pos2)
    else:
        cols.append(torch.full_like(tok, nw + 2 * P * k))                  # the bias row
    return GatherConv.apply(eu, _taps(weight, 0, wd), small, torch.stack(cols, 1))
