"""Estimates, multiplicity and verdicts of the study-design layer (:mod:`wgbstats.design`): the
:class:`Estimate` of a statistic with its intervals, Holm / Benjamini-Hochberg, the three-state
:func:`verdicts` of a family of claims with intersection-union claims ("for every variant ...")
and the intervals at the corrected level, and the power plan (what more seeds, more articles or
both would decide). Numbers only: the bootstrap that makes the estimates is :class:`wgbstats.design.Design`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from wgbstats import reference

VERDICTS = ("supported", "contradicted", "undecided")
CORRECTIONS = ("holm", "bh", "none")



# --------------------------------------------------------------------------------------------
# Estimates
# --------------------------------------------------------------------------------------------
@dataclass
class Estimate:
    """A statistic with its combined, seed-only and entity-only intervals.

    ``se`` is the combined (seed x entity) bootstrap's standard error, corrected for the
    interaction counted three times by the crossed resample (:mod:`wgbstats.design`); ``p_value``
    and ``ci`` are **studentized**: ``value / se`` against the seed reference of
    :mod:`wgbstats.reference` (Student's t with S - 1 df when the seeds may dominate, the
    normal when the persons do, a confidence bound on the seed share in between), never a count of
    extreme replicates, so a p-value at Holm's levels does not rest on a handful of replicates and
    a few seeds are not treated as the normal's. ``ci_seed`` is t with S - 1 df on ``se_seed``,
    ``ci_entity`` normal on ``se_entity``; ``ci_percentile`` keeps the corrected replicates'
    percentile interval for display. ``ci_crossed`` / ``se_crossed`` are the crossed bootstrap's
    as drawn, ``se_interaction`` the estimated interaction part sqrt(sigma_I^2 / (S E)).
    ``replicates`` are not part of :meth:`to_dict`."""

    value: float
    ci: list[float]               # combined (seeds x entities) percentile interval, corrected
    ci_seed: list[float]          # seed-only (entities fixed)
    ci_entity: list[float]        # entity-only (seeds fixed)
    se: float                     # combined bootstrap standard error, corrected
    se_seed: float
    se_entity: float
    p_value: float                # two-sided, from the combined bootstrap (1.0 when degenerate)
    n_seeds: int
    seeds: list[int]
    confidence: float
    degenerate: str | None = None  # why no test is possible (fewer than 2 seeds, zero width)
    ci_crossed: list[float] | None = None   # the crossed bootstrap's interval before the correction
    se_crossed: float | None = None
    se_interaction: float | None = None
    #: the plug-in Welch-Satterthwaite df (:func:`seed_df`), for display and power plans only
    df: float | None = None
    #: degrees of freedom of the persons' part (the smaller gender's persons less its strata; None: many)
    df_entity: float | None = None
    ci_percentile: list[float] | None = None   # the corrected combined replicates' percentile interval (display only)
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "replicates"}

    def interval(self, confidence: float) -> list[float]:
        """The combined interval at another confidence level (e.g. a multiplicity-adjusted one):
        ``value -/+ critical * se`` with the seed reference's critical value
        (:func:`reference_critical`), the interval that excludes 0 exactly when ``p_value`` is below
        ``1 - confidence``; never the stored ``ci`` at a level it
        was not computed at (NaN when nothing else is known)."""
        if self.degenerate and not np.all(np.isfinite(self.ci)):
            return list(self.ci)
        if math.isfinite(self.se) and self.se > 0:
            q = reference_critical(1 - confidence, self)
            return [self.value - q * self.se, self.value + q * self.se]
        if math.isclose(confidence, self.confidence):
            return list(self.ci)
        return [float("nan"), float("nan")]


#: Degrees of freedom beyond which the t reference is the normal (kept finite for JSON).
DF_MAX = 1e6


def seed_df(v_total: float, v_seed: float, n_seeds: int) -> float | None:
    """Welch-Satterthwaite degrees of freedom of the combined variance ``v_total``, of which the
    seed-only bootstrap's variance ``v_seed`` = (sigma_S^2 + sigma_I^2 / E) / S is estimated from
    ``n_seeds`` values (S - 1 df) and the rest from thousands of persons (df taken as infinite):
    ``df = (S - 1) (v_total / v_seed)^2``, at least S - 1, at most :data:`DF_MAX`. Seeds that
    dominate give S - 1 (Student's t over the seeds); persons that dominate give the normal.
    None with fewer than 2 seeds."""
    if n_seeds < 2:
        return None
    if not (math.isfinite(v_total) and math.isfinite(v_seed)) or v_seed <= 0:
        return DF_MAX
    return float(min(DF_MAX, (n_seeds - 1) * max(v_total / v_seed, 1.0) ** 2))


def t_quantile(q: float, df: float | None) -> float:
    """Student's t quantile with ``df`` degrees of freedom (the normal's for None or >= DF_MAX)."""
    from scipy import stats

    if df is None or df >= DF_MAX:
        return float(stats.norm.ppf(q))
    return float(stats.t.ppf(q, df))


def t_p_value(value: float, se: float, df: float | None) -> float:
    """Two-sided p-value of "the statistic is 0": ``|value| / se`` against t with ``df`` (normal
    for None); 1.0 when ``se`` is not positive and finite."""
    from scipy import stats

    if not (math.isfinite(se) and se > 0 and math.isfinite(value)):
        return 1.0
    z = abs(value) / se
    sf = stats.norm.sf(z) if df is None or df >= DF_MAX else stats.t.sf(z, df)
    return float(min(1.0, 2 * sf))


def _reference_args(e: "Estimate") -> tuple[float, float, int, float | None]:
    v = e.se ** 2
    v_seed = min(e.se_seed ** 2, v) if math.isfinite(e.se_seed) else v
    return v_seed, v - v_seed, e.n_seeds, e.df_entity


def reference_critical(level: float, e: "Estimate") -> float:
    """The critical |value / se| of ``e``'s two-sided test at ``level`` (:mod:`wgbstats.reference`;
    the normal's with fewer than 2 seeds)."""

    v_seed, v_rest, n, df_e = _reference_args(e)
    if n < 2:
        return t_quantile(1 - level / 2, None)
    return reference.critical(level, v_seed, v_rest, n, df_e)


