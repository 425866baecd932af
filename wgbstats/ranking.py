"""Per-unit scores measured over several seeds (or models): each unit's score with its interval
over the seeds, a statistic of all units with its interval over seeds x units, and the agreement of
two rankings' top k ("the k most extreme units are stable across seeds / models") as a claim with
a verdict.

A score matrix is (S, N): S seeds (training runs), N units (items: occupations, relations, ...).

* **Per unit** (:func:`unit_estimates`): the unit is fixed, so its uncertainty is the seeds': the
  mean over seeds, ``se = sd / sqrt(S)``, tested against the design's seed reference with no units'
  part (Student's t with S - 1 df, a tenth of the level spent on the seed share's bound:
  :mod:`wgbstats.reference`); Holm across the units says which lean is decided.
* **Over seeds x units** (:func:`seed_unit_estimate`): a statistic of the units' scores (a mean
  |score|, an overlap) whose units are a sample too: the two-level bootstrap of
  :mod:`wgbstats.design` (seeds drawn, units resampled by multinomial weights, the interaction
  counted once, :func:`wgbstats.design.estimate_from_replicates`), units' part with N - 1 df.
* **Rank agreement** (:func:`agreement_estimate`, :func:`stability_claim`): two sets of runs X and
  Y paired by seed (seed s of one model against seed s of another; each pair two independent
  trainings, so the S pair values are independent as the seed reference assumes). Per pair, the
  share of X's top k units that are also in Y's top k (``"overlap"``; in a units' resample both
  top k are drawn afresh from the resampled units, copies counting as units) or the rank correlation of all units (``"spearman"``). The claim "the top
  k are stable" says the mean overlap exceeds ``margin`` (default 0.5: most of one run's top k
  recur in the other); chance is k / N.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from wgbstats.design import MIN_SEEDS, estimate_from_replicates
from wgbstats.verdicts import Claim, Estimate, cut_interval, flags, reference_critical, reference_p_value

SIDES = ("high", "low", "abs")
AGREEMENTS = ("overlap", "spearman")


def _matrix(scores, what: str = "scores") -> np.ndarray:
    x = np.asarray(scores, dtype=float)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"{what}: expected a (seeds, units) matrix, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        bad = np.argwhere(~np.isfinite(x))[0]
        raise ValueError(f"{what}: non-finite score at seed row {bad[0]}, unit column {bad[1]}")
    return x


def unit_estimates(scores, seeds: Sequence[int] | None = None, *, confidence: float = 0.95,
                   correction: str = "holm", alpha: float = 0.05) -> list[dict]:
    """Per unit of an (S, N) score matrix: ``value`` (mean over seeds), ``se``, ``ci`` (at
    ``confidence``), ``p_value`` of "the score is 0" and ``p_adjusted`` / ``decided`` across the
    units (``correction``), from the seed reference with no units' part. Fewer than
    ``MIN_SEEDS`` seeds: no test (``degenerate``), intervals NaN."""
    x = _matrix(scores)
    s, n = x.shape
    seeds = list(range(s)) if seeds is None else [int(v) for v in seeds]
    if len(seeds) != s:
        raise ValueError(f"{len(seeds)} seeds for a matrix of {s} seed rows")
    mean = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / math.sqrt(s) if s > 1 else np.full(n, np.nan)
    ests = []
    crit = None
    for j in range(n):
        v, e = float(mean[j]), float(se[j])
        degenerate = (f"fewer than {MIN_SEEDS} seeds: seed variance not estimable" if s < MIN_SEEDS
                      else None if math.isfinite(e) and e > 1e-12 else "zero-width interval")
        est = Estimate(value=v, ci=[float("nan")] * 2, ci_seed=[float("nan")] * 2, ci_entity=[v, v],
                       se=e, se_seed=e, se_entity=0.0, p_value=1.0, n_seeds=s, seeds=seeds,
                       confidence=confidence, degenerate=degenerate, df=float(s - 1) if s > 1 else None)
        if degenerate is None:
            if crit is None:
                crit = reference_critical(1 - confidence, est)
            est.ci = est.ci_seed = [v - crit * e, v + crit * e]
            est.p_value = reference_p_value(est)
        ests.append(est)
    fl = flags(ests, alpha=alpha, method=correction)
    return [{**e.to_dict(), **f} for e, f in zip(ests, fl)]


def unit_weights(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    """(B, N) multinomial resample of N units (each row sums to N)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_resamples).astype(float)


