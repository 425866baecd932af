"""ComplEx (Trouillon et al. 2016): ``score = Re(<h, r, conj(t)>)``. Entity and relation vectors
are complex of dimension ``dim``, stored as ``[real | imaginary]`` (width ``2 * dim``)."""
from __future__ import annotations

import torch

from kge.models.base import KGEModel
from kge.models.common import sparse_embedding


def split_complex(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    d = x.shape[-1] // 2
    return x[..., :d], x[..., d:]


class ComplEx(KGEModel):
    name = "complex"
    linear_in_head = True

    def __init__(self, num_entities: int, num_relations: int, dim: int = 100) -> None:
        super().__init__(num_entities, num_relations, dim, entity_dim=2 * dim, relation_dim=2 * dim)
        self.entity = sparse_embedding(num_entities, 2 * dim)
        self.relation = sparse_embedding(num_relations, 2 * dim)

    def hparams(self) -> dict:
        return {}

    def score_emb(self, h, r, t):
        hr, hi = split_complex(h)
        rr, ri = split_complex(self.relation(r))
        tr, ti = split_complex(t)
        return ((hr * rr - hi * ri) * tr + (hr * ri + hi * rr) * ti).sum(-1)

    def score_vectors_t(self, h: torch.Tensor, r: int, cand: torch.Tensor) -> torch.Tensor:
        """Scores ``[B, C]`` of heads ``h [B, 2d]`` with relation ``r`` against ``cand [C, 2d]``."""
        hr, hi = split_complex(h)
        rr, ri = split_complex(self.relation.weight[r])
        return torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], dim=-1) @ cand.T

    def score_t(self, h, r, candidates=None):
        hr, hi = split_complex(self.entity_vectors(h))
        rr, ri = split_complex(self.relation(r))
        q = torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], dim=-1)
        return q @ self.entity_vectors(candidates).T

    def score_h(self, r, t, candidates=None):
        tr, ti = split_complex(self.entity_vectors(t))
        rr, ri = split_complex(self.relation(r))
        q = torch.cat([rr * tr + ri * ti, rr * ti - ri * tr], dim=-1)
        return q @ self.entity_vectors(candidates).T
