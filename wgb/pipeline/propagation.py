"""Propagation of gender bias from extraction into the graph and its embeddings, as measured
quantities pooled over seeds and test entities, with verdicts.

**Units.** Every seed of a ``wgb run`` is evaluated on the same held-out (test) articles; one
article is one *test entity* (its head person). Per seed and extractor we have

* the extraction's per-entity counts (``entity_counts.npz``, (E, R, 3): tp, fp, fn per relation);
* the graph's per-entity counts, built here from the triples: for each head and relation, tp =
  extracted triples that are gold, fp = extracted triples that are not, fn = gold triples missed.
  Their recall is the share of each gender's gold triples the graph recovered;
* per entity, the set of hypernym values (items) the person holds in each graph, from which the
  ``data`` bias of every item is recomputed under any entity weights.

The first two go into one :class:`wgbstats.design.StudyCounts` (variants ``extraction:<v>`` and
``graph:<v>``), the third through :meth:`wgbstats.design.Design.estimate_weighted`: every estimate is
the two-level (seed x test entity) bootstrap of :mod:`wgbstats.design`, paired across extractors,
between extraction and graph, and with the gold graph. Embedding measures are computed once per
seed on embeddings trained on the whole graph, so their parts here are intervals over seeds only
(Student t): resampling test entities would mean retraining the embeddings. The run's claims do not
use these raw parts alone: :mod:`wgb.pipeline.nulls` tests facts per person and the data measure
against a gender-blind extractor on each person's own candidate pairs (exposure-matched), and the
embedding measures against retraining noise (seeds x items).

**Candidate pairs.** The null needs each person's *opportunities*, the candidate pairs of
:mod:`wgb.pipeline.pairs`; :func:`build_study` joins each graph's triples to them.

**Bias mass and its decomposition.** For a measure with item scores ``s_G(o)`` on graph ``G`` (+ =
towards male), ``mass(G) = sum_o |s_G(o)|``. Bias added by extraction = ``mass(extracted) -
mass(gold)`` = ``shared`` (sum over items in both graphs of ``|s_ext| - |s_gold|``) + ``error_born``
(sum of ``|s_ext|`` over items that exist only because of extraction errors: hypernym values no
gold triple of these articles has) - ``missed`` (sum of ``|s_gold|`` over gold items the extracted
graph lost). ``shift`` = the mean of ``s_ext - s_gold`` over shared items (+ = extraction moves the
items it keeps towards male).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wgbstats.design import MIN_SEEDS, Design, Estimate
from relext.evaluation.study_counts import StudyCounts
from wgb.pipeline.config import TARGET_RELATION, TEST_SPLITS
from wgb.pipeline.pairs import Pairs, norm, pair_outcomes, pairs_of

PARTS = ("added", "shared", "error_born", "missed", "shift")
ENTITY_LEVEL = "seeds × entities"
SEED_LEVEL = "seeds only"
MIN_RESAMPLES = 2000


# --------------------------------------------------------------------------------------------
# Per-entity arrays of a study
# --------------------------------------------------------------------------------------------
def head_entities(dataset, splits: Sequence[str] = TEST_SPLITS) -> dict[str, str]:
    """Head name -> entity id (its article) over the test splits."""
    out: dict[str, str] = {}
    for split in splits:
        for row in dataset[split].select_columns(["head", "entity_id"]):
            out.setdefault(norm(row["head"]), row["entity_id"])
    return out


def _keys(triples: Sequence[Mapping]) -> set[tuple[str, str, str]]:
    return {(norm(t["head"]), t["relation"], norm(t["tail"])) for t in triples}


def graph_entity_counts(gold: Sequence[Mapping], extracted: Sequence[Mapping], entity_ids: Sequence[str],
                        head_entity: Mapping[str, str]) -> tuple[np.ndarray, int]:
    """Per test entity and relation: (tp, fp, fn) of the extracted graph against the gold graph,
    shape (E, R, 3) over ``RELATIONS`` (NA stays 0); and the number of triples whose head is no
    test entity (left out)."""
    from wikigenderbias.schema import RELATIONS

    pos = {e: i for i, e in enumerate(entity_ids)}
    rel = {r: j for j, r in enumerate(RELATIONS)}
    out = np.zeros((len(pos), len(RELATIONS), 3), dtype=np.int64)
    g, x = _keys(gold), _keys(extracted)
    unmapped = 0
    for key in g | x:
        i = pos.get(head_entity.get(key[0], ""))
        if i is None or key[1] not in rel or key[1] == RELATIONS[0]:
            unmapped += 1
            continue
        out[i, rel[key[1]], 0 if key in g and key in x else 1 if key in x else 2] += 1
    return out, unmapped


def holds_matrix(triples: Sequence[Mapping], entity_ids: Sequence[str], head_entity: Mapping[str, str],
                 items: Sequence[str], relation: str = TARGET_RELATION) -> np.ndarray:
    """(E, I) bool: test entity e holds item ``items[i]`` (a tail of ``relation``) in the graph."""
    pos = {e: i for i, e in enumerate(entity_ids)}
    col = {o: j for j, o in enumerate(items)}
    out = np.zeros((len(pos), len(col)), dtype=bool)
    for t in triples:
        if t["relation"] != relation:
            continue
        i = pos.get(head_entity.get(norm(t["head"]), ""))
        if i is not None:
            out[i, col[norm(t["tail"])]] = True
    return out


def data_scores(holds: np.ndarray, male: np.ndarray, female: np.ndarray, w_male: np.ndarray,
                w_female: np.ndarray) -> np.ndarray:
    """The ``data`` measure (equal opportunity, difference) of every item under entity weights:
    ``A_o / A - B_o / B`` with A, B the (weighted) men and women holding at least one item and
    A_o, B_o those holding item o; (K, I) for (K, E_male) and (K, E_female) weights. Holdings are
    sparse (a person holds one or two items): the products go through ``scipy.sparse``, whose cost
    is weights x holdings, not weights x persons x items."""
    from scipy import sparse

    hm, hf = holds[male].astype(float), holds[female].astype(float)
    a, b = w_male @ hm.any(1), w_female @ hf.any(1)
    ao = np.asarray((sparse.csr_matrix(hm).T @ w_male.T).T)
    bo = np.asarray((sparse.csr_matrix(hf).T @ w_female.T).T)

    def share(c, n):
        return np.divide(c, n[:, None], out=np.zeros_like(c), where=n[:, None] > 0)

    return share(ao, a) - share(bo, b)


def decompose(s_gold: np.ndarray, s_ext: np.ndarray, in_gold: np.ndarray, in_ext: np.ndarray) -> dict[str, np.ndarray]:
    """The parts of the bias added by extraction (module docstring) from item scores (..., I) and
    the items present in each graph (I,) bool; every value has shape (...)."""
    shared, born, missed = in_gold & in_ext, in_ext & ~in_gold, in_gold & ~in_ext
    ag, ae = np.abs(s_gold), np.abs(s_ext)
    out = {"shared": (ae - ag)[..., shared].sum(-1), "error_born": ae[..., born].sum(-1),
           "missed": ag[..., missed].sum(-1)}
    out["added"] = ae[..., in_ext].sum(-1) - ag[..., in_gold].sum(-1)
    d = (s_ext - s_gold)[..., shared]
    out["shift"] = d.mean(-1) if d.shape[-1] else np.zeros(d.shape[:-1])
    return out


@dataclass
class Study:
    """Everything the pooled estimates need, from the per-seed folders of one run."""

    counts: StudyCounts                            # variants "extraction:<v>" and "graph:<v>"
    variants: list[str]
    seeds: list[int]
    items: dict[int, list[str]]                    # per seed: hypernym values of all its graphs
    holds: dict[int, dict[str, np.ndarray]]        # per seed and graph ("gold", variants): (E, I)
    unmapped: dict[str, int] = field(default_factory=dict)
    #: the candidate pairs and what each graph holds for them (the exposure-matched nulls)
    pairs: Pairs | None = None

    def subset(self, population: str) -> "Study":
        """The same study restricted to the persons of one population ("test": the annotated test
        persons; "distant": the rest), for a cross-fitted run's side-by-side report."""
        keep = self.counts.population == population
        if not keep.any():
            raise ValueError(f"no person of population {population!r} in this study")
        return Study(self.counts.subset(population), list(self.variants), list(self.seeds), dict(self.items),
                     {s: {g: h[keep] for g, h in by.items()} for s, by in self.holds.items()}, dict(self.unmapped),
                     None if self.pairs is None else self.pairs.subset(keep))

    @property
    def male(self) -> np.ndarray:
        return self.counts.gender == "male"

    @property
    def female(self) -> np.ndarray:
        return self.counts.gender == "female"


