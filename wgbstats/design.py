"""The study-design layer: estimates with their uncertainty, paired comparisons, multiplicity
control and three-state verdicts, for every study whose runs share one set of units (persons,
articles, items: relation extraction's encoder x selector grid and debiasing study, ``wgb run``,
the embedding measures' items).

**Input.** Every run (variant ``v``, seed ``s``) is evaluated on the same entities (units: persons,
articles); its per-entity counts ``C[v, s]`` of shape (E, R, 3) -- (tp, fp, fn) per class,
``entity_counts.npz`` next to each run's ``eval.json`` -- are all this module needs
(:class:`StudyCounts`, :mod:`wgbstats.counts`). Under person-level cross-fitting (issue #26)
one (variant, seed) is K fold models, each predicting the persons of its fold; the counts then say
each person's ``fold`` and ``population`` ("test": the annotated test persons; "distant": the
distantly supervised rest), and :meth:`StudyCounts.subset` keeps one population.

**Seeds and entities are crossed.** Every seed is evaluated on the same sample of entities, so the
sample's error does not average out over seeds. The *two-level bootstrap* draws, in each of ``B``
replicates,

1. seeds with replacement from the seeds the compared variants share (a seed brings all its fold
   models along: one model per seed and fold), and
2. one multinomial resample of the entities within each gender -- within each (gender, fold,
   population) stratum when there are folds or populations, so every replicate keeps their sizes
   (:func:`entity_weights`),

and applies the same entity resample to every drawn seed and every variant, and the same seed draw
to every variant: comparisons between variants are **paired** on seeds and on entities. A
statistic is computed on the replicate's seed-averaged base metrics (:func:`base_metrics`), so an
absolute gap ``|gap|`` is the absolute value of the expected gap, not the expected absolute value
of seed noise. Next to the combined interval, a *seed-only* bootstrap (entities fixed) and an
*entity-only* bootstrap (seeds fixed) show where the uncertainty comes from.

**Exact uncertainty: the interaction counted once.** Write a per-seed, per-entity value as
``x_se = mu + a_s + b_e + i_se`` (seed effect, entity effect, their interaction; variances
sigma_S^2, sigma_E^2, sigma_I^2; a fold model's offset is part of its seed's effect). The
estimator's variance is the target ``V = sigma_S^2/S + sigma_E^2/E + sigma_I^2/(S E)``. The two
one-level bootstraps give (the seed draw scaled by sqrt(S/(S-1)))

* seed-only:  ``V_s = (sigma_S^2 + sigma_I^2/E) / S``,
* entity-only: ``V_e = (sigma_E^2 + sigma_I^2/S) / E``,

each carrying the interaction once. The crossed bootstrap draws the seeds *inside* each entity
replicate, whose multinomial weights w (sum E) make the seeds' means differ by the interaction with
variance ``sigma_I^2 * sum(w^2)/E^2 ~ 2 sigma_I^2/E``: ``V_c = sigma_S^2/S + 2 sigma_I^2/(S E) +
V_e = V + 2 sigma_I^2/(S E)`` -- the interaction three times instead of once, intervals too wide
by up to sqrt(3) when it dominates. So ``J = V_c - V_s - V_e`` estimates ``sigma_I^2/(S E)``, and
``V = V_s + V_e - J`` (the two-way ANOVA estimator ``(MS_seed + MS_entity - MS_interaction)/(S
E)``). :func:`interaction_correction` takes ``J = max(V_c - V_s - V_e, 0)`` and
``V = max(V_s + V_e - J, J)`` (the variance is at least the interaction's), and rescales the
crossed replicates around the point estimate by sqrt(V / V_c): the corrected combined replicates
give the standard error (``Estimate.ci_crossed`` keeps the crossed interval). The known-answer
simulations of ``tests/wgbstats/test_design.py`` check that variance.

**Tests: studentized, with a small-sample reference for the seeds.** The bootstrap estimates the
variance; it does not make the p-value. A statistic's test is ``t = value / se`` (``se`` the
corrected combined standard error) against the seed reference of :mod:`wgbstats.reference`:
the seed-only variance ``V_s`` is estimated from S seed values (S - 1 df), the persons' part from
hundreds or thousands of persons (t with the smaller gender's persons less its strata as df). The
test at level alpha spends a tenth of it on an upper confidence bound of the seed share and takes
the largest tail up to that bound: Student's t with S - 1 df where the seeds may dominate (with 3
seeds the 97.5% quantile is 4.30, not 1.96), the normal where the persons do. A plug-in
Welch-Satterthwaite df (``Estimate.df``, :func:`seed_df`) is kept for display only: it trusts the
normal exactly when a small seed spread is small by chance, and rejects true nulls at Holm's
levels many times too often with 3 seeds. Intervals are ``value -/+ critical * se`` at any level
(:meth:`Estimate.interval`), so the interval at a claim's corrected level excludes 0 exactly when
the claim is decided, and a p-value far in the tail (Holm's alpha/m, an intersection-union claim's
alpha/(m k)) never comes from counting the few replicates beyond 0. The known-answer simulations
of ``tests/wgbstats/test_calibration.py`` (and :mod:`wgbstats.calibration`) check the type-I
error at Holm's levels for 3, 5 and 10 seeds, with and without an interaction and in the
seed-dominated case; the corrected replicates' percentile interval is kept for display
(``Estimate.ci_percentile``). Holm (family-wise error) or Benjamini-Hochberg (false discovery
rate) across a family of tests. A test is *flagged* only when its adjusted p-value is below
``alpha``; an estimate from fewer than 3 seeds or with a zero standard error is *degenerate* and
never flags.

**Verdicts** of directional claims (:func:`verdicts`, :mod:`wgbstats.verdicts`):
``supported`` (significant after the correction, in the claimed direction), ``contradicted``
(significant, the other way) or ``undecided``; a claim about every member of a set is an
intersection-union test (each member at level alpha; p = the largest member p). Each verdict
carries its interval at the level the correction tested it at, and, when undecided, the minimum
detectable effect (80% power, at the Bonferroni level alpha/m, Holm's first step) and what would
decide it: more seeds (how many; the seed reference at that many seeds), more articles (how
many times the persons), either or both. As seeds grow the variance falls to sigma_E^2/E = V_e - J,
the floor no seed count passes.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from wgbstats.counts import POPULATIONS, StudyCounts  # noqa: F401 - the layer's face
from wgbstats.metrics import micro_f1_from_counts, prf_from_counts
from wgbstats.verdicts import (  # noqa: F401 - the layer's face
    CORRECTIONS, DF_MAX, VERDICTS, Claim, Estimate, Verdict, _interval, adjust, benjamini_hochberg,
    bootstrap_p_value, flags, holm, intersection_union, iut_claim, power_needs, power_plan, reference_critical,
    reference_p_value, seed_df, t_p_value, t_quantile, variance_parts, verdicts,
)

MODES = ("combined", "seed", "entity")
#: The version of the inference rules (a committed verdict made under another version is stale):
#: 1 = percentile-bootstrap p-values; 2 = studentized p-values and intervals against the seed
#: reference of :mod:`wgbstats.reference` (issue #38).
DESIGN_VERSION = 2
#: Fewest seeds for a test: fewer give no usable estimate of the seed variance.
MIN_SEEDS = 3


# --------------------------------------------------------------------------------------------
# Base metrics from male / female count totals
# --------------------------------------------------------------------------------------------
def base_metrics(male: np.ndarray, female: np.ndarray,
                 labels: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Named metrics from (..., R, 3) male and female totals; each value has shape (...).

    ``labels`` names the R classes (class 0, the negative one, has no metrics of its own; None:
    "0" .. "R-1"). ``f1_gap:<r>`` = F1(male) - F1(female); ``eo_gap:<r>`` = recall(male) -
    recall(female) (equality of opportunity); ``f1_male:<r>``, ``f1_female:<r>``, ``f1:<r>`` (both
    genders); ``micro_f1:male|female|pooled`` (micro F1 over the positive classes);
    ``micro_f1_gap`` = micro F1(male) - micro F1(female).
    """
    r = np.shape(male)[-2]
    labels = tuple(str(j) for j in range(r)) if labels is None else tuple(labels)
    if len(labels) != r:
        raise ValueError(f"{len(labels)} class labels for counts of {r} classes")
    _, rec_m, f1_m = prf_from_counts(male)
    _, rec_f, f1_f = prf_from_counts(female)
    _, _, f1_p = prf_from_counts(male + female)
    out: dict[str, np.ndarray] = {}
    for j, rel in enumerate(labels):
        if j == 0:
            continue
        out[f"f1_gap:{rel}"] = f1_m[..., j] - f1_f[..., j]
        out[f"eo_gap:{rel}"] = rec_m[..., j] - rec_f[..., j]
        out[f"f1_male:{rel}"] = f1_m[..., j]
        out[f"f1_female:{rel}"] = f1_f[..., j]
        out[f"f1:{rel}"] = f1_p[..., j]
    out["micro_f1:male"] = micro_f1_from_counts(male)
    out["micro_f1:female"] = micro_f1_from_counts(female)
    out["micro_f1:pooled"] = micro_f1_from_counts(male + female)
    out["micro_f1_gap"] = out["micro_f1:male"] - out["micro_f1:female"]
    return out


