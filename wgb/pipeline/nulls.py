"""What each claim of a ``wgb run`` is tested against: the quantity a *gender-blind* extractor with
the same errors would give (graph questions), and how much retraining alone moves an embedding
measure (embedding questions).

**Gender-blind null of the graph's bias mass.** Bias mass is a sum of ``|score|`` over items, so
every extraction error adds mass, whatever its relation to the person's gender. The null keeps
the gold graph and, per hypernym item, the extracted graph's number of missed gold holdings and of
spurious holdings, and places them again without regard to gender: the missed ones uniformly among
the item's gold holders, the spurious ones uniformly among the test persons who do not hold it in
gold (:func:`blind_holds`). Every per-relation and per-item error count is the observed one; only
*who* gets the errors is independent of gender. Each seed's extracted graph gets ``n_draws`` such
graphs; :class:`DataNull` gives the parts of their bias added (module :mod:`wgb.pipeline.propagation`)
under any entity weights, so ``observed - null mean`` is estimated with the seed x entity bootstrap
of :mod:`relext.design`, paired with every other estimate of the run.

**Facts per person** (:func:`facts_gap`): men's minus women's mean number of facts of a graph per
test person. A gender-blind extractor that misses each relation's gold facts at its observed
(pooled) rate ``q`` and spreads its spurious facts evenly over persons gives an extracted
difference of ``(1 - q) x`` the gold difference; the statistic is the observed extracted difference
minus that, summed over relations (+ = extraction moves the difference towards men).

**Retraining control of the embedding measures** (:func:`embedding_excess`). Embeddings are trained
once per seed on each graph; the gold graph is embedded at every seed, so a pair of seeds (s, s')
shows how much ``|score|`` moves with no change in the data. A part's control is that part computed
with the gold embeddings of seed s' in place of the extracted graph's, over the same items (shared
items: ``|gold_s'| - |gold_s|``; error-born and missed items have no counterpart with unchanged
data: 0). The estimate is the seed mean of the observed part minus the mean over ordered seed pairs
of the control, with a bootstrap that draws seeds *and* items (multinomial item weights), paired
between the observed part and its control.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from relext.design import MIN_SEEDS, Estimate, bootstrap_p_value

#: Gender-blind graphs drawn per seed and extracted graph.
N_DRAWS = 100
DATA_PARTS = ("added", "shared", "error_born", "missed")


# --------------------------------------------------------------------------------------------
# The gender-blind null of the data measure
# --------------------------------------------------------------------------------------------
def blind_holds(gold: np.ndarray, extracted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One gender-blind extracted graph's (E, I) holdings: per item, as many gold holdings missed
    and as many spurious holdings as ``extracted`` has, placed uniformly among the persons who
    hold the item in ``gold`` (missed) or do not (spurious)."""
    gold, extracted = np.asarray(gold, dtype=bool), np.asarray(extracted, dtype=bool)
    out = gold.copy()
    missed, spurious = (gold & ~extracted).sum(0), (extracted & ~gold).sum(0)
    for j in np.flatnonzero(missed):
        out[rng.choice(np.flatnonzero(gold[:, j]), int(missed[j]), replace=False), j] = False
    for j in np.flatnonzero(spurious):
        out[rng.choice(np.flatnonzero(~gold[:, j]), int(spurious[j]), replace=False), j] = True
    return out