def build_study(seed_dirs: Mapping[int, Path], variants: Sequence[str], head_entity: Mapping[str, str], *,
                read_triples: Callable[[Path], list[dict]] | None = None,
                candidates: Sequence[tuple[str, str, Sequence[int]]] | None = None) -> Study:
    """Read every seed's entity counts and triples (``<seed dir>/extractors/<v>``,
    ``<seed dir>/triples/<graph>.jsonl``); with ``candidates`` (:func:`wgb.pipeline.pairs.candidate_pairs` of the
    splits the run extracts) the study's :class:`Pairs` with every graph's relations per pair."""
    from wgbcore.atomicio import read_jsonl

    read = read_triples or read_jsonl
    seeds = sorted(seed_dirs)
    from wgb.pipeline.crossfit import extractor_dirs  # one run, or (crossfit) its fold runs

    runs = {(f"extraction:{v}", s): extractor_dirs(Path(seed_dirs[s]), v) for s in seeds for v in variants}
    ext = StudyCounts.from_runs(runs)
    ids = ext.entity_ids.tolist()
    counts = dict(ext.counts)
    items: dict[int, list[str]] = {}
    holds: dict[int, dict[str, np.ndarray]] = {}
    unmapped: dict[str, int] = {}
    pairs = None
    if candidates is not None:
        pairs, left = pairs_of(candidates, ids, head_entity)
        unmapped["candidate pairs of no person"] = left
    for s in seeds:
        tdir = Path(seed_dirs[s]) / "triples"
        graphs = {g: read(tdir / f"{g}.jsonl") for g in ("gold", *variants)}
        for v in variants:
            c, n = graph_entity_counts(graphs["gold"], graphs[v], ids, head_entity)
            counts.setdefault(f"graph:{v}", {})[s] = c
            unmapped[f"seed {s} / {v}"] = n
            if pairs is not None:
                x, n = pair_outcomes(pairs, graphs[v], ids, head_entity)
                pairs.extracted.setdefault(s, {})[v] = x
                unmapped[f"seed {s} / {v}: triples of no candidate pair"] = n
        universe = sorted({norm(t["tail"]) for ts in graphs.values() for t in ts if t["relation"] == TARGET_RELATION})
        items[s] = universe
        holds[s] = {g: holds_matrix(ts, ids, head_entity, universe) for g, ts in graphs.items()}
    return Study(StudyCounts(ext.entity_ids, ext.gender, counts, fold=ext.fold, population=ext.population),
                 list(variants), seeds, items, holds,
                 {k: v for k, v in unmapped.items() if v}, pairs)


