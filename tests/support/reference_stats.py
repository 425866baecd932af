"""An independent reference for the design layer's core statistics (issue #38, item 6).

Plain numpy + scipy, written from the method's description and not from the layer's code: it
imports nothing from ``relext`` / ``wgb`` and reads the committed ``entity_counts.npz`` with
``numpy.load``. It computes per-gender F1 per relation, F1 gaps and micro F1 from per-person
counts; the two-level bootstrap (persons resampled within gender x fold x population strata,
seeds drawn with replacement and scaled by sqrt(S / (S - 1))); the interaction correction; the
seed reference p-value by ``scipy.integrate.quad``; Holm and the intersection-union p-value.
Its random draws are its own, so it agrees with the layer within Monte Carlo error only.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import integrate, special, stats

#: relation ids 1..4 of the count files' relation axis (id 0 is "no relation")
POSITIVE = ("spouse", "hypernym", "birthDate", "birthPlace")


def load_group(dirs, rule: str = "argmax") -> dict:
    """The fold runs of one (variant, seed), concatenated and ordered by person id."""
    parts = [np.load(Path(d) / "entity_counts.npz", allow_pickle=False) for d in dirs]
    ids = np.concatenate([z["entity_ids"].astype(str) for z in parts])
    o = np.argsort(ids)
    cat = lambda k: np.concatenate([z[k] for z in parts])[o]  # noqa: E731
    return {"ids": ids[o], "gender": cat("gender").astype(str), "fold": cat("fold").astype(int),
            "population": cat("population").astype(str), "counts": cat(f"counts_{rule}").astype(float)}


def load_study(runs: dict, rule: str = "argmax", population: str | None = None) -> dict:
    """``runs``: (variant, seed) -> fold run dirs. {"gender", "fold", "population", "seeds",
    "counts": variant -> (S, E, R, 3)}, persons of one ``population`` (None: all)."""
    groups = {k: load_group(v, rule) for k, v in runs.items()}
    first = next(iter(groups.values()))
    for g in groups.values():
        assert all(np.array_equal(g[k], first[k]) for k in ("ids", "gender", "fold", "population"))
    keep = np.ones(len(first["ids"]), bool) if population is None else first["population"] == population
    seeds = sorted({s for _, s in runs})
    counts = {v: np.stack([groups[(v, s)]["counts"][keep] for s in seeds]) for v in sorted({v for v, _ in runs})}
    return {"gender": first["gender"][keep], "fold": first["fold"][keep],
            "population": first["population"][keep], "seeds": seeds, "counts": counts}


# ------------------------------------------------------------------ (a) metrics from counts
def f1(tp, fp, fn):
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)


def metrics(male: np.ndarray, female: np.ndarray) -> dict:
    """Gender totals (..., R, 3) -> {f1_gap:<rel>, micro_f1:pooled, ...}, each of shape (...)."""
    out = {}
    f1m = f1(male[..., 0], male[..., 1], male[..., 2])
    f1f = f1(female[..., 0], female[..., 1], female[..., 2])
    for j, rel in enumerate(POSITIVE, start=1):
        out[f"f1_gap:{rel}"] = f1m[..., j] - f1f[..., j]
    for name, tot in (("male", male), ("female", female), ("pooled", male + female)):
        micro = tot[..., 1:, :].sum(-2)
        out[f"micro_f1:{name}"] = f1(micro[..., 0], micro[..., 1], micro[..., 2])
    return out


def mean_abs_gap(m: dict) -> np.ndarray:
    return sum(np.abs(m[f"f1_gap:{r}"]) for r in POSITIVE) / len(POSITIVE)


# ------------------------------------------------------------------ (b) the two-level bootstrap
class Bootstrap:
    """One person resample and one seed draw shared by every statistic (paired comparisons)."""

    def __init__(self, study: dict, n: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.study, self.n = study, n
        self.weights = {}
        for g in ("male", "female"):
            sel = study["gender"] == g
            strata = np.char.add(study["fold"][sel].astype(str), np.char.add("|", study["population"][sel]))
            e = int(sel.sum())
            w = np.zeros(n * e, np.float32)
            for s in np.unique(strata):
                cols = np.flatnonzero(strata == s)
                picks = cols[rng.integers(0, cols.size, size=(n, cols.size))]   # draw with replacement
                w += np.bincount((picks + e * np.arange(n)[:, None]).ravel(), minlength=n * e)
            self.weights[g] = w.reshape(n, e)
        s_ = len(study["seeds"])
        draws = rng.integers(0, s_, size=(n, s_))
        self.seed_share = np.stack([np.bincount(r, minlength=s_) for r in draws]) / s_   # (n, S)
        self.scale = np.sqrt(s_ / (s_ - 1))
        self._cache: dict = {}

    def per_seed(self, variant: str, resample_persons: bool) -> dict:
        """Per-seed metrics: (n, S) with persons resampled, else (1, S)."""
        key = (variant, resample_persons)
        if key not in self._cache:
            c = self.study["counts"][variant]
            tot = {}
            for g in ("male", "female"):
                cg = c[:, self.study["gender"] == g]                           # (S, E_g, R, 3)
                s_, e, r_, _ = cg.shape
                if resample_persons:   # integer sums, exact in float32
                    flat = cg.transpose(1, 0, 2, 3).reshape(e, -1).astype(np.float32)
                    tot[g] = (self.weights[g] @ flat).astype(float).reshape(-1, s_, r_, 3)
                else:
                    tot[g] = cg.sum(1)[None]
            self._cache[key] = metrics(tot["male"], tot["female"])
        return self._cache[key]

    def seed_mean(self, v: np.ndarray, draw: bool) -> np.ndarray:
        full = v.mean(-1)
        if not draw:
            return full
        return full + self.scale * ((v * self.seed_share).sum(-1) - full)

    def replicates(self, stat, variants) -> dict:
        """{"point", "crossed", "seed", "person"} of ``stat({variant: {metric: array}})``."""
        out = {}
        for mode, persons, draw in (("point", False, False), ("crossed", True, True),
                                    ("seed", False, True), ("person", True, False)):
            m = {v: {k: self.seed_mean(np.broadcast_to(x, (1 if mode == "point" else self.n, x.shape[-1])), draw)
                     for k, x in self.per_seed(v, persons).items()} for v in variants}
            out[mode] = np.asarray(stat(m), float)
        out["point"] = float(out["point"][0])
        return out


# ------------------------------------------------------------------ (c) variance parts
def variance_parts(crossed, seed_only, person_only) -> dict:
    vc, vs, ve = (float(np.var(x, ddof=1)) for x in (crossed, seed_only, person_only))
    j = max(vc - vs - ve, 0.0)
    return {"V_c": vc, "V_s": vs, "V_e": ve, "J": j, "V": max(vs + ve - j, j)}


def mc_sd(crossed, seed_only, person_only, n: int) -> dict:
    """Monte Carlo SDs of ``V`` and ``V_s`` (variance_parts) from ``n`` replicates: each sample
    variance is a mean over replicates of squared deviations, so V = (2 V_s + 2 V_e - V_c, or its
    clipped branch) is a mean of per-replicate terms h_b whose variance / n is its own."""
    c, s, e = (np.asarray(x, float) - np.mean(x) for x in (crossed, seed_only, person_only))
    parts = variance_parts(crossed, seed_only, person_only)
    if parts["J"] == 0:
        h = s ** 2 + e ** 2
    elif parts["V"] == parts["J"]:
        h = c ** 2 - s ** 2 - e ** 2
    else:
        h = 2 * s ** 2 + 2 * e ** 2 - c ** 2
    return {"V": float(np.std(h, ddof=1) / math.sqrt(n)), "V_s": float(np.std(s ** 2, ddof=1) / math.sqrt(n))}


def df_entity(study: dict) -> float:
    """The smaller gender's persons less its (fold, population) strata."""
    out = []
    for g in ("male", "female"):
        sel = study["gender"] == g
        out.append(int(sel.sum()) - len(set(zip(study["fold"][sel], study["population"][sel]))))
    return float(max(min(out), 1))


