"""The interface every knowledge graph embedding model implements.

Bias measures (``kge.bias``) only use this interface, so every registered model works with every
measure. Scores follow one convention: **higher means more plausible** (distance-based models
return the negative distance).
"""
from __future__ import annotations

import torch
from torch import nn


class KGEModel(nn.Module):
    """Base class: entity/relation parameters plus a score function on explicit vectors.

    Subclasses set ``name`` and implement :meth:`score_emb`; entity vectors live in
    ``self.entity`` (an ``nn.Embedding`` of width ``entity_dim``; complex models store real and
    imaginary parts concatenated), relation parameters in ``self.relation`` (and, where a model
    needs them, further per-relation tensors such as TransH's hyperplane normals).
    """

    name: str = "base"
    #: True where the score is linear in the head vector (closed forms may use this).
    linear_in_head: bool = False

    def __init__(self, num_entities: int, num_relations: int, dim: int, entity_dim: int | None = None,
                 relation_dim: int | None = None) -> None:
        super().__init__()
        self.num_entities = num_entities
        self.num_relations = num_relations
        self.dim = dim
        self.entity_dim = entity_dim or dim
        self.relation_dim = relation_dim or dim

    # -- the one method a model must implement -------------------------------------------
    def score_emb(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Score explicit head/tail vectors ``[..., entity_dim]`` with relation ids ``r``.

        Shapes broadcast: e.g. ``h [P, 1, d]``, ``r [1, Q]``, ``t [1, Q, d]`` gives ``[P, Q]``.
        Differentiable in ``h`` and ``t`` (bias measures take gradients through it).
        """
        raise NotImplementedError

    # -- training: positives and their negatives ----------------------------------------------
    def score_pairs(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, e: torch.Tensor,
                    corrupt_head: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Scores of positives ``[B]`` and of their negatives ``[B, k]``: negative ``j`` of triple ``i``
        replaces its head (``corrupt_head[i, j]``) or its tail by the entity vector ``e[i, j]``
        (``h, t [B, d]``, ``e [B, k, d]``). Differentiable (the trainer's autograd path).

        A model may also offer ``score_pairs_grad(h, r, t, e, corrupt_head) -> (pos, neg, backward)``
        with ``backward(dL/dpos, dL/dneg) -> (per_id [B * (2 + k), d], [(param, grad)])`` in closed
        form (the trainer's fast path): ``per_id`` the gradients of ``h``, ``t`` and ``e`` (flattened)
        in that order, ``grad`` dense for the small per-relation tables. A test checks it against
        autograd through this method."""
        ch = corrupt_head[..., None]
        nh = torch.where(ch, e, h[:, None])
        nt = torch.where(ch, t[:, None], e)
        return self.score_emb(h, r, t), self.score_emb(nh, r[:, None], nt)

    # -- conveniences built on score_emb ---------------------------------------------------
    def entity_vectors(self, ids: torch.Tensor | None = None) -> torch.Tensor:
        w = self.entity.weight
        return w if ids is None else w[ids]

    def score_hrt(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Score id triples (broadcasting like :meth:`score_emb`)."""
        return self.score_emb(self.entity_vectors(h), r, self.entity_vectors(t))

    def score_t(self, h: torch.Tensor, r: torch.Tensor, candidates: torch.Tensor | None = None) -> torch.Tensor:
        """Scores ``[B, C]`` of every candidate tail (all entities by default) for ``(h, r)``."""
        tv = self.entity_vectors(candidates)
        return self.score_emb(self.entity_vectors(h)[:, None, :], r[:, None], tv[None, :, :])

    def score_h(self, r: torch.Tensor, t: torch.Tensor, candidates: torch.Tensor | None = None) -> torch.Tensor:
        """Scores ``[B, C]`` of every candidate head for ``(r, t)``."""
        hv = self.entity_vectors(candidates)
        return self.score_emb(hv[None, :, :], r[:, None], self.entity_vectors(t)[:, None, :])
