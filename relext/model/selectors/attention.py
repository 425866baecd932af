"""Selective attention over the sentences of a bag (Lin et al. 2016, OpenNRE's BagAttention).

The query of relation r is the classifier's row r scaled by a learned diagonal. In training each
bag attends with the query of its own label; at test time every relation r attends with its own
query and the score of r is ``softmax(classifier(bag_r))[r]``, as in OpenNRE.
"""
from __future__ import annotations

import torch
from torch import nn

from relext.model.selectors.segment import segment_softmax, segment_sum


class AttentionSelector(nn.Module):
    def __init__(self, hidden: int, num_classes: int = 5, **_: object) -> None:
        super().__init__()
        self.diag = nn.Parameter(torch.ones(hidden))

    def _queries(self, classifier: nn.Linear) -> torch.Tensor:
        return classifier.weight * self.diag.unsqueeze(0)            # [C, H]

    def pool(self, rep, seg, num, classifier, labels=None):
        if labels is None:
            raise ValueError("attention needs the bag labels in training (query = label's relation)")
        q = self._queries(classifier).index_select(0, labels.index_select(0, seg))   # [n, H]
        w = segment_softmax((rep * q).sum(-1), seg, num)                              # [n]
        return segment_sum(w.unsqueeze(-1) * rep, seg, num)                            # [B, H]

    def predict_proba(self, rep, seg, num, classifier, dropout=None):
        q = self._queries(classifier)                                  # [C, H]
        w = segment_softmax(rep @ q.t(), seg, num)                     # [n, C]
        bag = segment_sum(w.unsqueeze(-1) * rep.unsqueeze(1), seg, num)   # [B, C, H]
        probs = torch.softmax(classifier(bag), -1)                     # [B, C(query), C]
        return probs.diagonal(dim1=1, dim2=2)                          # [B, C]