def reference_p_value(e: "Estimate") -> float:
    """``e``'s two-sided p-value of "the statistic is 0" from ``value / se`` and the seed reference."""

    if not (math.isfinite(e.se) and e.se > 0 and math.isfinite(e.value)):
        return 1.0
    v_seed, v_rest, n, df_e = _reference_args(e)
    if n < 2:
        return t_p_value(e.value, e.se, None)
    return reference.p_value(e.value / e.se, v_seed, v_rest, n, df_e)


def bootstrap_p_value(replicates: np.ndarray) -> float:
    """Two-sided p-value of "the statistic is 0" by inverting the percentile interval. Not used for
    verdicts (its tail rests on a handful of replicates: :func:`t_p_value` is); kept for display
    and for comparisons."""
    r = np.asarray(replicates, dtype=float)
    b = r.size
    below, above = int(np.sum(r <= 0)), int(np.sum(r >= 0))
    return float(min(1.0, 2 * min(below + 1, above + 1) / (b + 1)))


def _interval(r: np.ndarray, confidence: float) -> list[float]:
    a = 1 - confidence
    lo, hi = np.quantile(r, [a / 2, 1 - a / 2])
    return [float(lo), float(hi)]


# --------------------------------------------------------------------------------------------
# Multiplicity
# --------------------------------------------------------------------------------------------
def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        adj[i] = running
    return adj.tolist()


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj_sorted = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    adj = np.empty(m)
    adj[order] = adj_sorted
    return adj.tolist()


def adjust(p_values: Sequence[float], method: str) -> list[float]:
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        return [float(p) for p in p_values]
    raise ValueError(f"unknown correction {method!r}; expected one of {list(CORRECTIONS)}")


def flags(estimates: Sequence[Estimate], *, alpha: float = 0.05, method: str = "bh") -> list[dict]:
    """Which estimates differ from 0 after the correction; degenerate ones never flag."""
    adj = adjust([e.p_value for e in estimates], method)
    return [{"p_adjusted": a, "flagged": bool(a < alpha and e.degenerate is None), "correction": method}
            for e, a in zip(estimates, adj)]


