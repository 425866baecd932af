"""Known-answer simulations of the design layer's inference: is a verdict's p-value calibrated at
the levels Holm and the intersection-union tests use it at (alpha/m, alpha/(m k)), with 3, 5 or 10
seeds, and what power does it have?

Model (one class's recall gap (a relation's, in relation extraction), linear in per-person values, so the truth is known)::

    x[s, e] = 0.5 + b_e + i_se + male_e * (delta + a_s)

``a_s`` the seed effect (sd ``sd_seed``: each seed its own gap), ``b_e`` the person effect
(``sd_entity``), ``i_se`` the seed x person interaction (``sd_interaction``); ``delta`` the true gap
(0 under the null). The statistic is the seed-averaged difference of the men's and the women's
mean. Its three variance parts are computed as the design layer's bootstraps estimate them, in
closed form (no Monte Carlo noise, so hundreds of thousands of simulated studies run in seconds):

* ``V_s``: the seed-only bootstrap's = sample variance of the S per-seed gaps / S (S - 1 df);
* ``V_e``: the entity-only bootstrap's = sum over genders of the multinomial-bootstrap variance
  of the persons' seed-averaged values;
* ``J``: the interaction part, the two-way ANOVA interaction mean square / (S n_g), per gender;

``V = max(V_s + V_e - J, J)`` (:func:`wgbstats.design.interaction_correction`), and the p-value is the
layer's own test (:mod:`wgbstats.reference`); the plug-in Welch-Satterthwaite t test it replaced
is kept beside it for comparison (:meth:`Simulated.rejects_plugin`).
:func:`check_design_agrees` runs :class:`wgbstats.design.Design` itself on simulated studies and
compares its standard error and df with the closed form, so the fast simulation speaks for the
bootstrap. ``scripts/study/calibration.py`` writes the committed table and plot.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wgbstats.reference import p_value, rejects
from wgbstats.verdicts import DF_MAX

#: Named scenarios (standard deviations of the model's parts), each a case the issue names.
SCENARIOS: dict[str, dict[str, float]] = {
    "seed-dominated": {"sd_seed": 0.03, "sd_entity": 0.02, "sd_interaction": 0.02},
    "mixed": {"sd_seed": 0.01, "sd_entity": 0.1, "sd_interaction": 0.05},
    "persons-dominated": {"sd_seed": 0.0, "sd_entity": 0.15, "sd_interaction": 0.02},
    "interaction-heavy": {"sd_seed": 0.005, "sd_entity": 0.03, "sd_interaction": 0.3},
}


@dataclass
class Simulated:
    """Per simulated study: the point estimate, the corrected variance, the seed-only variance and
    the t reference's df (arrays of one value per study)."""

    point: np.ndarray
    var: np.ndarray
    var_seed: np.ndarray
    df: np.ndarray

    n_seeds: int = 0
    df_entity: float | None = None

    def t(self) -> np.ndarray:
        return self.point / np.sqrt(self.var)

    def rejects(self, level: float) -> np.ndarray:
        """The design layer's test at ``level`` (:func:`wgbstats.reference.rejects`)."""
        v_seed = np.minimum(self.var_seed, self.var)
        return rejects(self.t(), level, v_seed, self.var - v_seed, self.n_seeds, self.df_entity)

    def rejects_plugin(self, level: float) -> np.ndarray:
        """The plug-in Welch-Satterthwaite t test at ``level`` (what the layer does not use)."""
        from scipy import stats

        return 2 * stats.t.sf(np.abs(self.t()), np.minimum(self.df, DF_MAX)) < level


def seed_df_array(var: np.ndarray, var_seed: np.ndarray, n_seeds: int) -> np.ndarray:
    """:func:`wgbstats.verdicts.seed_df` over arrays."""
    ratio = np.divide(var, var_seed, out=np.full_like(var, np.inf), where=var_seed > 0)
    return np.minimum(DF_MAX, (n_seeds - 1) * np.maximum(ratio, 1.0) ** 2)


def simulate(n_studies: int, *, seeds: int, n_male: int, n_female: int, sd_seed: float, sd_entity: float,
             sd_interaction: float, delta: float = 0.0, rng: np.random.Generator | None = None,
             chunk: int = 20_000) -> Simulated:
    """``n_studies`` simulated studies of the model (module docstring), each reduced to what the
    design layer's inference reads."""
    if seeds < 2:
        raise ValueError("the t reference needs at least 2 seeds")
    rng = rng or np.random.default_rng(0)
    out: list[tuple[np.ndarray, ...]] = []
    done = 0
    while done < n_studies:
        n = min(chunk, n_studies - done)
        done += n
        parts = {}
        for g, size, male in (("male", n_male, 1.0), ("female", n_female, 0.0)):
            b = rng.normal(0, sd_entity, size=(n, 1, size))
            i = rng.normal(0, sd_interaction, size=(n, seeds, size))
            parts[g] = (b, i, male)
        a = rng.normal(0, sd_seed, size=(n, seeds))
        gap_s = np.zeros((n, seeds))
        v_e = np.zeros(n)
        j = np.zeros(n)
        for g, (b, i, male) in parts.items():
            x = b + i                                               # (n, S, E_g), constant 0.5 drops out
            size = x.shape[2]
            mean_s = x.mean(axis=2)                                 # (n, S)
            gap_s += mean_s if male else -mean_s
            ybar = x.mean(axis=1)                                   # (n, E_g): seed-averaged per person
            v_e += ybar.var(axis=1) / size                          # multinomial bootstrap (ddof 0)
            resid = x - ybar[:, None, :] - mean_s[:, :, None] + ybar.mean(axis=1)[:, None, None]
            ms_i = (resid ** 2).sum(axis=(1, 2)) / ((seeds - 1) * (size - 1))
            j += ms_i / (seeds * size)
        gap_s += delta + a
        point = gap_s.mean(axis=1)
        v_s = gap_s.var(axis=1, ddof=1) / seeds
        var = np.maximum(v_s + v_e - j, j)
        out.append((point, var, v_s, seed_df_array(var, v_s, seeds)))
    return Simulated(*(np.concatenate(c) for c in zip(*out)), n_seeds=seeds,
                     df_entity=float(min(n_male, n_female) - 1))


