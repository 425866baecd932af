"""CNN and PCNN sentence encoders (Zeng et al. 2014 / 2015, as in OpenNRE).

Convolution over ``[n, channels, length]``, ReLU, max pooling over the real tokens only
(padding is masked, not pooled). PCNN pools three pieces split at the head and tail starts
(``pieces`` from :func:`relext.bags.word_features`) and concatenates them (``3 * hidden``).
Sentences are processed in length-sorted buckets so little time goes into padding.
"""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from relext.encoders.embedding import WordPositionEmbedding


class Im2colConv(torch.autograd.Function):
    """1-D convolution ``[n, l, C] -> [n, l, H]`` with weight ``[H, C, k]`` (odd k, zero padding
    k // 2; with ``padded=True`` the input already carries those zero rows, ``[n, l + 2p, C]``,
    and gets its gradient in that shape) as ``addmm`` over the ``[n * l, k * C]`` window matrix.
    The hand-written backward
    folds the window gradient into one zero buffer (autograd's version of pad + slices + cat
    allocates and fills one buffer per window offset)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, padded: bool = False) -> torch.Tensor:
        h, _, k = weight.shape
        p = k // 2
        # padded: x already carries its k // 2 zero rows on each side ([n, l + 2p, C] -> [n, l, H])
        xp = x if padded or p == 0 else F.pad(x, (0, 0, p, p))
        n, lp, c = xp.shape
        l = lp - 2 * p
        win = torch.cat([xp[:, i : i + l] for i in range(k)], -1).reshape(n * l, k * c) if k > 1 \
            else xp.reshape(n * l, c)
        w2 = weight.permute(2, 1, 0).reshape(k * c, h)
        ctx.save_for_backward(win, w2)
        ctx.shape = (n, l, c, k, padded)
        return torch.addmm(bias, win, w2).view(n, l, h)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        win, w2 = ctx.saved_tensors
        n, l, c, k, padded = ctx.shape
        g = grad.reshape(n * l, -1)
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            gwin = (g @ w2.t()).view(n, l, k, c)
            if k == 1:
                grad_x = gwin[:, :, 0]
            else:
                p = k // 2
                gxp = gwin.new_zeros(n, l + 2 * p, c)
                for i in range(k):
                    gxp[:, i : i + l] += gwin[:, :, i]
                grad_x = gxp if padded else gxp[:, p : p + l]
        if ctx.needs_input_grad[1]:
            grad_w = (win.t() @ g).view(k, c, -1).permute(2, 1, 0)
        if ctx.needs_input_grad[2]:
            grad_b = g.sum(0)
        return grad_x, grad_w, grad_b, None


class PiecewiseMax(torch.autograd.Function):
    """Max over the tokens of each piece: ``y [n, l, H]``, ``piece [n, l]`` (0 = padding,
    1..k = piece) -> ``[n, k, H]``; an empty piece gives -inf, or 0 with ``relu`` (ReLU fused:
    ReLU of the max, the same as the max of the ReLU).

    Forward is one ``scatter_reduce(amax)`` pass over ``y`` (no ``[n, l, k, H]`` expansion);
    backward routes each output's gradient to the token(s) holding its maximum (a float tie,
    which has probability ~0 for convolution outputs, would send it to each tied token).
    About 2x faster than argmax + gather on CPU for PCNN's three pieces.
    """

    @staticmethod
    def forward(ctx, y: torch.Tensor, piece: torch.Tensor, k: int, relu: bool = False) -> torch.Tensor:
        n, l, h = y.shape
        rows = (torch.arange(n, device=y.device).unsqueeze(1) * (k + 1) + piece).reshape(-1)   # [n * l]
        out = y.new_full((n * (k + 1), h), float("-inf"))
        out = out.scatter_reduce(0, rows.unsqueeze(1).expand(-1, h), y.reshape(-1, h), reduce="amax",
                                 include_self=True)
        if relu:
            out.clamp_(min=0)
        ctx.save_for_backward(y, rows, out)
        ctx.relu = relu
        ctx.k = k
        return out.view(n, k + 1, h)[:, 1:]

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        y, rows, out = ctx.saved_tensors
        n, l, h = y.shape
        full = torch.cat([grad.new_zeros(n, 1, h), grad], 1).reshape(-1, h)      # slot 0: padding
        if ctx.relu:
            full = full * (out > 0)
        # each token's row of its piece's gradient, kept where the token holds the maximum and +0
        # elsewhere (whole-row index_select, not an element-wise gather; same values as
        # gather + masked_fill_(y != max, 0))
        gy = torch.where(y.reshape(-1, h) == out.index_select(0, rows), full.index_select(0, rows), 0.0)
        return gy.view(n, l, h), None, None, None


def piecewise_max(y: torch.Tensor, piece: torch.Tensor, k: int, relu: bool = False) -> torch.Tensor:
    return PiecewiseMax.apply(y, piece, k, relu)


class CNNEncoder(nn.Module):
    features = "words"

    def __init__(self, num_words: int, *, word_dim: int = 50, pos_dim: int = 5, max_length: int = 120,
                 hidden: int = 230, kernel: int = 3, vectors=None, bucket_size: int = 64, **_: object) -> None:
        super().__init__()
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(f"kernel must be a positive odd number, got {kernel}")
        self.embed = WordPositionEmbedding(num_words, word_dim, pos_dim, max_length, vectors)
        self.conv = nn.Conv1d(self.embed.out_dim, hidden, kernel, padding=kernel // 2)
        self.hidden = hidden
        self.bucket_size = bucket_size
        self.out_dim = hidden

    def _conv(self, x: torch.Tensor) -> torch.Tensor:
        """Convolution of embedded tokens ``[n, l + 2p, C]`` (already zero-padded by ``p =
        kernel // 2`` rows on each side) -> ``[n, l, H]``: same parameters and result as
        ``self.conv`` on the unpadded ``[n, C, l]``, computed as one matrix product over
        channels-last windows (im2col), which keeps the pooling in the contiguous layout and is
        faster on CPU; see :class:`Im2colConv`."""
        return Im2colConv.apply(x, self.conv.weight, self.conv.bias, True)

    def _pool(self, y: torch.Tensor, pieces: torch.Tensor) -> torch.Tensor:
        inside = (pieces > 0).long()                                   # one piece: the real tokens
        return piecewise_max(y, inside, 1, relu=True).squeeze(1)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Length-sorted buckets, each cut to its own longest sentence plus ``p`` padding
        positions on each side, are packed into one flat run of token ids and embedded at once
        (one embedding backward per batch; no embedding of the batch's padding, no padding copy
        before the convolution: padding ids embed to zero rows); then each bucket is convolved
        and pooled, and the rows are put back in the batch's order."""
        lengths = batch["lengths"]
        n = lengths.shape[0]
        p = self.conv.kernel_size[0] // 2
        if self.bucket_size <= 0 or n <= self.bucket_size:
            order = None
            groups = [torch.arange(n, device=lengths.device)]
        else:
            order = torch.argsort(lengths, stable=True)
            groups = list(order.split(self.bucket_size))
        ids = {k: [] for k in ("tokens", "pos1", "pos2")}
        pieces, shapes = [], []
        for g in groups:
            width = max(int(lengths.index_select(0, g).max()), 1)
            for k in ids:
                ids[k].append(F.pad(batch[k].index_select(0, g)[:, :width], (p, p)).reshape(-1))
            pieces.append(batch["pieces"].index_select(0, g)[:, :width])
            shapes.append((len(g), width + 2 * p))
        flat = self.embed({k: torch.cat(v) for k, v in ids.items()})          # [sum n_b (w_b + 2p), C]
        xs = flat.split([a * b for a, b in shapes])
        out = torch.cat([self._pool(self._conv(x.view(a, b, -1)), pc) for x, (a, b), pc in zip(xs, shapes, pieces)])
        if order is None:
            return out
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(n, device=order.device)
        return out.index_select(0, inverse)


class PCNNEncoder(CNNEncoder):
    """Piecewise max pooling: one max per piece (before head, between, after tail)."""

    def __init__(self, num_words: int, **kwargs) -> None:
        super().__init__(num_words, **kwargs)
        self.out_dim = 3 * self.hidden

    def _pool(self, y: torch.Tensor, pieces: torch.Tensor) -> torch.Tensor:
        # an empty piece pools to 0 as in OpenNRE (ReLU of -inf); ReLU after the max is the same
        # as before it
        pooled = piecewise_max(y, pieces, 3, relu=True)                # [n, 3, H]
        return pooled.reshape(y.shape[0], -1)
