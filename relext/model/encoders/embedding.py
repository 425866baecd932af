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
                self.word.weight[0].zero_()   # padding embeds to zeros (the convolution's zero padding)
        self.pos1 = nn.Embedding(2 * max_length, pos_dim, padding_idx=0)
        self.pos2 = nn.Embedding(2 * max_length, pos_dim, padding_idx=0)
        self.out_dim = word_dim + 2 * pos_dim
        self.max_length = max_length

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([self.word(batch["tokens"]), self.pos1(batch["pos1"]), self.pos2(batch["pos2"])], -1)
