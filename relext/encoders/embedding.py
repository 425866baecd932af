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


def length_buckets(lengths: torch.Tensor, bucket_size: int) -> list[torch.Tensor]:
    """Indices of the rows sorted by length, cut into buckets of ``bucket_size`` rows."""
    order = torch.argsort(lengths, stable=True)
    return list(order.split(bucket_size)) if bucket_size > 0 else [order]


def bucketed(fn, batch: dict[str, torch.Tensor], bucket_size: int) -> torch.Tensor:
    """Apply ``fn`` to length-sorted buckets, each trimmed to its own longest sentence (cuts the
    padding a whole-batch pad would carry), and return rows in the original order."""
    lengths = batch["lengths"]
    n = lengths.shape[0]
    if bucket_size <= 0 or n <= bucket_size:
        return fn(batch)
    outs, idxs = [], []
    for idx in length_buckets(lengths, bucket_size):
        width = int(lengths[idx].max())
        sub = {k: (v.index_select(0, idx)[:, :width] if v.dim() == 2 else v.index_select(0, idx))
               for k, v in batch.items()}
        outs.append(fn(sub))
        idxs.append(idx)
    out = torch.cat(outs, 0)
    inverse = torch.empty_like(lengths)
    inverse[torch.cat(idxs)] = torch.arange(n, device=lengths.device)
    return out.index_select(0, inverse)
