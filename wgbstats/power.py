"""Power and minimum detectable effects before compute: the power of a two-sided z-test at an
effect, the seeds a variance target needs, and the units' part of a statistic's variance projected
to a population of another size (resampling the units within gender up to that size).

A study's plan (which claims, which populations, its tables) lives with the study (relation
extraction's: ``wgbstudies.power``); the MDE of a verdict at more seeds or more units is
:func:`wgbstats.verdicts.power_needs`.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from wgbstats.counts import StudyCounts
from wgbstats.design import base_metrics
from wgbstats.verdicts import z_quantile


class Statistic(Protocol):
    """A statistic of some variants' seed-averaged base metrics (a claim, or one part of one)."""

    variants: Sequence[str]
    fn: Callable[[Mapping[str, Mapping[str, np.ndarray]]], np.ndarray]


def power_at(effect: float, se: float, level: float) -> float:
    """Two-sided power of a z-test at ``level`` for a true effect ``effect`` with standard error ``se``."""
    from scipy.stats import norm

    if not se > 0:
        return float("nan")
    za, d = z_quantile(1 - level / 2), abs(effect) / se
    return float(norm.cdf(d - za) + norm.cdf(-d - za))


def seeds_needed(var_units: float, var_seed: float, s0: int, target_sd: float, cap: int = 1000) -> int | None:
    """Fewest seeds S with ``var_units + var_seed * s0 / S <= target_sd**2`` (the seed part of a
    variance measured at ``s0`` seeds falls as 1 / S); None when the units' part alone exceeds it,
    or more than ``cap`` would be needed."""
    room = target_sd ** 2 - var_units
    if room <= 0:
        return None
    n = max(2, math.ceil(var_seed * s0 / room)) if var_seed > 0 else 2
    return n if n <= cap else None


def projected_unit_se(data: StudyCounts, stat: Statistic, seeds: Sequence[int], targets: Mapping[str, int], *,
                      n_resamples: int = 2000, seed: int = 0) -> float:
    """Unit-only bootstrap SE of ``stat`` (seeds fixed, averaged as in the design) when
    ``targets[g]`` units of gender ``g`` are drawn (with replacement) from the study's units of
    that gender: the sampling noise of a population of that size that behaves like the study's
    units. With ``targets`` = the study's own counts this is the design's entity-only bootstrap."""
    rng = np.random.default_rng([seed, *(int(targets[g]) for g in ("male", "female"))])
    weights = {}
    for g in ("male", "female"):
        e = int(np.sum(data.gender == g))
        weights[g] = rng.multinomial(int(targets[g]), np.full(e, 1.0 / e), size=n_resamples).astype(float)
    labels = data.class_labels()
    metrics = {}
    for v in stat.variants:
        c = np.stack([data.counts[v][s] for s in seeds]).astype(float)           # (S, E, R, 3)
        totals = {}
        for g in ("male", "female"):
            cg = c[:, data.gender == g]
            flat = cg.transpose(1, 0, 2, 3).reshape(cg.shape[1], -1)
            totals[g] = (weights[g] @ flat).reshape(n_resamples, c.shape[0], c.shape[2], 3)
        metrics[v] = {k: x.mean(axis=1) for k, x in base_metrics(totals["male"], totals["female"], labels).items()}
    return float(np.std(np.asarray(stat.fn(metrics), dtype=float), ddof=1))


#: The name relation extraction's plan knows it by (units are its persons).
projected_entity_se = projected_unit_se
