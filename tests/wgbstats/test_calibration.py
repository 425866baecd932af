"""Known-answer calibration of the design layer's tests at the levels Holm and the
intersection-union claims use (alpha/28, alpha/(28 x 3)), with 3, 5 and 10 seeds at the annotated
test persons' counts: type-I error at or below nominal, the 95% interval's coverage in the
seed-dominated case, and the plug-in t test that failed this (so the check can fail)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from wgbstats import reference as ref
from wgbstats.calibration import SCENARIOS, check_design_agrees, coverage, simulate

N_MALE, N_FEMALE = 255, 268          # the annotated test persons of the cross-fitted runs
SIMS = 10_000
HOLM = 0.05 / 28


def _sim(name, seeds, n=SIMS, delta=0.0):
    return simulate(n, seeds=seeds, n_male=N_MALE, n_female=N_FEMALE, delta=delta,
                    rng=np.random.default_rng([seeds, len(name)]), chunk=2000, **SCENARIOS[name])


def _at_most_nominal(k: int, n: int, level: float) -> bool:
    """The rejections do not show a rate above ``level`` (one-sided binomial test at 0.001)."""
    return stats.binom.sf(k - 1, n, level) > 1e-3


SLOW = pytest.mark.slow


@pytest.mark.parametrize("name,seeds", [
    ("seed-dominated", 3), ("seed-dominated", 5), ("seed-dominated", 10), ("persons-dominated", 10),
    pytest.param("persons-dominated", 3, marks=SLOW), pytest.param("persons-dominated", 5, marks=SLOW),
    pytest.param("interaction-heavy", 3, marks=SLOW), pytest.param("interaction-heavy", 5, marks=SLOW),
    pytest.param("interaction-heavy", 10, marks=SLOW), pytest.param("mixed", 3, marks=SLOW),
    pytest.param("mixed", 5, marks=SLOW), pytest.param("mixed", 10, marks=SLOW)])
def test_type_i_error_at_holm_levels(name, seeds):
    """(The full table at 50,000 studies per row: results/calibration, scripts/study/calibration.py.)"""
    sim = _sim(name, seeds)
    for level in (0.05, HOLM, HOLM / 3):
        k = int(sim.rejects(level).sum())
        assert _at_most_nominal(k, SIMS, level), (name, seeds, level, k / SIMS)


def test_the_plugin_t_test_fails_the_same_check():
    """The plug-in Welch-Satterthwaite t test (df from the observed seed share) rejects a true null
    at Holm's level several times too often with 3 seeds that dominate: the check can fail."""
    sim = _sim("seed-dominated", 3)
    k = int(sim.rejects_plugin(HOLM).sum())
    assert not _at_most_nominal(k, SIMS, HOLM) and k / SIMS > 3 * HOLM


@pytest.mark.parametrize("seeds", [3, 5, 10])
def test_interval_coverage_in_the_seed_dominated_case(seeds):
    """Each seed its own gap, mean 0: the 95% interval covers the truth 93-97% of the time."""
    assert 0.93 <= coverage(_sim("seed-dominated", seeds, n=4000), 0.0) <= 0.97


def test_power_grows_with_seeds():
    se10 = np.sqrt(SCENARIOS["seed-dominated"]["sd_seed"] ** 2 / 10)
    p = [float(_sim("seed-dominated", s, n=4000, delta=6 * se10).rejects(HOLM).mean()) for s in (3, 5, 10)]
    assert p[0] < p[1] < p[2] and p[2] > 0.5, p


def test_the_reference_tail_is_students_t_and_the_normal_at_its_ends_and_grows_with_the_seed_share():
    for s in (3, 5, 10):
        t = np.array([1.0, 2.5, 6.0, 20.0])
        for rho, exact in ((1.0, 2 * stats.t.sf(t, s - 1)), (0.0, 2 * stats.norm.sf(t))):
            ratio = ref.tail(t, rho, s - 1) / exact        # never below the exact tail: a valid test
            assert np.all(ratio >= 1.0) and np.all(ratio <= 1.005), (s, rho, ratio)
        grid = ref.tail(np.linspace(0.5, 40, 80)[:, None], np.linspace(0, 1, 51)[None], s - 1)
        assert np.all(np.diff(grid, axis=1) >= -1e-12)      # the sup over rho is at its upper bound


def test_p_value_and_interval_agree():
    """The interval at 1 - level excludes 0 exactly when the p-value is below the level."""
    for v_seed, v_rest, n in ((1.0, 0.0, 3), (0.2, 1.0, 5), (1e-4, 1.0, 10)):
        se = np.sqrt(v_seed + v_rest)
        for level in (0.05, HOLM):
            q = ref.critical(level, v_seed, v_rest, n)
            assert ref.p_value(q * 1.001, v_seed, v_rest, n) < level < ref.p_value(q * 0.999, v_seed, v_rest, n)
            assert q * se > 0


def test_the_design_layer_agrees_with_the_closed_form_the_simulations_use():
    for name, seeds in (("mixed", 3), ("seed-dominated", 5)):
        for r in check_design_agrees(4, seeds=seeds, n_male=60, n_female=40, **SCENARIOS[name]):
            assert r["se"] == pytest.approx(r["se_closed"], rel=0.1)
            assert r["se_seed"] == pytest.approx(r["se_seed_closed"], rel=0.1)
            assert abs(r["p"] - r["p_closed"]) < 0.05
