"""The study-design layer: two-level bootstrap (known answers), paired comparisons, corrections,
zero-width intervals, verdicts and power."""
from __future__ import annotations

import math

import numpy as np
import pytest

from relext.design import (
    Claim, Design, StudyCounts, adjust, benjamini_hochberg, bootstrap_p_value, flags, holm, power_plan,
    verdicts,
)
from wikigenderbias.schema import RELATIONS

R = len(RELATIONS)
SPOUSE = RELATIONS.index("spouse")
N_POS = 1000  # gold positives per entity: recall is then a plain mean of per-entity rates


def _counts_from_rates(x: np.ndarray) -> np.ndarray:
    """(S, E) recall rates of the spouse relation -> (S, E, R, 3) counts with N_POS positives per
    entity, so that the recall gap is linear in the rates (a known-answer setting)."""
    s, e = x.shape
    c = np.zeros((s, e, R, 3), dtype=np.int64)
    tp = np.clip(np.rint(x * N_POS), 0, N_POS).astype(np.int64)
    c[..., SPOUSE, 0] = tp
    c[..., SPOUSE, 2] = N_POS - tp
    return c


def _simulate(rng, *, seeds=20, n_male=60, n_female=60, delta=0.02, sd_seed=0.01, sd_entity=0.05,
              sd_noise=0.01, folds=0, sd_fold=0.0):
    """x[s, e] = 0.5 + b_e + eps_se (+ delta + a_s for male entities): the recall gap's seed
    effect a_s, entity effect b_e and interaction eps_se have known variances. With ``folds``,
    persons are dealt into K folds within gender and the model of seed s and fold k adds its own
    offset c[s, k, gender] (sd ``sd_fold``): a fold model's offset, part of its seed's effect."""
    e = n_male + n_female
    gender = np.array(["male"] * n_male + ["female"] * n_female)
    a = rng.normal(0, sd_seed, size=(seeds, 1))
    b = rng.normal(0, sd_entity, size=(1, e))
    eps = rng.normal(0, sd_noise, size=(seeds, e))
    x = 0.5 + b + eps + (gender == "male") * (delta + a)
    var = (sd_seed ** 2 / seeds + (sd_entity ** 2 + sd_noise ** 2 / seeds) * (1 / n_male + 1 / n_female))
    fold = None
    if folds:
        fold = np.concatenate([np.arange(n_male) % folds, np.arange(n_female) % folds])
        c = rng.normal(0, sd_fold, size=(seeds, folds, 2))
        x = x + c[:, fold, (gender == "male").astype(int)]
        var += sd_fold ** 2 * (1 / folds + 1 / folds) / seeds   # equal folds: sum_k (1/K)^2 per gender
    return StudyCounts(np.array([f"e{i}" for i in range(e)]), gender,
                       {"v": {k: c for k, c in enumerate(_counts_from_rates(x))}}, fold=fold), var


def _coverage(rng, n_sims, **kw):
    ratios, covered = [], 0
    for k in range(n_sims):
        data, var = _simulate(rng, **kw)
        est = Design(data, n_resamples=300, seed=k).metric("v", "eo_gap:spouse")
        ratios.append(est.se ** 2 / var)
        covered += est.ci[0] <= kw.get("delta", 0.02) <= est.ci[1]
    return float(np.mean(ratios)), covered / n_sims


def test_two_level_bootstrap_known_variance_and_coverage():
    rng = np.random.default_rng(1)
    ratios, covered = [], 0
    n_sims = 100
    for k in range(n_sims):
        data, var = _simulate(rng)
        est = Design(data, n_resamples=300, seed=k).metric("v", "eo_gap:spouse")
        ratios.append(est.se ** 2 / var)
        covered += est.ci[0] <= 0.02 <= est.ci[1]
    # the bootstrap variance matches the design's true variance (seed + entity + interaction)
    assert 0.8 < float(np.mean(ratios)) < 1.3, np.mean(ratios)
    assert 0.9 <= covered / n_sims <= 0.99, covered / n_sims


def test_interaction_is_counted_once_nominal_not_over_coverage():
    """Interaction-heavy design (5 seeds, sigma_I 0.1 against sigma_E 0.03): the crossed bootstrap
    counts the interaction three times (variance ratio ~2.1, coverage ~0.995); corrected, the
    variance matches the truth and the coverage is nominal."""
    ratio, cov = _coverage(np.random.default_rng(7), 150, seeds=5, sd_seed=0.01, sd_entity=0.03, sd_noise=0.1)
    assert 0.85 < ratio < 1.2, ratio
    assert 0.9 <= cov <= 0.985, cov


