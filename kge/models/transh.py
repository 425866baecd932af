"""TransH (Wang et al. 2014): project onto a relation hyperplane, then translate:
``score = -||h_perp + d_r - t_perp||_p`` with ``x_perp = x - (w_r . x) w_r``, ``|w_r| = 1``."""
from __future__ import annotations

import torch

from kge.models.base import KGEModel
from kge.models.common import neg_sq_dist_all, normalize_rows_, rank_sq_dist_all, sparse_embedding


class TransH(KGEModel):
    """TransH. ``self.relation`` holds the translations ``d_r``, ``self.normal`` the hyperplane
    normals ``w_r`` (normalised in the score, so any vector is valid). Entities are kept in the
    unit ball."""

    name = "transh"

    def __init__(self, num_entities: int, num_relations: int, dim: int = 100, p_norm: int = 2) -> None:
        super().__init__(num_entities, num_relations, dim)
        if p_norm not in (1, 2):
            raise ValueError(f"TransH p_norm must be 1 or 2, got {p_norm}")
        self.p_norm = p_norm
        self.entity = sparse_embedding(num_entities, dim)
        self.relation = sparse_embedding(num_relations, dim)
        self.normal = sparse_embedding(num_relations, dim)
        normalize_rows_(self.entity.weight)

    def hparams(self) -> dict:
        return {"p_norm": self.p_norm}

    def normals(self, r: torch.Tensor) -> torch.Tensor:
        w = self.normal(r)
        return w / w.norm(dim=-1, keepdim=True).clamp_min(1e-12)

    @staticmethod
    def project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """``x - (w . x) w``: the component of x on the hyperplane with unit normal w."""
        return x - (x * w).sum(-1, keepdim=True) * w

    def score_emb(self, h, r, t):
        w = self.normals(r)
        return -(self.project(h, w) + self.relation(r) - self.project(t, w)).norm(p=self.p_norm, dim=-1)

    @staticmethod
    def project_entities(x: torch.Tensor) -> torch.Tensor:
        """The entity constraint: inside the unit L2 ball."""
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1.0)

    def constrain_(self, entity_ids: torch.Tensor | None = None) -> None:
        normalize_rows_(self.entity.weight, entity_ids, maxnorm=True)

    def _all(self, q, r, cand, rank_only: bool = False):
        """q: [B, d] already projected & translated; rank all cand projected per relation."""
        out = torch.empty(q.shape[0], cand.shape[0], dtype=q.dtype)
        for rid in torch.unique(r).tolist():
            rows = (r == rid).nonzero().squeeze(1)
            w = self.normals(torch.tensor([rid]))[0]
            cp = self.project(cand, w)
            if self.p_norm == 2:
                out[rows] = (rank_sq_dist_all if rank_only else neg_sq_dist_all)(q[rows], cp)
            else:
                out[rows] = -torch.cdist(q[rows], cp, p=1)
        return out

    def score_t(self, h, r, candidates=None):
        q = self.project(self.entity_vectors(h), self.normals(r)) + self.relation(r)
        return self._all(q, r, self.entity_vectors(candidates))

    def score_h(self, r, t, candidates=None):
        q = self.project(self.entity_vectors(t), self.normals(r)) - self.relation(r)
        return self._all(q, r, self.entity_vectors(candidates))

    # evaluation: scores that rank like score_t / score_h (row-wise monotone), cheaper for L2
    def rank_scores_t(self, h, r):
        q = self.project(self.entity_vectors(h), self.normals(r)) + self.relation(r)
        return self._all(q, r, self.entity.weight, rank_only=True)

    def rank_scores_h(self, r, t):
        q = self.project(self.entity_vectors(t), self.normals(r)) - self.relation(r)
        return self._all(q, r, self.entity.weight, rank_only=True)
