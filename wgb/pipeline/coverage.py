"""How the extracted graphs compare with the gold graph: coverage by gender, and the propagation
of the extraction gaps into the graphs and their embeddings' bias."""
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


def propagation_table(evals, coverage, bias) -> dict[str, Any]:
    """Extraction gap vs graph coverage gap per relation, and embedding bias of each graph per
    occupation-like item compared with the gold graph's."""
    import numpy as np

    from wikigenderbias.schema import POSITIVE_RELATIONS

    rel_rows = []
    for v, ev in evals.items():
        gaps = {(g.relation, g.metric): g for g in ev.gaps["argmax"]}
        for rel in POSITIVE_RELATIONS:
            f1 = gaps.get((rel, "f1"))
            rel_rows.append({
                "extractor": v, "relation": rel,
                "f1_gap": f1.gap if f1 else None, "f1_gap_ci": [f1.ci_low, f1.ci_high] if f1 else None,
                "eo_gap": gaps[(rel, "recall")].gap if (rel, "recall") in gaps else None,
                "kg_recall_gap": coverage[v][rel]["recall_gap"],
                "kg_precision_gap": coverage[v][rel]["precision_gap"],
            })
    measure_rows = []
    gold = {r.measure: bias_items(r) for r in bias["gold"]}
    for gname, results in bias.items():
        for r in results:
            items = bias_items(r)
            ref = gold.get(r.measure, {})
            common = sorted(set(items) & set(ref))
            corr = None
            if len(common) >= 3:
                x = np.array([ref[k] for k in common])
                y = np.array([items[k] for k in common])
                if x.std() > 0 and y.std() > 0:
                    corr = float(np.corrcoef(x, y)[0, 1])
            vals = np.array(list(items.values())) if items else np.array([])
            measure_rows.append({
                "graph": gname, "measure": r.measure, "items": len(items),
                "mean_abs_score": float(np.mean(np.abs(vals))) if len(vals) else None,
                "mean_score": float(np.mean(vals)) if len(vals) else None,
                "items_shared_with_gold": len(common), "pearson_r_vs_gold": corr,
            })
    return {"relations": rel_rows, "measures": measure_rows}
