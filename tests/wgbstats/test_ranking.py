"""Known answers for the rank-agreement claim and the per-unit intervals (wgbstats.ranking): a
simulation whose true ranking is stable across runs is found stable, one whose ranking is not is
found unstable, and at a true agreement equal to the margin the claim is supported no more often
than its level allows."""
from __future__ import annotations

import numpy as np
import pytest

from wgbstats.ranking import agreement_estimate, stability_claim, top_k, unit_estimates
from wgbstats.verdicts import verdicts

N, K, S = 200, 20, 3


def _runs(rng, *, truth_sd: float, noise_sd: float, shared: bool = True):
    """Two models' (S, N) scores: unit i's true score mu_i (sd ``truth_sd``) plus each run's own
    noise (sd ``noise_sd``); ``shared=False`` gives model Y its own, independent true scores."""
    mu_x = rng.normal(0, truth_sd, N)
    mu_y = mu_x if shared else rng.normal(0, truth_sd, N)
    return (mu_x + rng.normal(0, noise_sd, (S, N)), mu_y + rng.normal(0, noise_sd, (S, N)))


def test_top_k_sides_and_errors():
    x = np.array([[3.0, -5.0, 1.0, 4.0]])
    assert top_k(x, 2, "high").tolist() == [[True, False, False, True]]
    assert top_k(x, 2, "low").tolist() == [[False, True, True, False]]
    assert top_k(x, 1, "abs").tolist() == [[False, True, False, False]]
    with pytest.raises(ValueError, match="k must be"):
        top_k(x, 4)
    with pytest.raises(ValueError, match="side"):
        top_k(x, 1, "middle")


def test_a_stable_ranking_is_found_stable_and_an_unstable_one_unstable():
    rng = np.random.default_rng(0)
    stable = _runs(rng, truth_sd=1.0, noise_sd=0.1)
    unstable = _runs(rng, truth_sd=1.0, noise_sd=0.1, shared=False)      # the models disagree
    noise = _runs(rng, truth_sd=0.0, noise_sd=1.0)                       # no ranking at all
    claims = [stability_claim(name, x, y, k=K, side=side, n_resamples=1000)
              for name, (x, y) in (("stable", stable), ("unstable", unstable), ("noise", noise))
              for side in ("high",)]
    v = {c.claim: c for c in verdicts(claims, method="holm")}
    assert v["stable"].verdict == "supported"
    assert v["unstable"].verdict == "contradicted" and v["noise"].verdict == "contradicted"
    # the agreement itself: near 1 when stable, near chance (k / N) when not
    st, un = (c.extra for c in claims[:2])
    assert st["agreement_value"] > 0.8 and st["agreement_ci"][0] > 0.5
    assert abs(un["agreement_value"] - K / N) < 0.1 and un["agreement_ci"][1] < 0.5
    sp = agreement_estimate(*stable, k=K, agreement="spearman", n_resamples=500)
    assert sp.value > 0.95 and sp.ci[0] > 0.9


def test_the_claim_is_calibrated_at_the_margin():
    """True mean overlap = the margin (measured by a large simulation first): "supported" at
    alpha = 0.05 in at most 5% of studies, within Monte Carlo error (a 3-seed study)."""
    rng = np.random.default_rng(1)
    noise_sd = 0.55
    truth = np.mean([(top_k(x, K) & top_k(y, K)).sum(axis=1).mean() / K
                     for x, y in (_runs(rng, truth_sd=1.0, noise_sd=noise_sd) for _ in range(1500))])
    assert 0.3 < truth < 0.7                                  # a real test: the margin is not trivial
    n_studies, supported = 150, 0
    for i in range(n_studies):
        x, y = _runs(rng, truth_sd=1.0, noise_sd=noise_sd)
        c = stability_claim("at the margin", x, y, k=K, margin=float(truth), n_resamples=300, seed=i)
        e = c.estimate                     # what verdicts() decides for one claim: p < alpha, right side
        supported += e.p_value < 0.05 and e.value > 0
    # binomial: 5% of 150 = 7.5, sd 2.7; 14 is more than two sds above
    assert supported <= 14, supported


def test_unit_intervals_cover_and_decide():
    rng = np.random.default_rng(2)
    mu = np.r_[np.full(5, 5.0), np.zeros(45)]     # t about 87: decided even at Holm over 50 with t(2)
    scores = mu + rng.normal(0, 0.1, (S, 50))
    rows = unit_estimates(scores, seeds=[0, 1, 2])
    assert all(r["ci"][0] < r["value"] < r["ci"][1] for r in rows)
    assert [r["flagged"] for r in rows[:5]] == [True] * 5
    assert sum(r["flagged"] for r in rows[5:]) <= 2            # Holm: few false leans among 45 nulls
    # three seeds: wider than the normal's interval (Student's t with 2 df, or more)
    r = rows[0]
    assert (r["ci"][1] - r["value"]) / r["se"] > 4.0
    two = unit_estimates(scores[:2])
    assert two[0]["degenerate"] and not two[0]["flagged"]
    with pytest.raises(ValueError, match="non-finite"):
        unit_estimates(np.array([[1.0, np.nan], [1.0, 2.0], [0.0, 1.0]]))


@pytest.mark.parametrize("agreement, low", [("overlap", 0.0), ("spearman", -1.0)])
def test_the_agreement_interval_stays_where_the_agreement_can_be(agreement, low):
    """Two seeds of models that share no ranking: a t interval over 2 seeds is wide and, uncut,
    reaches below what the agreement can take; the reported one is cut there and says so."""
    rng = np.random.default_rng(3)
    x, y = (rng.normal(0, 1, (2, 40)) for _ in range(2))
    c = stability_claim("no ranking", x, y, k=4, agreement=agreement, n_resamples=500)
    raw_low = c.estimate.ci[0] + c.extra["margin"]
    lo, hi = c.extra["agreement_ci"]
    assert low <= lo <= hi <= 1.0
    assert raw_low < low and c.extra["agreement_ci_cut"] and lo == low    # this case does reach past it
