"""Negative sampling: corrupt the head or the tail of each positive with a random entity.

- ``uniform``: head or tail with probability 1/2 each.
- ``bernoulli`` (Wang et al. 2014): corrupt the head with probability ``tph / (tph + hpt)`` of
  the triple's relation (tails per head, heads per tail), so 1-to-N relations lose fewer true
  triples to false negatives.

Samplers are vectorised and draw from a ``torch.Generator`` (its state goes into checkpoints, so
resumed runs draw the same negatives). The random numbers are drawn on the CPU whatever the
training device, so a CUDA run sees the same negatives as a CPU run of the same seed.
"""
from __future__ import annotations

import numpy as np
import torch

from wgbcore.registry import Registry

__all__ = ["NegativeSampler", "SAMPLERS", "get_sampler", "bernoulli_head_probs"]


def bernoulli_head_probs(train: np.ndarray, num_relations: int) -> np.ndarray:
    """Per relation: probability of corrupting the head, ``tph / (tph + hpt)``."""
    train = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    probs = np.full(num_relations, 0.5)
    for r in range(num_relations):
        tr = train[train[:, 1] == r]
        if len(tr) == 0:
            continue
        tph = len(tr) / len(np.unique(tr[:, 0]))  # tails per head
        hpt = len(tr) / len(np.unique(tr[:, 2]))  # heads per tail
        probs[r] = tph / (tph + hpt)
    return probs


class NegativeSampler:
    """``corrupt(batch [B, 3], k) -> (entities [B, k], corrupt_head bool [B, k])``: for each of a
    positive's k negatives a random entity and the side it replaces. ``sample`` gives the same
    negatives as full ``(neg_heads [B, k], neg_tails [B, k])``. The trainer works from
    :meth:`corrupt` (only the replaced side is new: the other one is the positive's own)."""

    kind = "uniform"

    def __init__(self, num_entities: int, num_relations: int, train: np.ndarray | None = None) -> None:
        self.num_entities = num_entities
        self.head_prob = torch.full((num_relations,), 0.5)

    def to(self, device) -> "NegativeSampler":
        """The sampler's tables on ``device`` (random numbers are drawn where the generator lives)."""
        self.head_prob = self.head_prob.to(device)
        return self

    def corrupt(self, batch: torch.Tensor, k: int, generator: torch.Generator | None = None):
        b = batch.shape[0]
        dev = generator.device if generator is not None else batch.device
        rand = torch.randint(self.num_entities, (b, k), generator=generator, device=dev).to(batch.device)
        u = torch.rand((b, k), generator=generator, device=dev).to(batch.device)
        return rand, u < self.head_prob[batch[:, 1]][:, None]

    def sample(self, batch: torch.Tensor, k: int, generator: torch.Generator | None = None):
        rand, corrupt_head = self.corrupt(batch, k, generator)
        b = batch.shape[0]
        h = batch[:, 0:1].expand(b, k)
        t = batch[:, 2:3].expand(b, k)
        return torch.where(corrupt_head, rand, h), torch.where(corrupt_head, t, rand)


class BernoulliSampler(NegativeSampler):
    kind = "bernoulli"

    def __init__(self, num_entities: int, num_relations: int, train: np.ndarray | None = None) -> None:
        super().__init__(num_entities, num_relations)
        if train is None:
            raise ValueError("the bernoulli sampler needs the training triples")
        self.head_prob = torch.from_numpy(bernoulli_head_probs(train, num_relations)).float()


class TypedSampler(BernoulliSampler):
    """Bernoulli's side, and half of the replacements drawn from the entities seen on that side of
    the same relation in training (its domain for heads, its range for tails; Krompass et al.
    2015, "type-constrained" negatives), the other half uniform. Uniform negatives are almost
    never of the right type (455 professions among FB13's 75,043 entities), so a model trained
    on them alone learns to tell a profession from a person but not one profession from another,
    which is what ranking the tail asks."""

    kind = "typed"
    typed_fraction = 0.5

    def __init__(self, num_entities: int, num_relations: int, train: np.ndarray | None = None) -> None:
        super().__init__(num_entities, num_relations, train)
        tr = np.asarray(train, dtype=np.int64).reshape(-1, 3)
        self.pools = {}
        for side, col in (("head", 0), ("tail", 2)):
            cands = [np.unique(tr[tr[:, 1] == r, col]) for r in range(num_relations)]
            counts = np.array([max(len(c), 1) for c in cands])
            flat = np.concatenate([c if len(c) else np.arange(1) for c in cands])
            offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
            self.pools[side] = [torch.from_numpy(flat), torch.from_numpy(offsets), torch.from_numpy(counts)]

    def to(self, device) -> "TypedSampler":
        super().to(device)
        self.pools = {k: [t.to(device) for t in v] for k, v in self.pools.items()}
        return self

    def corrupt(self, batch: torch.Tensor, k: int, generator: torch.Generator | None = None):
        rand, corrupt_head = super().corrupt(batch, k, generator)
        b = batch.shape[0]
        dev = generator.device if generator is not None else batch.device
        u = torch.rand((b, k), generator=generator, device=dev).to(batch.device)
        pick = torch.rand((b, k), generator=generator, device=dev).to(batch.device) < self.typed_fraction
        r = batch[:, 1:2].expand(b, k)
        typed = []
        for side in ("head", "tail"):
            flat, off, cnt = self.pools[side]
            idx = off[r] + (u * cnt[r]).long().clamp_max(cnt[r] - 1)
            typed.append(flat[idx])
        typed_ent = torch.where(corrupt_head, typed[0], typed[1])
        own = torch.where(corrupt_head, batch[:, 0:1].expand(b, k), batch[:, 2:3].expand(b, k))
        pick &= typed_ent != own  # a relation with few tails (gender) would often draw the positive's own
        return torch.where(pick, typed_ent, rand), corrupt_head


SAMPLERS: Registry[type[NegativeSampler]] = Registry("sampler")
SAMPLERS.register("uniform", NegativeSampler)
SAMPLERS.register("bernoulli", BernoulliSampler)
SAMPLERS.register("typed", TypedSampler)


def get_sampler(name: str, num_entities: int, num_relations: int, train: np.ndarray | None = None) -> NegativeSampler:
    """Build the sampler registered as ``name``."""
    return SAMPLERS.make(name, num_entities, num_relations, train)