# ------------------------------------------------------------------ (d) the seed reference
def tail(t: float, rho: float, df_seed: int, df_e: float | None) -> float:
    """P(|T| > t) = E_W[P(|X| > t sqrt(1 - rho + rho W / df_seed))], W ~ chi2(df_seed), X ~ t(df_e)
    (the normal for None), by adaptive quadrature over W's density, cut at its quantiles."""
    k = df_seed / 2
    dens = lambda w: math.exp(special.xlogy(k - 1, w) - w / 2 - k * math.log(2) - special.gammaln(k))  # noqa: E731
    two_sided = ((lambda x: special.erfc(x / math.sqrt(2))) if df_e is None
                 else (lambda x: 2 * special.stdtr(df_e, -x)))
    f = lambda w: dens(w) * two_sided(t * math.sqrt(1 - rho + rho * w / df_seed))  # noqa: E731
    edges = special.chdtri(df_seed, [1 - 1e-15, 1 - 1e-9, 1 - 1e-4, 0.95, 0.5, 0.05, 1e-3, 1e-6, 1e-10, 0.0])
    return float(sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-10, limit=200)[0]
                     for a, b in zip(edges[:-1], edges[1:])))


def rejects(t, level, v_seed, v_rest, n_seeds, df_e, share=0.1) -> bool:
    df_s = n_seeds - 1
    b_hi = v_seed * df_s / stats.chi2.ppf(share * level, df_s)      # upper bound of the seed variance
    rho = b_hi / (b_hi + v_rest) if b_hi + v_rest > 0 else 1.0
    return tail(abs(t), min(max(rho, 0.0), 1.0), df_s, df_e) <= (1 - share) * level