# --------------------------------------------------------------------------------------------
# The counts of a study
# --------------------------------------------------------------------------------------------
def entity_weights(data: StudyCounts, n_resamples: int, seed: int,
                   strata: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The entity resample: gender -> (B, E_g) multinomial counts, in the order of
    ``data.entity_ids[data.gender == g]``. Without folds (and one population) one multinomial over
    each gender's entities; otherwise one within each (gender, fold, population) stratum, so every
    replicate keeps each fold's and population's size (both are fixed by design, and a fold model's
    offset belongs to its seed).

    ``strata`` (E,) labels (a person-level grouping: :mod:`wgbstats.cells`) splits every stratum
    further by label, and the draw is then the rescaled bootstrap of Rao and Wu (1988, JASA 83:231)
    with n - 1 draws: n/(n - 1) x Multinomial(n - 1) in a stratum of n persons, whose variance of a
    mean is s^2/n exactly (the plain multinomial's is (n - 1)/n of it, 17% low in a stratum of 6);
    a stratum of one person keeps its weight 1."""
    rng = np.random.default_rng(seed)
    out = {}
    mixed = len(data.populations()) > 1
    for g in ("male", "female"):
        mask = data.gender == g
        e = int(mask.sum())
        if data.fold is None and not mixed and strata is None:
            out[g] = rng.multinomial(e, np.full(e, 1.0 / e), size=n_resamples).astype(float)
            continue
        keys = _strata_keys(data, mask, strata, mixed)
        w = np.zeros((n_resamples, e))
        for key in sorted(set(keys)):
            cols = np.flatnonzero(np.array([k == key for k in keys]))
            n = cols.size
            if strata is None:
                w[:, cols] = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
            elif n == 1:
                w[:, cols] = 1.0
            else:
                w[:, cols] = rng.multinomial(n - 1, np.full(n, 1.0 / n), size=n_resamples) * (n / (n - 1))
        out[g] = w
    return out


def _strata_keys(data: StudyCounts, mask: np.ndarray, strata: np.ndarray | None, mixed: bool) -> list[tuple]:
    """Each of a gender's persons' resampling stratum: (fold, population if mixed, label if strata)."""
    e = int(mask.sum())
    folds = data.fold[mask] if data.fold is not None else np.zeros(e, dtype=np.int64)
    pops = data.population[mask] if mixed else np.full(e, "")
    labels = np.asarray(strata, dtype=str)[mask] if strata is not None else np.full(e, "")
    return [(int(f), str(p), str(c)) for f, p, c in zip(folds, pops, labels)]


def entity_df(data: StudyCounts, strata: np.ndarray | None = None) -> float:
    """Degrees of freedom of the persons' part of a study's variance: the smaller gender's persons
    less its resampling strata (gender x fold x population, x ``strata`` labels when given)."""
    out = []
    for g in ("male", "female"):
        mask = data.gender == g
        keys = _strata_keys(data, mask, strata, True)
        out.append(int(mask.sum()) - max(len(set(keys)), 1))
    return float(max(min(out), 1))


def interaction_correction(point: float, crossed: np.ndarray, seed_only: np.ndarray,
                           entity_only: np.ndarray) -> tuple[np.ndarray, float]:
    """(corrected combined replicates, estimated sqrt(sigma_I^2 / (S E))): the crossed replicates
    rescaled around ``point`` to the variance ``max(V_s + V_e - J, J)``, the interaction part
    ``J = max(V_c - V_s - V_e, 0)`` (module docstring, "Exact uncertainty")."""
    vc = float(np.var(crossed, ddof=1))
    vs, ve = float(np.var(seed_only, ddof=1)), float(np.var(entity_only, ddof=1))
    if not (vc > 0 and np.isfinite(vc) and np.isfinite(vs) and np.isfinite(ve)):
        return crossed, 0.0
    j = max(vc - vs - ve, 0.0)
    target = max(vs + ve - j, j)
    return point + math.sqrt(target / vc) * (crossed - point), math.sqrt(j)


def estimate_from_replicates(point: float, reps: Mapping[str, np.ndarray], seeds: Sequence[int],
                             confidence: float = 0.95, df_entity: float | None = None) -> Estimate:
    """The :class:`Estimate` of a statistic from its point value and its replicates: ``reps`` holds
    ``"combined"`` (crossed seeds x entities), ``"seed"`` (entities fixed) and ``"entity"`` (or
    ``"item"``; seeds fixed). The combined replicates are corrected for the interaction
    (:func:`interaction_correction`); their standard error and the seed-only one give the
    studentized interval and p-value against the seed reference ("Tests" in the module docstring;
    ``df_entity``: the persons' part's degrees of freedom). Degenerate (never a test) with fewer
    than ``MIN_SEEDS`` seeds or a zero standard error."""
    seeds = [int(s) for s in seeds]
    crossed = np.asarray(reps["combined"], dtype=float)
    seed_only = np.asarray(reps["seed"], dtype=float)
    entity_only = np.asarray(reps["entity"] if "entity" in reps else reps["item"], dtype=float)
    combined, se_i = interaction_correction(point, crossed, seed_only, entity_only)
    se, se_seed, se_entity = (float(np.std(r, ddof=1)) for r in (combined, seed_only, entity_only))
    n = len(seeds)
    df = seed_df(se ** 2, se_seed ** 2, n)
    q = 1 - (1 - confidence) / 2
    degenerate = None
    if n < MIN_SEEDS:
        degenerate = f"fewer than {MIN_SEEDS} seeds: seed variance not estimable"
    elif not (math.isfinite(se) and se > 1e-12):
        degenerate = "zero-width interval"

    def sym(width_se: float, quantile: float) -> list[float]:
        if not (math.isfinite(width_se) and width_se > 0):
            return [float(point), float(point)]
        return [point - quantile * width_se, point + quantile * width_se]

    est = Estimate(
        value=point, ci=[float(point)] * 2, ci_seed=sym(se_seed, t_quantile(q, n - 1 if n > 1 else None)),
        ci_entity=sym(se_entity, t_quantile(q, df_entity)), se=se, se_seed=se_seed, se_entity=se_entity,
        p_value=1.0, n_seeds=n, seeds=seeds, confidence=confidence, degenerate=degenerate,
        ci_crossed=_interval(crossed, confidence), se_crossed=float(crossed.std(ddof=1)),
        se_interaction=se_i, df=df, df_entity=df_entity, ci_percentile=_interval(combined, confidence),
        replicates=combined)
    if math.isfinite(se) and se > 0:
        est.ci = est.interval(confidence)
        if not degenerate:
            est.p_value = reference_p_value(est)
    return est


class Design:
    """The two-level (seed x entity) bootstrap over a :class:`StudyCounts` (module docstring).

    One entity resample (within gender, and within fold and population when the data has them) is
    drawn for the whole design, and one seed draw per set of seeds (a seed carries its K fold
    models), so every estimate and every comparison made with one ``Design`` is paired.
    """

    def __init__(self, data: StudyCounts, *, n_resamples: int = 2000, seed: int = 0,
                 confidence: float = 0.95, strata: np.ndarray | None = None) -> None:
        if n_resamples < 100:
            raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence}")
        self.data, self.n_resamples, self.seed, self.confidence = data, n_resamples, seed, confidence
        self.labels = data.class_labels()
        self._male = data.gender == "male"
        self._female = data.gender == "female"
        if strata is not None and np.shape(strata) != (len(data.entity_ids),):
            raise ValueError(f"strata: shape {np.shape(strata)}, expected ({len(data.entity_ids)},)")
        self.strata = None if strata is None else np.asarray(strata, dtype=str)
        self._w = entity_weights(data, n_resamples, seed, self.strata)
        self.df_entity = entity_df(data, self.strata)
        self._draws: dict[tuple[int, ...], np.ndarray] = {}
        self._cache: dict[tuple, dict[str, np.ndarray]] = {}

    # ---------------------------------------------------------------- replicates
    def _seed_draw(self, seeds: tuple[int, ...]) -> np.ndarray:
        if seeds not in self._draws:
            rng = np.random.default_rng([self.seed, len(seeds), *seeds])
            self._draws[seeds] = rng.integers(0, len(seeds), size=(self.n_resamples, len(seeds)))
        return self._draws[seeds]

    def metrics(self, variant: str, seeds: Sequence[int], mode: str = "combined") -> dict[str, np.ndarray]:
        """Seed-averaged base metrics of ``variant`` in each replicate: name -> (B,) array.
        ``mode``: combined | seed (entities fixed) | entity (seeds fixed) | point (no resampling,
        a (1,) array)."""
        seeds = tuple(seeds)
        key = (variant, seeds, mode)
        if key in self._cache:
            return self._cache[key]
        c = np.stack([self.data.counts[variant][s] for s in seeds]).astype(float)  # (S, E, R, 3)
        s_, r_ = c.shape[0], c.shape[2]
        totals = {}
        for g, mask in (("male", self._male), ("female", self._female)):
            cg = c[:, mask]                                               # (S, Eg, R, 3)
            if mode in ("combined", "entity"):
                flat = cg.transpose(1, 0, 2, 3).reshape(cg.shape[1], -1)  # (Eg, S*R*3)
                totals[g] = (self._w[g] @ flat).reshape(-1, s_, r_, 3)     # (B, S, R, 3)
            elif mode in ("seed", "point"):
                totals[g] = cg.sum(axis=1)[None]                          # (1, S, R, 3)
            else:
                raise ValueError(f"unknown mode {mode!r}; expected one of {list(MODES) + ['point']}")
        per_seed = base_metrics(totals["male"], totals["female"], self.labels)  # name -> (B|1, S)
        if mode in ("combined", "seed"):
            out = {name: self._drawn_mean(v, seeds) for name, v in per_seed.items()}
        else:
            out = {k: v.mean(axis=1) for k, v in per_seed.items()}
        self._cache[key] = out
        return out

    def point(self, variant: str, seeds: Sequence[int]) -> dict[str, float]:
        return {k: float(v[0]) for k, v in self.metrics(variant, seeds, "point").items()}

    # ---------------------------------------------------------------- estimates
    def estimate(self, stat: Callable[[Mapping[str, Mapping[str, np.ndarray]]], np.ndarray],
                 variants: Sequence[str], *, seeds: Sequence[int] | None = None) -> Estimate:
        """``stat({variant: {metric: array}})`` -> array, evaluated on the full data (point) and
        on every replicate of the three bootstraps; variants are paired on ``seeds`` (default:
        the seeds they share)."""
        variants = list(variants)
        seeds = list(seeds) if seeds is not None else self.data.common_seeds(variants)
        if not seeds:
            raise ValueError(f"variants {variants} share no seed")
        for v in variants:
            missing = sorted(set(seeds) - set(self.data.seeds(v)))
            if missing:
                raise ValueError(f"variant {v!r} has no runs for seed(s) {missing}")
        point = float(np.asarray(stat({v: self.metrics(v, seeds, "point") for v in variants}))[0])
        reps = {m: np.asarray(stat({v: self.metrics(v, seeds, m) for v in variants}), dtype=float)
                for m in MODES}
        return self._from_replicates(point, reps, seeds)

    def metric(self, variant: str, name: str, *, seeds: Sequence[int] | None = None) -> Estimate:
        """One base metric of one variant (e.g. ``"f1_gap:spouse"``)."""
        return self.estimate(lambda m: m[variant][name], [variant], seeds=seeds)

    def difference(self, a: str, b: str, name: str, *, seeds: Sequence[int] | None = None,
                   absolute: bool = False) -> Estimate:
        """Paired difference ``a - b`` of a base metric (of its absolute value with ``absolute``)."""
        f = np.abs if absolute else (lambda x: x)
        return self.estimate(lambda m: f(m[a][name]) - f(m[b][name]), [a, b], seeds=seeds)

    def estimate_weighted(self, per_seed: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
                          seeds: Sequence[int]) -> Estimate:
        """A statistic of other per-entity data, paired with this design's estimates.

        ``per_seed(seed, w_male, w_female)`` returns the statistic of one seed as a (K,) array, one
        value per row of entity weights: ``w_male`` (K, E_male) and ``w_female`` (K, E_female), in
        the order of ``data.entity_ids[data.gender == g]``, are this design's entity resample
        (K = n_resamples) or all ones (K = 1: no resampling). Seeds are averaged, drawn and
        scaled, and the three intervals formed, exactly as in :meth:`estimate`.
        """
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ValueError("no seeds")
        ones = {g: np.ones((1, int(m.sum()))) for g, m in (("male", self._male), ("female", self._female))}

        def values(weights: dict[str, np.ndarray]) -> np.ndarray:   # (K, S)
            cols = [np.asarray(per_seed(s, weights["male"], weights["female"]), dtype=float).reshape(-1)
                    for s in seeds]
            return np.stack(cols, axis=1)

        fixed, resampled = values(ones), values(self._w)
        point = float(fixed.mean(axis=1)[0])
        reps = {"combined": self._drawn_mean(resampled, seeds), "seed": self._drawn_mean(fixed, seeds),
                "entity": resampled.mean(axis=1)}
        return self._from_replicates(point, reps, seeds)

    def _from_replicates(self, point: float, reps: Mapping[str, np.ndarray], seeds: list[int]) -> Estimate:
        return estimate_from_replicates(point, reps, seeds, self.confidence, self.df_entity)

    def _drawn_mean(self, v: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """(B,) resampled seed means of per-seed values ``v`` (B or 1, S), the draw's spread scaled
        by sqrt(S / (S - 1)) so that the seed part of the variance is unbiased."""
        s_ = len(seeds)
        v = np.broadcast_to(v, (self.n_resamples, s_))
        k = math.sqrt(s_ / (s_ - 1)) if s_ > 1 else 1.0
        mean_all = v.mean(1)
        return mean_all + k * (np.take_along_axis(v, self._seed_draw(tuple(seeds)), 1).mean(1) - mean_all)