# --------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------
@dataclass
class Claim:
    """A directional claim: ``direction`` +1 says the statistic is > 0, -1 says < 0.

    With ``parts`` it is an intersection of claims ("for every variant ..."), each part a (name,
    estimate, direction) tested at level alpha on its own: the intersection-union test, whose
    p-value is the largest of the parts' (:func:`intersection_union`); ``estimate`` is then the
    weakest part's, for display."""

    name: str
    statistic: str        # what is estimated, in words
    direction: int
    estimate: Estimate
    source: str = ""      # where the claim comes from (the paper, a section)
    parts: list[tuple[str, Estimate, int]] | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Verdict:
    claim: str
    statistic: str
    direction: int
    verdict: str                  # supported | contradicted | undecided
    value: float
    ci: list[float]               # unadjusted (confidence of the design, e.g. 95%)
    ci_seed: list[float]
    ci_entity: list[float]
    p_value: float
    p_adjusted: float
    correction: str
    n_seeds: int
    mde: float | None             # minimum detectable |effect| at n_seeds (80% power)
    seeds_to_decide: int | None   # seeds that would detect the observed effect (None: see note)
    note: str = ""
    source: str = ""
    extra: dict = field(default_factory=dict)
    #: the interval at the level the correction tested this claim at (Holm: 1 - alpha/(m - k) for
    #: the claim ranked k; it excludes 0 exactly when the claim is decided), and that level
    ci_adjusted: list[float] | None = None
    ci_adjusted_level: float | None = None
    #: what an undecided claim needs: "seeds", "articles", "seeds or articles", "seeds and articles"
    needs: str = ""
    #: how many times the persons (articles) at the same seeds would decide it (None: none would)
    articles_factor: float | None = None
    #: degrees of freedom of the t reference its p-value and intervals used (:func:`seed_df`)
    df: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def z_quantile(q: float) -> float:
    """The standard normal quantile."""
    from scipy.stats import norm

    return float(norm.ppf(q))


def z_total(level: float, power: float = 0.8, df: float | None = None) -> float:
    """``q(1 - level / 2) + q(power)``: the MDE of a two-sided test at ``level`` in standard errors,
    with the quantiles of t with ``df`` degrees of freedom (the normal's for None)."""
    return t_quantile(1 - level / 2, df) + t_quantile(power, df)


def variance_parts(est: Estimate) -> dict[str, float]:
    """The corrected variance split into what more seeds, more articles or both would shrink:
    ``seed`` = sigma_S^2/S, ``entity`` = sigma_E^2/E, ``interaction`` = sigma_I^2/(S E) (module
    docstring of :mod:`wgbstats.design`); their sum is ``se**2``."""
    var, vs, ve = est.se ** 2, est.se_seed ** 2, est.se_entity ** 2
    j = (est.se_interaction or 0.0) ** 2
    seed, entity = max(vs - j, 0.0), max(ve - j, 0.0)
    inter = max(var - seed - entity, 0.0)
    return {"seed": seed, "entity": entity, "interaction": inter, "total": var}


def _projected(parts: dict[str, float], s0: int, n_seeds: float, articles: float = 1.0) -> tuple[float, float]:
    """(variance, its seed-only part) with ``n_seeds`` seeds and ``articles`` times the persons
    instead of ``s0`` seeds: seed and interaction parts scale with s0 / S, entity and interaction
    with 1 / articles; the seed-only part (what the S seed values estimate) is seed + interaction."""
    r = s0 / n_seeds
    var = parts["seed"] * r + (parts["entity"] + parts["interaction"] * r) / articles
    return var, parts["seed"] * r + parts["interaction"] * r / articles


def mde_factor(level: float, power: float, var: float, v_seed: float, n_seeds: int,
               df_entity: float | None = None) -> float:
    """The MDE in standard errors of a two-sided test at ``level`` with 80% (``power``) power: the
    seed reference's critical value (:mod:`wgbstats.reference`) plus t's ``power`` quantile at
    the plug-in df (:func:`seed_df`)."""

    if n_seeds < 2:
        return z_total(level, power)
    v_seed = min(v_seed, var)
    crit = reference.critical(level, v_seed, var - v_seed, int(n_seeds), df_entity)
    return crit + t_quantile(power, seed_df(var, v_seed, int(n_seeds)))


def mde_at_seeds(parts: dict[str, float], n_seeds_now: int, n_seeds: float, *, alpha_level: float,
                 power: float = 0.8, df_entity: float | None = None) -> float:
    """The MDE with ``n_seeds`` seeds instead of ``n_seeds_now``, from :func:`variance_parts`: the seed
    and interaction parts scale with ``n_seeds_now / n_seeds``, the entity part stays, and the seed
    reference at that many seeds (the formula :func:`power_needs` solves for the seeds that decide an
    effect)."""
    var, v_seed = _projected(parts, n_seeds_now, n_seeds)
    return mde_factor(alpha_level, power, var, v_seed, int(round(n_seeds)), df_entity) * math.sqrt(var)


