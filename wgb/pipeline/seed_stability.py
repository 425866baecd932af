"""The run report's items over embedding seeds (issue #42): every seed of a `wgb run` trains one
embedding per graph (``seed-<s>/embeddings/<graph>``, training seed = the run's seed), so each
per-item measure that reads embeddings has, per graph, one score per item and seed. Through
:func:`kge.bias.stability.summarize`: each item's mean score with its interval over the seeds and
whether its lean is decided (Holm across the graph's items), the mean |score| over seeds x items,
the seeds' top-k agreement (descriptive), and the claims "the top-k items of two graphs'
embeddings agree" (runs paired by seed, Holm over these claims only; they are not part of the
answer's family). The gold graph is the same at every seed, so its intervals are the embeddings'
seed noise alone; an extracted graph's also hold its extractor's seed.
"""
from __future__ import annotations

from typing import Any, Sequence

from kge.bias import MEASURES
from kge.bias.stability import summarize
from kge.report import ITEM_MEASURES

#: Items shown each way per graph and measure (the run report's item tables show as many).
TOP = 5
#: k of the seeds' agreement and of the claims across graphs.
TOP_K = 20


def _label(model_label: str) -> str:
    """``transe:gold`` -> ``gold`` (the run labels each result ``<kge model>:<graph>``)."""
    return model_label.split(":", 1)[1] if ":" in model_label else model_label


def embedding_seeds(bias: dict[int, dict[str, list]], measures: Sequence[str], *, min_count: int,
                    k: int = TOP_K, top: int = TOP, n_resamples: int = 2000) -> dict[str, Any]:
    """``bias``: seed -> graph -> that graph's bias results. Empty (``{"tables": [], "claims":
    []}``) with fewer than two seeds or no per-item measure that reads embeddings."""
    names = [m for m in measures if m in ITEM_MEASURES and m in MEASURES and MEASURES[m]().needs_model]
    results = [r for graphs in bias.values() for rs in graphs.values() for r in rs if r.measure in names]
    if len(bias) < 2 or not results:
        return {"tables": [], "claims": [], "k": k}
    doc = summarize(results, k=k, min_count=min_count, n_resamples=n_resamples)
    tables = []
    for g in doc["groups"]:
        for label, entry in g["models"].items():
            items = entry["items"]
            male = sorted((x for x in items if x["score"] > 0), key=lambda x: -x["score"])[:top]
            female = sorted((x for x in items if x["score"] < 0), key=lambda x: x["score"])[:top]
            tables.append({"measure": g["measure"], "graph": _label(label), "seeds": entry["seeds"],
                           "n_items": len(items), "n_decided": sum(bool(x["decided"]) for x in items),
                           "mean_abs_score": entry["mean_abs_score"], "seed_agreement": entry["seed_agreement"],
                           "male": male, "female": female})
    claims = [{**c, "graphs": [_label(m) for m in c["models"]]} for c in doc["claims"]]
    return {"tables": tables, "claims": claims, "k": k, "margin": doc["margin"]}
