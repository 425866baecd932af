"""Bias measures for knowledge graph embeddings, one registered component per measure.

``get_measure(name, **config)`` returns an object with ``name``, ``needs_model`` and
``run(graph, model, spec, *, seed=0, model_label="") -> BiasResult``. ``graph`` is a
:class:`~kge.bias.context.GraphView` (``GraphView.from_graph(any_graph)``); ``model`` follows
``kge.models.base.KGEModel`` (``None`` for measures with ``needs_model=False``).
"""
from __future__ import annotations

from typing import Any

from kge.bias.bourli import Analogy, Clustering, Debias, Projection, TopK
from kge.bias.context import GraphView, resolve
from kge.bias.data import DataBias
from kge.bias.fisher import Fisher, fisher_bias
from kge.bias.keidar import DPD, PPD, TLB, keidar_table
from kge.bias.result import BiasResult, BiasRow, BiasSpec, load_results, save_results

MEASURES: dict[str, type] = {
    "data": DataBias,
    "fisher": Fisher,
    "bourli_projection": Projection,
    "bourli_analogy": Analogy,
    "bourli_topk": TopK,
    "bourli_clustering": Clustering,
    "bourli_debias": Debias,
    "keidar_dpd": DPD,
    "keidar_ppd": PPD,
    "keidar_tlb": TLB,
}

try:  # Du et al. live in kge/bias/du.py (another module); register theirs when present
    from kge.bias import du as _du

    MEASURES.update(getattr(_du, "MEASURES", {}))
except ImportError:
    pass


def get_measure(name: str, **config: Any):
    """Build a registered measure by name (``ValueError`` naming the known ones otherwise)."""
    if name not in MEASURES:
        raise ValueError(f"unknown bias measure '{name}'; expected one of {sorted(MEASURES)}")
    return MEASURES[name](**config)


def run_measure(name: str, graph: Any, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "",
                **config: Any) -> BiasResult:
    """Seed everything, run one measure and record its wall time."""
    import random
    import time

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    m = get_measure(name, **config)
    view = GraphView.from_graph(graph)
    if m.needs_model and model is None:
        raise ValueError(f"measure '{name}' needs embeddings")
    t0 = time.perf_counter()
    res = m.run(view, model, spec, seed=seed, model_label=model_label)
    res.seconds = time.perf_counter() - t0
    return res


__all__ = ["MEASURES", "get_measure", "run_measure", "BiasSpec", "BiasRow", "BiasResult", "GraphView", "resolve",
           "fisher_bias", "keidar_table", "save_results", "load_results"]