def null_parts(gold_scores: np.ndarray, in_gold: np.ndarray, draws: Sequence[np.ndarray], male: np.ndarray,
               female: np.ndarray, w_male: np.ndarray, w_female: np.ndarray, *,
               budget: int = 5_000_000) -> dict[str, np.ndarray]:
    """The parts of the bias added (:func:`wgb.pipeline.propagation.decompose`) of each null
    graph in ``draws`` ((E, I) holdings each) against the gold graph's scores (K, I) under the
    entity weights: part -> (K, J). Data scores through sparse products (cost: weights x
    holdings, not weights x persons x items), as many draws at a time as keep each (K, draws, I)
    array under ``budget`` values."""
    from scipy import sparse

    k_, n_items = gold_scores.shape
    chunk = max(1, budget // max(1, k_ * n_items))
    ag = np.abs(gold_scores)
    out = {p: np.empty((k_, len(draws))) for p in (*DATA_PARTS, "shift")}
    for a in range(0, len(draws), chunk):
        block = draws[a:a + chunk]
        j_ = len(block)

        def share(mask, w):
            h = np.concatenate([d[mask] for d in block], axis=1)                  # (E_g, J*I)
            n = w @ np.stack([d[mask].any(1) for d in block], axis=1).astype(float)  # (K, J)
            c = np.asarray((sparse.csr_matrix(h.astype(float)).T @ w.T).T).reshape(k_, j_, n_items)
            return np.divide(c, n[:, :, None], out=np.zeros_like(c), where=n[:, :, None] > 0)

        s = share(male, w_male) - share(female, w_female)                          # (K, J, I)
        ae = np.abs(s)
        in_null = np.stack([d.any(0) for d in block])                              # (J, I)
        shared, born, missed = in_null & in_gold, in_null & ~in_gold, ~in_null & in_gold
        sl = slice(a, a + j_)
        out["shared"][:, sl] = ((ae - ag[:, None]) * shared).sum(-1)
        out["error_born"][:, sl] = (ae * born).sum(-1)
        out["missed"][:, sl] = (ag[:, None] * missed).sum(-1)
        out["added"][:, sl] = (ae * in_null).sum(-1) - (ag * in_gold).sum(-1)[:, None]
        n_sh = shared.sum(-1)
        out["shift"][:, sl] = np.divide(((s - gold_scores[:, None]) * shared).sum(-1), n_sh,
                                        out=np.zeros((k_, j_)), where=n_sh > 0)
    return out


class DataNull:
    """The gender-blind null of a :class:`wgb.pipeline.propagation.Propagation`'s data measure.

    ``draws(seed, variant)``: the seed's gender-blind graphs of ``variant`` (fixed by ``seed``
    and the variant, so every run gives the same); ``mean_parts(seed, variant, w_m, w_f)``: the
    parts of their bias added, averaged over the draws, under the weights; ``distribution(variant,
    part)``: per draw, the seed mean of a part (unweighted): the null distribution of the
    observed seed mean."""

    def __init__(self, prop, *, n_draws: int = N_DRAWS, seed: int = 0) -> None:
        if n_draws < 20:
            raise ValueError(f"n_draws must be >= 20, got {n_draws}")
        self.prop, self.n_draws, self.seed = prop, n_draws, seed
        self._draws: dict[tuple, list[np.ndarray]] = {}
        self._means: dict[tuple, dict[str, np.ndarray]] = {}

    def draws(self, seed: int, variant: str) -> list[np.ndarray]:
        key = (seed, variant)
        if key not in self._draws:
            st = self.prop.study
            rng = np.random.default_rng([self.seed, int(seed), st.variants.index(variant)])
            h = st.holds[seed]
            self._draws[key] = [blind_holds(h["gold"], h[variant], rng) for _ in range(self.n_draws)]
        return self._draws[key]

    def parts(self, seed: int, variant: str, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        """Part -> (K, n_draws): the parts of every null graph of the seed under the weights."""
        st = self.prop.study
        return null_parts(self.prop.phi(seed, "gold", w_male, w_female), st.holds[seed]["gold"].any(0),
                          self.draws(seed, variant), st.male, st.female, w_male, w_female)

    def mean_parts(self, seed: int, variant: str, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        """Part -> (K,): the mean over the null graphs (cached per seed, variant and K)."""
        key = (seed, variant, w_male.shape[0])
        if key not in self._means:
            self._means[key] = {p: v.mean(1) for p, v in self.parts(seed, variant, w_male, w_female).items()}
        return self._means[key]

    def draw_parts(self, seed: int, variant: str) -> dict[str, np.ndarray]:
        """Part -> (n_draws,): each null graph's part, unweighted."""
        key = (seed, variant, "draws")
        if key not in self._means:
            st = self.prop.study
            one = np.ones((1, int(st.male.sum()))), np.ones((1, int(st.female.sum())))
            self._means[key] = {p: v[0] for p, v in self.parts(seed, variant, *one).items()}
        return self._means[key]

    def distribution(self, variant: str, part: str, *, minus: str | None = None) -> np.ndarray:
        """(n_draws,) seed means of ``part`` over the null graphs (draw j of every seed together);
        with ``minus``, of the difference ``variant - minus`` draw by draw."""
        seeds = self.prop.study.seeds
        d = np.array([self.draw_parts(s, variant)[part] for s in seeds])
        if minus:
            d = d - np.array([self.draw_parts(s, minus)[part] for s in seeds])
        return d.mean(0)

    def excess(self, variant: str, part: str = "added", *, minus: str | None = None) -> Estimate:
        """Observed part minus the null's mean (``minus``: the paired difference of the two
        excesses, ``variant - minus``), seed x entity bootstrap of the run's design."""
        p = self.prop

        def one(v, s, wm, wf):
            return p.data_parts(s, v, wm, wf)[part] - self.mean_parts(s, v, wm, wf)[part]

        def per_seed(s, wm, wf):
            return one(variant, s, wm, wf) - (one(minus, s, wm, wf) if minus else 0.0)

        return p.design.estimate_weighted(per_seed, p.study.seeds)

    def summary(self, variant: str, *, confidence: float = 0.95) -> dict[str, dict]:
        """Per part: observed seed mean, the null's mean and interval, and the share of null draws
        at least as large as the observed (one-sided permutation p-value, +1 corrected)."""
        st = self.prop.study
        one = np.ones((1, int(st.male.sum()))), np.ones((1, int(st.female.sum())))
        out = {}
        a = (1 - confidence) / 2
        for part in DATA_PARTS:
            obs = float(np.mean([self.prop.data_parts(s, variant, *one)[part][0] for s in st.seeds]))
            d = self.distribution(variant, part)
            out[part] = {"observed": obs, "null_mean": float(d.mean()),
                         "null_ci": [float(x) for x in np.quantile(d, [a, 1 - a])],
                         "p_permutation": float((1 + np.sum(d >= obs)) / (1 + d.size)), "n_draws": int(d.size)}
        return out


# --------------------------------------------------------------------------------------------
# Facts per person
# --------------------------------------------------------------------------------------------
def facts_gap(counts: np.ndarray, male: np.ndarray, female: np.ndarray, w_male: np.ndarray,
              w_female: np.ndarray, relations: Sequence[int]) -> dict[str, np.ndarray]:
    """From one seed's per-person graph counts (E, R, 3) (tp, fp, fn against the gold graph)
    under entity weights (K, E_g): per relation index (and ``"all"``, their sum), the gold and
    extracted men - women difference in facts per person, the gender-blind expectation
    ``(1 - q) x gold`` and ``widening`` = extracted - expectation; each (K,)."""
    rel = list(relations)

    def totals(mask, w):   # (K, R') weighted gold facts, extracted facts, missed facts, per person
        c = counts[mask][:, rel].astype(float)                                  # (E_g, R', 3)
        cols = np.concatenate([c[..., 0] + c[..., 2], c[..., 0] + c[..., 1], c[..., 2]], axis=1)
        t = w @ cols                                                            # (K, 3R')
        return t[:, :len(rel)], t[:, len(rel):2 * len(rel)], t[:, 2 * len(rel):], w.sum(1)[:, None]

    gm, xm, fm, nm = totals(male, w_male)
    gf, xf, ff, nf = totals(female, w_female)
    q = np.divide(fm + ff, gm + gf, out=np.zeros_like(gm), where=(gm + gf) > 0)
    r = {"gold": gm / nm - gf / nf, "extracted": xm / nm - xf / nf}
    r["blind"] = (1 - q) * r["gold"]
    r["widening"] = r["extracted"] - r["blind"]
    out: dict[str, np.ndarray] = {}
    for k, v in r.items():
        for i, j in enumerate(rel):
            out[f"{k}:{j}"] = v[:, i]
        out[f"{k}:all"] = v.sum(1)
    return out


# --------------------------------------------------------------------------------------------
# The retraining control of the embedding measures
# --------------------------------------------------------------------------------------------
def item_contributions(gold: Mapping[str, float], ext: Mapping[str, float], universe: Sequence[str],
                       other_gold: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Per item of ``universe``: its contribution to each part of the bias added (``added`` =
    shared + error_born - missed). With ``other_gold`` (the gold graph's scores at another seed),
    the control's contributions: shared items ``|other| - |gold|``, the other parts 0."""
    n = len(universe)
    out = {p: np.zeros(n) for p in DATA_PARTS}
    for i, o in enumerate(universe):
        g, x = gold.get(o), ext.get(o)
        if g is not None and x is not None:
            if other_gold is not None:
                y = other_gold.get(o)
                out["shared"][i] = abs(y) - abs(g) if y is not None else 0.0
            else:
                out["shared"][i] = abs(x) - abs(g)
        elif x is not None and other_gold is None:
            out["error_born"][i] = abs(x)
        elif g is not None and other_gold is None:
            out["missed"][i] = abs(g)
    out["added"] = out["shared"] + out["error_born"] - out["missed"]
    return out


def embedding_excess(scores: Callable[[int, str], Mapping[str, float] | None], seeds: Sequence[int],
                     variant: str, *, minus: str | None = None, n_resamples: int = 2000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, dict]:
    """Per part: observed (seed mean), control (mean over ordered seed pairs) and the estimate of
    observed - control with its seed x item bootstrap (``minus``: of the difference of the two
    extractors' observed parts, ``variant - minus``, against the difference of their controls).
    ``scores(seed, graph)``: item -> score, or None when not measured."""
    ok = [s for s in seeds if scores(s, "gold") is not None and scores(s, variant) is not None
          and (minus is None or scores(s, minus) is not None)]
    universe = sorted({o for s in ok for g in ("gold", variant, *([minus] if minus else []))
                       for o in scores(s, g)})
    S, n = len(ok), len(universe)
    obs = {p: np.zeros((S, n)) for p in DATA_PARTS}
    ctrl = {p: np.zeros((S, S, n)) for p in DATA_PARTS}
    for a, s in enumerate(ok):
        gold = scores(s, "gold")
        for v, sign in ((variant, 1.0), *(((minus, -1.0),) if minus else ())):
            ext = scores(s, v)
            for p, c in item_contributions(gold, ext, universe).items():
                obs[p][a] += sign * c
            for b, t in enumerate(ok):
                if t != s:
                    for p, c in item_contributions(gold, ext, universe, scores(t, "gold")).items():
                        ctrl[p][a, b] += sign * c
    rng = np.random.default_rng([seed, S, n])
    draws = rng.integers(0, S, size=(n_resamples, S)) if S else np.zeros((n_resamples, 0), dtype=int)
    w_items = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float) if n else np.zeros((n_resamples, 0))
    k = math.sqrt(S / (S - 1)) if S > 1 else 1.0
    out = {}
    for p in DATA_PARTS:
        out[p] = _pair_estimate(obs[p], ctrl[p], draws, w_items, k, ok, confidence)
    return out


def _pair_estimate(obs: np.ndarray, ctrl: np.ndarray, draws: np.ndarray, w_items: np.ndarray, k: float,
                   seeds: list[int], confidence: float) -> dict:
    """obs (S, I), ctrl (S, S, I): the :class:`Estimate` of observed - control with replicates
    over seeds and items, seeds only and items only (the seed draw's spread scaled by
    sqrt(S / (S - 1)), as in :mod:`relext.design`)."""
    S = obs.shape[0]
    nan2 = [float("nan")] * 2
    if S == 0:
        e = Estimate(value=float("nan"), ci=nan2, ci_seed=nan2, ci_entity=nan2, se=float("nan"),
                     se_seed=float("nan"), se_entity=float("nan"), p_value=1.0, n_seeds=0, seeds=[],
                     confidence=confidence, degenerate="no seed measured it")
        return {"observed": float("nan"), "control": float("nan"), "control_ci": nan2, "estimate": e}
    off = ~np.eye(S, dtype=bool)

    def under(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return w @ obs.T, np.einsum("bi,sti->bst", w, ctrl)                 # (B, S), (B, S, S)

    def all_seeds(o: np.ndarray, c: np.ndarray) -> np.ndarray:
        pairs = (c * off).sum((1, 2)) / (S * (S - 1)) if S > 1 else np.zeros(len(o))
        return o.mean(1) - pairs

    def drawn(o: np.ndarray, c: np.ndarray) -> np.ndarray:
        b = np.arange(len(o))[:, None]
        od = o[b, draws].mean(1)
        cd = c[b[:, :, None], draws[:, :, None], draws[:, None, :]]          # (B, S, S)
        valid = off[None] & (draws[:, :, None] != draws[:, None, :])
        n = valid.sum((1, 2))
        return od - np.divide((cd * valid).sum((1, 2)), n, out=np.zeros(len(n)), where=n > 0)

    ones = np.ones((1, obs.shape[1]))
    o1, c1 = under(ones)
    point = float(all_seeds(o1, c1)[0])
    ow, cw = under(w_items)
    items = all_seeds(ow, cw)
    reps = {"combined": items + k * (drawn(ow, cw) - items),
            "seed": point + k * (drawn(np.broadcast_to(o1, ow.shape), np.broadcast_to(c1, cw.shape)) - point),
            "item": items}
    a = (1 - confidence) / 2

    def ci(r):
        return [float(x) for x in np.quantile(r, [a, 1 - a])]

    degenerate = None
    if S < MIN_SEEDS:
        degenerate = f"fewer than {MIN_SEEDS} seeds: seed variance not estimable"
    elif ci(reps["combined"])[1] - ci(reps["combined"])[0] <= 1e-12:
        degenerate = "zero-width interval"
    e = Estimate(value=point, ci=ci(reps["combined"]), ci_seed=ci(reps["seed"]), ci_entity=ci(reps["item"]),
                 se=float(reps["combined"].std(ddof=1)), se_seed=float(reps["seed"].std(ddof=1)),
                 se_entity=float(reps["item"].std(ddof=1)),
                 p_value=1.0 if degenerate else bootstrap_p_value(reps["combined"]), n_seeds=S, seeds=list(seeds),
                 confidence=confidence, degenerate=degenerate, replicates=reps["combined"])
    pairs = np.array([c1[0, x, y] for x in range(S) for y in range(S) if x != y])
    # the control of the total is 0 up to rounding (every pair both ways): no "-0.0000" in a report
    return {"observed": float(o1[0].mean()), "control": float(round(pairs.mean(), 12)) + 0.0 if pairs.size else 0.0,
            "control_ci": ci(pairs) if pairs.size else nan2, "estimate": e}