def study_from_pairs(entity_ids: Sequence[str], gender: Sequence[str], pairs: Pairs, variants: Sequence[str], *,
                     fold: np.ndarray | None = None, population: np.ndarray | None = None,
                     relation: str = TARGET_RELATION) -> Study:
    """The :class:`Study` whose graphs are those of ``pairs``: the gold graph holds each pair's
    gold relations, an extracted graph ``pairs.extracted``; per-person counts (tp, fp, fn) per
    relation (the same for extraction and graph: one triple per bag), hypernym items and
    holdings, exactly as :func:`build_study` builds them from triples (simulations, tests)."""
    from wikigenderbias.schema import RELATIONS

    e_ = len(entity_ids)
    seeds = sorted(pairs.extracted)
    j = RELATIONS.index(relation)

    def per_person(x: np.ndarray) -> np.ndarray:                              # (P, R) -> (E, R)
        out = np.zeros((e_, x.shape[1]), dtype=np.int64)
        np.add.at(out, pairs.entity, x.astype(np.int64))
        return out

    gold = pairs.gold.copy()
    gold[:, 0] = False
    counts: dict[str, dict[int, np.ndarray]] = {}
    items: dict[int, list[str]] = {}
    holds: dict[int, dict[str, np.ndarray]] = {}
    for s in seeds:
        for v in variants:
            x = pairs.extracted[s][v]
            c = np.stack([per_person(gold & x), per_person(~gold & x), per_person(gold & ~x)], axis=-1)
            counts.setdefault(f"extraction:{v}", {})[s] = c
            counts.setdefault(f"graph:{v}", {})[s] = c.copy()
        graphs = {"gold": gold[:, j], **{v: pairs.extracted[s][v][:, j] for v in variants}}
        universe = sorted({t for h in graphs.values() for t in pairs.tail[h].tolist()})
        col = {o: i for i, o in enumerate(universe)}
        cols = np.array([col.get(t, -1) for t in pairs.tail.tolist()], dtype=np.int64)
        items[s] = universe
        holds[s] = {}
        for g, h in graphs.items():
            m = np.zeros((e_, len(universe)), dtype=bool)
            m[pairs.entity[h], cols[h]] = True
            holds[s][g] = m
    return Study(StudyCounts(np.asarray(entity_ids), np.asarray(gender), counts, fold=fold, population=population),
                 list(variants), seeds, items, holds, {}, pairs)


