"""The study-design layer: estimates with their uncertainty, paired comparisons, multiplicity
control and three-state verdicts, for every study whose runs share one test set (the
encoder x selector grid, the debiasing study, ``wgb run``).

**Input.** Every run (variant ``v``, seed ``s``) is evaluated on the same test entities
(articles); its per-entity counts ``C[v, s]`` of shape (E, R, 3) -- (tp, fp, fn) per relation,
``entity_counts.npz`` next to each run's ``eval.json`` -- are all this module needs.

**Seeds and entities are crossed.** Every seed is evaluated on the same sample of test entities,
so the test set's sampling error does not average out over seeds. The *two-level bootstrap* draws,
in each of ``B`` replicates,

1. seeds with replacement from the seeds the compared variants share, and
2. one multinomial resample of the test entities within each gender (the per-run bootstrap's unit),

and applies the same entity resample to every drawn seed and every variant, and the same seed draw
to every variant: comparisons between variants are **paired** on seeds and on entities. A
statistic is computed on the replicate's seed-averaged base metrics (:func:`base_metrics`), so an
absolute gap ``|gap|`` is the absolute value of the expected gap, not the expected absolute value
of seed noise. Next to the combined interval, a *seed-only* bootstrap (entities fixed) and an
*entity-only* bootstrap (seeds fixed) show where the uncertainty comes from.

**Tests.** Two-sided bootstrap p-value (percentile-interval inversion, +1 corrected); Holm
(family-wise error) or Benjamini-Hochberg (false discovery rate) across a family of tests. A test
is *flagged* only when its adjusted p-value is below ``alpha``; an estimate from fewer than 3 seeds
or with a zero-width combined interval is *degenerate* and never flags. The seed draw's spread is
scaled by sqrt(S / (S - 1)), so that the seed part of the bootstrap variance is unbiased for S seeds.

**Verdicts** of directional claims (:func:`verdicts`): ``supported`` (significant after the
correction, in the claimed direction), ``contradicted`` (significant, the other way) or
``undecided``, with the minimum detectable effect at the run's seed count (80% power, two-sided,
at the Bonferroni level alpha/m, Holm's first step) and the number of seeds that would detect the
observed effect -- or the statement that no number of seeds would, when the test set's own
sampling noise (the entity-only part) already exceeds it.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from relext.metrics import micro_f1_from_counts, prf_from_counts
from wikigenderbias.schema import RELATIONS

MODES = ("combined", "seed", "entity")
#: Fewest seeds for a test: fewer give no usable estimate of the seed variance.
MIN_SEEDS = 3
VERDICTS = ("supported", "contradicted", "undecided")
CORRECTIONS = ("holm", "bh", "none")


# --------------------------------------------------------------------------------------------
# Base metrics from male / female count totals
# --------------------------------------------------------------------------------------------
def base_metrics(male: np.ndarray, female: np.ndarray) -> dict[str, np.ndarray]:
    """Named metrics from (..., R, 3) male and female totals; each value has shape (...).

    ``f1_gap:<r>`` = F1(male) - F1(female); ``eo_gap:<r>`` = recall(male) - recall(female)
    (equality of opportunity); ``f1_male:<r>``, ``f1_female:<r>``, ``f1:<r>`` (both genders);
    ``micro_f1:male|female|pooled`` (micro F1 over the positive relations);
    ``micro_f1_gap`` = micro F1(male) - micro F1(female).
    """
    _, rec_m, f1_m = prf_from_counts(male)
    _, rec_f, f1_f = prf_from_counts(female)
    _, _, f1_p = prf_from_counts(male + female)
    out: dict[str, np.ndarray] = {}
    for j, rel in enumerate(RELATIONS):
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
@dataclass
class StudyCounts:
    """Per-entity counts of a study: ``counts[variant][seed]`` is (E, R, 3) over the shared
    ``entity_ids`` (with their ``gender``: "male" / "female")."""

    entity_ids: np.ndarray
    gender: np.ndarray
    counts: dict[str, dict[int, np.ndarray]]

    def __post_init__(self) -> None:
        self.entity_ids = np.asarray(self.entity_ids, dtype=str)
        self.gender = np.asarray(self.gender, dtype=str)
        e = len(self.entity_ids)
        if len(self.gender) != e:
            raise ValueError(f"{len(self.gender)} genders for {e} entities")
        for g in ("male", "female"):
            if not np.any(self.gender == g):
                raise ValueError(f"no test entity of gender {g!r}")
        for v, by_seed in self.counts.items():
            for s, c in by_seed.items():
                if c.ndim != 3 or c.shape[0] != e or c.shape[2] != 3:
                    raise ValueError(f"{v} seed {s}: counts of shape {c.shape}, expected ({e}, R, 3)")

    def seeds(self, variant: str) -> list[int]:
        if variant not in self.counts:
            raise KeyError(f"no runs of variant {variant!r}; have {sorted(self.counts)}")
        return sorted(self.counts[variant])

    def common_seeds(self, variants: Sequence[str]) -> list[int]:
        common = set(self.seeds(variants[0]))
        for v in variants[1:]:
            common &= set(self.seeds(v))
        return sorted(common)

    @classmethod
    def from_runs(cls, runs: Mapping[tuple[str, int], str | Path], *, rule: str = "argmax") -> "StudyCounts":
        """Read ``entity_counts.npz`` of each run directory (keys: (variant, seed)); every run must
        list the same test entities in the same order (an error names the run that does not)."""
        from relext.metrics import ENTITY_COUNTS, read_entity_counts

        ids = gender = None
        counts: dict[str, dict[int, np.ndarray]] = {}
        for (variant, seed), run_dir in runs.items():
            path = Path(run_dir) / ENTITY_COUNTS
            z = read_entity_counts(path)
            key = f"counts_{rule}"
            if key not in z:
                raise ValueError(f"{path}: no counts for the decision rule {rule!r}")
            if ids is None:
                ids, gender = z["entity_ids"], z["gender"]
            elif not (np.array_equal(ids, z["entity_ids"]) and np.array_equal(gender, z["gender"])):
                raise ValueError(f"{path}: the run was evaluated on other test entities than the "
                                 "study's first run; a design needs one shared test set")
            counts.setdefault(variant, {})[int(seed)] = z[key].astype(np.int64)
        if ids is None:
            raise ValueError("no runs with entity counts")
        return cls(ids, gender, counts)


# --------------------------------------------------------------------------------------------
# Estimates
# --------------------------------------------------------------------------------------------
@dataclass
class Estimate:
    """A statistic with its combined, seed-only and entity-only bootstrap intervals."""

    value: float
    ci: list[float]               # combined (seeds x entities) percentile interval
    ci_seed: list[float]          # seed-only (entities fixed)
    ci_entity: list[float]        # entity-only (seeds fixed)
    se: float                     # combined bootstrap standard error
    se_seed: float
    se_entity: float
    p_value: float                # two-sided, from the combined bootstrap (1.0 when degenerate)
    n_seeds: int
    seeds: list[int]
    confidence: float
    degenerate: str | None = None  # why no test is possible (fewer than 2 seeds, zero width)

    def to_dict(self) -> dict:
        return asdict(self)


def bootstrap_p_value(replicates: np.ndarray) -> float:
    """Two-sided p-value of "the statistic is 0" by inverting the percentile interval."""
    r = np.asarray(replicates, dtype=float)
    b = r.size
    below, above = int(np.sum(r <= 0)), int(np.sum(r >= 0))
    return float(min(1.0, 2 * min(below + 1, above + 1) / (b + 1)))


def _interval(r: np.ndarray, confidence: float) -> list[float]:
    a = 1 - confidence
    lo, hi = np.quantile(r, [a / 2, 1 - a / 2])
    return [float(lo), float(hi)]


class Design:
    """The two-level (seed x entity) bootstrap over a :class:`StudyCounts` (module docstring).

    One entity resample (within gender) is drawn for the whole design, and one seed draw per set
    of seeds, so every estimate and every comparison made with one ``Design`` is paired.
    """

    def __init__(self, data: StudyCounts, *, n_resamples: int = 2000, seed: int = 0,
                 confidence: float = 0.95) -> None:
        if n_resamples < 100:
            raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence}")
        self.data, self.n_resamples, self.seed, self.confidence = data, n_resamples, seed, confidence
        self._male = data.gender == "male"
        self._female = data.gender == "female"
        rng = np.random.default_rng(seed)
        self._w = {}
        for g, mask in (("male", self._male), ("female", self._female)):
            e = int(mask.sum())
            self._w[g] = rng.multinomial(e, np.full(e, 1.0 / e), size=n_resamples).astype(float)
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
        per_seed = base_metrics(totals["male"], totals["female"])       # name -> (B|1, S)
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
        """The three intervals of a statistic's replicates; degenerate (never a test) with fewer
        than ``MIN_SEEDS`` seeds or a zero-width combined interval."""
        ci = _interval(reps["combined"], self.confidence)
        degenerate = None
        if len(seeds) < MIN_SEEDS:
            degenerate = f"fewer than {MIN_SEEDS} seeds: seed variance not estimable"
        elif ci[1] - ci[0] <= 1e-12:
            degenerate = "zero-width interval"
        return Estimate(
            value=point, ci=ci, ci_seed=_interval(reps["seed"], self.confidence),
            ci_entity=_interval(reps["entity"], self.confidence),
            se=float(reps["combined"].std(ddof=1)), se_seed=float(reps["seed"].std(ddof=1)),
            se_entity=float(reps["entity"].std(ddof=1)),
            p_value=1.0 if degenerate else bootstrap_p_value(reps["combined"]),
            n_seeds=len(seeds), seeds=seeds, confidence=self.confidence, degenerate=degenerate)

    def _drawn_mean(self, v: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """(B,) resampled seed means of per-seed values ``v`` (B or 1, S), the draw's spread scaled
        by sqrt(S / (S - 1)) so that the seed part of the variance is unbiased."""
        s_ = len(seeds)
        v = np.broadcast_to(v, (self.n_resamples, s_))
        k = math.sqrt(s_ / (s_ - 1)) if s_ > 1 else 1.0
        mean_all = v.mean(1)
        return mean_all + k * (np.take_along_axis(v, self._seed_draw(tuple(seeds)), 1).mean(1) - mean_all)


# --------------------------------------------------------------------------------------------
# Multiplicity
# --------------------------------------------------------------------------------------------
def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        adj[i] = running
    return adj.tolist()


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adj_sorted = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    adj = np.empty(m)
    adj[order] = adj_sorted
    return adj.tolist()


def adjust(p_values: Sequence[float], method: str) -> list[float]:
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        return [float(p) for p in p_values]
    raise ValueError(f"unknown correction {method!r}; expected one of {list(CORRECTIONS)}")


def flags(estimates: Sequence[Estimate], *, alpha: float = 0.05, method: str = "bh") -> list[dict]:
    """Which estimates differ from 0 after the correction; degenerate ones never flag."""
    adj = adjust([e.p_value for e in estimates], method)
    return [{"p_adjusted": a, "flagged": bool(a < alpha and e.degenerate is None), "correction": method}
            for e, a in zip(estimates, adj)]


# --------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------
@dataclass
class Claim:
    """A directional claim: ``direction`` +1 says the statistic is > 0, -1 says < 0."""

    name: str
    statistic: str        # what is estimated, in words
    direction: int
    estimate: Estimate
    source: str = ""      # where the claim comes from (the paper, a section)


@dataclass
class Verdict:
    claim: str
    statistic: str
    direction: int
    verdict: str                  # supported | contradicted | undecided
    value: float
    ci: list[float]
    ci_seed: list[float]
    ci_entity: list[float]
    p_value: float
    p_adjusted: float
    correction: str
    n_seeds: int
    mde: float | None             # minimum detectable |effect| at n_seeds (80% power)
    seeds_to_decide: int | None   # seeds that would detect the observed effect (None: see note)
    note: str = ""
    source: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def power_plan(est: Estimate, *, alpha_level: float, power: float = 0.8,
               max_seeds: int = 1000) -> tuple[float | None, int | None, str]:
    """(minimum detectable |effect| at the estimate's seed count, seeds that would detect the
    observed effect, a note). The combined variance is split into an entity-only part, which more
    seeds cannot shrink, and the rest, which falls as 1/seeds."""
    if est.degenerate:
        return None, None, f"no test: {est.degenerate}"
    z = _z(1 - alpha_level / 2) + _z(power)
    var, var_e = est.se ** 2, min(est.se_entity ** 2, est.se ** 2)
    mde = z * math.sqrt(var)
    d = abs(est.value)
    if d == 0:
        return mde, None, "the observed effect is 0"
    need = (d / z) ** 2
    if need <= var_e:
        return mde, None, ("no seed count decides it: the test set's sampling noise alone "
                           f"(entity-only SE {est.se_entity:.4f}) hides an effect of {d:.4f}")
    n = math.ceil((var - var_e) * est.n_seeds / (need - var_e))
    n = max(n, 2)
    if n > max_seeds:
        return mde, None, f"more than {max_seeds} seeds would be needed"
    return mde, n, ""


def verdicts(claims: Sequence[Claim], *, alpha: float = 0.05, method: str = "holm",
             power: float = 0.8) -> list[Verdict]:
    """Three-state verdicts of a family of claims, with the multiplicity ``method`` across it."""
    adj = adjust([c.estimate.p_value for c in claims], method)
    m = max(len(claims), 1)
    level = alpha / m if method == "holm" else alpha
    out = []
    for c, pa in zip(claims, adj):
        e = c.estimate
        if c.direction not in (1, -1):
            raise ValueError(f"claim {c.name!r}: direction must be +1 or -1")
        significant = pa < alpha and e.degenerate is None
        if significant and np.sign(e.value) == c.direction:
            v = "supported"
        elif significant:
            v = "contradicted"
        else:
            v = "undecided"
        mde, n, note = power_plan(e, alpha_level=level, power=power)
        if v != "undecided":
            n, note = None, note if e.degenerate else ""
        elif n is not None:
            note = f"about {n} seeds would decide it (80% power at the corrected level)"
        out.append(Verdict(claim=c.name, statistic=c.statistic, direction=c.direction, verdict=v,
                           value=e.value, ci=e.ci, ci_seed=e.ci_seed, ci_entity=e.ci_entity,
                           p_value=e.p_value, p_adjusted=float(pa), correction=method,
                           n_seeds=e.n_seeds, mde=mde, seeds_to_decide=n, note=note, source=c.source))
    return out
