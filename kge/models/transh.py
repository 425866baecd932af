"""TransH (Wang et al. 2014): project onto a relation hyperplane, then translate:
``score = -||h_perp + d_r - t_perp||_p`` with ``x_perp = x - (w_r . x) w_r``, ``|w_r| = 1``."""
from __future__ import annotations

import torch

from kge.models.base import KGEModel
from kge.models.common import (distance, distance_grad, neg_sq_dist_all, normalize_rows_, rank_sq_dist_all,
                               sparse_embedding, translation_grads)


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

    def score_vectors_t(self, h: torch.Tensor, r: int, cand: torch.Tensor) -> torch.Tensor:
        """Scores ``[B, C]`` of heads ``h [B, d]`` with relation ``r`` against tail vectors
        ``cand [C, d]`` (:mod:`kge.train_range`): both projected on r's hyperplane, then distances."""
        w = self.normal.weight[r]
        w = w / w.norm().clamp_min(1e-12)
        return -torch.cdist(self.project(h, w) + self.relation.weight[r], self.project(cand, w), p=self.p_norm)

    def score_pairs_grad(self, h, r, t, e, corrupt_head):
        """:meth:`score_pairs` and its gradient in closed form (the trainer's fast path). The
        projection is linear, so ``D = P_w(u) + d_r`` with ``u = h - t`` (a negative: ``e - t`` or
        ``h - e``); ``dL/du = P_w(G)``, ``dL/dd_r = G``, ``dL/dw = -((G.w) u + (w.u) G)``, taken
        through the normalisation of ``w`` to the stored normal."""
        nv = self.normal.weight.index_select(0, r)
        n_len = nv.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        w = nv / n_len
        dr = self.relation.weight.index_select(0, r)
        up = h - t
        sign = corrupt_head.to(e.dtype).mul_(2).sub_(1)[..., None]
        un = torch.addcmul(torch.where(corrupt_head[..., None], t.neg()[:, None], h[:, None]), e, sign)
        wn = w[:, None]
        wu_p = (w * up).sum(-1, keepdim=True)
        wu_n = (wn * un).sum(-1, keepdim=True)
        dp = up - wu_p * w + dr
        dn = un - wu_n * wn + dr[:, None]
        p = self.p_norm
        sp, sn = distance(dp, p), distance(dn, p)

        def backward(dpos, dneg):
            gp = distance_grad(dp, sp, dpos.neg(), p)
            gn = distance_grad(dn, sn, dneg.neg(), p)
            wg_p = (w * gp).sum(-1, keepdim=True)
            wg_n = (wn * gn).sum(-1, keepdim=True)
            per_id, _ = translation_grads(gp - wg_p * w, gn - wg_n * wn, corrupt_head, sign)
            g_w = (wg_p * up + wu_p * gp).add_((wg_n * un + wu_n * gn).sum(1)).neg_()
            g_n = (g_w - (w * g_w).sum(-1, keepdim=True) * w).div_(n_len)
            g_d = gp + gn.sum(1)
            return per_id, [(self.relation.weight, torch.zeros_like(self.relation.weight).index_add_(0, r, g_d)),
                            (self.normal.weight, torch.zeros_like(self.normal.weight).index_add_(0, r, g_n))]

        return sp.neg(), sn.neg(), backward

    @staticmethod
    def project_entities(x: torch.Tensor) -> torch.Tensor:
        """The entity constraint, in place: inside the unit L2 ball."""
        return x.div_(torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min_(1.0))

    def constrain_(self, entity_ids: torch.Tensor | None = None) -> None:
        normalize_rows_(self.entity.weight, entity_ids, maxnorm=True)

    def _all(self, q, r, cand, rank_only: bool = False):
        """q: [B, d] already projected & translated; rank all cand projected per relation."""
        out = torch.empty(q.shape[0], cand.shape[0], dtype=q.dtype, device=q.device)
        for rid in torch.unique(r).tolist():
            rows = (r == rid).nonzero().squeeze(1)
            w = self.normals(torch.tensor([rid], device=r.device))[0]
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
