"""A bias measure's per-item scores over embedding seeds and models, through the statistics of
:mod:`wgbstats` (issue #42): each item's score with its interval over seeds, the mean |score| over
seeds x items, and the claim "this measure's top-k biased items are stable across embedding
models" with its verdict.

Input: :class:`~kge.bias.result.BiasResult` objects of one measure and one spec (sensitive
relation, values a and b, target relation), one per trained embedding; ``result.model`` names the
embedding model (``--model-label``) and ``result.seed`` the embedding's training seed (``wgb kge
bias EMB_DIR --seed S``: give each seed's embeddings its own). Items are the units; the items
scored at every seed (finite scores, the aggregate row ``*`` left out) enter.

* :func:`item_table`: per item, the mean over seeds, its interval (Student's t over the seeds with
  the seed reference of :mod:`wgbstats.reference`) and whether its lean is decided (Holm across
  the items); plus the data counts.
* :func:`stability_claims`: for each pair of models with at least 3 seeds each, runs paired by seed
  order (each pair two independent trainings), the share of one run's top k items towards a (and
  towards b) also in the paired run's top k, with its interval over seeds x items
  (:func:`wgbstats.ranking.stability_claim`); verdicts with Holm across the family. Within one
  model the seeds' agreement (seed i against seed i + 1) is shown beside, without a verdict: those
  pairs share runs, which the seed reference does not allow for.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Sequence

from wgbstats.verdicts import cut_interval

import numpy as np

from kge.bias.result import BiasResult
from wgbstats.ranking import agreement_estimate, stability_claim, unit_estimates
from wgbstats.verdicts import verdicts

#: Default top k and margin of the stability claim (most of one run's top k recur in the other).
TOP_K = 20
MARGIN = 0.5


def group_key(r: BiasResult) -> tuple:
    """What makes results comparable across seeds and models: measure and spec."""
    s = r.spec
    return (r.measure, s.sensitive_relation, s.a, s.b, s.target_relation)


def groups(results: Iterable[BiasResult]) -> dict[tuple, dict[str, list[BiasResult]]]:
    """measure/spec key -> model -> its results sorted by seed (one per seed: a repeated seed of
    one model is an error naming it)."""
    out: dict[tuple, dict[str, list[BiasResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        out[group_key(r)][r.model or "?"].append(r)
    for key, by_model in out.items():
        for model, rs in by_model.items():
            rs.sort(key=lambda r: r.seed)
            seeds = [r.seed for r in rs]
            if len(set(seeds)) != len(seeds):
                raise ValueError(f"{key[0]} on {model}: seed {next(s for s in seeds if seeds.count(s) > 1)} "
                                 "twice; give each embedding's result its training seed (wgb kge bias --seed)")
    return {k: dict(v) for k, v in out.items()}


def score_matrix(results: Sequence[BiasResult], items: Sequence[str] | None = None
                 ) -> tuple[list[str], np.ndarray, dict[str, tuple]]:
    """(items, (S, N) scores, item -> (count_a, count_b)) over the items every result scored with
    a finite score (or the given ``items``, which every result must have)."""
    per = []
    for r in results:
        per.append({x.item: x for x in r.rows if x.item != "*" and x.score is not None
                    and isinstance(x.score, (int, float)) and math.isfinite(x.score)})
    common = set.intersection(*(set(p) for p in per)) if per else set()
    if items is None:
        items = sorted(common)
    else:
        missing = [i for i in items if i not in common]
        if missing:
            raise ValueError(f"items not scored at every seed: {missing[:3]}")
    x = np.array([[p[i].score for i in items] for p in per], dtype=float).reshape(len(per), len(items))
    counts = {i: (per[0][i].count_a, per[0][i].count_b) for i in items}
    return list(items), x, counts


def item_table(results: Sequence[BiasResult], *, min_count: int = 0, confidence: float = 0.95) -> list[dict]:
    """Per item (held by at least ``min_count`` persons of a and b): mean score over the seeds,
    its interval, p-value, Holm-adjusted p-value and ``decided`` (its lean is significant)."""
    items, x, counts = score_matrix(results)
    keep = [j for j, i in enumerate(items) if sum(c or 0 for c in counts[i]) >= min_count]
    if not keep:
        return []
    rows = unit_estimates(x[:, keep], [r.seed for r in results], confidence=confidence)
    out = []
    for j, row in zip(keep, rows):
        i = items[j]
        out.append({"item": i, "score": row["value"], "ci": row["ci"], "se": row["se"], "p_value": row["p_value"],
                    "p_adjusted": row["p_adjusted"], "decided": row["flagged"], "n_seeds": row["n_seeds"],
                    "degenerate": row["degenerate"], "count_a": counts[i][0], "count_b": counts[i][1],
                    "seed_scores": x[:, j].tolist()})
    return out


def mean_abs_score(results: Sequence[BiasResult], *, n_resamples: int = 2000, seed: int = 0):
    """The mean |score| over the items, with its interval over seeds x items
    (:func:`wgbstats.ranking.seed_unit_estimate`), cut at 0."""
    from wgbstats.ranking import seed_unit_estimate

    _, x, _ = score_matrix(results)
    a = np.abs(x)
    est = seed_unit_estimate(lambda s, w: (w @ a[s]) / w.sum(axis=1), x.shape[0], x.shape[1],
                             seeds=[r.seed for r in results], n_resamples=n_resamples, seed=seed)
    est.ci = cut_interval(est.ci, 0.0)     # a mean |score| is >= 0 (cut_interval)
    return est


def stability_claims(results: Iterable[BiasResult], *, k: int = TOP_K, margin: float = MARGIN,
                     n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> list[dict]:
    """The stability claims of every measure/spec with two or more models of 3+ seeds each, and the
    within-model seed agreement beside them (module docstring); one row per claim, verdicts with
    Holm across all of them."""
    claims, rows = [], []
    for key, by_model in groups(results).items():
        models = sorted(m for m, rs in by_model.items() if len(rs) >= 3)
        for i, mx in enumerate(models):
            for my in models[i + 1:]:
                s = min(len(by_model[mx]), len(by_model[my]))
                items, x, _ = score_matrix(by_model[mx][:s] + by_model[my][:s])
                if len(items) <= k:
                    continue
                for side, towards in (("high", key[2]), ("low", key[3] or "<rest>")):
                    name = f"{key[0]}: top {k} towards {towards} agree, {mx} vs {my}"
                    c = stability_claim(name, x[:s], x[s:], k=k, side=side, margin=margin,
                                        seeds=[r.seed for r in by_model[mx][:s]], n_resamples=n_resamples, seed=seed)
                    c.extra.update(measure=key[0], models=[mx, my], towards=towards, spec=list(key[1:]))
                    claims.append(c)
    for v, c in zip(verdicts(claims, alpha=alpha, method="holm"), claims):
        rows.append({"claim": v.claim, "verdict": v.verdict, "agreement": c.extra["agreement_value"],
                     "ci": c.extra["agreement_ci"], "ci_cut": c.extra["agreement_ci_cut"], "margin": margin,
                     "chance": c.extra["chance"],
                     "p_value": v.p_value, "p_adjusted": v.p_adjusted, "n_seeds": v.n_seeds, "k": k,
                     "side": c.extra["side"], "towards": c.extra["towards"], "models": c.extra["models"],
                     "measure": c.extra["measure"], "units": c.extra["units"], "note": v.note})
    return rows


def seed_agreement(results: Sequence[BiasResult], *, k: int = TOP_K, side: str = "high",
                   n_resamples: int = 2000, seed: int = 0) -> dict | None:
    """Within one model: the mean top-k overlap of seed i with seed i + 1 (cyclically), with its
    interval over seeds x items; descriptive (the pairs share runs). None with fewer than 3 seeds."""
    if len(results) < 3:
        return None
    items, x, _ = score_matrix(results)
    if len(items) <= k:
        return None
    e = agreement_estimate(x, np.roll(x, -1, axis=0), k=k, side=side, n_resamples=n_resamples, seed=seed)
    return {"agreement": e.value, "ci": cut_interval(e.ci, 0.0, 1.0), "n_seeds": len(results), "k": k, "side": side,
            "units": len(items)}



def summarize(results: Iterable[BiasResult], *, k: int = TOP_K, min_count: int = 0, margin: float = MARGIN,
              n_resamples: int = 2000, seed: int = 0) -> dict:
    """Everything above for a set of results, as one JSON-ready dict: per measure/spec and model
    with two or more seeds, the items' table (:func:`item_table`), the mean |score| and the seeds'
    agreement towards each value (3+ seeds); the stability claims across models (``claims``)."""
    results = list(results)
    out = []
    for key, by_model in groups(results).items():
        models = {}
        for model, rs in sorted(by_model.items()):
            if len(rs) < 2:
                continue
            entry = {"seeds": [r.seed for r in rs], "items": item_table(rs, min_count=min_count),
                     "mean_abs_score": None, "seed_agreement": {}}
            if len(rs) >= 3:
                e = mean_abs_score(rs, n_resamples=n_resamples, seed=seed)
                entry["mean_abs_score"] = {"value": e.value, "ci": e.ci, "se": e.se}
                for side, towards in (("high", key[2]), ("low", key[3] or "<rest>")):
                    entry["seed_agreement"][towards] = seed_agreement(rs, k=k, side=side, n_resamples=n_resamples,
                                                                      seed=seed)
            models[model] = entry
        if models:
            out.append({"measure": key[0], "spec": dict(zip(("sensitive_relation", "a", "b", "target_relation"),
                                                            key[1:])), "models": models})
    claims = stability_claims(results, k=k, margin=margin, n_resamples=n_resamples, seed=seed)
    return {"k": k, "margin": margin, "min_count": min_count, "groups": out, "claims": claims}
