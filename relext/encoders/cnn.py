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

from relext.encoders.embedding import WordPositionEmbedding, bucketed


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

    def _conv(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Convolution as one matrix product over channels-last windows: ``[n, l, H]``.

        Same parameters and result as ``self.conv`` on ``[n, C, l]``; the im2col form keeps the
        pooling below in the contiguous layout and is faster on CPU."""
        x = self.embed(batch)                                         # [n, l, C]
        n, l, c = x.shape
        k = self.conv.kernel_size[0]
        xp = F.pad(x, (0, 0, k // 2, k // 2))
        win = torch.cat([xp[:, i : i + l] for i in range(k)], -1) if k > 1 else x   # [n, l, k*C]
        weight = self.conv.weight.permute(2, 1, 0).reshape(k * c, -1)             # [k*C, H]
        return torch.addmm(self.conv.bias, win.reshape(n * l, k * c), weight).view(n, l, -1)

    def _encode(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        y = self._conv(batch)
        pad = (batch["pieces"] == 0).unsqueeze(-1)                     # [n, l, 1]
        return F.relu(y.masked_fill(pad, float("-inf")).max(1).values)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return bucketed(self._encode, batch, self.bucket_size)


class PCNNEncoder(CNNEncoder):
    """Piecewise max pooling: one max per piece (before head, between, after tail)."""

    def __init__(self, num_words: int, **kwargs) -> None:
        super().__init__(num_words, **kwargs)
        self.out_dim = 3 * self.hidden
        self.register_buffer("_piece_ids", torch.arange(1, 4), persistent=False)

    def _encode(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        y = self._conv(batch)                                          # [n, l, H]
        pieces = batch["pieces"].unsqueeze(-1)                         # [n, l, 1]
        with torch.no_grad():
            # where each piece (1, 2, 3) peaks: argmax under an additive 0 / -inf mask
            outside = pieces != self._piece_ids                        # [n, l, 3]
            neg = torch.zeros(outside.shape, dtype=y.dtype, device=y.device).masked_fill_(outside, float("-inf"))
            where = (y.unsqueeze(2) + neg.unsqueeze(-1)).argmax(1)    # [n, 3, H]
            nonempty = (~outside).any(1).unsqueeze(-1)                 # [n, 3, 1]
        # gather the maxima (its backward is a cheap scatter, unlike amax's); an empty piece
        # pools to 0 as in OpenNRE; ReLU after the max is the same as before it.
        pooled = y.gather(1, where) * nonempty                         # [n, 3, H]
        return F.relu(pooled.reshape(y.shape[0], -1))
