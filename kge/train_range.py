"""Training against the whole range of the relation: ``EmbeddingConfig(tail_candidates="range")``.

For a positive ``(h, r, t)`` the model scores ``h`` against every entity seen as a tail of ``r`` in
training (the relation's range, Krompass et al. 2015's type constraint) plus ``negatives``
uniformly drawn entities shared by the batch, and the loss is the cross-entropy of ``t`` among
them (1-N scoring as in Dettmers et al. 2018 / Ruffinelli et al. 2020, restricted to the range).
The score function is the model's own (TransE, TransH, DistMult, ComplEx:
``score_vectors_t``); only the training objective changes. Sampled negatives almost never
compare a profession with another profession (455 of FB13's 75,043 entities), so a model trained
on them ranks a person's tail below the relation's frequency prior; against the range it learns
the prior and the correlations between a person's attributes
(``benchmarks/results/kge_fb13_thesis.md``).

Only the tail side is trained: the setting for graphs whose relations go from a person to an
attribute (FB13, the extracted graphs of ``wgb run``), where the tail side is what is predicted.
Rows are gathered and updated by the trainer's :class:`~kge.optim.RowOptimizer` like every other
step (the batch's heads, the ranges of its relations, the uniform extras).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from kge.models import KGEModel
from kge.optim import RowOptimizer

__all__ = ["RangeStep", "relation_ranges"]


def relation_ranges(train: np.ndarray, num_relations: int) -> list[torch.Tensor]:
    """Per relation, the sorted ids of the entities seen as its tails in ``train``."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    return [torch.from_numpy(np.unique(train[train[:, 1] == r, 2])) for r in range(num_relations)]


class RangeStep:
    """``step(batch [B, 3], generator) -> loss * B``, the interface of :class:`kge.train_step.BatchStep`."""

    def __init__(self, model: KGEModel, row_opt: RowOptimizer, dense_opts: list, train: np.ndarray, *,
                 extras: int, device: torch.device) -> None:
        if not hasattr(model, "score_vectors_t"):
            raise ValueError(f"model '{model.name}' cannot be trained against the relation's range "
                             "(tail_candidates='range'): it has no score_vectors_t; use tail_candidates='sampled'")
        self.model, self.row_opt, self.dense_opts, self.extras = model, row_opt, dense_opts, extras
        self.ranges = [r.to(device) for r in relation_ranges(train, model.num_relations)]
        # no entity norm constraint (TransE's unit sphere, TransH's unit ball) under this objective:
        # a softmax over thousands of candidates needs distances wider than unit vectors allow
        self.project = None
        self.device = device

    def __call__(self, batch: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        b = batch.shape[0]
        r_ids, tails = batch[:, 1], batch[:, 2]
        rels = torch.unique(r_ids).tolist()
        extra = torch.randint(self.model.num_entities, (self.extras,), generator=generator,
                              device=generator.device).to(self.device)
        ids = torch.cat([batch[:, 0], *[self.ranges[r] for r in rels], extra])
        rows, inv, handle = self.row_opt.gather(ids)
        leaf = rows.requires_grad_()
        for o in self.dense_opts:
            o.zero_grad(set_to_none=True)
        heads = leaf.index_select(0, inv[:b])
        ext_inv = inv[len(ids) - self.extras:]
        loss = torch.zeros((), device=self.device)
        off = b
        for r in rels:
            rng = self.ranges[r]
            c_inv = inv[off:off + len(rng)]
            off += len(rng)
            sel = (r_ids == r).nonzero().squeeze(1)
            cand = leaf.index_select(0, torch.cat([c_inv, ext_inv]))
            scores = self.model.score_vectors_t(heads.index_select(0, sel), r, cand)
            t = tails.index_select(0, sel)
            # an extra that is the positive's own tail is no negative
            own = torch.cat([torch.zeros((len(sel), len(rng)), dtype=torch.bool, device=self.device),
                             extra[None, :] == t[:, None]], dim=1)
            scores = scores.masked_fill(own, float("-inf"))
            loss = loss + F.cross_entropy(scores, torch.searchsorted(rng, t), reduction="sum")
        loss = loss / b
        loss.backward()
        grad = leaf.grad
        leaf.grad = None
        leaf.requires_grad_(False)
        for o in self.dense_opts:
            o.step()
        self.row_opt.step(handle, grad, self.project)
        return loss.detach() * b
