"""Shared fixtures for the bias tests: synthetic graphs with a planted bias and models whose
embeddings place entities so the answer of every measure is known by construction."""
from __future__ import annotations

import numpy as np
import torch

from kge.models import MODELS, get_model
from kge.synthetic import generate, planted_embeddings

MODEL_NAMES = MODELS.names()  # every registered model


def planted_graph(bias_prob: float = 0.9, n: int = 600, occupations: int = 8, seed: int = 0):
    return generate(n_individuals=n, n_occupations=occupations, zipf_a=0.3, bias_prob=bias_prob, seed=seed)


def planted_model(name: str, graph, dim: int = 8, seed: int = 0, strip_b_codes: bool = False):
    """A registered model whose parameters make every relation an identity map and whose entity
    vectors are :func:`kge.synthetic.planted_embeddings`."""
    torch.manual_seed(seed)
    m = get_model(name, len(graph.entities), len(graph.relations), dim=dim)
    E = planted_embeddings(graph, dim=m.entity_dim, seed=seed)
    if strip_b_codes:  # b-persons carry no information on their occupation
        pid = graph.person_ids()[~graph.person_is_a]
        keep0 = E[pid, 0].copy()
        E[pid] = np.random.default_rng(seed).normal(0, 0.5, size=E[pid].shape)
        E[pid, 0] = keep0
    with torch.no_grad():
        m.entity.weight.copy_(torch.from_numpy(E))
        w = m.relation.weight
        if name in ("transe", "transh", "rotate"):
            w.zero_()
        elif name == "distmult":
            w.fill_(1.0)
        elif name == "complex":
            w.zero_()
            w[:, : w.shape[1] // 2] = 1.0
        if name == "transh":
            m.normal.weight.zero_()
            m.normal.weight[:, -1] = 1.0  # hyperplane normal orthogonal to the bias axis
    return m