def test_fold_effect_known_answer_coverage():
    """Persons in 5 folds, each seed's fold models with their own offset: the combined interval
    (entities resampled within gender x fold, seeds carrying their fold models) is nominal."""
    ratio, cov = _coverage(np.random.default_rng(8), 150, seeds=10, sd_seed=0.01, sd_entity=0.03, sd_noise=0.05,
                           folds=5, sd_fold=0.02)
    assert 0.85 < ratio < 1.2, ratio
    assert 0.9 <= cov <= 0.985, cov


def test_entity_resample_keeps_every_gender_fold_stratum():
    from relext.design import entity_weights

    data, _ = _simulate(np.random.default_rng(0), seeds=3, n_male=23, n_female=17, folds=4, sd_fold=0.01)
    w = entity_weights(data, 50, seed=1)
    for g in ("male", "female"):
        folds = data.fold[data.gender == g]
        for f in np.unique(folds):
            assert np.all(w[g][:, folds == f].sum(axis=1) == np.sum(folds == f))
        assert not np.all(w[g] == 1)
    flat = entity_weights(StudyCounts(data.entity_ids, data.gender, data.counts), 50, seed=1)
    sums = {tuple(flat["male"][:, data.fold[data.gender == "male"] == 0].sum(axis=1))}
    assert len(sums) == 1 and len(next(iter(sums))) == 50   # without folds a fold's share varies
    assert np.ptp(flat["male"][:, data.fold[data.gender == "male"] == 0].sum(axis=1)) > 0


def test_seed_only_and_entity_only_parts():
    rng = np.random.default_rng(2)
    seed_only, entity_only = [], []
    for k in range(40):
        # seed noise only: entity-only interval ~ 0 wide; entity noise only: seed-only ~ 0 wide
        d1, _ = _simulate(rng, sd_seed=0.02, sd_entity=0.0, sd_noise=0.0)
        e1 = Design(d1, n_resamples=300, seed=k).metric("v", "eo_gap:spouse")
        d2, _ = _simulate(rng, sd_seed=0.0, sd_entity=0.05, sd_noise=0.0)
        e2 = Design(d2, n_resamples=300, seed=k).metric("v", "eo_gap:spouse")
        seed_only.append((e1.se_seed / math.sqrt(0.02 ** 2 / 20), e1.se_entity))
        entity_only.append((e2.se_entity / math.sqrt(0.05 ** 2 * (2 / 60)), e2.se_seed))
    assert 0.8 < np.mean([r for r, _ in seed_only]) < 1.15
    assert max(s for _, s in seed_only) < 2e-3          # only rounding to 1/N_POS is left
    assert 0.85 < np.mean([r for r, _ in entity_only]) < 1.15
    assert max(s for _, s in entity_only) < 2e-3


def test_paired_difference_is_narrower_than_unpaired_and_covers_truth():
    rng = np.random.default_rng(3)
    e, seeds = 120, 10
    gender = np.array(["male"] * 60 + ["female"] * 60)
    b = rng.normal(0, 0.08, size=(1, e))         # large entity effects shared by both variants
    base = 0.5 + b + (gender == "male") * 0.03
    xa = base + rng.normal(0, 0.004, size=(seeds, e))
    xb = base + (gender == "male") * -0.02 + rng.normal(0, 0.004, size=(seeds, e))  # gap 0.01 smaller
    data = StudyCounts(np.array([f"e{i}" for i in range(e)]), gender,
                       {"a": dict(enumerate(_counts_from_rates(xa))), "b": dict(enumerate(_counts_from_rates(xb)))})
    d = Design(data, n_resamples=1000, seed=0)
    diff = d.difference("b", "a", "eo_gap:spouse")
    ea, eb = d.metric("a", "eo_gap:spouse"), d.metric("b", "eo_gap:spouse")
    # one realization (2.8 true SDs off the truth here): coverage is the simulations' job
    assert abs(diff.value + 0.02) < 4 * diff.se
    assert diff.ci[1] < 0 and diff.p_value < 0.01
    unpaired_halfwidth = 1.96 * math.sqrt(ea.se ** 2 + eb.se ** 2)
    assert (diff.ci[1] - diff.ci[0]) / 2 < 0.3 * unpaired_halfwidth
    # the same comparison with absolute values: |gap| falls from 0.03 to 0.01
    absd = d.difference("b", "a", "eo_gap:spouse", absolute=True)
    assert absd.value == pytest.approx(-0.02, abs=0.003)


