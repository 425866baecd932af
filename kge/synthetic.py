"""Synthetic knowledge graphs with a planted bias (Bourli 2021, §6.1.1).

``n_individuals`` persons and ``n_occupations`` occupations; the number of holders of each
occupation follows a Zipf law with exponent ``zipf_a`` (summing to ``n_individuals``: every person
holds exactly one occupation); a fraction ``population_ratio`` of persons have value ``a`` (male),
the rest ``b`` (female); occupations alternate between a-occupations and b-occupations by
popularity rank; each holder of an a-occupation is drawn from the a-persons with probability
``bias_prob`` (``p_b`` in [0.5, 1]; 0.5 = no bias, 1 = absolute bias) and from the b-persons
otherwise, and conversely for b-occupations. Occupation facts are split ``1 - test_fraction`` /
``test_fraction`` into train/test with every person and occupation of the test also in train
(gender facts all go to train).

:func:`planted_embeddings` places entities so that the answer of every bias measure is known by
construction (a-persons and a-occupations on one side of the bias axis, b on the other), for tests.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from wgbcore.atomicio import atomic_write_text


@dataclass
class SyntheticConfig:
    n_individuals: int = 2000
    n_occupations: int = 20
    zipf_a: float = 1.5
    bias_prob: float = 0.8
    population_ratio: float = 0.5  # share of a-persons
    test_fraction: float = 0.2
    seed: int = 0
    a: str = "male"
    b: str = "female"
    sensitive_relation: str = "gender"
    target_relation: str = "profession"

    def __post_init__(self) -> None:
        if not 0.5 <= self.bias_prob <= 1.0:
            raise ValueError(f"bias_prob must lie in [0.5, 1], got {self.bias_prob}")
        if not 0.0 < self.population_ratio < 1.0:
            raise ValueError(f"population_ratio must lie in (0, 1), got {self.population_ratio}")
        if self.n_occupations < 2 or self.n_individuals < self.n_occupations:
            raise ValueError("need at least 2 occupations and at least one person per occupation")


@dataclass
class SyntheticGraph:
    """A graph in the shape every loader produces (names + id triples per split) plus the truth."""

    entities: list[str]
    relations: list[str]
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    config: SyntheticConfig
    person_is_a: np.ndarray  # [n_individuals] bool
    occupation_is_a: np.ndarray  # [n_occupations] bool
    occupation_size: np.ndarray  # [n_occupations] holders (Zipf)
    name: str = "synthetic"
    truth: dict = field(default_factory=dict)

    # ids: entities = [a, b, occ_0..occ_{O-1}, person_0..person_{N-1}]
    @property
    def a_id(self) -> int:
        return 0

    @property
    def b_id(self) -> int:
        return 1

    def occupation_ids(self) -> np.ndarray:
        return np.arange(2, 2 + self.config.n_occupations)

    def person_ids(self) -> np.ndarray:
        o = 2 + self.config.n_occupations
        return np.arange(o, o + self.config.n_individuals)

    def to_knowledge_graph(self):
        from kge.graph import KnowledgeGraph

        return KnowledgeGraph(self.entities, self.relations, self.train, self.valid, self.test, name=self.name)

    def write_tsv(self, folder: str | Path) -> Path:
        """Write ``train.tsv``/``valid.tsv``/``test.tsv`` of labelled triples (head, relation, tail)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for split in ("train", "valid", "test"):
            t = getattr(self, split)
            lines = [f"{self.entities[h]}\t{self.relations[r]}\t{self.entities[x]}" for h, r, x in t.tolist()]
            atomic_write_text(folder / f"{split}.tsv", "\n".join(lines) + ("\n" if lines else ""))
        return folder


def zipf_sizes(n_items: int, total: int, a: float) -> np.ndarray:
    """Zipf-distributed positive integer sizes summing to ``total`` (largest-remainder rounding,
    at least one each)."""
    w = 1.0 / np.arange(1, n_items + 1) ** a
    raw = w / w.sum() * (total - n_items)
    sizes = np.floor(raw).astype(np.int64)
    rest = (total - n_items) - sizes.sum()
    sizes[np.argsort(-(raw - sizes), kind="stable")[:rest]] += 1
    return sizes + 1


