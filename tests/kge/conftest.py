"""Tiny synthetic graphs for the kge tests."""
import pytest
import torch

from kge.graph import KnowledgeGraph
from support.hardening import make_graph  # noqa: F401  (the tiny graph, shared with other tests)

# tiny tensors: one thread avoids OpenMP spin-waiting on a shared 2-core machine (20x faster here)
torch.set_num_threads(1)


@pytest.fixture
def tiny_graph() -> KnowledgeGraph:
    return make_graph()


@pytest.fixture
def graph_factory():
    return make_graph