def rejection_rates(sim: Simulated, levels: list[float], *, plugin: bool = False) -> dict[float, float]:
    """Share of simulated studies the test rejects at each level (the layer's, or the plug-in t)."""
    return {lev: float(np.mean(sim.rejects_plugin(lev) if plugin else sim.rejects(lev))) for lev in levels}


def binomial_upper(k: int, n: int, confidence: float = 0.999) -> float:
    """Clopper-Pearson upper bound of a rate from ``k`` events in ``n`` trials."""
    from scipy import stats

    return 1.0 if k >= n else float(stats.beta.ppf(confidence, k + 1, n - k))


def coverage(sim: Simulated, delta: float, confidence: float = 0.95) -> float:
    """Share of simulated studies whose interval at ``confidence`` covers the true ``delta`` (the
    interval is the inverted test: it covers delta when the test of "delta" does not reject)."""
    shifted = Simulated(sim.point - delta, sim.var, sim.var_seed, sim.df, sim.n_seeds, sim.df_entity)
    return float(np.mean(~shifted.rejects(1 - confidence)))


def true_se(*, seeds: int, n_male: int, n_female: int, sd_seed: float, sd_entity: float,
            sd_interaction: float, **_: float) -> float:
    """The statistic's true standard error under the model."""
    var = sd_seed ** 2 / seeds + (sd_entity ** 2 + sd_interaction ** 2 / seeds) * (1 / n_male + 1 / n_female)
    return math.sqrt(var)


def check_design_agrees(n_studies: int, *, seeds: int, n_male: int, n_female: int, sd_seed: float,
                        sd_entity: float, sd_interaction: float, n_resamples: int = 2000,
                        seed: int = 0) -> list[dict[str, float]]:
    """Run :class:`wgbstats.design.Design` on ``n_studies`` simulated studies (counts of one class
    whose recall is the model's x) and return, per study, its (se, df, p) beside the closed form's:
    the bridge between the fast simulation and the bootstrap the studies use."""
    from wgbstats.design import Design, StudyCounts

    rng = np.random.default_rng(seed)
    labels, n_pos = ("none", "x"), 100_000
    r, cls = len(labels), 1
    rows = []
    for k in range(n_studies):
        e = n_male + n_female
        male = np.r_[np.ones(n_male), np.zeros(n_female)]
        b = rng.normal(0, sd_entity, size=(1, e))
        i = rng.normal(0, sd_interaction, size=(seeds, e))
        a = rng.normal(0, sd_seed, size=(seeds, 1))
        x = np.clip(0.5 + b + i + male * a, 0, 1)
        tp = np.rint(x * n_pos).astype(np.int64)
        c = np.zeros((seeds, e, r, 3), dtype=np.int64)
        c[..., cls, 0], c[..., cls, 2] = tp, n_pos - tp
        gender = np.where(male == 1, "male", "female")
        data = StudyCounts(np.array([f"e{j}" for j in range(e)]), gender, {"v": dict(enumerate(c))},
                           labels=labels)
        est = Design(data, n_resamples=n_resamples, seed=k).metric("v", "eo_gap:x")
        xr = tp / n_pos                                               # the rounded rates the counts say
        closed = _closed_form(xr, male.astype(bool), seeds)
        v, vs = float(closed.var[0]), float(min(closed.var_seed[0], closed.var[0]))
        rows.append({"se": est.se, "se_seed": est.se_seed, "p": est.p_value, "se_closed": math.sqrt(v),
                     "se_seed_closed": math.sqrt(float(closed.var_seed[0])),
                     "p_closed": p_value(float(closed.point[0]) / math.sqrt(v), vs, v - vs, seeds, est.df_entity)})
    return rows


def _closed_form(x: np.ndarray, male: np.ndarray, seeds: int) -> Simulated:
    """The closed-form estimator of one study's (S, E) values."""
    gap_s = x[:, male].mean(axis=1) - x[:, ~male].mean(axis=1)
    v_s = gap_s.var(ddof=1) / seeds
    v_e = j = 0.0
    for mask in (male, ~male):
        xg = x[:, mask]
        size = xg.shape[1]
        ybar = xg.mean(axis=0)
        v_e += ybar.var() / size
        resid = xg - ybar[None] - xg.mean(axis=1)[:, None] + ybar.mean()
        j += (resid ** 2).sum() / ((seeds - 1) * (size - 1)) / (seeds * size)
    var = max(v_s + v_e - j, j)
    arr = np.array
    return Simulated(arr([gap_s.mean()]), arr([var]), arr([v_s]), seed_df_array(arr([var]), arr([v_s]), seeds),
                     n_seeds=seeds, df_entity=float(min(male.sum(), (~male).sum()) - 1))
