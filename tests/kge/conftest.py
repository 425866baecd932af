"""Tiny synthetic graphs for the kge tests."""
import numpy as np
import pytest
import torch

from kge.graph import KnowledgeGraph

# tiny tensors: one thread avoids OpenMP spin-waiting on a shared 2-core machine (20x faster here)
torch.set_num_threads(1)


def make_graph(num_people: int = 30, seed: int = 0) -> KnowledgeGraph:
    """People with a gender and a profession correlated with it, plus a few other relations."""
    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(num_people)]
    values = ["male", "female", "nurse", "engineer", "teacher", "usa", "uk"]
    entities = people + values
    relations = ["gender", "profession", "nationality", "friend"]
    eid = {n: i for i, n in enumerate(entities)}
    triples = []
    for i, p in enumerate(people):
        g = "male" if i % 2 == 0 else "female"
        triples.append((eid[p], 0, eid[g]))
        prof = ("engineer" if g == "male" else "nurse") if rng.random() < 0.7 else "teacher"
        triples.append((eid[p], 1, eid[prof]))
        triples.append((eid[p], 2, eid["usa" if rng.random() < 0.6 else "uk"]))
        triples.append((eid[p], 3, eid[people[(i + 1) % num_people]]))
    triples = np.array(triples, dtype=np.int64)
    perm = rng.permutation(len(triples))
    n_test = max(4, len(triples) // 10)
    test, valid, train = triples[perm[:n_test]], triples[perm[n_test:2 * n_test]], triples[perm[2 * n_test:]]
    return KnowledgeGraph(entities, relations, train, valid, test, name="tiny")


@pytest.fixture
def tiny_graph() -> KnowledgeGraph:
    return make_graph()


@pytest.fixture
def graph_factory():
    return make_graph
