"""RNN and BiRNN sentence encoders (GRU or LSTM over word + position embeddings).

The sentence representation is the final hidden state (BiRNN: forward and backward final states
concatenated), as in OpenNRE's TensorFlow RNN encoders; padding is skipped with packed sequences.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from relext.encoders.embedding import WordPositionEmbedding

CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}


class RNNEncoder(nn.Module):
    features = "words"
    bidirectional = False

    def __init__(self, num_words: int, *, word_dim: int = 50, pos_dim: int = 5, max_length: int = 120,
                 hidden: int = 230, cell: str = "gru", vectors=None, **_: object) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"unknown rnn cell {cell!r}; expected one of {sorted(CELLS)}")
        self.embed = WordPositionEmbedding(num_words, word_dim, pos_dim, max_length, vectors)
        self.rnn = CELLS[cell](self.embed.out_dim, hidden, batch_first=True, bidirectional=self.bidirectional)
        self.cell = cell
        self.out_dim = hidden * (2 if self.bidirectional else 1)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        x = self.embed(batch)
        packed = pack_padded_sequence(x, batch["lengths"].clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        if self.cell == "lstm":
            h = h[0]
        # h: [directions, n, hidden] (rows already back in the input order)
        return torch.cat(list(h), -1)


class BiRNNEncoder(RNNEncoder):
    bidirectional = True
