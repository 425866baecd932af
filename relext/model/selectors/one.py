""""One" selector (Zeng et al. 2015, multi-instance learning): in training a bag is its sentence
that scores its label highest; at test time the score of relation r is the highest
probability of r over the bag's sentences (a max over sentences, hence the alias ``max``)."""
from __future__ import annotations

import torch
from torch import nn

from relext.model.selectors.segment import segment_max


class OneSelector(nn.Module):
    def __init__(self, hidden: int = 0, num_classes: int = 5, **_: object) -> None:
        super().__init__()

    def pool(self, rep, seg, num, classifier, labels=None):
        if labels is None:
            raise ValueError("the one selector needs the bag labels in training")
        with torch.no_grad():
            s = torch.log_softmax(classifier(rep), -1).gather(1, labels.index_select(0, seg).unsqueeze(1)).squeeze(1)
            best = segment_max(s, seg, num)
            hit = (s == best.index_select(0, seg))
            # first sentence reaching the max in each bag
            idx = torch.arange(rep.shape[0], device=rep.device)
            cand = torch.where(hit, idx, torch.full_like(idx, rep.shape[0]))
            pick = torch.full((num,), rep.shape[0], dtype=torch.long, device=rep.device).scatter_reduce(0, seg, cand, reduce="amin")
        return rep.index_select(0, pick)

    def predict_proba(self, rep, seg, num, classifier, dropout=None):
        return segment_max(torch.softmax(classifier(rep), -1), seg, num)