def seed_unit_estimate(per_seed: Callable[[int, np.ndarray], np.ndarray], n_seeds: int, n_units: int, *,
                       seeds: Sequence[int] | None = None, n_resamples: int = 2000, seed: int = 0,
                       confidence: float = 0.95) -> Estimate:
    """A statistic of per-unit data measured at ``n_seeds`` seeds, with its interval over seeds x
    units: ``per_seed(s, W)`` returns seed row ``s``'s statistic as a (K,) array, one value per row
    of unit weights ``W`` (K, N): all ones (K = 1) or the design's resample (K = ``n_resamples``).
    Seeds are averaged, drawn and scaled, and the seed-only, unit-only and crossed replicates made
    and corrected as :meth:`wgbstats.design.Design.estimate_weighted` does."""
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
    seeds = list(range(n_seeds)) if seeds is None else [int(v) for v in seeds]
    if len(seeds) != n_seeds or n_seeds < 1:
        raise ValueError(f"{len(seeds)} seed labels for {n_seeds} seeds")
    w = unit_weights(n_units, n_resamples, seed)
    ones = np.ones((1, n_units))
    fixed = np.stack([np.asarray(per_seed(i, ones), float).reshape(-1) for i in range(n_seeds)], axis=1)
    resampled = np.stack([np.asarray(per_seed(i, w), float).reshape(-1) for i in range(n_seeds)], axis=1)
    draw = np.random.default_rng([seed, n_seeds, 7]).integers(0, n_seeds, size=(n_resamples, n_seeds))
    k = math.sqrt(n_seeds / (n_seeds - 1)) if n_seeds > 1 else 1.0

    def drawn(v: np.ndarray) -> np.ndarray:
        v = np.broadcast_to(v, (n_resamples, n_seeds))
        m = v.mean(1)
        return m + k * (np.take_along_axis(v, draw, 1).mean(1) - m)

    reps = {"combined": drawn(resampled), "seed": drawn(fixed), "entity": resampled.mean(axis=1)}
    return estimate_from_replicates(float(fixed.mean(axis=1)[0]), reps, seeds, confidence,
                                    float(max(n_units - 1, 1)))


def top_k(scores: np.ndarray, k: int, side: str = "high") -> np.ndarray:
    """(..., N) bool: the ``k`` units with the highest (``"low"``: lowest, ``"abs"``: largest
    absolute) score of each row; ties broken by unit order."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {list(SIDES)}, got {side!r}")
    x = np.asarray(scores, dtype=float)
    n = x.shape[-1]
    if not 1 <= k < n:
        raise ValueError(f"k must be in [1, {n - 1}] for {n} units, got {k}")
    key = -x if side == "high" else x if side == "low" else -np.abs(x)
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    out = np.zeros(x.shape, dtype=bool)
    np.put_along_axis(out, order, True, axis=-1)
    return out


def _copies_in_top(w: np.ndarray, order: np.ndarray, k: int) -> np.ndarray:
    """(K, N): how many of each unit's resampled copies (weights ``w``) fall in the top ``k`` of the
    resampled multiset, units ranked by ``order`` (best first)."""
    ws = w[:, order]
    before = np.cumsum(ws, axis=1) - ws
    take = np.clip(k - before, 0, ws)
    out = np.empty_like(take)
    out[:, order] = take
    return out


def _resampled_overlap(w: np.ndarray, order_x: np.ndarray, order_y: np.ndarray, k: int) -> np.ndarray:
    """(K,) share of X's top k also in Y's top k, each top k drawn afresh from the resampled units
    (copies of a unit count as units): with all weights 1, ``|top_k(x) & top_k(y)| / k``."""
    return np.minimum(_copies_in_top(w, order_x, k), _copies_in_top(w, order_y, k)).sum(axis=1) / k


def _spearman_weighted(rx: np.ndarray, ry: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(K,) weighted Pearson correlation of the rank vectors ``rx``, ``ry`` (N,) under weights (K, N)."""
    sw = w.sum(axis=1)
    mx, my = (w @ rx) / sw, (w @ ry) / sw
    dx, dy = rx[None] - mx[:, None], ry[None] - my[:, None]
    cov = (w * dx * dy).sum(axis=1)
    den = np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    return np.divide(cov, den, out=np.zeros_like(cov), where=den > 0)


