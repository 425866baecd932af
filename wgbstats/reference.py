"""The reference distribution of the design layer's tests: a studentized statistic whose variance
has a part estimated from a few seeds.

A statistic's estimate ``value`` has the corrected combined variance ``V = se^2`` of which
``v_seed = se_seed^2`` (the seed-only bootstrap's: sigma_S^2/S + sigma_I^2/(S E)) is estimated from
the S seed values, with S - 1 degrees of freedom, and the rest ``v_rest = V - v_seed`` (the persons'
part) from hundreds or thousands of persons, treated as known. With ``b`` the true seed-level
variance and ``c`` the rest, ``rho = b / (b + c)``, and ``W ~ chi^2(S - 1)``, the statistic
``T = value / se`` has under "the statistic is 0"::

    P(|T| > t) = E_W[ P(chi^2(1) > t^2 (1 - rho) + t^2 rho W / (S - 1)) ]

(rho = 1: Student's t with S - 1 df; rho = 0: the normal). rho is unknown and its plug-in is
unreliable exactly where it matters: three seeds whose spread is small by chance make the persons'
part look dominant, and a plug-in Welch-Satterthwaite df then rejects at Holm's levels 10 to 100
times too often (``tests/wgbstats/test_calibration.py``). So the test at level ``alpha`` spends
``GAMMA_SHARE * alpha`` on a one-sided confidence bound for ``b`` (``b <= v_seed (S - 1) /
chi^2_{gamma}(S - 1)``, hence ``rho <= rho_hi``) and rejects when the largest tail probability
over ``rho in [0, rho_hi]`` is at most ``(1 - GAMMA_SHARE) * alpha`` (Berger and Boos 1994, JASA
89:1012, p-values maximised over a confidence set for the nuisance parameter). The test is valid at
every level; its p-value is the smallest level at which it rejects (monotone in the level), and
its interval at any level is ``value -/+ critical(level) * se``, which excludes 0 exactly when the
p-value is below the level. With many seeds rho_hi tracks the observed share and the reference is
close to the plug-in one; with 3 seeds it is close to Student's t with 2 df unless the persons'
part is thousands of times the seeds'.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

#: Share of a test's level spent on the confidence bound of the seed variance.
GAMMA_SHARE = 0.1
#: The quadrature of :func:`tail` (midpoints of log-spaced CDF cells) is at most 0.15% low
#: (``tests/wgbstats/test_reference_stats.py`` holds it against scipy's quad); the tail is scaled up by
#: this factor so that it is never below the exact one: the test stays valid, a hair conservative.
TAIL_SAFETY = 1.002


@lru_cache(maxsize=64)
def _nodes(df_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature over W ~ chi^2(df_seed): (scaled nodes W / df_seed, weights), cells in the CDF's
    scale, log-spaced towards both ends so that tails far below 1e-6 are resolved."""
    from scipy import stats

    lo = np.logspace(-15, math.log10(0.5), 300)
    edges = np.unique(np.concatenate([[0.0], lo, 1 - lo[::-1], [1.0]]))
    mid = 0.5 * (edges[1:] + edges[:-1])
    w = stats.chi2.ppf(mid, df_seed) / df_seed
    return w, np.diff(edges)


def tail(t: np.ndarray | float, rho: np.ndarray | float, df_seed: int, df_entity: float | None = None) -> np.ndarray:
    """P(|T| > t) at seed share ``rho`` (module docstring); broadcasts ``t`` and ``rho``. With
    ``df_entity`` (the persons' part estimated from that many degrees of freedom: the smaller
    gender's persons less its strata) the normal inside is Student's t with ``df_entity`` df, a
    conservative allowance for the persons' part being estimated too."""
    from scipy.special import erfc, stdtr

    w, dw = _nodes(int(df_seed))
    t2 = np.asarray(t, dtype=float)[..., None] ** 2
    r = np.asarray(rho, dtype=float)[..., None]
    x = np.sqrt(t2 * (1 - r) + t2 * r * w)          # |T| > t  <=>  |Z| > x given W
    inner = erfc(x / math.sqrt(2)) if df_entity is None or df_entity >= 1e6 else 2 * stdtr(df_entity, -x)
    return np.minimum(TAIL_SAFETY * np.sum(inner * dw, axis=-1), 1.0)


def rho_upper(v_seed: np.ndarray | float, v_rest: np.ndarray | float, df_seed: int, gamma: float) -> np.ndarray:
    """Upper confidence bound (level 1 - gamma) of the seed share rho."""
    from scipy import stats

    v_seed, v_rest = np.asarray(v_seed, dtype=float), np.maximum(np.asarray(v_rest, dtype=float), 0.0)
    b_hi = v_seed * df_seed / stats.chi2.ppf(gamma, df_seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(b_hi + v_rest > 0, b_hi / (b_hi + v_rest), 1.0)
    return np.clip(rho, 0.0, 1.0)


def sup_tail(t, v_seed, v_rest, df_seed: int, gamma: float, df_entity: float | None = None) -> np.ndarray:
    """The largest tail probability over rho in [0, rho_hi]: the tail grows with rho for every t
    (checked on a grid by ``tests/wgbstats/test_calibration.py``), so it is the tail at rho_hi."""
    return tail(np.asarray(t, dtype=float), rho_upper(v_seed, v_rest, df_seed, gamma), df_seed, df_entity)


def rejects(t, level: float, v_seed, v_rest, n_seeds: int, df_entity: float | None = None) -> np.ndarray:
    """Whether the two-sided test of "0" at ``level`` rejects, for studentized values ``t``."""
    if n_seeds < 2:
        raise ValueError("the seed reference needs at least 2 seeds")
    return (sup_tail(np.abs(t), v_seed, v_rest, n_seeds - 1, GAMMA_SHARE * level, df_entity)
            <= (1 - GAMMA_SHARE) * level)


def p_value(t: float, v_seed: float, v_rest: float, n_seeds: int, df_entity: float | None = None) -> float:
    """The smallest level at which :func:`rejects` (bisection on the log of the level); 1.0 when
    it rejects at no level below 1."""
    t = abs(float(t))
    if not math.isfinite(t):
        return 1.0
    if n_seeds < 2 or not bool(rejects(t, 1.0 - 1e-12, v_seed, v_rest, n_seeds, df_entity)):
        return 1.0
    lo, hi = -15.0, 0.0                                   # log10 of the level
    if bool(rejects(t, 10 ** lo, v_seed, v_rest, n_seeds, df_entity)):
        return 10 ** lo
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if bool(rejects(t, 10 ** mid, v_seed, v_rest, n_seeds, df_entity)) else (mid, hi)
        if hi - lo < 1e-4:
            break
    return float(10 ** hi)


def critical(level: float, v_seed: float, v_rest: float, n_seeds: int, df_entity: float | None = None) -> float:
    """The smallest |t| the test at ``level`` rejects: the interval at ``1 - level`` is
    ``value -/+ critical * se``."""
    if n_seeds < 2:
        return float("nan")
    from scipy import stats

    lo = float(stats.norm.isf(level / 2))                          # the normal's: never above it
    hi = 2 * max(lo, float(stats.t.isf(level * (1 - GAMMA_SHARE) / 2, n_seeds - 1)))
    while not bool(rejects(hi, level, v_seed, v_rest, n_seeds, df_entity)):
        hi *= 2
    if bool(rejects(lo, level, v_seed, v_rest, n_seeds, df_entity)):
        return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if bool(rejects(mid, level, v_seed, v_rest, n_seeds, df_entity)) else (mid, hi)
        if hi - lo < 1e-6 * hi:
            break
    return hi
