"""Partial pooling of cell estimates (issue #41, part 3): an empirical-Bayes estimate of each cell's
gap beside the raw one, for small cells whose raw gap is mostly noise.

Model: the raw gap ``y_c`` of cell c is normal around the cell's true gap ``theta_c`` with the
design's variance ``v_c`` (its squared standard error), and the true gaps scatter around a common
``mu`` with variance ``tau^2``. ``tau^2`` is the DerSimonian-Laird moment estimate (DerSimonian and
Laird 1986; 0 when the raw gaps scatter no more than their standard errors say), ``mu`` the
precision-weighted mean, and each cell's estimate is

    theta_c = mu + B_c (y_c - mu),   B_c = tau^2 / (tau^2 + v_c),

pulled towards ``mu`` the more the noisier the cell: a large cell with a real difference keeps it
(B_c near 1), small cells that differ by noise only are pulled together. Its standard deviation is
the posterior's, ``sqrt(B_c v_c + (1 - B_c)^2 / sum w)`` with the uncertainty of ``mu``
(``w = 1 / (v + tau^2)``), no allowance for tau^2 being estimated: a model-based estimate, **marked
as such, never a verdict**. The fit uses the cells given as ``fit`` (those with enough persons for
a verdict: a tiny cell's bootstrap variance is itself unreliable) and is applied to every cell.

**Limitation: the cells share the seeds.** Every cell's raw gap is measured on the same seeds'
models, so the cells' errors are positively correlated (a seed that trains a model with a larger
gap moves every cell's gap the same way), while this model takes them as independent. ``v_c``
contains that common seed part, but the common part does not scatter the cells apart: the
between-cell scatter is smaller than independent errors of variance ``v_c`` would give, so
``tau^2`` is biased down (0 more often) and the estimates are pulled towards ``mu`` more than the
data warrant; and ``mu``'s uncertainty ``1 / sum w`` treats the common part as if it averaged out
over the cells, so the posterior sd is too small. Accounting for it would take the cells' full
covariance from the design's replicates (a generalised, GLS moment estimator of ``tau^2`` with the
seed part split off) -- not done: with few seeds that covariance is itself poorly estimated. The
pooled estimate is therefore descriptive only, shown beside the raw gap and never tested; the
verdicts, intervals and the max - min (:mod:`wgbstats.cells`) do account for the shared seeds.
Known-answer simulations (independent cells only):
``tests/wgbstats/test_pooling.py`` (smaller squared error when the cells are equal; a real large
difference in a big cell kept).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

#: How a pooled estimate is labelled wherever it is shown.
LABEL = "partial pooling (empirical Bayes, DerSimonian-Laird tau^2): model-based, not a verdict"


@dataclass
class Pooled:
    """The partial-pooling fit: ``mu``, ``tau2`` and, per cell (in the input order), the raw value,
    its variance, the shrinkage weight ``B`` (1: kept, 0: pooled to mu), the pooled estimate and its
    posterior sd (NaN where the raw variance is unusable)."""

    mu: float
    tau2: float
    n_fit: int
    raw: list[float]
    var: list[float]
    weight: list[float]
    estimate: list[float]
    sd: list[float]
    label: str = LABEL

    def to_dict(self) -> dict:
        return asdict(self)


def dersimonian_laird(y: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """(mu, tau^2) of raw values ``y`` with variances ``v`` (at least 2 values with v > 0)."""
    y, v = np.asarray(y, float), np.asarray(v, float)
    w = 1.0 / v
    mean_w = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - mean_w) ** 2))
    denom = float(np.sum(w) - np.sum(w ** 2) / np.sum(w))
    tau2 = max(0.0, (q - (len(y) - 1)) / denom) if denom > 0 else 0.0
    ws = 1.0 / (v + tau2)
    return float(np.sum(ws * y) / np.sum(ws)), tau2


def partial_pool(raw: Sequence[float], var: Sequence[float], fit: Sequence[bool] | None = None) -> Pooled:
    """The empirical-Bayes estimates of cells' values ``raw`` with variances ``var`` (module
    docstring); ``fit``: which cells estimate mu and tau^2 (default all with a usable variance).
    Fewer than 2 usable fitting cells: every estimate NaN."""
    y, v = np.asarray(raw, float), np.asarray(var, float)
    if y.shape != v.shape:
        raise ValueError(f"{y.size} values, {v.size} variances")
    usable = np.isfinite(y) & np.isfinite(v) & (v > 0)
    use = usable & (np.ones_like(usable) if fit is None else np.asarray(fit, bool))
    nan = [float("nan")] * y.size
    if use.sum() < 2:
        return Pooled(float("nan"), float("nan"), int(use.sum()), y.tolist(), v.tolist(), nan, nan, nan)
    mu, tau2 = dersimonian_laird(y[use], v[use])
    sum_w = float(np.sum(1.0 / (v[use] + tau2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(usable, tau2 / (tau2 + v), np.nan)
        est = np.where(usable, mu + b * (y - mu), np.nan)
        sd = np.where(usable, np.sqrt(b * v + (1 - b) ** 2 / sum_w), np.nan)
    return Pooled(mu, tau2, int(use.sum()), y.tolist(), v.tolist(), b.tolist(), est.tolist(), sd.tolist())


def finite_or_none(x: float) -> float | None:
    """JSON-friendly: NaN/inf -> None."""
    return float(x) if x is not None and math.isfinite(x) else None
