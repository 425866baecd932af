"""The answer of a ``wgb run``: every estimate of :mod:`wgb.pipeline.propagation` as claims with
verdicts (Holm across all claims), grouped by the run's questions, and the item tables."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from relext.design import Claim, verdicts
from wgb.pipeline.propagation import ENTITY_LEVEL, PARTS, SEED_LEVEL, Propagation, as_row

#: The questions of a run, in the report's order.
QUESTIONS = {
    "graph": "Does the extraction gap reach the knowledge graph?",
    "graph_bias": "Does extraction add gender bias to the graph's hypernym items?",
    "embedding_bias": "Does extraction add gender bias to the embeddings?",
    "debias": "Does a debiased extractor's reduction of the extraction gap survive into the graph and the embeddings?",
}

def analyse(p: Propagation, *, alpha: float = 0.05, min_count: int = 5, top: int = 5) -> dict[str, Any]:
    """Every estimate of the report, the claims and their verdicts (Holm across all claims)."""
    st = p.study
    claims: list[tuple[str, str, Claim]] = []   # (question, interval over, claim)
    relations = _relation_rows(p, claims)
    measures = ["data", *p.embedding_measures]
    added = _bias_added_rows(p, measures, claims)
    comparisons = [_comparison(p, d, claims) for d in st.variants[1:]]
    vs = verdicts([c for _, _, c in claims], alpha=alpha, method="holm")
    verdict_rows = [{**v.to_dict(), "question": q, "over": over} for (q, over, _), v in zip(claims, vs)]
    answer = []
    for q, text in QUESTIONS.items():
        rows = [v for v in verdict_rows if v["question"] == q]
        if rows:
            answer.append({"key": q, "question": text, "rows": rows,
                           "summary": {k: sum(1 for v in rows if v["verdict"] == k)
                                       for k in ("supported", "contradicted", "undecided")}})
    same = all(abs(r["graph_recall_gap"]["value"] - r["extraction_eo_gap"]["value"]) < 1e-12 for r in relations)
    return {"seeds": st.seeds, "alpha": alpha, "graph_equals_extraction": same, "correction": "holm",
            "n_claims": len(claims),
            "answer": answer, "verdicts": verdict_rows, "relations": relations, "bias_added": added,
            "comparisons": comparisons, "items": item_tables(p, measures, min_count=min_count, top=top),
            "min_count": min_count, "unmapped": st.unmapped,
            "n_entities": {"male": int(st.male.sum()), "female": int(st.female.sum())},
            "n_resamples": p.design.n_resamples, "embedding_measures": p.embedding_measures}


def _relation_rows(p: Propagation, claims: list) -> list[dict[str, Any]]:
    """Extraction and graph gaps per extractor and relation; the graph-recall claims."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    st = p.study
    base = st.variants[0]
    relations = []
    for v in st.variants:
        rec = p.recall_by_gender(v)
        for r in POSITIVE_RELATIONS:
            relations.append({
                "extractor": v, "relation": r,
                "extraction_f1_gap": as_row(p.gap("extraction", v, f"f1_gap:{r}"), ENTITY_LEVEL),
                "extraction_eo_gap": as_row(p.gap("extraction", v, f"eo_gap:{r}"), ENTITY_LEVEL),
                "graph_recall_gap": as_row(p.gap("graph", v, f"eo_gap:{r}"), ENTITY_LEVEL),
                "graph_recall": rec[r],
            })
    for r in POSITIVE_RELATIONS:
        ext = p.gap("extraction", base, f"eo_gap:{r}")
        direction = -1 if ext.value < 0 else 1
        claims.append(("graph", ENTITY_LEVEL, Claim(
            f"{base}: the graph's recall gap on {r} is {'positive' if direction > 0 else 'negative'}, "
            "like the extraction recall gap",
            f"recall(male) - recall(female) of the {r} gold triples in the {base} graph", direction,
            p.gap("graph", base, f"eo_gap:{r}"))))
    return relations