def generate(config: SyntheticConfig | None = None, **kwargs) -> SyntheticGraph:
    cfg = config or SyntheticConfig(**kwargs)
    rng = np.random.default_rng(cfg.seed)
    N, O = cfg.n_individuals, cfg.n_occupations
    n_a = int(round(cfg.population_ratio * N))
    person_is_a = np.zeros(N, bool)
    person_is_a[rng.permutation(N)[:n_a]] = True
    sizes = zipf_sizes(O, N, cfg.zipf_a)
    occ_is_a = np.arange(O) % 2 == 0  # rank 0 (most popular) is an a-occupation, rank 1 a b-one, ...
    pools = {True: list(rng.permutation(np.flatnonzero(person_is_a))),
             False: list(rng.permutation(np.flatnonzero(~person_is_a)))}
    occupation_of = np.full(N, -1)
    for o in rng.permutation(O):
        for _ in range(sizes[o]):
            want = bool(occ_is_a[o]) if rng.random() < cfg.bias_prob else not occ_is_a[o]
            if not pools[want]:
                want = not want
            occupation_of[pools[want].pop()] = o
    entities = [cfg.a, cfg.b] + [f"occupation_{i}" for i in range(O)] + [f"person_{i}" for i in range(N)]
    relations = [cfg.sensitive_relation, cfg.target_relation]
    pid = 2 + O + np.arange(N)
    gender = np.stack([pid, np.zeros(N, np.int64), np.where(person_is_a, 0, 1)], 1)
    occ = np.stack([pid, np.ones(N, np.int64), 2 + occupation_of], 1)
    # split occupation facts; keep each occupation's first holder in train so it is known
    is_test = rng.random(N) < cfg.test_fraction
    first = np.unique(occupation_of, return_index=True)[1]
    is_test[first] = False
    train = np.concatenate([gender, occ[~is_test]]).astype(np.int64)
    test = occ[is_test].astype(np.int64)
    return SyntheticGraph(entities, relations, train, np.zeros((0, 3), np.int64), test, cfg, person_is_a, occ_is_a,
                          sizes, truth={"config": asdict(cfg)})


def planted_embeddings(graph: SyntheticGraph, dim: int = 16, separation: float = 1.0, noise: float = 0.1,
                       seed: int = 0) -> np.ndarray:
    """Entity vectors with the bias planted along the first axis: ``a`` at ``+s e1``, ``b`` at
    ``-s e1``, a-occupations at ``+s e1``, b-occupations at ``-s e1`` (plus an orthogonal per-
    occupation code), persons at ``±0.5 s e1`` by their value plus their occupation's code. With
    zero relation vectors, translational (TransE) and bilinear (DistMult, with an all-ones
    relation) scores then prefer same-side pairs: every measure sees a-occupations as a-biased."""
    rng = np.random.default_rng(seed)
    cfg = graph.config
    O, N = cfg.n_occupations, cfg.n_individuals
    E = rng.normal(0, noise, size=(2 + O + N, dim))
    E[:, 0] = 0.0
    E[0, 0], E[1, 0] = separation, -separation
    codes = rng.normal(0, 1, size=(O, dim))
    codes[:, 0] = 0
    codes /= np.linalg.norm(codes, axis=1, keepdims=True)
    occ_sign = np.where(graph.occupation_is_a, 1.0, -1.0)
    E[2:2 + O] += 0.5 * codes
    E[2:2 + O, 0] = separation * occ_sign
    occ_of = np.empty(N, np.int64)
    t = np.concatenate([graph.train, graph.test])
    t = t[t[:, 1] == 1]
    occ_of[t[:, 0] - 2 - O] = t[:, 2] - 2
    E[2 + O:] += 0.5 * codes[occ_of]
    E[2 + O:, 0] = 0.5 * separation * np.where(graph.person_is_a, 1.0, -1.0) + rng.normal(0, noise, N)
    return E.astype(np.float32)
