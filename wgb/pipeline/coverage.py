"""How an extracted graph compares with the gold graph: coverage by gender (one seed, no
intervals; the pooled estimates are :mod:`wgb.pipeline.propagation`'s)."""
from __future__ import annotations

import math
from typing import Any


def kg_coverage(gold: list[dict], extracted: list[dict]) -> dict[str, dict[str, Any]]:
    """Per relation and gender: share of gold triples the graph contains (recall) and share of
    the graph's triples that are gold (precision); gap = male − female."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    gold_set = {(t["head"], t["relation"], t["tail"]): t["head_gender"] for t in gold}
    ext_set = {(t["head"], t["relation"], t["tail"]): t.get("head_gender") for t in extracted}
    out: dict[str, dict[str, Any]] = {}
    for rel in POSITIVE_RELATIONS:
        row: dict[str, Any] = {}
        for g in ("male", "female"):
            gk = {k for k, v in gold_set.items() if k[1] == rel and v == g}
            ek = {k for k, v in ext_set.items() if k[1] == rel and v == g}
            hit = len(gk & ek)
            row[g] = {"gold": len(gk), "extracted": len(ek), "correct": hit,
                      "recall": hit / len(gk) if gk else float("nan"),
                      "precision": hit / len(ek) if ek else float("nan")}
        row["recall_gap"] = row["male"]["recall"] - row["female"]["recall"]
        row["precision_gap"] = row["male"]["precision"] - row["female"]["precision"]
        out[rel] = row
    return out


def bias_items(result) -> dict[str, float]:
    """Item -> finite score of a bias result's rows."""
    return {r.item: r.score for r in result.rows if r.item and r.score is not None and math.isfinite(r.score)}
