"""Gender fairness of relation extractors: F1 gap and equality of opportunity, with intervals.

Definitions (Gaut et al. 2020, "Towards Understanding Gender Bias in Relation Extraction"):

* **F1 gap** of relation r = F1_r(male test bags) − F1_r(female test bags). Positive values
  favour articles about men. A bag's gender is the gender of its head entity (the article's
  subject).
* **Equality of opportunity** (Hardt et al. 2016), per relation one-vs-rest: Y=1 when r is a
  gold label of the bag, Ŷ=1 when r is predicted. EO holds when the true-positive rate (recall)
  is equal for both genders; we report the **EO gap** = TPR_r(male) − TPR_r(female).

Point estimates come from fairlearn's :class:`~fairlearn.metrics.MetricFrame` (per-group
metrics; its ``difference()`` is the unsigned gap and is recorded as ``abs_difference``).

Uncertainty, two kinds:

* :func:`gender_gaps` — **bootstrap over test entities**: the entities (articles) of each gender's
  test set are resampled with replacement, independently per gender, and each resampled entity
  brings all its bags. ``n_resamples`` resamples are drawn at once (multinomial weights times
  per-entity counts, fully vectorised); the interval is the percentile interval. Entities, not
  bags, are the unit because bags of one article are not independent.
* :func:`seed_interval` — **across training seeds**: mean ± Student-t interval of the values
  obtained with different seeds (needs at least 2; the grid uses >= 3).

A per-run gap is *flagged* when its bootstrap interval excludes 0. Across runs, flags and
verdicts come from :mod:`wgbstats.design`, whose two-level bootstrap combines both kinds of
uncertainty (seeds and test entities), with a multiplicity correction.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from relext.evaluation.metrics import micro_f1_from_counts, prf_from_counts, relation_counts
from wikigenderbias.schema import RELATIONS

#: Gap metrics: name -> what it compares between genders.
GAP_METRICS: dict[str, str] = {
    "f1": "F1 gap = F1(male) − F1(female)",
    "recall": "equality of opportunity gap = TPR(male) − TPR(female) (one-vs-rest recall)",
}
MICRO = "micro"  # pseudo-relation name for micro F1 over the positive relations


# --------------------------------------------------------------------------------------------
# fairlearn-style metric functions on one binary (one-vs-rest) relation
# --------------------------------------------------------------------------------------------
def _metric_frame(y_true, y_pred, sensitive_features):
    from fairlearn.metrics import MetricFrame, true_positive_rate
    from sklearn.metrics import f1_score, precision_score

    return MetricFrame(
        metrics={
            "precision": lambda a, b: precision_score(a, b, zero_division=0),
            "recall": lambda a, b: float(true_positive_rate(a, b, pos_label=1))
            if np.any(np.asarray(a) == 1) else 0.0,
            "f1": lambda a, b: f1_score(a, b, zero_division=0),
        },
        y_true=np.asarray(y_true, dtype=int),
        y_pred=np.asarray(y_pred, dtype=int),
        sensitive_features=np.asarray(sensitive_features, dtype=object),
    )


def by_gender(y_true, y_pred, *, sensitive_features) -> dict[str, dict[str, float]]:
    """``{gender: {precision, recall, f1}}`` of a binary task (fairlearn MetricFrame)."""
    mf = _metric_frame(y_true, y_pred, sensitive_features)
    return {str(g): {k: float(v) for k, v in row.items()} for g, row in mf.by_group.iterrows()}


def _signed(y_true, y_pred, sensitive_features, metric: str, a: str, b: str) -> float:
    groups = by_gender(y_true, y_pred, sensitive_features=sensitive_features)
    for g in (a, b):
        if g not in groups:
            raise ValueError(f"sensitive_features has no {g!r} rows; got {sorted(groups)}")
    return groups[a][metric] - groups[b][metric]


def f1_gap(y_true, y_pred, *, sensitive_features, a: str = "male", b: str = "female") -> float:
    """F1(a) − F1(b) of a binary (one-vs-rest) task."""
    return _signed(y_true, y_pred, sensitive_features, "f1", a, b)


def equal_opportunity_gap(y_true, y_pred, *, sensitive_features, a: str = "male",
                          b: str = "female") -> float:
    """TPR(a) − TPR(b) of a binary task; fairlearn's ``equal_opportunity_difference`` is its
    absolute value."""
    return _signed(y_true, y_pred, sensitive_features, "recall", a, b)


# --------------------------------------------------------------------------------------------
# Bootstrap over entities
# --------------------------------------------------------------------------------------------
@dataclass
class GapEstimate:
    """One gender gap of one relation (or ``micro``), with its bootstrap interval."""

    relation: str
    metric: str               # "f1" or "recall" (equality of opportunity)
    male: float
    female: float
    gap: float                # male − female
    ci_low: float
    ci_high: float
    flagged: bool             # interval excludes 0
    abs_difference: float     # fairlearn MetricFrame.difference() (unsigned), a cross-check
    male_ci: list[float]
    female_ci: list[float]
    n_male_entities: int
    n_female_entities: int
    method: str = "bootstrap"


def entity_counts(y_true, y_pred, groups) -> tuple[np.ndarray, np.ndarray]:
    """Per-entity (tp, fp, fn) counts: returns (entity ids, counts of shape (E, R, 3))."""
    per_bag = relation_counts(np.asarray(y_true, bool)[:, None, :],
                              np.asarray(y_pred, bool)[:, None, :])  # (n, R, 3)
    ids, inverse = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    out = np.zeros((len(ids),) + per_bag.shape[1:], dtype=np.int64)
    np.add.at(out, inverse, per_bag)
    return ids, out


def bootstrap_counts(counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Resample entities with replacement: (B, R, 3) totals from (E, R, 3) per-entity counts."""
    e = counts.shape[0]
    if e == 0:
        return np.zeros((n_resamples,) + counts.shape[1:])
    weights = rng.multinomial(e, np.full(e, 1.0 / e), size=n_resamples)  # (B, E)
    return np.tensordot(weights, counts, axes=(1, 0))