def power_plan(est: Estimate, *, alpha_level: float, power: float = 0.8,
               max_seeds: int = 1000) -> tuple[float | None, int | None, str]:
    """(minimum detectable |effect| at the estimate's seed count, seeds that would detect the
    observed effect, a note). As seeds grow the variance falls to its entity part sigma_E^2/E (the
    interaction part falls with 1/S too): no seed count decides an effect below that floor."""
    mde, n, note, _, _ = power_needs(est, alpha_level=alpha_level, power=power, max_seeds=max_seeds)
    return mde, n, note


def _smallest(ok, lo: float, hi: float, integer: bool) -> float | None:
    """The smallest x in [lo, hi] with ``ok(x)`` for a monotone ``ok`` (None if ``ok(hi)`` fails)."""
    if not ok(hi):
        return None
    if ok(lo):
        return lo
    for _ in range(60):
        if (integer and hi - lo <= 1) or (not integer and hi - lo <= 1e-3 * hi):
            break
        mid = (lo + hi) // 2 if integer else (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def power_needs(est: Estimate, *, alpha_level: float, power: float = 0.8, max_seeds: int = 1000,
                max_articles: float = 1000.0) -> tuple[float | None, int | None, str, str, float | None]:
    """:func:`power_plan` plus what would decide the observed effect: ``needs`` ("seeds",
    "articles", "seeds or articles", "seeds and articles"; "" when nothing is needed) and the
    factor of persons (articles) that would at the estimate's seeds. With S0 seeds and E0 persons
    now, V(S, m E0) = seed S0/S + (entity + interaction S0/S) / m; the MDE at (S, m) uses the seed
    reference at that design (:func:`mde_factor`), so a few seeds cost what Student's t says."""
    if est.degenerate:
        return None, None, f"no test: {est.degenerate}", "", None
    p = variance_parts(est)
    s0, df_e = est.n_seeds, est.df_entity
    var = p["total"]
    mde = mde_at_seeds(p, s0, s0, alpha_level=alpha_level, power=power, df_entity=df_e)
    d = abs(est.value)
    if d == 0:
        return mde, None, "the observed effect is 0", "", None
    if mde <= d:
        return mde, None, "the observed effect is above the MDE (undecided by chance at 80% power)", "", None

    def decides(n: float, m: float = 1.0) -> bool:
        v, v_seed = _projected(p, s0, n, m)
        return mde_factor(alpha_level, power, v, v_seed, int(round(n)), df_e) * math.sqrt(v) <= d

    floor = z_total(alpha_level, power) * math.sqrt(p["entity"])      # infinitely many seeds
    seeds_alone = floor < d
    articles_alone = decides(s0, 1e12)                                   # infinitely many persons
    n = _smallest(lambda x: decides(x), s0 + 1, max_seeds, True) if seeds_alone else None
    n = int(n) if n is not None else None
    m = _smallest(lambda x: decides(s0, x), 1.0, max_articles, False) if articles_alone else None
    needs = ("seeds or articles" if seeds_alone and articles_alone else "seeds" if seeds_alone
             else "articles" if articles_alone else "seeds and articles")
    if seeds_alone:
        note = "" if n is not None else f"more than {max_seeds} seeds would be needed"
    else:
        note = ("no seed count decides it: the judged persons' sampling noise alone (entity SE "
                f"{math.sqrt(p['entity']):.4f} as seeds grow) hides an effect of {d:.4f}")
    if needs == "seeds and articles":
        note += (f"; nor would more articles at {s0} seeds (seed SE {math.sqrt(p['seed']):.4f}, "
                 f"t with {s0 - 1} df): it needs more seeds and more articles")
    elif needs == "articles" and m is not None:
        note += f"; about {m:.1f}x the articles (persons) at {s0} seeds would"
    return mde, n, note, needs, m


def intersection_union(parts: Sequence[tuple[str, Estimate, int]]) -> tuple[float, int, dict]:
    """(p-value, side, details) of "every part holds in its direction": each part is a two-sided
    bootstrap test at level alpha; the intersection-union p-value is the largest part p-value when
    every part's estimate is in its direction (side +1), else the smallest Bonferroni p-value among
    the parts against their direction (side -1: evidence that some part fails)."""
    if not parts:
        raise ValueError("an intersection-union claim needs at least one part")
    rows = [{"part": n, "value": e.value, "ci": e.ci, "p_value": e.p_value, "direction": d,
             "degenerate": e.degenerate} for n, e, d in parts]
    if any(e.degenerate for _, e, _ in parts):
        return 1.0, 1, {"parts": rows, "test": "intersection-union"}
    with_dir = [np.sign(e.value) == d for _, e, d in parts]
    if all(with_dir):
        return max(e.p_value for _, e, _ in parts), 1, {"parts": rows, "test": "intersection-union"}
    against = [e.p_value for (_, e, _), ok in zip(parts, with_dir) if not ok]
    return min(1.0, len(parts) * min(against)), -1, {"parts": rows, "test": "intersection-union"}