def p_value(t, v_seed, v_rest, n_seeds, df_e=None, tol=1e-6) -> float:
    """The smallest level whose test rejects (bisection on log10 of the level over [1e-15, 1])."""
    if not rejects(t, 1 - 1e-12, v_seed, v_rest, n_seeds, df_e):
        return 1.0
    lo, hi = -15.0, 0.0
    if rejects(t, 10 ** lo, v_seed, v_rest, n_seeds, df_e):
        return 10 ** lo
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if rejects(t, 10 ** mid, v_seed, v_rest, n_seeds, df_e) else (mid, hi)
    return 10 ** hi


def estimate(boot: Bootstrap, stat, variants, df_e: float | None, n_other: int | None = None) -> dict:
    """point, se, se_seed, the variance parts and p; ``rel_mc_se`` / ``rel_mc_se_seed``: the relative
    Monte Carlo SD of se / se_seed, of this bootstrap's (``n_other``: of a bootstrap with that many
    replicates too, independent of this one, so the SD of their difference)."""
    r = boot.replicates(stat, variants)
    parts = variance_parts(r["crossed"], r["seed"], r["person"])
    v_seed = min(parts["V_s"], parts["V"])
    se = math.sqrt(parts["V"])
    mc = mc_sd(r["crossed"], r["seed"], r["person"], boot.n)
    k = 1 + (boot.n / n_other if n_other else 0)           # var at n' = var at n * n / n'
    return {"point": r["point"], "se": se, "se_seed": math.sqrt(parts["V_s"]), **parts,
            "rel_mc_se": math.sqrt(k) * mc["V"] / (2 * parts["V"]),
            "rel_mc_se_seed": math.sqrt(k) * mc["V_s"] / (2 * parts["V_s"]),
            "p": p_value(r["point"] / se, v_seed, parts["V"] - v_seed, len(boot.study["seeds"]), df_e)}


# ------------------------------------------------------------------ (e) multiplicity
def holm(p) -> np.ndarray:
    p = np.asarray(p, float)
    o = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate(np.minimum(1.0, (p.size - np.arange(p.size)) * p[o]))
    out = np.empty_like(p)
    out[o] = adj
    return out


def intersection_union(values, p, directions) -> tuple[float, int]:
    """(p, side): the largest part p when every part is in its direction (+1), else the
    Bonferroni-adjusted smallest p among the parts against their direction (-1)."""
    values, p, d = (np.asarray(x, float) for x in (values, p, directions))
    ok = np.sign(values) == d
    if ok.all():
        return float(p.max()), 1
    return float(min(1.0, p.size * p[~ok].min())), -1