def test_zero_width_and_single_seed_never_flag():
    e = 40
    gender = np.array(["male"] * 20 + ["female"] * 20)
    x = np.where(gender == "male", 0.506, 0.5)[None].repeat(3, 0)     # three identical seeds,
    data = StudyCounts(np.array([f"e{i}" for i in range(e)]), gender,  # identical entities
                       {"v": dict(enumerate(_counts_from_rates(x)))})
    est = Design(data, n_resamples=200).metric("v", "eo_gap:spouse")
    assert est.value == pytest.approx(0.006)
    assert est.ci[1] - est.ci[0] < 1e-12 and est.degenerate == "zero-width interval"
    assert est.p_value == 1.0 and not flags([est], method="none")[0]["flagged"]
    one = Design(data, n_resamples=200).metric("v", "eo_gap:spouse", seeds=[0])
    assert one.degenerate.startswith("fewer than 3 seeds")
    two = Design(data, n_resamples=200).metric("v", "eo_gap:spouse", seeds=[0, 1])
    assert two.degenerate.startswith("fewer than 3 seeds") and two.p_value == 1.0
    v = verdicts([Claim("gap > 0", "eo gap", 1, est)])[0]
    assert v.verdict == "undecided" and "zero-width" in v.note


def test_corrections_known_values():
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "none") == p
    with pytest.raises(ValueError, match="unknown correction"):
        adjust(p, "bonf")
    try:
        from statsmodels.stats.multitest import multipletests
    except ImportError:
        return
    rng = np.random.default_rng(0)
    q = rng.uniform(0, 0.2, size=25)
    assert holm(q) == pytest.approx(multipletests(q, method="holm")[1])
    assert benjamini_hochberg(q) == pytest.approx(multipletests(q, method="fdr_bh")[1])


def test_bootstrap_p_value():
    assert bootstrap_p_value(np.full(999, 0.5)) == pytest.approx(2 / 1000)
    assert bootstrap_p_value(np.linspace(-1, 1, 1001)) == pytest.approx(1.0)


def test_verdicts_three_states_and_seed_plan():
    rng = np.random.default_rng(4)
    data, _ = _simulate(rng, seeds=10, delta=0.05, sd_seed=0.005, sd_entity=0.02, sd_noise=0.005)
    d = Design(data, n_resamples=1000, seed=0)
    est = d.metric("v", "eo_gap:spouse")
    out = verdicts([Claim("gap favours men", "eo gap", 1, est), Claim("gap favours women", "eo gap", -1, est)])
    assert [v.verdict for v in out] == ["supported", "contradicted"]
    # a small effect drowned in seed noise: the seeds that would decide it, by the formula
    from relext.design import Estimate

    e2 = Estimate(value=0.01, ci=[-0.01, 0.03], ci_seed=[-0.01, 0.03], ci_entity=[0.01, 0.01], se=0.01,
                  se_seed=0.01, se_entity=0.0, p_value=0.3, n_seeds=4, seeds=[0, 1, 2, 3], confidence=0.95)
    mde, n, note = power_plan(e2, alpha_level=0.05)
    z = 1.959964 + 0.841621
    assert mde == pytest.approx(z * 0.01, rel=1e-4)
    assert n == math.ceil(0.01 ** 2 * 4 / (0.01 / z) ** 2)  # 32
    v = verdicts([Claim("small", "x", 1, e2)])[0]
    assert v.verdict == "undecided" and v.seeds_to_decide == n and f"about {n} seeds" in v.note
    # an effect smaller than the test set's own noise: no seed count decides it
    data3, _ = _simulate(rng, seeds=10, delta=0.001, sd_seed=0.0, sd_entity=0.05, sd_noise=0.0)
    e3 = Design(data3, n_resamples=1000, seed=0).metric("v", "eo_gap:spouse")
    _, n3, note3 = power_plan(e3, alpha_level=0.05)
    assert n3 is None and "no seed count" in note3


def test_study_counts_checks(tmp_path):
    from relext.evaluate import write_entity_counts

    ids = np.array(["a", "b", "c"])
    g = np.array(["male", "female", "male"])
    c = np.zeros((3, R, 3), dtype=np.int32)
    for k, order in enumerate((ids, ids[::-1])):
        (tmp_path / f"r{k}").mkdir()
        write_entity_counts(tmp_path / f"r{k}" / "entity_counts.npz",
                            {"entity_ids": order, "gender": g, "counts_argmax": c})
    ok = StudyCounts.from_runs({("v", 0): tmp_path / "r0"})
    assert ok.seeds("v") == [0]
    with pytest.raises(ValueError, match="other test entities"):
        StudyCounts.from_runs({("v", 0): tmp_path / "r0", ("v", 1): tmp_path / "r1"})
    with pytest.raises(ValueError, match="decision rule"):
        StudyCounts.from_runs({("v", 0): tmp_path / "r0"}, rule="threshold")
    with pytest.raises(ValueError, match="no test entity of gender"):
        StudyCounts(ids, np.array(["male"] * 3), {})
