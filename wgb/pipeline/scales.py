"""A cross-fitted run's two scales side by side: every claim on all persons of the benchmark and on
the annotated test persons only (never pooled silently), and the size of the graphs at each scale.

The all-persons answer is the report's own (:func:`wgb.pipeline.answer.analyse` on the whole
study); the test-persons answer is the same analysis on :meth:`Study.subset("test")
<wgb.pipeline.propagation.Study.subset>`. Embedding measures are computed once per seed on the
embeddings of the whole graph, so their claims do not change between the two rows; the graph
(``data``) and extraction claims are recomputed on the test persons' facts.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from wikigenderbias.schema import RELATIONS

POPULATION_TITLES = {"all": "all persons (test + distant)", "test": "annotated test persons only"}


def _cell(v: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if v is None:
        return None
    # ci_adjusted: the interval at the level Holm tested the claim at (shown beside its verdict)
    return {k: v.get(k) for k in ("verdict", "value", "ci", "ci_adjusted", "ci_adjusted_level", "mde", "n_seeds",
                                  "over", "p_adjusted", "note")}


def side_by_side(all_persons: Mapping[str, Any], test_persons: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per claim of the all-persons analysis: its question, sentence and both answers."""
    by_id = {v.get("id") or v["claim"]: v for v in test_persons["verdicts"]}
    rows = []
    for v in all_persons["verdicts"]:
        key = v.get("id") or v["claim"]
        rows.append({"question": v.get("question"), "claim": v["claim"], "all": _cell(v),
                     "test": _cell(by_id.get(key))})
    return rows


def graph_sizes(study, population: str | None, min_count: int) -> dict[str, Any]:
    """Persons, triples per graph and items held by at least ``min_count`` persons, for one
    population (None: all persons), averaged over the seeds (the gold graph is the same for all)."""
    counts = study.counts
    keep = np.ones(len(counts.entity_ids), bool) if population is None else counts.population == population
    out: dict[str, Any] = {"persons": {"male": int((keep & (counts.gender == "male")).sum()),
                                       "female": int((keep & (counts.gender == "female")).sum())}}
    triples: dict[str, list[float]] = {}
    items: dict[str, list[float]] = {}
    pos = slice(1, len(RELATIONS))
    for s in study.seeds:
        for i, v in enumerate(study.variants):
            c = counts.counts[f"graph:{v}"][s][keep][:, pos]                   # (E, R-1, 3): tp, fp, fn
            triples.setdefault(v, []).append(float(c[..., 0].sum() + c[..., 1].sum()))   # extracted
            if i == 0:
                triples.setdefault("gold", []).append(float(c[..., 0].sum() + c[..., 2].sum()))
        for g, h in study.holds[s].items():
            held = h[keep].sum(0)
            items.setdefault(g, []).append(float((held >= min_count).sum()))
            items.setdefault(f"{g}:any", []).append(float((held >= 1).sum()))
    out["triples"] = {g: round(float(np.mean(x)), 1) for g, x in triples.items()}
    out["items"] = {g: round(float(np.mean(x)), 1) for g, x in items.items() if not g.endswith(":any")}
    out["items_any"] = {g[:-4]: round(float(np.mean(x)), 1) for g, x in items.items() if g.endswith(":any")}
    out["min_count"] = min_count
    return out


def scales(study, all_persons: Mapping[str, Any], test_persons: Mapping[str, Any], min_count: int) -> dict[str, Any]:
    """What a cross-fitted report adds: the side-by-side answers and the graph sizes at both scales."""
    return {"populations": POPULATION_TITLES, "rows": side_by_side(all_persons, test_persons),
            "sizes": {"all": graph_sizes(study, None, min_count), "test": graph_sizes(study, "test", min_count)}}
