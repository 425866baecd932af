"""Gender gaps, fairlearn cross-checks, bootstrap and seed intervals."""
import numpy as np
import pytest
from scipy import stats

from relext.evaluation.evaluate import PredictionTable, argmax_decisions
from support.relext_data import synthetic_predictions
from relext.evaluation.fairness import (
    bootstrap_counts,
    by_gender,
    entity_counts,
    equal_opportunity_gap,
    f1_gap,
    find_gap,
    gender_gaps,
    seed_interval,
)

Y = np.array([1, 0, 1, 1, 0, 1])
P = np.array([1, 0, 0, 1, 1, 1])
G = np.array(["male", "male", "male", "female", "female", "female"])


def test_binary_gaps_hand_computed_and_match_fairlearn():
    from fairlearn.metrics import equal_opportunity_difference

    # male: tp1 fn1 -> F1 2/3, TPR 1/2; female: tp2 fp1 -> F1 4/5, TPR 1
    assert f1_gap(Y, P, sensitive_features=G) == pytest.approx(2 / 3 - 4 / 5)
    assert equal_opportunity_gap(Y, P, sensitive_features=G) == pytest.approx(-0.5)
    assert abs(equal_opportunity_gap(Y, P, sensitive_features=G)) == pytest.approx(
        equal_opportunity_difference(Y, P, sensitive_features=G))
    groups = by_gender(Y, P, sensitive_features=G)
    assert groups["female"]["precision"] == pytest.approx(2 / 3)


def _tables(male_acc, female_acc, n=60, seed=0):
    male = synthetic_predictions("male_test", n_entities=n, accuracy=male_acc, seed=seed)
    female = synthetic_predictions("female_test", n_entities=n, accuracy=female_acc, seed=seed + 1)
    return PredictionTable.from_rows(male + female)


def test_known_gap_is_flagged_and_interval_contains_point():
    t = _tables(1.0, 0.3)
    gaps = gender_gaps(t.y_true, argmax_decisions(t.scores), sensitive_features=t.genders,
                       groups=t.entity_ids, n_resamples=300, seed=0)
    micro = find_gap(gaps, "micro")
    assert micro.gap > 0.3 and micro.flagged
    for g in gaps:
        assert g.ci_low <= g.gap <= g.ci_high
        assert g.male_ci[0] <= g.male <= g.male_ci[1]
        assert g.gap == pytest.approx(g.male - g.female)
    assert sum(g.flagged for g in gaps) >= 6


def test_zero_gap_is_not_flagged():
    male = synthetic_predictions("male_test", n_entities=60, accuracy=0.6, seed=4)
    # the same predictions on different (female) entities: every gap is exactly 0
    female = [{**r, "gender": "female", "entity_id": "f-" + r["entity_id"]} for r in male]
    t = PredictionTable.from_rows(male + female)
    gaps = gender_gaps(t.y_true, argmax_decisions(t.scores), sensitive_features=t.genders,
                       groups=t.entity_ids, n_resamples=300, seed=0)
    for g in gaps:
        assert g.gap == 0.0
        assert not g.flagged and g.ci_low < 0 < g.ci_high


def test_bootstrap_is_seeded_and_deterministic():
    t = _tables(0.8, 0.6)
    pred = argmax_decisions(t.scores)
    kw = dict(sensitive_features=t.genders, groups=t.entity_ids, n_resamples=200)
    a = gender_gaps(t.y_true, pred, seed=7, **kw)
    b = gender_gaps(t.y_true, pred, seed=7, **kw)
    c = gender_gaps(t.y_true, pred, seed=8, **kw)
    assert [(g.ci_low, g.ci_high) for g in a] == [(g.ci_low, g.ci_high) for g in b]
    assert [(g.ci_low, g.ci_high) for g in a] != [(g.ci_low, g.ci_high) for g in c]


def test_bootstrap_resamples_whole_entities():
    counts = np.array([[[1, 0, 0]], [[0, 2, 0]], [[0, 0, 3]]])  # 3 entities, 1 relation
    boot = bootstrap_counts(counts, 500, np.random.default_rng(0))
    assert boot.shape == (500, 1, 3)
    # every resample is a sum of 3 whole entities: entity 2's fp come in multiples of 2, ...
    assert np.all(boot[..., 1] % 2 == 0) and np.all(boot[..., 2] % 3 == 0)
    assert np.all(boot[..., 0] + boot[..., 1] / 2 + boot[..., 2] / 3 == 3)
    ids, c = entity_counts(np.eye(5, dtype=bool)[[1, 1, 2]], np.eye(5, dtype=bool)[[1, 0, 2]], ["a", "a", "b"])
    assert list(ids) == ["a", "b"] and c[0, 1].tolist() == [1, 0, 1] and c[1, 2].tolist() == [1, 0, 0]


def test_seed_interval_t_distribution():
    s = seed_interval([1.0, 2.0, 3.0], confidence=0.95)
    half = stats.t.ppf(0.975, 2) * 1.0 / np.sqrt(3)
    assert s.mean == 2.0 and s.ci_low == pytest.approx(2 - half) and s.ci_high == pytest.approx(2 + half)
    assert not s.flagged
    assert seed_interval([0.10, 0.11, 0.12]).flagged
    zero = seed_interval([-0.006, -0.006, -0.006])   # zero width: never a flag
    assert zero.ci_high - zero.ci_low < 1e-12 and not zero.flagged  # float noise: std 1e-18
    assert not seed_interval([0.10, 0.11]).flagged   # two seeds: never a flag
    one = seed_interval([0.5])
    assert one.n == 1 and np.isnan(one.ci_low) and not one.flagged


def test_errors():
    t = _tables(0.8, 0.6, n=5)
    male_only = t.genders == "male"
    with pytest.raises(ValueError, match="female"):
        gender_gaps(t.y_true[male_only], t.y_true[male_only], sensitive_features=t.genders[male_only],
                    groups=t.entity_ids[male_only])
    with pytest.raises(ValueError, match="confidence"):
        gender_gaps(t.y_true, t.y_true, sensitive_features=t.genders, groups=t.entity_ids, confidence=1.5)
