"""Average selector: a bag is the mean of its sentence representations (OpenNRE's BagAverage)."""
from __future__ import annotations

import torch
from torch import nn

from relext.model.selectors.segment import segment_mean


class AverageSelector(nn.Module):
    def __init__(self, hidden: int = 0, num_classes: int = 5, **_: object) -> None:
        super().__init__()

    def pool(self, rep, seg, num, classifier, labels=None):
        return segment_mean(rep, seg, num)

    def predict_proba(self, rep, seg, num, classifier, dropout=None):
        return torch.softmax(classifier(segment_mean(rep, seg, num)), -1)
