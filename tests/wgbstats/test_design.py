"""The study-design layer: two-level bootstrap (known answers), paired comparisons, corrections,
zero-width intervals, verdicts and power."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dataclasses import dataclass

from wgbstats.counts import StudyCounts as UnitCounts
from wgbstats.design import (
    Claim, Design, adjust, benjamini_hochberg, bootstrap_p_value, flags, holm, power_plan,
    verdicts,
)

#: The classes of these simulations (class 0 the negative one); the design knows no relation.
LABELS = ("none", "other", "spouse")
R = len(LABELS)
SPOUSE = LABELS.index("spouse")


@dataclass
class StudyCounts(UnitCounts):
    """Counts labelled with this module's classes (how a package above binds its labels)."""

    labels: tuple[str, ...] | None = LABELS
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
    counts the interaction three times (variance ratio ~2.1, normal-interval coverage ~0.995);
    corrected, the variance matches the truth and value -/+ 1.96 se covers nominally. (The seed
    reference's interval is wider still where seeds could dominate: tests/wgbstats/test_calibration.py.)"""
    rng = np.random.default_rng(7)
    ratios, covered = [], 0
    for k in range(150):
        data, var = _simulate(rng, seeds=5, sd_seed=0.01, sd_entity=0.03, sd_noise=0.1)
        est = Design(data, n_resamples=300, seed=k).metric("v", "eo_gap:spouse")
        ratios.append(est.se ** 2 / var)
        covered += abs(est.value - 0.02) <= 1.959964 * est.se
        assert est.ci[0] <= est.value - 1.959964 * est.se + 1e-12     # never narrower than the normal's
    assert 0.85 < float(np.mean(ratios)) < 1.2, np.mean(ratios)
    assert 0.9 <= covered / 150 <= 0.985, covered / 150


def test_fold_effect_known_answer_coverage():
    """Persons in 5 folds, each seed's fold models with their own offset: the combined interval
    (entities resampled within gender x fold, seeds carrying their fold models) is nominal."""
    ratio, cov = _coverage(np.random.default_rng(8), 150, seeds=10, sd_seed=0.01, sd_entity=0.03, sd_noise=0.05,
                           folds=5, sd_fold=0.02)
    assert 0.85 < ratio < 1.2, ratio
    assert 0.9 <= cov <= 0.985, cov


def test_entity_resample_keeps_every_gender_fold_stratum():
    from wgbstats.design import entity_weights

    data, _ = _simulate(np.random.default_rng(0), seeds=3, n_male=23, n_female=17, folds=4, sd_fold=0.01)
    w = entity_weights(data, 50, seed=1)
    for g in ("male", "female"):
        folds = data.fold[data.gender == g]
        for f in np.unique(folds):
            assert np.all(w[g][:, folds == f].sum(axis=1) == np.sum(folds == f))
        assert not np.all(w[g] == 1)
    flat = entity_weights(StudyCounts(data.entity_ids, data.gender, data.counts), 50, seed=1)
    assert np.ptp(flat["male"][:, data.fold[data.gender == "male"] == 0].sum(axis=1)) > 0  # varies without folds


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
    from wgbstats.design import Estimate

    e2 = Estimate(value=0.01, ci=[-0.01, 0.03], ci_seed=[-0.01, 0.03], ci_entity=[0.01, 0.01], se=0.01,
                  se_seed=0.01, se_entity=0.0, p_value=0.3, n_seeds=4, seeds=[0, 1, 2, 3], confidence=0.95)
    mde, n, note = power_plan(e2, alpha_level=0.05)
    from wgbstats.verdicts import mde_at_seeds, variance_parts

    parts = variance_parts(e2)
    assert mde == pytest.approx(mde_at_seeds(parts, 4, 4, alpha_level=0.05), rel=1e-6)
    assert mde > (1.959964 + 0.841621) * 0.01 * 1.3          # 4 seeds that dominate: t with 3 df, not the normal
    # the smallest seed count whose MDE (at its own reference) reaches the effect; the normal said 32
    assert mde_at_seeds(parts, 4, n, alpha_level=0.05) <= 0.01 < mde_at_seeds(parts, 4, n - 1, alpha_level=0.05)
    assert n > 32
    v = verdicts([Claim("small", "x", 1, e2)])[0]
    assert v.verdict == "undecided" and v.seeds_to_decide == n and f"about {n} seeds" in v.note
    # an effect smaller than the test set's own noise: no seed count decides it
    data3, _ = _simulate(rng, seeds=10, delta=0.001, sd_seed=0.0, sd_entity=0.05, sd_noise=0.0)
    e3 = Design(data3, n_resamples=1000, seed=0).metric("v", "eo_gap:spouse")
    _, n3, note3 = power_plan(e3, alpha_level=0.05)
    assert n3 is None and "no seed count" in note3


def write_entity_counts(path, arrays):
    """A run's per-unit counts file as relation extraction writes it (npz, no pickles)."""
    np.savez_compressed(path, **arrays)


def test_study_counts_checks(tmp_path):
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
    # the classes are data: labels name them, and a count of another width is refused
    with pytest.raises(ValueError, match="counts of 3 classes, 2 labels"):
        StudyCounts(ids, g, {"v": {0: c}}, labels=("none", "x"))
    plain = UnitCounts(ids, g, {"v": {0: c}})
    assert plain.class_labels() == ("0", "1", "2") and plain.unit_ids.tolist() == ids.tolist()
    assert "eo_gap:2" in Design(plain, n_resamples=100).point("v", [0])
    assert ok.class_labels() == LABELS and "eo_gap:spouse" in Design(ok, n_resamples=100).point("v", [0])


def _write(run_dir, ids, gender, *, fold=None, population=None, seed=0):
    run_dir.mkdir(parents=True, exist_ok=True)
    c = np.random.default_rng(seed).integers(0, 5, size=(len(ids), R, 3)).astype(np.int32)
    arrays = {"entity_ids": np.asarray(ids), "gender": np.asarray(gender), "counts_argmax": c}
    if fold is not None:
        arrays.update(fold=np.asarray(fold), population=np.asarray(population))
    write_entity_counts(run_dir / "entity_counts.npz", arrays)
    return dict(zip(ids, c))


def test_from_runs_concatenates_fold_runs_by_entity_id(tmp_path):
    persons = [f"p{i:02d}" for i in range(12)]
    gender = ["male" if i % 2 else "female" for i in range(12)]
    pop = ["test" if i < 4 else "distant" for i in range(12)]
    runs, truth = {}, {}
    for v in ("none", "cda"):
        for s in (0, 1):
            dirs = []
            for k in range(3):                                # fold k predicts persons i % 3 == k,
                idx = [i for i in range(12) if i % 3 == k][::-1]  # each file in its own order
                d = tmp_path / f"{v}-s{s}-fold{k}"
                truth.update({(v, s, persons[i]): c for i, c in zip(idx, _write(
                    d, [persons[i] for i in idx], [gender[i] for i in idx], fold=[k] * len(idx),
                    population=[pop[i] for i in idx], seed=len(truth)).values())})
                dirs.append(d)
            runs[(v, s)] = dirs[::-1]
    data = StudyCounts.from_runs(runs)
    assert data.entity_ids.tolist() == persons
    assert data.gender.tolist() == gender and data.population.tolist() == pop
    assert data.fold.tolist() == [i % 3 for i in range(12)]
    for (v, s, p), c in truth.items():
        assert np.array_equal(data.counts[v][s][persons.index(p)], c)
    test = data.subset("test")
    assert test.entity_ids.tolist() == persons[:4] and test.fold.tolist() == [0, 1, 2, 0]
    assert test.counts["cda"][1].shape[0] == 4 and set(test.population) == {"test"}
    with pytest.raises(ValueError, match="unknown population"):
        data.subset("train")
    # a person in two folds of one (variant, seed)
    dup = tmp_path / "dup"
    _write(dup, ["p00"], ["female"], fold=[1], population=["test"])
    with pytest.raises(ValueError, match="person-disjoint"):
        StudyCounts.from_runs({("none", 0): [*runs[("none", 0)], dup]})
    # a (variant, seed) that misses a fold: other persons, the run named
    with pytest.raises(ValueError, match="cda-s1-fold0.*other test entities"):
        StudyCounts.from_runs({("none", 0): runs[("none", 0)], ("cda", 1): runs[("cda", 1)][1:]})
    # one fold run without fold arrays
    old = tmp_path / "old"
    _write(old, ["p00", "p03", "p06", "p09"], ["female", "male", "female", "male"])
    with pytest.raises(ValueError, match="no fold/population"):
        StudyCounts.from_runs({("none", 0): [*runs[("none", 0)][:2], old]})


def test_old_counts_without_folds_are_one_test_population(tmp_path):
    _write(tmp_path / "r", ["b", "a"], ["male", "female"])
    data = StudyCounts.from_runs({("v", 0): tmp_path / "r"})
    assert data.fold is None and data.population.tolist() == ["test", "test"]
    assert data.entity_ids.tolist() == ["b", "a"]              # a single run keeps its order
    assert data.subset("test").entity_ids.tolist() == ["b", "a"]
    with pytest.raises(ValueError, match="no person of population 'distant'"):
        data.subset("distant")
    with pytest.raises(ValueError, match="fold: shape"):
        StudyCounts(data.entity_ids, data.gender, {}, fold=np.array([0]))
    with pytest.raises(ValueError, match="population: unknown"):
        StudyCounts(data.entity_ids, data.gender, {}, population=np.array(["test", "train"]))


def _est(value, se, se_seed, se_entity, se_interaction=0.0, n_seeds=5, p=0.3):
    from wgbstats.design import Estimate

    return Estimate(value=value, ci=[value - 2 * se, value + 2 * se], ci_seed=[0, 0], ci_entity=[0, 0], se=se,
                    se_seed=se_seed, se_entity=se_entity, p_value=p, n_seeds=n_seeds, seeds=list(range(n_seeds)),
                    confidence=0.95, se_interaction=se_interaction)


def test_power_floor_is_the_entity_variance_without_the_interaction():
    """V_s = 4e-5, V_e = 5e-5, J = 2e-5 (sigma_I^2/(SE)): V = 7e-5 and the floor as seeds grow is
    sigma_E^2/E = V_e - J = 3e-5, not V_e. An effect above the floor's MDE is decided by seeds (the
    smallest count whose own reference reaches it); one below it by no seed count."""
    from scipy.stats import norm

    from wgbstats.design import power_needs, variance_parts
    from wgbstats.verdicts import _projected, mde_at_seeds, mde_factor

    z = norm.ppf(0.975) + norm.ppf(0.8)
    e = _est(1.3 * z * math.sqrt(3e-5), math.sqrt(7e-5), math.sqrt(4e-5), math.sqrt(5e-5), math.sqrt(2e-5))
    parts = variance_parts(e)
    assert parts["entity"] == pytest.approx(3e-5) and parts["seed"] == pytest.approx(2e-5)
    assert parts["interaction"] == pytest.approx(2e-5)
    mde, n, note, needs, factor = power_needs(e, alpha_level=0.05)
    assert n is not None and "no seed count" not in note and needs.startswith("seeds")
    assert mde_at_seeds(parts, 5, n, alpha_level=0.05) <= e.value < mde_at_seeds(parts, 5, n - 1, alpha_level=0.05)
    if factor is not None:        # more persons at 5 seeds: the MDE at that design reaches the effect
        v, vs = _projected(parts, 5, 5, factor)
        assert mde_factor(0.05, 0.8, v, vs, 5) * math.sqrt(v) <= e.value * 1.001
    # an effect below the entity floor: no seed count decides it
    e2 = _est(0.9 * z * math.sqrt(3e-5), math.sqrt(7e-5), math.sqrt(4e-5), math.sqrt(5e-5), math.sqrt(2e-5))
    _, n2, note2, needs2, _ = power_needs(e2, alpha_level=0.05)
    assert n2 is None and "no seed count" in note2 and needs2 in ("articles", "seeds and articles")
    # below both the entity floor and the seed part: both
    e3 = _est(z * math.sqrt(1e-5), math.sqrt(7e-5), math.sqrt(4e-5), math.sqrt(5e-5), math.sqrt(2e-5))
    _, n3, note3, needs3, f3 = power_needs(e3, alpha_level=0.05)
    assert (n3, f3, needs3) == (None, None, "seeds and articles") and "more seeds and more articles" in note3
    v = verdicts([Claim("c", "x", 1, e3)])[0]
    assert v.verdict == "undecided" and v.needs == "seeds and articles" and v.articles_factor is None


def test_intervals_beside_holm_verdicts_are_at_the_tested_level():
    """Holm tests the claim ranked k (0-based) at alpha/(m - k); its printed interval is at that
    level, so it excludes 0 exactly for the decided claims."""
    from wgbstats.design import Estimate, reference_p_value

    rng = np.random.default_rng(5)
    claims = []
    for k, mu in enumerate((3.5, 3.0, 2.6, 1.0, 0.2)):
        r = rng.normal(mu, 1.0, size=4000) * 0.01
        ci = np.quantile(r, [0.025, 0.975]).tolist()
        est = Estimate(value=mu * 0.01, ci=ci, ci_seed=ci, ci_entity=ci, se=0.01, se_seed=0.0005, se_entity=0.0099,
                       p_value=1.0, n_seeds=5, seeds=list(range(5)), confidence=0.95, replicates=r)
        est.p_value = reference_p_value(est)
        claims.append(Claim(f"c{k}", "x", 1, est))
    out = verdicts(claims)
    decided = [v.verdict == "supported" for v in out]
    assert decided[:2] == [True, True] and decided[3:] == [False, False]
    order = np.argsort([v.p_value for v in out], kind="stable")
    for v in out:
        assert v.ci_adjusted_level >= 0.95 - 1e-12
        assert (v.ci_adjusted[0] > 0) == (v.verdict == "supported"), (v.claim, v.ci_adjusted, v.verdict)
    first = out[int(order[0])]
    assert first.ci_adjusted_level == pytest.approx(1 - 0.05 / 5)
    assert first.ci_adjusted[0] < first.ci[0]          # wider than the unadjusted 95% interval
    assert "replicates" not in claims[0].estimate.to_dict()


def test_intersection_union_claim_is_the_largest_part_p_value():
    from wgbstats.design import intersection_union, iut_claim

    a, b = _est(0.03, 0.01, 0.01, 0.0, p=0.001), _est(0.02, 0.01, 0.01, 0.0, p=0.04)
    p, side, details = intersection_union([("a", a, 1), ("b", b, 1)])
    assert (p, side) == (0.04, 1) and [r["part"] for r in details["parts"]] == ["a", "b"]
    c = _est(-0.05, 0.01, 0.01, 0.0, p=0.002)
    p2, side2, _ = intersection_union([("a", a, 1), ("c", c, 1)])
    assert side2 == -1 and p2 == pytest.approx(0.004)     # Bonferroni over the 2 parts
    claim = iut_claim("every", "gap", 1, [("a", a, 1), ("b", b, 1)])
    assert claim.estimate is b and claim.extra["weakest_part"] == "b"
    v = verdicts([claim], method="none")[0]
    assert v.verdict == "supported" and v.p_value == 0.04 and v.extra["test"] == "intersection-union"
    against = iut_claim("every", "gap", 1, [("a", a, 1), ("c", c, 1)])
    assert against.estimate is c and against.extra["weakest_part"] == "c"   # shows the evidence against
    v2 = verdicts([against], method="none")[0]
    assert v2.verdict == "contradicted"


def test_a_p_value_is_not_limited_by_the_replicate_count():
    """The old percentile p-value could not go below 2/(B+1): with 2,000 replicates a claim against
    21 parts under Holm over 28 claims stayed undecided however strong the evidence. Studentized,
    an effect of 8 standard errors gives a p-value far below that floor, with any B."""
    from wgbstats.design import estimate_from_replicates
    from wgbstats.verdicts import Claim, verdicts

    rng = np.random.default_rng(0)
    reps = {"combined": rng.normal(-0.05, 0.00625, 200), "seed": rng.normal(-0.05, 0.001, 200),
            "entity": rng.normal(-0.05, 0.006, 200)}
    bad = estimate_from_replicates(-0.05, reps, list(range(10)), df_entity=1000)
    assert bad.p_value < 2 / 2001 / 21 / 28
    ok = estimate_from_replicates(0.05, {k: -v for k, v in reps.items()}, list(range(10)), df_entity=1000)
    parts = [("part 0", bad, 1)] + [(f"part {i}", ok, 1) for i in range(1, 21)]
    claims = [Claim("every part positive", "s", 1, bad, parts=parts)]
    claims += [Claim(f"other {j}", "s", 1, estimate_from_replicates(0.0, {k: v + 0.05 for k, v in reps.items()},
                                                                    list(range(10)))) for j in range(27)]
    assert verdicts(claims)[0].verdict == "contradicted"
