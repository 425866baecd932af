"""Bias measures for knowledge graph embeddings, one registered component per measure.

``get_measure(name, **config)`` returns an object with ``name``, ``needs_model`` and
``run(graph, model, spec, *, seed=0, model_label="") -> BiasResult``. ``graph`` is a
:class:`~kge.bias.context.GraphView` (``GraphView.from_graph(any_graph)``); ``model`` follows
``kge.models.base.KGEModel`` (``None`` for measures with ``needs_model=False``).

A new measure is one module with its class plus one ``MEASURES.register`` line below; the tests
parametrized over ``MEASURES`` then cover it.
"""
from __future__ import annotations

import time
from typing import Any

from wgbcore.registry import Registry
from wgbcore.seeding import seed_everything

from kge.bias import du
from kge.bias.bourli import Analogy, Clustering, Debias, Projection, TopK
from kge.bias.context import GraphView, resolve
from kge.bias.data import DataBias
from kge.bias.fisher import Fisher, fisher_bias
from kge.bias.keidar import DPD, PPD, TLB, keidar_table
from kge.bias.result import BiasResult, BiasRow, BiasSpec, load_results, save_results

MEASURES: Registry = Registry("bias measure")
MEASURES.register("data", DataBias)
MEASURES.register("fisher", Fisher)
MEASURES.register("bourli_projection", Projection)
MEASURES.register("bourli_analogy", Analogy)
MEASURES.register("bourli_topk", TopK)
MEASURES.register("bourli_clustering", Clustering)
MEASURES.register("bourli_debias", Debias)
MEASURES.register("keidar_dpd", DPD)
MEASURES.register("keidar_ppd", PPD)
MEASURES.register("keidar_tlb", TLB)
for _name, _factory in du.MEASURES.items():  # du_group, du_individual, du_individual_vanilla
    MEASURES.register(_name, _factory)


def get_measure(name: str, **config: Any):
    """Build a registered measure by name (``ValueError`` naming the known ones otherwise)."""
    return MEASURES.make(name, **config)


def check_measure(name: str, graph: Any, model, spec: BiasSpec, **config: Any):
    """What :func:`run_measure` would refuse that is known before anything is computed: the
    measure's settings (its constructor checks them), the spec against the graph (relations and
    attribute values), whether it needs embeddings, and the measure's own preconditions (its
    optional ``check(view, model, spec)``). Returns the measure; a ``ValueError`` otherwise. A
    command running several measures calls this for every one of them before the first runs."""
    m = get_measure(name, **config)
    view = GraphView.from_graph(graph)
    if m.needs_model and model is None:
        raise ValueError(f"measure '{name}' needs embeddings")
    if getattr(m, "preds", None) is None:  # a given predictions frame brings its own persons
        resolve(view, spec, need_values=False)
    check = getattr(m, "check", None)
    if check is not None:
        check(view, model, spec)
    return m


def run_measure(name: str, graph: Any, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "",
                **config: Any) -> BiasResult:
    """Seed everything, run one measure and record its wall time."""
    seed_everything(seed)
    m = get_measure(name, **config)
    view = GraphView.from_graph(graph)
    if m.needs_model and model is None:
        raise ValueError(f"measure '{name}' needs embeddings")
    if model is not None and hasattr(model, "named_parameters"):
        from kge.embeddings import check_finite

        check_finite(model, f"embeddings {model_label or getattr(model, 'name', '')}".strip())  # never score NaN
    t0 = time.perf_counter()
    res = m.run(view, model, spec, seed=seed, model_label=model_label)
    res.seconds = time.perf_counter() - t0
    return res


__all__ = ["MEASURES", "get_measure", "check_measure", "run_measure", "BiasSpec", "BiasRow", "BiasResult", "GraphView", "resolve",
           "fisher_bias", "keidar_table", "save_results", "load_results"]