# --------------------------------------------------------------------------------------------
# Estimates
# --------------------------------------------------------------------------------------------
def seed_level(values: Mapping[int, float], confidence: float = 0.95) -> Estimate:
    """Mean over seeds with a Student-t interval (no entity resampling): for statistics of
    embeddings, which are trained once per seed. Seeds whose value is not finite are left out."""
    from scipy import stats

    seeds = sorted(s for s, v in values.items() if v is not None and math.isfinite(v))
    x = np.array([values[s] for s in seeds], dtype=float)
    n = len(x)
    nan = [float("nan")] * 2
    if n == 0:
        return Estimate(float("nan"), nan, nan, nan, float("nan"), float("nan"), 0.0, 1.0, 0, [], confidence,
                        "no seed measured it")
    mean = float(x.mean())
    se = float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    ci, p, degenerate = nan, 1.0, None
    if n > 1 and se > 0:
        t = float(stats.t.ppf(1 - (1 - confidence) / 2, n - 1))
        ci = [mean - t * se, mean + t * se]
        p = float(2 * stats.t.sf(abs(mean) / se, n - 1))
    if n < MIN_SEEDS:
        degenerate = f"fewer than {MIN_SEEDS} seeds: seed variance not estimable"
    elif not se > 0:
        degenerate = "zero-width interval"
    return Estimate(value=mean, ci=ci, ci_seed=ci, ci_entity=nan, se=se, se_seed=se, se_entity=0.0,
                    p_value=1.0 if degenerate else p, n_seeds=n, seeds=seeds, confidence=confidence,
                    degenerate=degenerate, df=n - 1 if n > 1 else None)


def as_row(e: Estimate, over: str) -> dict[str, Any]:
    return {"value": e.value, "ci": e.ci, "ci_seed": e.ci_seed, "ci_entity": e.ci_entity, "se": e.se,
            "p_value": e.p_value, "n_seeds": e.n_seeds, "seeds": e.seeds, "over": over, "degenerate": e.degenerate}


def _mean_abs(m: Mapping[str, np.ndarray], metric: str) -> np.ndarray:
    from wikigenderbias.schema import POSITIVE_RELATIONS

    return np.mean([np.abs(m[f"{metric}:{r}"]) for r in POSITIVE_RELATIONS], axis=0)


