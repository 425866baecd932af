"""Partial pooling of cell gaps (issue #41, part 3): known-answer simulations."""
from __future__ import annotations

import numpy as np
import pytest

from wgbstats.pooling import dersimonian_laird, partial_pool

#: standard errors of cell gaps from small to large cells
SE = np.array([0.12, 0.09, 0.06, 0.04, 0.02, 0.015])


def test_pooling_reduces_squared_error_when_the_cells_are_equal():
    rng = np.random.default_rng(0)
    raw_err, pooled_err = [], []
    for _ in range(2000):
        y = 0.03 + rng.normal(0, SE)
        p = partial_pool(y, SE ** 2)
        raw_err.append(np.sum((y - 0.03) ** 2))
        pooled_err.append(np.sum((np.array(p.estimate) - 0.03) ** 2))
    assert np.mean(pooled_err) < 0.5 * np.mean(raw_err)


def test_pooling_keeps_a_real_large_difference_in_a_big_cell():
    """The biggest cell's true gap is 0.2 above the others': the pooled estimate keeps at least 90%
    of its raw difference from the others, on average, and its error is not larger than the raw's."""
    rng = np.random.default_rng(1)
    truth = np.array([0, 0, 0, 0, 0, 0.2])
    kept, err_raw, err_pool = [], [], []
    for _ in range(2000):
        y = truth + rng.normal(0, SE)
        est = np.array(partial_pool(y, SE ** 2).estimate)
        kept.append((est[-1] - est[:-1].mean()) / (y[-1] - y[:-1].mean()))
        err_raw.append((y[-1] - 0.2) ** 2)
        err_pool.append((est[-1] - 0.2) ** 2)
    assert np.mean(kept) > 0.9
    assert np.mean(err_pool) <= 1.1 * np.mean(err_raw)


def test_dersimonian_laird_and_edge_cases():
    y, v = np.array([0.0, 0.0, 0.0]), np.array([0.01, 0.02, 0.03])
    assert dersimonian_laird(y, v) == (0.0, 0.0)
    mu, tau2 = dersimonian_laird(np.array([-1.0, 1.0, -1.0, 1.0]), np.full(4, 0.01))
    assert mu == pytest.approx(0.0) and tau2 == pytest.approx((4 * 100 - 3) / (400 - 100), rel=1e-9)
    p = partial_pool([0.1, 0.3, float("nan")], [0.01, 0.01, 0.01], fit=[True, True, False])
    assert p.n_fit == 2 and np.isnan(p.estimate[2]) and all(0 <= b <= 1 for b in p.weight[:2])
    p = partial_pool([0.1, 0.5, 0.2], [0.01, 0.01, 0.01], fit=[True, False, False])
    assert np.isnan(p.mu) and np.all(np.isnan(p.estimate))               # fewer than 2 fitting cells
    # a cell outside the fit still gets its estimate from the others' mu and tau^2
    p = partial_pool([0.1, 0.12, 0.5], [0.0004, 0.0004, 0.04], fit=[True, True, False])
    assert p.n_fit == 2 and 0.1 <= p.estimate[2] < 0.5
