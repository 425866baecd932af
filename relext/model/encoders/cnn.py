"""CNN and PCNN sentence encoders (Zeng et al. 2014 / 2015, as in OpenNRE).

Convolution (window ``kernel``, zero padding ``kernel // 2``) over ``[word; pos1; pos2]``
embeddings, ReLU, max pooling over the real tokens only. PCNN pools three pieces split at the
head and tail starts (``pieces`` from :func:`relext.model.bags.word_features`) and concatenates them
(``3 * hidden``).

Two implementations of the same function, picked by ``conv_impl`` (``ExtractorConfig.conv_impl``,
part of a run's identity; equal in real arithmetic, not bit for bit):

* ``"dense"`` (every run before the gather path): sentences in length-sorted buckets of
  ``bucket_size``, each cut to its longest sentence, convolved as one matrix product over
  im2col windows (:class:`Im2colConv`) and pooled by :class:`PiecewiseMax`.
* ``"gather"`` (the default since the equivalence studies): only the real tokens, packed sentence after sentence; each distinct word of the
  batch projected once per tap and every token's output a sum of gathered rows
  (:mod:`relext.model.encoders.conv_gather`), pooled by
  :class:`~relext.model.encoders.conv_gather.PackedPiecewiseMax`.

What padding may contribute, on both paths:

* to the convolution at a real token: zero. A neighbour outside the sentence (``kernel // 2``
  positions before its start, after its end) is a zero input vector: the dense path reads the
  padding ids, which embed to zero rows (word, position 1 and position 2 id 0 are
  ``padding_idx`` rows, zero from initialisation and never updated); the gather path leaves such
  taps out. So a sentence's outputs do not depend on the batch it is in.
* to the pooling: nothing. A padding position (``pieces == 0``: positions ``>= length``) is in no
  piece: the dense path computes an output there (its bucket is as wide as its longest sentence)
  and :class:`PiecewiseMax` sends it to a discarded slot; the gather path never computes it.
* an empty piece (PCNN: head and tail at one token leaves the middle piece empty; the last
  piece is empty when the later entity starts at the sentence's last token) pools to 0, as OpenNRE's ReLU of
  ``-inf``; the ReLU follows the max, which equals the max of the ReLU. The gradient of each
  pooled value goes to the token(s) holding the maximum (a float tie, probability ~0, sends it
  to each tied token), and to none where the ReLU cut it.
"""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from relext.model.encoders.conv_gather import PackedPiecewiseMax, gather_conv, packed_tokens
from relext.model.encoders.embedding import WordPositionEmbedding

#: The convolution's implementations (``ExtractorConfig.conv_impl``; see :class:`CNNEncoder`).
CONV_IMPLS = ("dense", "gather")


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
    """CNN: one max over the real tokens of each sentence (``[n, hidden]``). ``conv_impl``:
    ``"dense"`` or ``"gather"`` (see the module docstring: the same function, the padding
    semantics spelled out there); ``bucket_size`` applies to the dense path only."""

    features = "words"
    conv_impls = CONV_IMPLS
    #: the path a new run gets when its config names none (``ExtractorConfig.conv_impl = None``):
    #: ``"gather"``, equivalent to ``"dense"`` within 0.005 F1 on every quantity of CNN's and PCNN's
    #: confirmatory studies (``benchmarks/results/re_equivalence_cnn.md``, ``re_equivalence_confirm.md``)
    default_conv_impl = "gather"

    def __init__(self, num_words: int, *, word_dim: int = 50, pos_dim: int = 5, max_length: int = 120,
                 hidden: int = 230, kernel: int = 3, vectors=None, bucket_size: int = 64,
                 conv_impl: str = "dense", **_: object) -> None:
        super().__init__()
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(f"kernel must be a positive odd number, got {kernel}")
        if conv_impl not in CONV_IMPLS:
            raise ValueError(f"conv_impl must be one of {list(CONV_IMPLS)}, got {conv_impl!r}")
        self.conv_impl = conv_impl
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

    @property
    def impl(self) -> str:
        """The convolution's implementation (``benchmarks/re_speed.py``'s ``pcnn:attention:gather``)."""
        return self.conv_impl

    @impl.setter
    def impl(self, value: str) -> None:
        if value not in CONV_IMPLS:
            raise ValueError(f"conv_impl must be one of {list(CONV_IMPLS)}, got {value!r}")
        self.conv_impl = value

    def _pool_slots(self, packed: dict[str, torch.Tensor], n: int) -> tuple[torch.Tensor, int]:
        """Per packed token, its pooling slot + 1 (0: not pooled, a token outside every piece),
        and the number of slots (one per sentence)."""
        return torch.where(packed["pieces"] > 0, packed["sent"] + 1, 0), n

    def _forward_gather(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """``conv_impl="gather"``: the real tokens only, packed sentence after sentence, convolved
        by :func:`relext.model.encoders.conv_gather.gather_conv` and pooled by the same
        :class:`~relext.model.encoders.conv_gather.PackedPiecewiseMax` (every slot of the batch at once)."""
        packed = packed_tokens(batch)
        n = batch["lengths"].shape[0]
        y = gather_conv(self.embed, self.conv.weight, self.conv.bias, packed)       # [N, H]
        slot, k = self._pool_slots(packed, n)
        return PackedPiecewiseMax.apply(y, slot, k).reshape(n, -1)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.conv_impl == "gather":
            return self._forward_gather(batch)
        return self._forward_dense(batch)

    def _forward_dense(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
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
    """Piecewise max pooling: one max per piece (before head, between, after tail). A new run's
    default convolution is ``"gather"``: equivalent to ``"dense"`` within 0.005 F1 on micro F1 and
    every relation's gap (30 paired seeds, TOST; ``benchmarks/results/re_equivalence_confirm.md``)."""

    default_conv_impl = "gather"

    def __init__(self, num_words: int, **kwargs) -> None:
        super().__init__(num_words, **kwargs)
        self.out_dim = 3 * self.hidden

    def _pool(self, y: torch.Tensor, pieces: torch.Tensor) -> torch.Tensor:
        # an empty piece pools to 0 as in OpenNRE (ReLU of -inf); ReLU after the max is the same
        # as before it
        pooled = piecewise_max(y, pieces, 3, relu=True)                # [n, 3, H]
        return pooled.reshape(y.shape[0], -1)

    def _pool_slots(self, packed: dict[str, torch.Tensor], n: int) -> tuple[torch.Tensor, int]:
        pieces = packed["pieces"]
        return torch.where(pieces > 0, packed["sent"] * 3 + pieces, 0), 3 * n