class Propagation:
    """The pooled estimates of one run (see the module docstring)."""

    def __init__(self, study: Study, bias: Mapping[int, Mapping[str, list]], *, measures: Sequence[str],
                 n_resamples: int = 1000, bootstrap_seed: int = 0, confidence: float = 0.95,
                 min_resamples: int = MIN_RESAMPLES) -> None:
        from kge.report import ITEM_MEASURES

        self.study, self.bias = study, bias
        # at least 2000 replicates: the smallest bootstrap p-value (2 / (B + 1)) must survive Holm
        # across a dozen claims
        # (``min_resamples``: lower only for simulations that repeat a whole study many times)
        self.design = Design(study.counts, n_resamples=max(min_resamples, n_resamples), seed=bootstrap_seed,
                             confidence=confidence)
        self.confidence = confidence
        #: embedding measures with one score per hypernym value
        self.embedding_measures = [m for m in measures if m != "data" and m in ITEM_MEASURES]
        self._phi: dict[tuple, np.ndarray] = {}

    # ------------------------------------------------------------------ graph (data measure)
    def phi(self, seed: int, graph: str, w_male: np.ndarray, w_female: np.ndarray) -> np.ndarray:
        key = (seed, graph, w_male.shape[0])
        if key not in self._phi:
            st = self.study
            self._phi[key] = data_scores(st.holds[seed][graph], st.male, st.female, w_male, w_female)
        return self._phi[key]

    def data_parts(self, seed: int, variant: str, w_male: np.ndarray, w_female: np.ndarray) -> dict[str, np.ndarray]:
        h = self.study.holds[seed]
        return decompose(self.phi(seed, "gold", w_male, w_female), self.phi(seed, variant, w_male, w_female),
                         h["gold"].any(0), h[variant].any(0))

    def data_estimate(self, variant: str, part: str, *, minus: str | None = None) -> Estimate:
        """A part of the data bias added by ``variant``'s extraction (``minus``: paired difference
        ``variant - minus``)."""
        def per_seed(s, wm, wf):
            v = self.data_parts(s, variant, wm, wf)[part]
            return v - self.data_parts(s, minus, wm, wf)[part] if minus else v

        return self.design.estimate_weighted(per_seed, self.study.seeds)

    def item_counts(self, seed: int, variant: str) -> dict[str, int]:
        h = self.study.holds[seed]
        g, x = h["gold"].any(0), h[variant].any(0)
        return {"shared": int((g & x).sum()), "error_born": int((x & ~g).sum()), "missed": int((g & ~x).sum()),
                "gold": int(g.sum()), "extracted": int(x.sum())}

    # ------------------------------------------------------------------ embeddings
    def scores(self, seed: int, graph: str, measure: str) -> dict[str, tuple[float, int, int]] | None:
        """Item -> (score, count_a, count_b) of one measure on one graph's embeddings at one seed;
        None when not measured."""
        for r in self.bias.get(seed, {}).get(graph, []):
            if r.measure == measure:
                return {norm(x.item): (float(x.score), int(x.count_a or 0), int(x.count_b or 0)) for x in r.rows
                        if x.item and x.item != "*" and x.score is not None and math.isfinite(x.score)}
        return None

    def embedding_parts(self, seed: int, variant: str, measure: str) -> dict[str, float] | None:
        gold, ext = self.scores(seed, "gold", measure), self.scores(seed, variant, measure)
        if gold is None or ext is None:
            return None
        universe = sorted(set(gold) | set(ext))
        sg = np.array([gold.get(o, (0.0,))[0] for o in universe])
        se = np.array([ext.get(o, (0.0,))[0] for o in universe])
        # the gold graph's measure scores every gold item: not in it = error-born
        parts = decompose(sg, se, np.array([o in gold for o in universe]), np.array([o in ext for o in universe]))
        return {k: float(v) for k, v in parts.items()}

    def embedding_estimate(self, variant: str, measure: str, part: str, *, minus: str | None = None) -> Estimate:
        vals = {}
        for s in self.study.seeds:
            p = self.embedding_parts(s, variant, measure)
            q = self.embedding_parts(s, minus, measure) if minus else None
            vals[s] = float("nan") if p is None or (minus and q is None) else p[part] - (q[part] if q else 0.0)
        return seed_level(vals, self.confidence)

    # ------------------------------------------------------------------ extraction and graph gaps
    def gap(self, kind: str, variant: str, metric: str) -> Estimate:
        return self.design.metric(f"{kind}:{variant}", metric, seeds=self.study.seeds)

    def mean_abs_gap_reduction(self, kind: str, metric: str, baseline: str, other: str,
                               relation: str | None = None) -> Estimate:
        a, b = f"{kind}:{baseline}", f"{kind}:{other}"
        if relation:
            name = f"{metric}:{relation}"
            return self.design.estimate(lambda m: np.abs(m[a][name]) - np.abs(m[b][name]), [a, b],
                                        seeds=self.study.seeds)
        return self.design.estimate(lambda m: _mean_abs(m[a], metric) - _mean_abs(m[b], metric), [a, b],
                                    seeds=self.study.seeds)

    def recall_by_gender(self, variant: str) -> dict[str, dict[str, float]]:
        """Seed-mean recovered and gold triples of the graph per relation and gender."""
        from wikigenderbias.schema import POSITIVE_RELATIONS, RELATIONS

        c = np.stack([self.study.counts.counts[f"graph:{variant}"][s] for s in self.study.seeds]).astype(float)
        out = {}
        for r in POSITIVE_RELATIONS:
            j = RELATIONS.index(r)
            row = {}
            for g, mask in (("male", self.study.male), ("female", self.study.female)):
                tp = c[:, mask, j, 0].sum(1).mean()
                gold = (c[:, mask, j, 0] + c[:, mask, j, 2]).sum(1).mean()
                row[g] = {"recovered": float(tp), "gold": float(gold), "recall": float(tp / gold) if gold else None}
            out[r] = row
        return out
