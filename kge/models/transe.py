"""TransE (Bordes et al. 2013): ``score = -||h + r - t||_p`` with p = 1 or 2."""
from __future__ import annotations

import torch

from kge.models.base import KGEModel
from kge.models.common import (distance, distance_grad, neg_sq_dist_all, normalize_rows_, rank_sq_dist_all,
                               sparse_embedding, translation_grads)


class TransE(KGEModel):
    """TransE with entity vectors kept on the unit sphere (rows renormalised after each step).

    ``p_norm=2`` (default) ranks all entities with one matrix product; ``p_norm=1`` needs a
    pairwise L1 distance, ~6x slower in evaluation on CPU.
    """

    name = "transe"

    def __init__(self, num_entities: int, num_relations: int, dim: int = 100, p_norm: int = 2) -> None:
        super().__init__(num_entities, num_relations, dim)
        if p_norm not in (1, 2):
            raise ValueError(f"TransE p_norm must be 1 or 2, got {p_norm}")
        self.p_norm = p_norm
        self.entity = sparse_embedding(num_entities, dim)
        self.relation = sparse_embedding(num_relations, dim)
        with torch.no_grad():  # relations: xavier then unit norm (as PyKEEN / OpenKE)
            self.relation.weight.div_(self.relation.weight.norm(dim=-1, keepdim=True).clamp_min(1e-12))
        normalize_rows_(self.entity.weight)

    def hparams(self) -> dict:
        return {"p_norm": self.p_norm}

    def score_emb(self, h, r, t):
        return -(h + self.relation(r) - t).norm(p=self.p_norm, dim=-1)

    def score_pairs_grad(self, h, r, t, e, corrupt_head):
        """:meth:`score_pairs` and its gradient in closed form (the trainer's fast path): a negative
        is ``base + sign * e`` with ``base = r - t`` (head replaced, sign +1) or ``h + r`` (tail
        replaced, sign -1)."""
        rv = self.relation.weight.index_select(0, r)
        qt = h + rv  # h + r
        dp = qt - t  # h + r - t
        base = torch.where(corrupt_head[..., None], (rv - t)[:, None], qt[:, None])
        sign = corrupt_head.to(e.dtype).mul_(2).sub_(1)[..., None]
        dn = torch.addcmul(base, e, sign)
        p = self.p_norm
        sp, sn = distance(dp, p), distance(dn, p)

        def backward(dpos, dneg):
            gp = distance_grad(dp, sp, dpos.neg(), p)  # dL/d(h + r - t); the score is -distance
            gn = distance_grad(dn, sn, dneg.neg(), p)
            per_id, g_rel = translation_grads(gp, gn, corrupt_head, sign)
            g_r = torch.zeros_like(self.relation.weight).index_add_(0, r, g_rel)
            return per_id, [(self.relation.weight, g_r)]

        return sp.neg(), sn.neg(), backward

    def score_vectors_t(self, h: torch.Tensor, r: int, cand: torch.Tensor) -> torch.Tensor:
        """Scores ``[B, C]`` of heads ``h [B, d]`` with relation ``r`` against tail vectors
        ``cand [C, d]`` (:mod:`kge.train_range`), differentiable; the same values as :meth:`score_emb`."""
        return -torch.cdist(h + self.relation.weight[r], cand, p=self.p_norm)

    @staticmethod
    def project_entities(x: torch.Tensor) -> torch.Tensor:
        """The entity constraint, in place: unit L2 norm (applied to rows touched by a training step)."""
        return x.div_(torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min_(1e-12))

    def constrain_(self, entity_ids: torch.Tensor | None = None) -> None:
        normalize_rows_(self.entity.weight, entity_ids)

    def _all(self, q, cand):
        if self.p_norm == 2:
            return neg_sq_dist_all(q, cand)
        return -torch.cdist(q, cand, p=1)

    def score_t(self, h, r, candidates=None):
        cand = self.entity_vectors(candidates)
        return self._all(self.entity_vectors(h) + self.relation(r), cand)

    def score_h(self, r, t, candidates=None):
        cand = self.entity_vectors(candidates)
        return self._all(self.entity_vectors(t) - self.relation(r), cand)

    # evaluation: scores that rank like score_t / score_h (row-wise monotone), cheaper for L2
    def rank_scores_t(self, h, r):
        q = self.entity_vectors(h) + self.relation(r)
        return rank_sq_dist_all(q, self.entity.weight) if self.p_norm == 2 else self._all(q, self.entity.weight)

    def rank_scores_h(self, r, t):
        q = self.entity_vectors(t) - self.relation(r)
        return rank_sq_dist_all(q, self.entity.weight) if self.p_norm == 2 else self._all(q, self.entity.weight)
