"""Word + two position embeddings, the input of every word-level encoder (OpenNRE's layout)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


class WordPositionEmbedding(nn.Module):
    """``[n, l] -> [n, l, word_dim + 2 * pos_dim]``; position index 0 is padding."""

    def __init__(self, num_words: int, word_dim: int = 50, pos_dim: int = 5, max_length: int = 120,
                 vectors: np.ndarray | None = None) -> None:
        super().__init__()
        self.word = nn.Embedding(num_words, word_dim, padding_idx=0)
        if vectors is not None:
            if vectors.shape != (num_words, word_dim):
                raise ValueError(f"word vectors have shape {vectors.shape}; expected {(num_words, word_dim)}")
            with torch.no_grad():
                self.word.weight.copy_(torch.from_numpy(np.asarray(vectors, dtype=np.float32)))
        self.pos1 = nn.Embedding(2 * max_length, pos_dim, padding_idx=0)
        self.pos2 = nn.Embedding(2 * max_length, pos_dim, padding_idx=0)
        self.out_dim = word_dim + 2 * pos_dim
        self.max_length = max_length

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([self.word(batch["tokens"]), self.pos1(batch["pos1"]), self.pos2(batch["pos2"])], -1)


def bucketed(fn, batch: dict[str, torch.Tensor], bucket_size: int) -> torch.Tensor:
    """Apply ``fn`` to length-sorted buckets, each trimmed to its own longest sentence (cuts the
    padding a whole-batch pad would carry), and return rows in the original order.

    The batch is sorted once and cut with ``split`` (whose backward concatenates), so the
    backward pass allocates no batch-sized zero tensor per bucket."""
    lengths = batch["lengths"]
    n = lengths.shape[0]
    if bucket_size <= 0 or n <= bucket_size:
        return fn(batch)
    order = torch.argsort(lengths, stable=True)
    widths = lengths.index_select(0, order).split(bucket_size)
    chunks = {k: v.index_select(0, order).split(bucket_size) for k, v in batch.items()}
    outs = []
    for b, w in enumerate(widths):
        width = max(int(w[-1]), 1)          # sorted ascending: the bucket's longest is last
        outs.append(fn({k: (c[b][:, :width] if c[b].dim() >= 2 else c[b]) for k, c in chunks.items()}))
    out = torch.cat(outs, 0)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(n, device=order.device)
    return out.index_select(0, inverse)
