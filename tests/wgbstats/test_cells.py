"""Any grouping in the design (issue #41, part 2): cell-stratified resampling, gaps within and
between cells, the interaction, the largest difference over cells with its simultaneous interval
(coverage at a true zero, detection of one differing cell: known-answer simulations), the minimum
cell size."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from wgbstats.cell_calibration import simulate_range
from wgbstats.cells import CellDesign, maxt_critical, range_bounds
from wgbstats.counts import StudyCounts
from wgbstats.design import entity_weights

#: the annotated test persons of the cross-fitted runs by birth era (men, women)
ERA_SIZES = [(56, 43), (46, 26), (93, 86), (60, 113)]
N_POS = 100_000


def _study(sizes, *, seeds=5, sd_seed=0.01, sd_entity=0.1, sd_interaction=0.05, deltas=None, folds=None,
           rng=None):
    """Simulated counts of one class whose recall is the calibration model's x, per cell."""
    rng = rng or np.random.default_rng(0)
    deltas = deltas or [0.0] * len(sizes)
    ids, gender, label, x_all = [], [], [], []
    for c, ((n_m, n_f), delta) in enumerate(zip(sizes, deltas)):
        a = rng.normal(0, sd_seed, (seeds, 1))
        for g, n, male in (("male", n_m, 1.0), ("female", n_f, 0.0)):
            x = 0.5 + rng.normal(0, sd_entity, (1, n)) + rng.normal(0, sd_interaction, (seeds, n)) + male * (delta + a)
            x_all.append(np.clip(x, 0, 1))
            ids += [f"c{c}-{g}-{k}" for k in range(n)]
            gender += [g] * n
            label += [f"cell{c}"] * n
    x = np.concatenate(x_all, axis=1)
    tp = np.rint(x * N_POS).astype(np.int64)
    counts = np.zeros((seeds, x.shape[1], 2, 3), dtype=np.int64)
    counts[..., 1, 0], counts[..., 1, 2] = tp, N_POS - tp
    fold = None if folds is None else rng.integers(0, folds, x.shape[1])
    data = StudyCounts(np.array(ids), np.array(gender), {"v": dict(enumerate(counts))}, fold=fold,
                       labels=("none", "x"))
    return data, np.array(label), x


def test_cell_strata_keep_every_cells_size_and_the_rescaled_draw_is_unbiased():
    data, label, _ = _study([(40, 12), (7, 30)], folds=5)
    w = entity_weights(data, 4000, 0, label)
    for g in ("male", "female"):
        lab = label[data.gender == g]
        fold = data.fold[data.gender == g]
        for c in np.unique(lab):
            for f in np.unique(fold):
                cols = (lab == c) & (fold == f)
                assert np.allclose(w[g][:, cols].sum(axis=1), cols.sum())   # every stratum keeps its size
    # the rescaled draw's variance of a stratum mean is s^2 / n (the multinomial's is (n-1)/n of it)
    y = np.random.default_rng(1).normal(size=6)
    d = StudyCounts(np.array([f"e{i}" for i in range(12)]), np.array(["male"] * 6 + ["female"] * 6),
                    {"v": {0: np.zeros((12, 2, 3), dtype=np.int64)}})
    wm = entity_weights(d, 200_000, 2, np.array(["a"] * 12))["male"]
    assert np.var(wm @ y / 6) == pytest.approx(np.var(y, ddof=1) / 6, rel=0.03)


def test_cell_design_gaps_and_interaction_match_the_closed_form():
    """The gap within a cell, the interaction of two cells and their standard errors agree with the
    model's truth (point) and the closed-form variance (se) on a simulated study."""
    sizes = [(400, 300), (350, 250)]
    data, label, x = _study(sizes, seeds=10, sd_seed=0.005, sd_entity=0.1, sd_interaction=0.02,
                            deltas=[0.0, 0.05], rng=np.random.default_rng(3))
    cd = CellDesign(data, label, n_resamples=2000, seed=1)
    male = data.gender == "male"
    for c in ("cell0", "cell1"):
        e = cd.cell_metric("v", c, "eo_gap:x")
        m = label == c
        assert e.value == pytest.approx(x[:, m & male].mean() - x[:, m & ~male].mean(), abs=1e-4)
    inter = cd.between("v", "cell1", "cell0", "eo_gap:x")
    assert inter.value == pytest.approx(0.05, abs=0.04)
    true_se = np.sqrt(sum(0.1 ** 2 * (1 / nm + 1 / nf) for nm, nf in sizes) + 2 * 0.005 ** 2 / 10)
    assert inter.se == pytest.approx(true_se, rel=0.2)
    assert inter.df_entity == min(cd.cell_df("cell0"), cd.cell_df("cell1")) == 249


