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
N_DRAWS = 200
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


def sparse_data_scores(holds: np.ndarray, male: np.ndarray, female: np.ndarray, w_male: np.ndarray,
                       w_female: np.ndarray) -> np.ndarray:
    """:func:`wgb.pipeline.propagation.data_scores` through sparse products (cost: weights x
    holdings, not weights x persons x items): (K, I)."""
    from scipy import sparse

    def side(h, w):
        held = sparse.csr_matrix(h.astype(float))
        n = w @ h.any(1).astype(float)                                  # (K,)
        c = np.asarray((held.T @ w.T).T)                                 # (K, I)
        return np.divide(c, n[:, None], out=np.zeros_like(c), where=n[:, None] > 0)

    return side(holds[male], w_male) - side(holds[female], w_female)


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

    def parts_of(self, seed: int, holds: np.ndarray, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        from wgb.pipeline.propagation import decompose

        st = self.prop.study
        gold = self.prop.phi(seed, "gold", w_male, w_female)
        s = sparse_data_scores(holds, st.male, st.female, w_male, w_female)
        return decompose(gold, s, st.holds[seed]["gold"].any(0), holds.any(0))

    def mean_parts(self, seed: int, variant: str, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        key = (seed, variant, w_male.shape[0])
        if key not in self._means:
            acc = {p: np.zeros(w_male.shape[0]) for p in DATA_PARTS}
            for h in self.draws(seed, variant):
                parts = self.parts_of(seed, h, w_male, w_female)
                for p in DATA_PARTS:
                    acc[p] += parts[p]
            self._means[key] = {p: v / self.n_draws for p, v in acc.items()}
        return self._means[key]

    def draw_parts(self, seed: int, variant: str) -> dict[str, np.ndarray]:
        """Per part, its value on each null graph of the seed (unweighted): (n_draws,)."""
        key = (seed, variant, "draws")
        if key not in self._means:
            st = self.prop.study
            one = np.ones((1, int(st.male.sum()))), np.ones((1, int(st.female.sum())))
            rows = [self.parts_of(seed, h, *one) for h in self.draws(seed, variant)]
            self._means[key] = {p: np.array([r[p][0] for r in rows]) for p in DATA_PARTS}
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
    out: dict[str, np.ndarray] = {}
    nm, nf = w_male.sum(1), w_female.sum(1)
    total = {k: 0.0 for k in ("gold", "extracted", "blind", "widening")}
    for j in relations:
        cm, cf = counts[male][:, j].astype(float), counts[female][:, j].astype(float)   # (E_g, 3)
        gm, gf = w_male @ (cm[:, 0] + cm[:, 2]), w_female @ (cf[:, 0] + cf[:, 2])
        xm, xf = w_male @ (cm[:, 0] + cm[:, 1]), w_female @ (cf[:, 0] + cf[:, 1])
        fn = w_male @ cm[:, 2] + w_female @ cf[:, 2]
        q = np.divide(fn, gm + gf, out=np.zeros_like(fn), where=(gm + gf) > 0)
        r = {"gold": gm / nm - gf / nf, "extracted": xm / nm - xf / nf}
        r["blind"] = (1 - q) * r["gold"]
        r["widening"] = r["extracted"] - r["blind"]
        for k, v in r.items():
            out[f"{k}:{j}"] = v
            total[k] = total[k] + v
    out.update({f"{k}:all": np.asarray(v) for k, v in total.items()})
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
                 confidence=confidence, degenerate=degenerate)
    pairs = np.array([c1[0, x, y] for x in range(S) for y in range(S) if x != y])
    return {"observed": float(o1[0].mean()), "control": float(pairs.mean()) if pairs.size else 0.0,
            "control_ci": ci(pairs) if pairs.size else nan2, "estimate": e}