def _bias_added_rows(p: Propagation, measures: Sequence[str], claims: list) -> list[dict[str, Any]]:
    """Bias added by extraction per measure and extractor, in parts; the baseline's claims."""
    st = p.study
    base = st.variants[0]
    added: list[dict[str, Any]] = []
    for m in measures:
        for v in st.variants:
            over = ENTITY_LEVEL if m == "data" else SEED_LEVEL
            est = {part: (p.data_estimate(v, part) if m == "data" else p.embedding_estimate(v, m, part))
                   for part in PARTS}
            counts = [p.item_counts(s, v) for s in st.seeds]
            added.append({"measure": m, "extractor": v, "over": over,
                          **{part: as_row(e, over) for part, e in est.items()},
                          "items": {k: float(np.mean([c[k] for c in counts])) for k in counts[0]},
                          "error_born_share": _share(p, v, m)})
            if v != base:
                continue
            q = "graph_bias" if m == "data" else "embedding_bias"
            where = "graph" if m == "data" else "embeddings"
            claims.append((q, over, Claim(f"{v}: the items kept from the gold graph get more {m} bias in the {where}",
                                          f"sum over shared items of |{m}(extracted)| - |{m}(gold)|", 1,
                                          est["shared"])))
            if m == "data":
                claims.append((q, over, Claim(f"{v}: the extracted graph carries more {m} bias than the gold graph",
                                              f"mass({m}, extracted graph) - mass({m}, gold graph)", 1,
                                              est["added"])))
    return added


def _comparison(p: Propagation, d: str, claims: list) -> dict[str, Any]:
    """Baseline vs the debiased extractor ``d`` at every level; its claims."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    base = p.study.variants[0]
    rows = []
    ext = p.mean_abs_gap_reduction("extraction", "f1_gap", base, d)
    graph = p.mean_abs_gap_reduction("graph", "eo_gap", base, d)
    rows.append({"level": "extraction", "statistic": "G = mean over relations of |F1 gap|", "over": ENTITY_LEVEL,
                 "estimate": as_row(ext, ENTITY_LEVEL)})
    rows.append({"level": "graph", "statistic": "mean over relations of |graph recall gap|", "over": ENTITY_LEVEL,
                 "estimate": as_row(graph, ENTITY_LEVEL)})
    claims.append(("debias", ENTITY_LEVEL, Claim(f"{d} reduces the extraction gap (mean |F1 gap|)",
                                                 f"G({base}) - G({d})", 1, ext)))
    claims.append(("debias", ENTITY_LEVEL, Claim(f"{d}'s reduction survives into the graph (mean |recall gap|)",
                                                 f"mean |recall gap|, {base} - {d}", 1, graph)))
    data = p.data_estimate(base, "added", minus=d)
    rows.append({"level": "graph items (data)", "statistic": "bias added by extraction", "over": ENTITY_LEVEL,
                 "estimate": as_row(data, ENTITY_LEVEL)})
    claims.append(("debias", ENTITY_LEVEL, Claim(f"{d}'s graph carries less data bias than {base}'s",
                                                 f"bias added (data), {base} - {d}", 1, data)))
    for m in p.embedding_measures:
        e = p.embedding_estimate(base, m, "added", minus=d)
        rows.append({"level": f"embeddings ({m})", "statistic": "bias added by extraction", "over": SEED_LEVEL,
                     "estimate": as_row(e, SEED_LEVEL)})
        claims.append(("debias", SEED_LEVEL, Claim(f"{d}'s embeddings carry less {m} bias than {base}'s",
                                                   f"bias added ({m}), {base} - {d}", 1, e)))
    per_relation = [{"relation": r,
                     "extraction": as_row(p.mean_abs_gap_reduction("extraction", "f1_gap", base, d, r), ENTITY_LEVEL),
                     "graph": as_row(p.mean_abs_gap_reduction("graph", "eo_gap", base, d, r), ENTITY_LEVEL)}
                    for r in POSITIVE_RELATIONS]
    return {"debiased": d, "baseline": base, "rows": rows, "per_relation": per_relation}


def _share(p: Propagation, variant: str, measure: str) -> float | None:
    """Share of the extracted graph's bias mass carried by error-born items (seed mean)."""
    vals = []
    for s in p.study.seeds:
        if measure == "data":
            one = np.ones((1, int(p.study.male.sum()))), np.ones((1, int(p.study.female.sum())))
            ext = np.abs(p.phi(s, variant, *one)[0])
            h = p.study.holds[s]
            born = h[variant].any(0) & ~h["gold"].any(0)
            total = ext.sum()
            vals.append(ext[born].sum() / total if total > 0 else float("nan"))
        else:
            parts = p.embedding_parts(s, variant, measure)
            sc = p.scores(s, variant, measure)
            total = sum(abs(x[0]) for x in sc.values()) if sc else 0.0
            vals.append(parts["error_born"] / total if parts and total > 0 else float("nan"))
    vals = [v for v in vals if math.isfinite(v)]
    return float(np.mean(vals)) if vals else None


