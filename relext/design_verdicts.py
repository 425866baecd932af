"""Estimates, multiplicity and verdicts of the study-design layer (:mod:`relext.design`): the
:class:`Estimate` of a statistic with its intervals, Holm / Benjamini-Hochberg, the three-state
:func:`verdicts` of a family of claims with intersection-union claims ("for every variant ...")
and the intervals at the corrected level, and the power plan (what more seeds, more articles or
both would decide). Numbers only: the bootstrap that makes the estimates is :class:`relext.design.Design`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

VERDICTS = ("supported", "contradicted", "undecided")
CORRECTIONS = ("holm", "bh", "none")



# --------------------------------------------------------------------------------------------
# Estimates
# --------------------------------------------------------------------------------------------
@dataclass
class Estimate:
    """A statistic with its combined, seed-only and entity-only bootstrap intervals.

    ``ci``/``se``/``p_value`` are the combined (seed x entity) bootstrap's, corrected for the
    interaction counted three times by the crossed resample (module docstring); ``ci_crossed`` and
    ``se_crossed`` are the crossed bootstrap's as drawn, ``se_interaction`` the estimated
    interaction part sqrt(sigma_I^2 / (S E)). ``replicates`` (the corrected combined replicates)
    serve intervals at other levels (:meth:`interval`); they are not part of :meth:`to_dict`."""

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
    df: int | None = None          # a Student-t estimate over seeds (no replicates): its degrees of freedom
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "replicates"}

    def interval(self, confidence: float) -> list[float]:
        """The combined interval at another confidence level (e.g. a multiplicity-adjusted one):
        percentile of the kept replicates, Student-t with ``df`` for a seed-level estimate, else
        normal with ``se``; never the stored ``ci`` at a level it was not computed at (NaN when
        nothing else is known)."""
        if self.degenerate and not np.all(np.isfinite(self.ci)):
            return list(self.ci)
        if self.replicates is not None:
            return _interval(self.replicates, confidence)
        if self.df is not None and math.isfinite(self.se) and self.se > 0:
            from scipy import stats

            t = float(stats.t.ppf(1 - (1 - confidence) / 2, self.df))
            return [self.value - t * self.se, self.value + t * self.se]
        if math.isclose(confidence, self.confidence):
            return list(self.ci)
        if math.isfinite(self.se) and self.se > 0:
            z = z_quantile(1 - (1 - confidence) / 2)
            return [self.value - z * self.se, self.value + z * self.se]
        return [float("nan"), float("nan")]


def bootstrap_p_value(replicates: np.ndarray) -> float:
    """Two-sided p-value of "the statistic is 0" by inverting the percentile interval."""
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
    #: an undecided claim held back by the bootstrap's resolution (every replicate on one side, the
    #: smallest p-value it can give above the corrected level): the resamples that would resolve it
    resamples_to_decide: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def p_floor(n_resamples: int, parts: int = 1) -> float:
    """The smallest p-value :func:`bootstrap_p_value` gives with ``n_resamples`` replicates (every
    replicate on one side of 0), times ``parts`` for an intersection-union claim's evidence
    against it (Bonferroni over its parts)."""
    return min(1.0, parts * 2 / (n_resamples + 1))


def resamples_to_resolve(n_claims: int, parts: int = 1, *, alpha: float = 0.05, margin: float = 2.0) -> int:
    """Replicates whose smallest p-value (:func:`p_floor`) is ``margin`` times below the strictest
    level Holm tests a family of ``n_claims`` at (``alpha / n_claims``), for a claim with
    ``parts`` parts against it: below that, a claim can be undecided by the resampling alone."""
    return math.ceil(2 * parts * max(n_claims, 1) * margin / alpha)


def z_quantile(q: float) -> float:
    """The standard normal quantile."""
    from scipy.stats import norm

    return float(norm.ppf(q))


def z_total(level: float, power: float = 0.8) -> float:
    """``z(1 - level / 2) + z(power)``: the MDE of a two-sided test at ``level`` in standard errors."""
    return z_quantile(1 - level / 2) + z_quantile(power)


def variance_parts(est: Estimate) -> dict[str, float]:
    """The corrected variance split into what more seeds, more articles or both would shrink:
    ``seed`` = sigma_S^2/S, ``entity`` = sigma_E^2/E, ``interaction`` = sigma_I^2/(S E) (module
    docstring); their sum is ``se**2``."""
    var, vs, ve = est.se ** 2, est.se_seed ** 2, est.se_entity ** 2
    j = (est.se_interaction or 0.0) ** 2
    seed, entity = max(vs - j, 0.0), max(ve - j, 0.0)
    inter = max(var - seed - entity, 0.0)
    return {"seed": seed, "entity": entity, "interaction": inter, "total": var}


def mde_at_seeds(parts: dict[str, float], n_seeds_now: int, n_seeds: float, *, alpha_level: float,
                 power: float = 0.8) -> float:
    """The MDE with ``n_seeds`` seeds instead of ``n_seeds_now``, from :func:`variance_parts`: the seed
    and interaction parts scale with ``n_seeds_now / n_seeds``, the entity part stays (the formula
    :func:`power_needs` solves for the seeds that decide an effect)."""
    r = n_seeds_now / n_seeds
    return z_total(alpha_level, power) * math.sqrt(parts["seed"] * r + parts["entity"] + parts["interaction"] * r)


def power_plan(est: Estimate, *, alpha_level: float, power: float = 0.8,
               max_seeds: int = 1000) -> tuple[float | None, int | None, str]:
    """(minimum detectable |effect| at the estimate's seed count, seeds that would detect the
    observed effect, a note). As seeds grow the variance falls to its entity part sigma_E^2/E (the
    interaction part falls with 1/S too): no seed count decides an effect below that floor."""
    mde, n, note, _, _ = power_needs(est, alpha_level=alpha_level, power=power, max_seeds=max_seeds)
    return mde, n, note


def power_needs(est: Estimate, *, alpha_level: float, power: float = 0.8, max_seeds: int = 1000,
                max_articles: float = 1000.0) -> tuple[float | None, int | None, str, str, float | None]:
    """:func:`power_plan` plus what would decide the observed effect: ``needs`` ("seeds",
    "articles", "seeds or articles", "seeds and articles"; "" when nothing is needed) and the
    factor of persons (articles) that would at the estimate's seeds. With S0 seeds and E0 persons
    now, V(S, m E0) = seed S0/S + (entity + interaction S0/S) / m."""
    if est.degenerate:
        return None, None, f"no test: {est.degenerate}", "", None
    z = z_total(alpha_level, power)
    p = variance_parts(est)
    var, floor = p["total"], p["entity"]
    mde = z * math.sqrt(var)
    d = abs(est.value)
    if d == 0:
        return mde, None, "the observed effect is 0", "", None
    need = (d / z) ** 2
    if need >= var:
        return mde, None, "the observed effect is above the MDE (undecided by chance at 80% power)", "", None
    seeds_alone = need > floor
    articles_alone = need > p["seed"]
    m = (var - p["seed"]) / (need - p["seed"]) if articles_alone else None
    m = m if m is not None and m <= max_articles else None
    n = None
    if seeds_alone:
        n = max(math.ceil((var - floor) * est.n_seeds / (need - floor) - 1e-9), 2)
        if n > max_seeds:
            n = None
    needs = ("seeds or articles" if seeds_alone and articles_alone else "seeds" if seeds_alone
             else "articles" if articles_alone else "seeds and articles")
    if seeds_alone:
        note = "" if n is not None else f"more than {max_seeds} seeds would be needed"
    else:
        note = ("no seed count decides it: the judged persons' sampling noise alone (entity SE "
                f"{math.sqrt(floor):.4f} as seeds grow) hides an effect of {d:.4f}")
    if needs == "seeds and articles":
        note += (f"; nor would more articles at {est.n_seeds} seeds (seed SE {math.sqrt(p['seed']):.4f}): "
                 "it needs more seeds and more articles")
    elif needs == "articles" and m is not None:
        note += f"; about {m:.1f}x the articles (persons) at {est.n_seeds} seeds would"
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
        k = len(c.parts) if c.parts and side == -1 else 1
        b = None if e.replicates is None else int(np.size(e.replicates))
        resamples = None
        if v != "undecided":
            n, note, needs, factor = None, (note if degenerate else ""), "", None
        elif not degenerate and b and p <= p_floor(b, k) * (1 + 1e-9):
            # every replicate on one side, yet the smallest p-value B replicates give fails the level
            resamples = resamples_to_resolve(m if method != "none" else 1, k, alpha=alpha)
            n, needs, factor = None, "resamples", None
            note = (f"held back by the bootstrap's resolution: all {b} replicates on one side, but the smallest "
                    f"p-value they give ({p_floor(b, k):.2g}{f' = {k} parts x 2/(B+1)' if k > 1 else ''}) fails "
                    f"the corrected level; about {resamples} replicates would resolve it")
        elif n is not None:
            note = f"about {n} seeds would decide it (80% power at the corrected level)" + (
                f"; or about {factor:.1f}x the articles (persons)" if factor is not None else "")
        out.append(Verdict(claim=c.name, statistic=c.statistic, direction=c.direction, verdict=v,
                           value=e.value, ci=e.ci, ci_seed=e.ci_seed, ci_entity=e.ci_entity,
                           p_value=float(p), p_adjusted=float(pa), correction=method,
                           n_seeds=e.n_seeds, mde=mde, seeds_to_decide=n, note=note, source=c.source,
                           extra={**c.extra, **details}, ci_adjusted=e.interval(1 - lev),
                           ci_adjusted_level=1 - lev, needs=needs, articles_factor=factor,
                           resamples_to_decide=resamples))
    return out
