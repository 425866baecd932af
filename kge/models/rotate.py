"""RotatE (Sun et al. 2019): relations rotate complex entity vectors, ``score = -||h o r - t||``
with ``|r_k| = 1``. Entities are complex of dimension ``dim`` stored as ``[real | imaginary]``;
relations store the phases (width ``dim``).

The distance is the L2 norm of the complex difference (as PyKEEN's RotatE), which ranks all
entities with one matrix product; the paper sums the moduli (an L1 over moduli).
"""
from __future__ import annotations

import torch

from kge.models.base import KGEModel
from kge.models.common import neg_sq_dist_all, rank_sq_dist_all, sparse_embedding
from kge.models.complex import split_complex


class RotatE(KGEModel):
    name = "rotate"

    def __init__(self, num_entities: int, num_relations: int, dim: int = 100) -> None:
        super().__init__(num_entities, num_relations, dim, entity_dim=2 * dim, relation_dim=dim)
        self.entity = sparse_embedding(num_entities, 2 * dim)
        self.relation = sparse_embedding(num_relations, dim, init="phase")

    def hparams(self) -> dict:
        return {}

    def rotate(self, x: torch.Tensor, r: torch.Tensor, inverse: bool = False) -> torch.Tensor:
        phase = self.relation(r)
        c, s = torch.cos(phase), torch.sin(phase)
        if inverse:
            s = -s
        xr, xi = split_complex(x)
        return torch.cat([xr * c - xi * s, xr * s + xi * c], dim=-1)

    def score_emb(self, h, r, t):
        return -(self.rotate(h, r) - t).norm(p=2, dim=-1)

    def score_t(self, h, r, candidates=None):
        return neg_sq_dist_all(self.rotate(self.entity_vectors(h), r), self.entity_vectors(candidates))

    def score_h(self, r, t, candidates=None):
        # |h o r - t| = |h - t o conj(r)| since |r_k| = 1
        return neg_sq_dist_all(self.rotate(self.entity_vectors(t), r, inverse=True), self.entity_vectors(candidates))

    # evaluation: scores that rank like score_t / score_h (row-wise monotone), one addmm
    def rank_scores_t(self, h, r):
        return rank_sq_dist_all(self.rotate(self.entity_vectors(h), r), self.entity.weight)

    def rank_scores_h(self, r, t):
        return rank_sq_dist_all(self.rotate(self.entity_vectors(t), r, inverse=True), self.entity.weight)
