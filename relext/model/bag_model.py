"""A bag-level relation extractor: sentence encoder + bag selector + linear classifier, composed.

``forward`` gives training logits (dropout on the bag representation, as OpenNRE);
``predict_proba`` gives ``[B, num_classes]`` probabilities (attention: per-relation queries).
"""
from __future__ import annotations

import torch
from torch import nn

from relext.model.encoders import get_encoder
from relext.model.selectors import get_selector
from wikigenderbias.schema import RELATIONS


class BagModel(nn.Module):
    def __init__(self, encoder: nn.Module, selector: nn.Module, num_classes: int = len(RELATIONS),
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.encoder = encoder
        self.selector = selector
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(encoder.out_dim, num_classes)
        self.num_classes = num_classes

    def forward(self, batch: dict[str, torch.Tensor], seg: torch.Tensor, num_bags: int,
                labels: torch.Tensor | None = None) -> torch.Tensor:
        rep = self.encoder(batch)
        bag = self.selector.pool(rep, seg, num_bags, self.classifier, labels)
        return self.classifier(self.dropout(bag))

    def predict_proba(self, batch: dict[str, torch.Tensor], seg: torch.Tensor, num_bags: int) -> torch.Tensor:
        rep = self.encoder(batch)
        return self.selector.predict_proba(rep, seg, num_bags, self.classifier)


def build_model(encoder: str, selector: str, *, num_words: int, vectors=None, num_classes: int = len(RELATIONS),
                dropout: float = 0.5, **encoder_kwargs) -> BagModel:
    enc = get_encoder(encoder, num_words=num_words, vectors=vectors, **encoder_kwargs)
    sel = get_selector(selector, hidden=enc.out_dim, num_classes=num_classes)
    return BagModel(enc, sel, num_classes=num_classes, dropout=dropout)