def test_min_cell_rule():
    data, label, _ = _study([(40, 12), (35, 31)])
    cd = CellDesign(data, label, n_resamples=200, min_per_gender=30)
    assert cd.sizes() == {"cell0": {"male": 40, "female": 12}, "cell1": {"male": 35, "female": 31}}
    assert not cd.enough("cell0") and cd.enough("cell1")
    with pytest.raises(ValueError, match="at least 2 cells"):
        cd.range("v", "eo_gap:x")          # only one cell has enough persons
    with pytest.raises(ValueError, match="group labels"):
        CellDesign(data, label[:-1])


def test_maxt_critical_between_the_normal_and_bonferroni():
    r = np.eye(6)
    c = maxt_critical(r, 0.05)
    assert stats.norm.isf(0.025) < c <= stats.norm.isf(0.05 / 12) + 0.02
    assert abs(c - stats.norm.isf((1 - 0.95 ** (1 / 6)) / 2)) < 0.03        # independent: Sidak's
    assert maxt_critical(np.ones((3, 3)), 0.05) == pytest.approx(stats.norm.isf(0.025), abs=0.03)
    assert range_bounds([0.1, -0.3], [0.2, 0.1]) == (pytest.approx(0.2), pytest.approx(0.4), 1)


def test_range_finds_the_differing_cell_and_covers_zero_where_the_percentile_bootstrap_cannot():
    sizes = [(300, 300)] * 4
    data, label, _ = _study(sizes, seeds=10, sd_seed=0.005, sd_entity=0.1, sd_interaction=0.02,
                            deltas=[0, 0, 0.08, 0], rng=np.random.default_rng(4))
    rng_ = CellDesign(data, label, n_resamples=1000, seed=2).range("v", "eo_gap:x")
    assert rng_.decided and "cell2" in rng_.driving_pair
    assert all("cell2" in p for p in rng_.pairs_excluding_zero)
    data0, label0, _ = _study(sizes, seeds=10, sd_seed=0.005, sd_entity=0.1, sd_interaction=0.02,
                              rng=np.random.default_rng(5))
    cd = CellDesign(data0, label0, n_resamples=1000, seed=2)
    r0 = cd.range("v", "eo_gap:x")
    assert r0.ci[0] == 0.0 and not r0.decided
    # the percentile bootstrap of max - min excludes its true 0 (every replicate's range is > 0)
    reps = np.stack([cd.metrics("v", range(10))[c]["eo_gap:x"] for c in cd.cells])
    assert np.quantile(reps.max(0) - reps.min(0), 0.025) > 0


def _at_most_nominal(k: int, n: int, level: float) -> bool:
    return stats.binom.sf(k - 1, n, level) > 1e-3


@pytest.mark.parametrize("seeds,scenario", [
    (10, {"sd_seed": 0.0, "sd_entity": 0.3, "sd_interaction": 0.02}),
    pytest.param(3, {"sd_seed": 0.03, "sd_entity": 0.05, "sd_interaction": 0.05}, marks=pytest.mark.slow),
    pytest.param(10, {"sd_seed": 0.03, "sd_entity": 0.05, "sd_interaction": 0.05}, marks=pytest.mark.slow),
])
def test_range_interval_covers_a_true_zero_near_nominal(seeds, scenario):
    """Every cell's gap equal (at the test persons' era cells): the 95% simultaneous interval of
    max - min covers 0 in at least 95% of studies (a binomial check) and not far above it in the
    persons-dominated case (the seed reference is conservative where seeds may dominate)."""
    n = 1500
    sim = simulate_range(n, seeds=seeds, sizes=ERA_SIZES, rng=np.random.default_rng([seeds, 41]), **scenario)
    k = int(sim.detected.sum())
    assert _at_most_nominal(k, n, 0.05), k / n
    if scenario["sd_seed"] == 0.0:
        assert k / n >= 0.01                # near nominal: the interval is not vacuous


def test_range_detects_one_differing_cell():
    """One era cell's gap 0.25 above the others' (sd of a person's value 0.3): detected in most
    studies, and the pairs that exclude 0 are the ones with that cell."""
    sim = simulate_range(800, seeds=10, sizes=ERA_SIZES, deltas=[0, 0, 0.25, 0], differing=2,
                         rng=np.random.default_rng(7), sd_seed=0.01, sd_entity=0.3, sd_interaction=0.1)
    assert sim.detected.mean() > 0.8
    assert sim.only_with_cell.sum() / sim.detected.sum() > 0.95


@pytest.mark.slow
def test_the_bootstrap_range_interval_covers_a_true_zero():
    """The same check on CellDesign itself (the bootstrap, not the closed form): 60 simulated
    studies at the era cells' sizes, every cell's gap equal; the 95% interval of max - min excludes
    0 in no more studies than a 5% rate allows (binomial, 0.001)."""
    hits = 0
    for k in range(60):
        data, label, _ = _study(ERA_SIZES, seeds=5, sd_seed=0.005, sd_entity=0.2, sd_interaction=0.05,
                                folds=5, rng=np.random.default_rng([41, k]))
        hits += CellDesign(data, label, n_resamples=300, seed=k).range("v", "eo_gap:x").decided
    assert _at_most_nominal(hits, 60, 0.05), hits
