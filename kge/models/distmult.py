"""DistMult (Yang et al. 2015): ``score = sum_k h_k r_k t_k`` (linear in head and tail)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kge.models.base import KGEModel
from kge.models.common import sparse_embedding

if TYPE_CHECKING:
    import torch


class DistMult(KGEModel):
    name = "distmult"
    linear_in_head = True

    def __init__(self, num_entities: int, num_relations: int, dim: int = 100) -> None:
        super().__init__(num_entities, num_relations, dim)
        self.entity = sparse_embedding(num_entities, dim)
        self.relation = sparse_embedding(num_relations, dim)

    def hparams(self) -> dict:
        return {}

    def score_emb(self, h, r, t):
        return (h * self.relation(r) * t).sum(-1)

    def score_vectors_t(self, h: torch.Tensor, r: int, cand: torch.Tensor) -> torch.Tensor:
        """Scores ``[B, C]`` of heads ``h [B, d]`` with relation ``r`` against ``cand [C, d]``."""
        return (h * self.relation.weight[r]) @ cand.T

    def score_t(self, h, r, candidates=None):
        return (self.entity_vectors(h) * self.relation(r)) @ self.entity_vectors(candidates).T

    def score_h(self, r, t, candidates=None):
        return (self.entity_vectors(t) * self.relation(r)) @ self.entity_vectors(candidates).T