def agreement_estimate(x, y, *, k: int, side: str = "high", agreement: str = "overlap",
                       margin: float = 0.0, seeds: Sequence[int] | None = None, n_resamples: int = 2000,
                       seed: int = 0, confidence: float = 0.95) -> Estimate:
    """The agreement of two (S, N) score matrices paired by seed row (module docstring), minus
    ``margin``, with its interval over seeds x units."""
    if agreement not in AGREEMENTS:
        raise ValueError(f"agreement must be one of {list(AGREEMENTS)}, got {agreement!r}")
    x, y = _matrix(x, "x"), _matrix(y, "y")
    if x.shape != y.shape:
        raise ValueError(f"x and y must pair the same seeds and units: shapes {x.shape} and {y.shape}")
    s, n = x.shape
    if agreement == "overlap":
        top_k(x[:1], k, side)                                     # checks k and side
        key = {"high": lambda v: -v, "low": lambda v: v, "abs": lambda v: -np.abs(v)}[side]
        ox, oy = np.argsort(key(x), axis=1, kind="stable"), np.argsort(key(y), axis=1, kind="stable")

        def per_seed(i: int, w: np.ndarray) -> np.ndarray:
            return _resampled_overlap(w, ox[i], oy[i], k) - margin
    else:
        from scipy.stats import rankdata

        rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)

        def per_seed(i: int, w: np.ndarray) -> np.ndarray:
            return _spearman_weighted(rx[i], ry[i], w) - margin

    return seed_unit_estimate(per_seed, s, n, seeds=seeds, n_resamples=n_resamples, seed=seed,
                              confidence=confidence)


def stability_claim(name: str, x, y, *, k: int, side: str = "high", agreement: str = "overlap",
                    margin: float = 0.5, source: str = "", **kw) -> Claim:
    """The claim "the top ``k`` units of X recur in Y's" (paired runs): mean agreement above
    ``margin``, direction +1; its verdict (:func:`wgbstats.verdicts.verdicts`) is supported,
    contradicted (agreement below the margin) or undecided. ``extra`` records k, the side, the
    margin, the chance level k / N and the agreement itself, its interval cut to the range the
    agreement can take ([0, 1] for the overlap, [-1, 1] for Spearman's correlation: a t interval over
    few seeds can reach past it; cutting keeps its coverage, since the true value lies inside), with
    ``agreement_ci_cut`` saying whether it was cut. The test itself is on the uncut estimate."""
    est = agreement_estimate(x, y, k=k, side=side, agreement=agreement, margin=margin, **kw)
    n = np.shape(x)[1]
    what = (f"share of one run's top {k} ({side}) units also in the paired run's top {k}" if agreement == "overlap"
            else "Spearman correlation of the paired runs' unit scores")
    lo_bound = 0.0 if agreement == "overlap" else -1.0
    raw = [v + margin for v in est.ci]
    cut = cut_interval(raw, lo_bound, 1.0)
    return Claim(name, f"{what}, minus {margin}", 1, est, source,
                 extra={"k": k, "side": side, "agreement": agreement, "margin": margin, "units": n,
                        "chance": k / n if agreement == "overlap" else 0.0,
                        "agreement_value": est.value + margin,
                        "agreement_ci": cut, "agreement_ci_cut": cut != raw})