# --------------------------------------------------------------------------------------------
# Item tables
# --------------------------------------------------------------------------------------------
def pooled_items(p: Propagation, graph: str, measure: str) -> dict[str, dict[str, Any]]:
    """Item -> mean score over the seeds where the graph has it, mean holders (men, women), the
    number of those seeds, and whether the gold graph has the item."""
    acc: dict[str, list] = {}
    for s in p.study.seeds:
        gold_items = set(np.asarray(p.study.items[s])[p.study.holds[s]["gold"].any(0)].tolist())
        if measure == "data":
            h = p.study.holds[s][graph]
            one = np.ones((1, int(p.study.male.sum()))), np.ones((1, int(p.study.female.sum())))
            phi = p.phi(s, graph, *one)[0]
            cm, cf = h[p.study.male].sum(0), h[p.study.female].sum(0)
            sc = {o: (float(phi[j]), int(cm[j]), int(cf[j])) for j, o in enumerate(p.study.items[s]) if h[:, j].any()}
        else:
            sc = p.scores(s, graph, measure) or {}
        for o, (score, ca, cb) in sc.items():
            acc.setdefault(o, []).append((score, ca, cb, o in gold_items))
    return {o: {"item": o, "score": float(np.mean([x[0] for x in v])), "men": float(np.mean([x[1] for x in v])),
                "women": float(np.mean([x[2] for x in v])), "support": float(np.mean([x[1] + x[2] for x in v])),
                "seeds": len(v), "in_gold": any(x[3] for x in v)} for o, v in acc.items()}


def item_tables(p: Propagation, measures: Sequence[str], *, min_count: int, top: int) -> list[dict[str, Any]]:
    """Per measure and graph: the items leaning most towards men and towards women among those
    held by at least ``min_count`` persons (seed mean), error-born items apart."""
    out = []
    for m in measures:
        for g in ("gold", *p.study.variants):
            items = pooled_items(p, g, m)
            if not items:
                out.append({"measure": m, "graph": g, "measured": False})
                continue
            kept = [x for x in items.values() if x["support"] >= min_count]
            real = [x for x in kept if x["in_gold"]]
            born_all = [x for x in items.values() if not x["in_gold"]]
            born = sorted((x for x in born_all if x["support"] >= min_count), key=lambda x: -abs(x["score"]))
            out.append({
                "measure": m, "graph": g, "measured": True, "n_items": len(items), "n_kept": len(kept),
                "male": sorted((x for x in real if x["score"] > 0), key=lambda x: -x["score"])[:top],
                "female": sorted((x for x in real if x["score"] < 0), key=lambda x: x["score"])[:top],
                "error_born": born[:top * 2], "n_error_born": len(born_all),
                "n_error_born_below_min": len(born_all) - len(born),
            })
    return out