def _interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    lo, hi = np.quantile(samples, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def gender_gaps(
    y_true,
    y_pred,
    *,
    sensitive_features,
    groups,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    a: str = "male",
    b: str = "female",
) -> list[GapEstimate]:
    """F1 and EO gaps of every positive relation and of micro F1, with bootstrap intervals.

    ``y_true``/``y_pred``: (n, R) bool (gold multi-hot / decisions); ``sensitive_features``:
    gender per bag; ``groups``: entity id per bag (the resampling unit).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    y_true, y_pred = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    sf = np.asarray(sensitive_features, dtype=object)
    groups = np.asarray(groups, dtype=object)
    for g in (a, b):
        if not np.any(sf == g):
            raise ValueError(f"no bags of gender {g!r}; found {sorted(set(sf.tolist()))}")

    rng = np.random.default_rng(seed)
    boot, point, n_ent = {}, {}, {}
    for g in (a, b):
        m = sf == g
        _, c = entity_counts(y_true[m], y_pred[m], groups[m])
        n_ent[g] = len(c)
        point[g] = c.sum(axis=0)                       # (R, 3)
        boot[g] = bootstrap_counts(c, n_resamples, rng)  # (B, R, 3)

    mf = multilabel_metric_frame(y_true, y_pred, sensitive_features=sf)
    groups_fl = {str(g): row for g, row in mf.by_group.iterrows()}
    diff = mf.difference()

    def metric_values(counts: np.ndarray, metric: str) -> np.ndarray:
        p, r, f = prf_from_counts(counts)
        return f if metric == "f1" else r

    out: list[GapEstimate] = []
    for j, rel in enumerate(RELATIONS):
        if j == 0:
            continue
        for metric in GAP_METRICS:
            key = f"{metric}:{rel}"
            fa, fb = float(groups_fl[a][key]), float(groups_fl[b][key])
            # fairlearn's per-group values and the bootstrap's point counts must agree
            va, vb = metric_values(point[a], metric)[j], metric_values(point[b], metric)[j]
            if not (math.isclose(fa, va, abs_tol=1e-9) and math.isclose(fb, vb, abs_tol=1e-9)):
                raise RuntimeError(f"inconsistent {key}: MetricFrame {fa}, {fb} vs counts {va}, {vb}")
            sa = metric_values(boot[a], metric)[:, j]
            sb = metric_values(boot[b], metric)[:, j]
            out.append(_estimate(rel, metric, fa, fb, sa, sb, confidence, n_ent[a], n_ent[b],
                                 float(diff[key])))
    # micro F1 over the positive relations
    sa, sb = micro_f1_from_counts(boot[a]), micro_f1_from_counts(boot[b])
    out.append(_estimate(MICRO, "f1", float(groups_fl[a]["f1:micro"]),
                         float(groups_fl[b]["f1:micro"]), sa, sb, confidence,
                         n_ent[a], n_ent[b], float(diff["f1:micro"])))
    return out


def multilabel_metric_frame(y_true, y_pred, *, sensitive_features):
    """A fairlearn MetricFrame of one-vs-rest F1 and recall (TPR) of every positive relation
    (columns ``f1:<relation>``, ``recall:<relation>``) and ``f1:micro``, from (n, R) bool arrays.
    The metric functions are count-based (vectorised), so one frame serves all relations."""
    from fairlearn.metrics import MetricFrame

    def one(j: int, metric: str):
        def fn(yt, yp):
            c = relation_counts(yt, yp)[j]
            p, r, f = prf_from_counts(c)
            return float(f if metric == "f1" else r)
        return fn

    metrics = {f"{m}:{rel}": one(j, m) for j, rel in enumerate(RELATIONS) if j
               for m in GAP_METRICS}
    metrics["f1:micro"] = lambda yt, yp: float(micro_f1_from_counts(relation_counts(yt, yp)))
    return MetricFrame(metrics=metrics, y_true=np.asarray(y_true, bool),
                       y_pred=np.asarray(y_pred, bool),
                       sensitive_features=np.asarray(sensitive_features, dtype=object))


def _estimate(rel, metric, va, vb, sa, sb, confidence, na, nb, abs_diff) -> GapEstimate:
    lo, hi = _interval(sa - sb, confidence)
    return GapEstimate(
        relation=rel, metric=metric, male=float(va), female=float(vb), gap=float(va - vb),
        ci_low=lo, ci_high=hi, flagged=bool(lo > 0 or hi < 0),
        abs_difference=abs_diff,
        male_ci=list(_interval(sa, confidence)), female_ci=list(_interval(sb, confidence)),
        n_male_entities=int(na), n_female_entities=int(nb),
    )


def find_gap(gaps: Sequence[GapEstimate], relation: str, metric: str = "f1") -> GapEstimate:
    for g in gaps:
        if g.relation == relation and g.metric == metric:
            return g
    raise KeyError(f"no {metric} gap for relation {relation!r}")


# --------------------------------------------------------------------------------------------
# Across seeds
# --------------------------------------------------------------------------------------------
@dataclass
class SeedInterval:
    """Mean of per-seed values with a Student-t interval."""

    mean: float
    ci_low: float
    ci_high: float
    std: float
    n: int
    values: list[float]

    @property
    def flagged(self) -> bool:
        """Seed variance only, so only a hint: verdicts and report flags come from the combined
        seed x entity design (:mod:`wgbstats.design`). Never from fewer than 3 seeds or a zero-width
        interval (identical seeds say nothing about the seed variance)."""
        return bool(self.n >= 3 and self.std > 1e-12 and (self.ci_low > 0 or self.ci_high < 0))


@functools.lru_cache(maxsize=64)
def _t_quantile(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df=df))


def seed_interval(values: Sequence[float], confidence: float = 0.95) -> SeedInterval:
    """Mean ± t_{n-1} · s/√n over per-seed values; the interval is NaN with one value."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        raise ValueError("seed_interval needs at least one value")
    mean = float(v.mean())
    if v.size < 2:
        return SeedInterval(mean, math.nan, math.nan, math.nan, 1, v.tolist())
    std = float(v.std(ddof=1))
    half = float(_t_quantile(0.5 + confidence / 2, v.size - 1) * std / math.sqrt(v.size))
    return SeedInterval(mean, mean - half, mean + half, std, int(v.size), v.tolist())
