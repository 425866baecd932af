"""What each claim of a ``wgb run`` is tested against: what a *gender-blind* extractor would give
on each person's own candidate pairs (graph questions: facts per person, the graph's bias mass),
and how much retraining alone moves an embedding measure (embedding questions).

**Exposure.** An extractor can only err where it has an opportunity: it misses a gold fact of a
*positive* candidate pair, and it invents a fact from a *negative* pair (a (person, tail) pair with
no gold relation) or from a pair of another relation. Persons differ in those opportunities (on
the benchmark women's articles carry several times more negative pairs than men's), so a
difference in errors per person can be a difference in exposure, not in the errors' dependence on
gender. Both graph nulls therefore keep every person's candidate pairs (:class:`Pairs
<wgb.pipeline.pairs.Pairs>`: their number, kind and tails) and re-place the errors by
per-pair rates that ignore gender; the claims test **errors gendered beyond exposure**.

**Facts per person** (:class:`FactsNull`). A pair's *kind* is its set of gold relations (negative,
or one relation). Per seed and extractor, the rate ``rate[z, t, r]`` at which a pair of kind t
becomes a fact of relation r (a miss when r is the pair's gold relation and it is not extracted, a
spurious fact otherwise) is pooled over both genders within each stratum z of persons (the
population: "test" / "distant" under cross-fitting, whose gender mix differs; one stratum under the
test protocol). A person's expected facts of r under the null are ``sum_t n[e, t] * rate[z(e), t,
r]`` with ``n[e, t]`` their own pairs of kind t. The statistic (``widening``) is men's minus
women's mean extracted facts per person minus the same difference of the null's expectation,
summed over relations (+ = the errors move the difference towards men beyond exposure); it splits
into spurious facts (observed - expected) minus missed facts (observed - expected). In each
bootstrap replicate the rates are recomputed from the replicate's persons.

**The graph's bias mass** (:class:`DataNull`). Bias mass is a sum of ``|score|`` over items, so
every extraction error adds mass, whatever its relation to the person's gender. The null keeps the
gold graph and re-places the extracted graph's hypernym errors within *cells* of candidate pairs:
a cell is the pairs of one stratum, kind and tail (item). In a cell of gold hypernym pairs the
extracted graph's number of misses is placed again uniformly among the cell's pairs; in a cell of
other pairs (negative, or of another relation) with tail o, its number of spurious holdings of o
(:func:`exposure_holds`). So every per-item error count is the observed one, each error falls on a
person who has the opportunity for it (a spurious holding of o only on a person with a candidate
pair to o), with the same probability for every such pair whatever the person's gender. Each
seed's extracted graph gets ``n_draws`` such graphs; their bias added (module
:mod:`wgb.pipeline.propagation`) under any entity weights gives ``observed - null mean``,
estimated with the seed x entity bootstrap of :mod:`wgbstats.design` (persons resampled within
gender x fold strata), paired with every other estimate of the run.

**Retraining control of the embedding measures** (:func:`embedding_excess`). Embeddings are trained
once per seed on each graph; the gold graph is embedded at every seed, so a pair of seeds (s, s')
shows how much ``|score|`` moves with no change in the data. A part's control is that part computed
with the gold embeddings of seed s' in place of the extracted graph's, over the same items (shared
items: ``|gold_s'| - |gold_s|``; error-born and missed items have no counterpart with unchanged
data: 0). The estimate is the seed mean of the observed part minus the mean over ordered seed pairs
of the control, with a bootstrap that draws seeds *and* items (multinomial item weights), paired
between the observed part and its control; its test is studentized
(:func:`wgbstats.design.estimate_from_replicates`).
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from wgbstats.design import Estimate, estimate_from_replicates

#: Gender-blind graphs drawn per seed and extracted graph.
N_DRAWS = 100
DATA_PARTS = ("added", "shared", "error_born", "missed")
#: The quantities of :meth:`FactsNull.gap` per relation (and summed: ``<key>:all``).
FACTS_KEYS = ("gold", "extracted", "blind", "widening", "spurious", "missed")


def strata_of(study) -> np.ndarray:
    """(E,) int: each person's stratum for the nulls' pooled rates (their population)."""
    return np.unique(np.asarray(study.counts.population), return_inverse=True)[1].reshape(-1)


def _require_pairs(study):
    if study.pairs is None:
        raise ValueError("the exposure-matched nulls need the study's candidate pairs (build_study(..., "
                         "candidates=candidate_pairs(dataset, splits)) or study_from_pairs)")
    return study.pairs


# --------------------------------------------------------------------------------------------
# Facts per person
# --------------------------------------------------------------------------------------------
class FactsNull:
    """Facts per person against the exposure-matched gender-blind null (module docstring) of one
    :class:`wgb.pipeline.propagation.Study`: :meth:`gap` gives every quantity of
    :data:`FACTS_KEYS` per relation under any entity weights."""

    def __init__(self, study, relations: Sequence[int]) -> None:
        pairs = _require_pairs(study)
        self.study, self.pairs, self.rel = study, pairs, list(relations)
        kind, table = pairs.kinds()
        z = strata_of(study)
        n_z, n_t = int(z.max()) + 1 if z.size else 1, len(table)
        self.n_cells = n_z * n_t
        self.cell = z[pairs.entity] * n_t + kind                                      # (P,)
        cell_gold = np.tile(table, (n_z, 1))[:, self.rel]                             # (C, R')
        self.gold_of_cell = cell_gold.astype(float)
        self.other = ~cell_gold                                                       # r not the cell's gold
        n = np.zeros((len(study.counts.entity_ids), self.n_cells))
        np.add.at(n, (pairs.entity, self.cell), 1.0)
        self.n = {"male": n[study.male], "female": n[study.female]}
        self._x: dict[tuple, dict[str, np.ndarray]] = {}

    def _extracted(self, seed: int, variant: str) -> dict[str, np.ndarray]:
        """gender -> (E_g, C * R'): each person's pairs of each cell that became a fact of r."""
        key = (seed, variant)
        if key not in self._x:
            x = self.pairs.extracted[seed][variant][:, self.rel].astype(float)        # (P, R')
            out = np.zeros((len(self.study.counts.entity_ids), self.n_cells, len(self.rel)))
            np.add.at(out, (self.pairs.entity, self.cell), x)
            flat = out.reshape(out.shape[0], -1)
            self._x[key] = {"male": flat[self.study.male], "female": flat[self.study.female]}
        return self._x[key]

    def gap(self, seed: int, variant: str, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        """Per relation index (``<key>:<j>``) and summed (``<key>:all``), each (K,) for (K, E_g)
        weights: ``gold`` and ``extracted`` (men - women mean facts per person), ``blind`` (the
        null's expected extracted difference), ``widening`` = extracted - blind, ``spurious`` and
        ``missed`` (observed - expected difference of spurious and of missed facts; widening =
        spurious - missed)."""
        x = self._extracted(seed, variant)
        c, r_ = self.n_cells, len(self.rel)
        tot = {}
        for g, w in (("male", w_male), ("female", w_female)):
            a = w @ self.n[g]                                                          # (K, C)
            b = (w @ x[g]).reshape(len(w), c, r_)                                      # (K, C, R')
            tot[g] = (a, b, w.sum(1)[:, None])
        a_all = tot["male"][0] + tot["female"][0]
        b_all = tot["male"][1] + tot["female"][1]
        rate = np.divide(b_all, a_all[..., None], out=np.zeros_like(b_all), where=a_all[..., None] > 0)
        means = {}
        for g, (a, b, n) in tot.items():
            expect = a[..., None] * rate                                               # (K, C, R')
            opp = a[..., None] * self.gold_of_cell                                     # gold facts
            means[g] = {
                "gold": opp.sum(1) / n, "extracted": b.sum(1) / n, "blind": expect.sum(1) / n,
                "spurious": ((b - expect) * self.other).sum(1) / n,
                "missed": (((opp - b) - (opp - expect)) * ~self.other).sum(1) / n,
            }
        r = {k: means["male"][k] - means["female"][k] for k in means["male"]}
        r["widening"] = r["extracted"] - r["blind"]
        out: dict[str, np.ndarray] = {}
        for k in FACTS_KEYS:
            for i, j in enumerate(self.rel):
                out[f"{k}:{j}"] = r[k][:, i]
            out[f"{k}:all"] = r[k].sum(1)
        return out


def exposure(study, variant: str, relations: Sequence[int]) -> dict[str, dict[str, float]]:
    """The opportunities and error rates of ``variant`` per gender (seed means): candidate pairs
    per person (negative, positive), facts per negative pair (its spurious rate), facts of
    another relation per positive pair, and the share of gold facts missed."""
    pairs = _require_pairs(study)
    rel = list(relations)
    neg = ~pairs.gold[:, rel].any(1)
    gold = pairs.gold[:, rel]
    out: dict[str, dict[str, float]] = {}
    for g, mask in (("male", study.male), ("female", study.female)):
        mine = mask[pairs.entity]
        persons = max(int(mask.sum()), 1)
        rows = []
        for s in study.seeds:
            x = pairs.extracted[s][variant][:, rel]
            facts = x.sum(1)
            rows.append([
                float((mine & neg).sum()) / persons, float((mine & ~neg).sum()) / persons,
                float(facts[mine & neg].sum()) / max(int((mine & neg).sum()), 1),
                float((x & ~gold)[mine & ~neg].sum()) / max(int((mine & ~neg).sum()), 1),
                float((gold & ~x)[mine].sum()) / max(int(gold[mine].sum()), 1),
            ])
        m = np.mean(rows, axis=0) if rows else np.full(5, float("nan"))
        out[g] = dict(zip(("negative_pairs", "positive_pairs", "facts_per_negative_pair",
                           "wrong_relation_per_positive_pair", "miss_rate"), (float(v) for v in m)))
    return out


# --------------------------------------------------------------------------------------------
# The exposure-matched null of the data measure
# --------------------------------------------------------------------------------------------
def exposure_cells(pairs, strata: np.ndarray, items: Sequence[str], relation: int, seed: int,
                   variant: str) -> dict[str, np.ndarray]:
    """The candidate pairs that can carry a hypernym error of ``variant``'s graph at ``seed``
    (gold hypernym pairs, and other pairs whose tail is an item), each with its person, item
    column, whether it is a gold pair, its cell (stratum x kind x item) and, per cell, the
    observed number of errors (misses in a gold cell, spurious holdings in another)."""
    kind, _ = pairs.kinds()
    col_of = {o: j for j, o in enumerate(items)}
    col = np.array([col_of.get(t, -1) for t in pairs.tail.tolist()], dtype=np.int64)
    gold = pairs.gold[:, relation]
    if (col[gold] < 0).any():
        raise ValueError("a gold hypernym pair whose tail is not among the seed's items")
    use = gold | (col >= 0)
    x = pairs.extracted[seed][variant][:, relation]
    key = np.stack([strata[pairs.entity], kind, col], axis=1)[use]
    _, cell = np.unique(key, axis=0, return_inverse=True)
    cell = np.asarray(cell).reshape(-1)
    error = np.where(gold, ~x, x)[use]
    return {"entity": pairs.entity[use], "col": col[use], "gold": gold[use], "cell": cell,
            "errors": np.bincount(cell, weights=error.astype(float)).astype(np.int64) if cell.size
            else np.zeros(0, dtype=np.int64)}


def exposure_holds(gold: np.ndarray, cells: Mapping[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """One gender-blind extracted graph's (E, I) holdings: the gold holdings, then in every cell
    of :func:`exposure_cells` as many errors as observed, placed on pairs of the cell drawn
    uniformly without replacement (a gold pair drawn loses its holding, another pair drawn
    gives its person a holding of its tail)."""
    out = np.asarray(gold, dtype=bool).copy()
    cell = cells["cell"]
    if not cell.size:
        return out
    order = np.lexsort((rng.random(cell.size), cell))
    in_order = cell[order]
    start = np.searchsorted(in_order, in_order, side="left")
    chosen = np.empty(cell.size, dtype=bool)
    chosen[order] = (np.arange(cell.size) - start) < cells["errors"][in_order]
    lose, gain = chosen & cells["gold"], chosen & ~cells["gold"]
    out[cells["entity"][lose], cells["col"][lose]] = False
    out[cells["entity"][gain], cells["col"][gain]] = True
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
            # (E_g, J*I) sparse: holdings are few, a dense float copy of every draw would not be
            h = sparse.hstack([sparse.csr_matrix(d[mask], dtype=float) for d in block], format="csr")
            n = w @ np.stack([d[mask].any(1) for d in block], axis=1).astype(float)  # (K, J)
            c = np.asarray((h.T @ w.T).T).reshape(k_, j_, n_items)
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


class _Draws(Sequence):
    """A :class:`DataNull`'s graphs of one seed and extractor, as a sequence made on demand (a
    hundred (E, I) holdings of every seed and extractor kept at once would not fit)."""

    def __init__(self, null: "DataNull", seed: int, variant: str) -> None:
        self.null, self.seed, self.variant = null, int(seed), variant
        self.index = null.prop.study.variants.index(variant)

    def __len__(self) -> int:
        return self.null.n_draws

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        j %= len(self)
        rng = np.random.default_rng([self.null.seed, self.seed, self.index, j])
        return self.null.one_draw(self.seed, self.variant, rng)


class DataNull:
    """The exposure-matched gender-blind null of a :class:`wgb.pipeline.propagation.Propagation`'s
    data measure (module docstring).

    ``draws(seed, variant)``: the seed's gender-blind graphs of ``variant`` (fixed by ``seed``,
    the variant and the draw's index, so every run and every call gives the same; drawn when
    read, not kept); ``mean_parts(seed, variant, w_m, w_f)``: the parts of their bias added, averaged over
    the draws, under the weights; ``distribution(variant, part)``: per draw, the seed mean of a
    part (unweighted): the null distribution of the observed seed mean."""

    def __init__(self, prop, *, n_draws: int = N_DRAWS, seed: int = 0) -> None:
        from wgb.pipeline.config import TARGET_RELATION
        from wikigenderbias.schema import RELATIONS

        if n_draws < 20:
            raise ValueError(f"n_draws must be >= 20, got {n_draws}")
        _require_pairs(prop.study)
        self.prop, self.n_draws, self.seed = prop, n_draws, seed
        self.relation = RELATIONS.index(TARGET_RELATION)
        self._strata = strata_of(prop.study)
        self._cells: dict[tuple, dict[str, np.ndarray]] = {}
        self._means: dict[tuple, dict[str, np.ndarray]] = {}

    def cells(self, seed: int, variant: str) -> dict[str, np.ndarray]:
        key = (seed, variant)
        if key not in self._cells:
            st = self.prop.study
            self._cells[key] = exposure_cells(st.pairs, self._strata, st.items[seed], self.relation, seed, variant)
        return self._cells[key]

    def one_draw(self, seed: int, variant: str, rng: np.random.Generator) -> np.ndarray:
        """One gender-blind graph (:func:`exposure_holds`)."""
        return exposure_holds(self.prop.study.holds[seed]["gold"], self.cells(seed, variant), rng)

    def draws(self, seed: int, variant: str) -> "_Draws":
        """The null graphs of one seed and extractor, drawn when read (draw j from its own random
        stream: the same graphs whichever of them is read, and in whatever order)."""
        return _Draws(self, seed, variant)

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
    sqrt(S / (S - 1)), as in :mod:`wgbstats.design`), through
    :func:`wgbstats.design.estimate_from_replicates` (items in the place of entities)."""
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

    # studentized against the design's seed reference, as every other estimate; the items' part is
    # estimated from that many items (as the persons' part from the persons)
    e = estimate_from_replicates(point, reps, list(seeds), confidence, df_entity=float(max(obs.shape[1] - 1, 1)))
    pairs = np.array([c1[0, x, y] for x in range(S) for y in range(S) if x != y])
    # the control of the total is 0 up to rounding (every pair both ways): no "-0.0000" in a report
    return {"observed": float(o1[0].mean()), "control": float(round(pairs.mean(), 12)) + 0.0 if pairs.size else 0.0,
            "control_ci": ci(pairs) if pairs.size else nan2, "estimate": e}