def iut_claim(name: str, statistic: str, direction: int, parts: Sequence[tuple[str, Estimate, int]],
              source: str = "", extra: dict | None = None) -> Claim:
    """An intersection-union claim; its display estimate is the part with the largest p-value (when
    some part is against its direction: that part with the smallest p-value)."""
    parts = list(parts)
    _, side, _ = intersection_union(parts)
    if side == 1:
        weakest = max(parts, key=lambda t: (t[1].degenerate is not None, t[1].p_value))
    else:   # the strongest evidence against the claim
        weakest = min((t for t in parts if np.sign(t[1].value) != t[2]), key=lambda t: t[1].p_value)
    return Claim(name, statistic, direction, weakest[1], source, parts=parts,
                 extra={**(extra or {}), "weakest_part": weakest[0]})


def _levels(p_adj: Sequence[float], decided: Sequence[bool], alpha: float, method: str) -> list[float]:
    """The level each claim is tested at by the correction (see ``Verdict.ci_adjusted``)."""
    m = len(p_adj)
    if method == "none":
        return [alpha] * m
    if method == "bh":
        return [alpha * max(sum(decided), 1) / m] * m   # FCR-adjusted (Benjamini-Yekutieli 2005)
    order = sorted(range(m), key=lambda i: p_adj[i])
    out, stop = [0.0] * m, None
    for k, i in enumerate(order):
        if stop is None and not decided[i]:
            stop = k
        out[i] = alpha / (m - (k if stop is None else stop))
    return out


def verdicts(claims: Sequence[Claim], *, alpha: float = 0.05, method: str = "holm",
             power: float = 0.8) -> list[Verdict]:
    """Three-state verdicts of a family of claims, with the multiplicity ``method`` across it."""
    tests = []
    for c in claims:
        if c.direction not in (1, -1):
            raise ValueError(f"claim {c.name!r}: direction must be +1 or -1")
        if c.parts:
            p, side, details = intersection_union(c.parts)
            tests.append((p, side, c.estimate.degenerate or next(
                (e.degenerate for _, e, _ in c.parts if e.degenerate), None), details))
        else:
            e = c.estimate
            tests.append((e.p_value, 1 if np.sign(e.value) == c.direction else -1, e.degenerate, {}))
    adj = adjust([t[0] for t in tests], method)
    decided = [pa < alpha and t[2] is None for pa, t in zip(adj, tests)]
    levels = _levels(adj, decided, alpha, method)
    m = max(len(claims), 1)
    level = alpha / m if method == "holm" else alpha
    out = []
    for c, pa, (p, side, degenerate, details), sig, lev in zip(claims, adj, tests, decided, levels):
        e = c.estimate
        if c.parts and side == -1:
            lev /= len(c.parts)    # the evidence against is Bonferroni over the parts
        v = ("supported" if side == 1 else "contradicted") if sig else "undecided"
        mde, n, note, needs, factor = power_needs(e, alpha_level=level, power=power)
        if degenerate and not e.degenerate:
            mde, n, note, needs, factor = None, None, f"no test: {degenerate}", "", None
        if v != "undecided":
            n, note, needs, factor = None, (note if degenerate else ""), "", None
        elif n is not None:
            note = f"about {n} seeds would decide it (80% power at the corrected level)" + (
                f"; or about {factor:.1f}x the articles (persons)" if factor is not None else "")
        out.append(Verdict(claim=c.name, statistic=c.statistic, direction=c.direction, verdict=v,
                           value=e.value, ci=e.ci, ci_seed=e.ci_seed, ci_entity=e.ci_entity,
                           p_value=float(p), p_adjusted=float(pa), correction=method,
                           n_seeds=e.n_seeds, mde=mde, seeds_to_decide=n, note=note, source=c.source,
                           extra={**c.extra, **details}, ci_adjusted=e.interval(1 - lev),
                           ci_adjusted_level=1 - lev, needs=needs, articles_factor=factor,
                           df=e.df))
    return out


def cut_interval(ci, low: float, high: float = float("inf")) -> list:
    """An interval cut to the range its statistic can take (an overlap in [0, 1], an F1 gap in
    [-1, 1], a mean |score| >= 0): a t interval over few seeds can reach past it; the true value lies
    inside, so cutting keeps the coverage. None (no bound) stays None."""
    return [None if x is None else min(max(float(x), low), high) for x in ci]
