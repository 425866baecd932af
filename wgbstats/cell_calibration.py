"""Known-answer simulations of the largest difference over cells (:meth:`wgbstats.cells.CellDesign.range`):
its simultaneous interval's coverage of a true zero (every cell's gap equal) and its detection of
one differing cell, in closed form like :mod:`wgbstats.calibration` (no bootstrap noise, thousands
of simulated studies in seconds), through the same max-t and seed-reference code the design uses.

Model: K cells of persons, S seeds; person e of cell c under seed s has

    x[s, e] = 0.5 + b_e + i_se + male_e * (delta_c + a_s + a_sc)

``a_s`` a seed effect shared by all cells (it cancels in a difference of cells), ``a_sc`` each
cell's own seed effect (``sd_seed``), ``b_e`` the person effect (``sd_entity``), ``i_se`` the seed
x person interaction (``sd_interaction``); ``delta_c`` the cell's true gap. A cell's gap is the
seed-averaged men's mean minus women's mean; its variance parts are the ones the design's
bootstraps estimate (:mod:`wgbstats.calibration`; the persons' part with the rescaled draw's
``s^2 / n``), the cells' covariance comes from the shared seeds, and the pairs' correlation,
critical value and per-pair tests follow :meth:`CellDesign.range` exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from wgbstats.cells import maxt_critical, per_comparison_level
from wgbstats.reference import rejects


@dataclass
class RangeSim:
    """Per simulated study: whether the range's interval excludes 0 (``detected``) and whether
    every pair that excludes 0 involves ``cell`` (the differing one, when given)."""

    detected: np.ndarray
    only_with_cell: np.ndarray
    per_comparison_level: np.ndarray


def simulate_range(n_studies: int, *, seeds: int, sizes: list[tuple[int, int]], sd_seed: float, sd_entity: float,
                   sd_interaction: float, deltas: list[float] | None = None, alpha: float = 0.05,
                   differing: int | None = None, rng: np.random.Generator | None = None,
                   n_draws: int = 4000) -> RangeSim:
    """``n_studies`` studies of K = len(sizes) cells ((men, women) per cell), each reduced to its
    range test at ``alpha`` (module docstring). ``deltas``: the cells' true gaps (default all 0)."""
    rng = rng or np.random.default_rng(0)
    k = len(sizes)
    deltas = np.zeros(k) if deltas is None else np.asarray(deltas, float)
    pairs = list(combinations(range(k), 2))
    a = np.zeros((len(pairs), k))
    for p, (i, j) in enumerate(pairs):
        a[p, i], a[p, j] = 1.0, -1.0
    gap_s = np.zeros((n_studies, seeds, k))
    v_e, j_int = np.zeros((n_studies, k)), np.zeros((n_studies, k))
    for c, (n_m, n_f) in enumerate(sizes):
        for size, sign in ((n_m, 1.0), (n_f, -1.0)):
            x = rng.normal(0, sd_entity, (n_studies, 1, size)) + rng.normal(0, sd_interaction, (n_studies, seeds, size))
            mean_s = x.mean(axis=2)
            gap_s[:, :, c] += sign * mean_s
            ybar = x.mean(axis=1)
            v_e[:, c] += ybar.var(axis=1, ddof=1) / size
            resid = x - ybar[:, None, :] - mean_s[:, :, None] + ybar.mean(axis=1)[:, None, None]
            j_int[:, c] += (resid ** 2).sum(axis=(1, 2)) / ((seeds - 1) * (size - 1)) / (seeds * size)
    gap_s += deltas + rng.normal(0, sd_seed, (n_studies, seeds, k)) + rng.normal(0, 1.0, (n_studies, seeds, 1))
    d = gap_s.mean(axis=1) @ a.T                                                  # (N, P)
    dev = gap_s - gap_s.mean(axis=1, keepdims=True)
    c_seed = np.einsum("nsk,nsl->nkl", dev, dev) / (seeds - 1) / seeds            # (N, K, K)
    cov = a @ (c_seed + np.einsum("nk,kl->nkl", v_e - j_int, np.eye(k))) @ a.T    # (N, P, P)
    v_s = np.einsum("pk,nkl,pl->np", a, c_seed, a)
    j_p = j_int @ np.abs(a).T
    var = np.maximum(np.einsum("npp->np", cov), j_p)                              # = max(V_s + V_e - J, J)
    levels = np.empty(n_studies)
    for n in range(n_studies):
        sd = np.sqrt(var[n])
        corr = np.clip(cov[n] / np.outer(sd, sd), -1, 1)
        np.fill_diagonal(corr, 1.0)
        levels[n] = per_comparison_level(maxt_critical(corr, alpha, n_draws=n_draws, seed=n))
    vs = np.minimum(v_s, var)
    rej = rejects(d / np.sqrt(var), levels[:, None], vs, var - vs, seeds, float(min(min(s) for s in sizes) - 1))
    detected = rej.any(axis=1)
    if differing is None:
        only = np.zeros(n_studies, dtype=bool)
    else:
        with_cell = np.array([differing in p for p in pairs])
        only = detected & ~(rej & ~with_cell).any(axis=1)
    return RangeSim(detected, only, levels)
