"""Any person-level grouping in the design: the gender gap within each cell of a grouping (birth
era, region, ...), gaps between cells, their interaction, and the largest difference over cells
with a simultaneous interval (issue #41, part 2).

**Cells.** A grouping is one label per unit (``labels``, shape (E,): e.g. each person's birth era);
the gender gap is taken within each cell, so a cell is gender x label. :class:`CellDesign` wraps a
:class:`wgbstats.design.Design` whose person resample is stratified by cell too (within gender x
fold x population x label; Rao and Wu's rescaled draw, :func:`wgbstats.design.entity_weights`), so
every replicate keeps every cell's size, and every estimate -- within a cell, between cells, of
several variants -- is paired on the same seed draw and the same person resample. A cell's metric
is computed from that cell's persons' totals in each replicate (:func:`wgbstats.design.base_metrics`),
its test studentized against the seed reference (:mod:`wgbstats.reference`) with the persons' part
given the cell's degrees of freedom (its smaller gender's persons less its strata; for a statistic
of several cells, the smallest of theirs).

**Statistics.** ``cell_metric(v, c, "f1_gap:spouse")``: the gap within cell c; ``between(v, a, b,
"f1_gap:spouse")``: the interaction (the gap in a minus the gap in b); ``between(v, a, b,
"f1:spouse")``: a gap between cells (both genders). Multiplicity over cells x relations is the
families' own (:func:`wgbstats.verdicts.verdicts` / :func:`~wgbstats.verdicts.flags`, Holm or BH).

**The largest difference over cells** (:meth:`CellDesign.range`): ``max_c g_c - min_c g_c`` of a
metric g over K cells. A percentile bootstrap of this statistic is biased upwards and covers a true
zero (all cells equal) almost never; instead every pairwise difference ``d_ij = g_i - g_j`` gets a
*simultaneous* interval, and the range's interval follows from them: if the intervals [L_ij, U_ij]
of all ordered pairs hold together, the true range ``max_ij delta_ij`` lies in ``[max(0, max_ij
L_ij), max_ij U_ij]`` (each delta_ij <= U_ij; the range is at least every delta_ij >= L_ij). At a
true zero the range's interval covers 0 exactly when no pair's interval excludes 0, so its coverage
is the pairs' simultaneous coverage. The simultaneous level is max-t: the critical value ``c`` of
``max_ij |Z_ij|`` for Z normal with the pairs' correlation (estimated from the design's corrected
replicates), i.e. each pair tested at the per-comparison level ``alpha' = 2 (1 - Phi(c))``
(between Bonferroni's alpha/m and alpha), and each pair's interval is its own test at alpha'
against the seed reference (Student's t with S - 1 df where the seeds may dominate). The pair of
the point range (which cells drive it) and the pairs whose intervals exclude 0 are reported. The
known-answer simulations of :mod:`wgbstats.cell_calibration` check the coverage at a true zero and
the detection of one differing cell.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Callable, Mapping, Sequence

import numpy as np

from wgbstats.counts import StudyCounts
from wgbstats.design import MODES, Design, base_metrics, estimate_from_replicates
from wgbstats.verdicts import Estimate, reference_critical

#: Fewest persons of each gender in a cell for a verdict on it (configurable): with 5 folds a cell
#: of 30 per gender has 6 persons per resampling stratum, and its persons' part 25 or more degrees
#: of freedom; the gap of a relation in a smaller cell rests on a handful of persons' facts.
MIN_PER_GENDER = 30
#: Draws of the normal vector whose max |Z| gives the simultaneous critical value.
MAXT_DRAWS = 20_000


def maxt_critical(corr: np.ndarray, level: float, *, n_draws: int = MAXT_DRAWS, seed: int = 0) -> float:
    """The critical value c with P(max_i |Z_i| > c) = ``level`` for Z ~ N(0, ``corr``) (Monte
    Carlo, ``n_draws`` draws; a correlation matrix that is not positive semi-definite is projected
    onto one)."""
    corr = np.atleast_2d(np.asarray(corr, dtype=float))
    m = corr.shape[0]
    if m == 1:
        from scipy.stats import norm

        return float(norm.isf(level / 2))
    vals, vecs = np.linalg.eigh((corr + corr.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    z = np.random.default_rng(seed).standard_normal((n_draws, m)) @ root.T
    scale = np.sqrt(np.clip(np.einsum("ij,ij->i", root, root), 1e-300, None))
    return float(np.quantile(np.abs(z / scale).max(axis=1), 1 - level))


def per_comparison_level(critical: float) -> float:
    """The two-sided normal level whose critical value is ``critical``."""
    from scipy.stats import norm

    return float(2 * norm.sf(critical))


def range_bounds(values: np.ndarray, half_widths: np.ndarray) -> tuple[float, float, int]:
    """(low, high, index of the pair with the largest lower bound) of the range's interval from
    the pairs' differences ``values`` (i < j) and their simultaneous half-widths."""
    d, h = np.abs(np.asarray(values, float)), np.asarray(half_widths, float)
    low = d - h
    k = int(np.argmax(low))
    return max(0.0, float(low[k])), float(np.max(d + h)), k


@dataclass
class RangeEstimate:
    """The largest difference of a metric over cells with its simultaneous interval."""

    metric: str
    variant: str
    cells: list[str]
    value: float                        # max over cells - min over cells (point)
    ci: list[float]                     # simultaneous interval of the true range
    level: float                        # 1 - alpha: the simultaneous coverage
    critical_maxt: float                # c of max |Z| over the pairs (normal)
    per_comparison_level: float         # alpha' each pair is tested at
    max_cell: str
    min_cell: str
    driving_pair: list[str]             # the pair with the largest lower bound
    pairs_excluding_zero: list[list[str]]
    pairs: list[dict] = field(default_factory=list)
    degenerate: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def decided(self) -> bool:
        """The interval excludes 0: some pair of cells differs at the simultaneous level."""
        return self.degenerate is None and self.ci[0] > 0


class CellDesign:
    """The design over a person-level grouping (module docstring): ``labels`` (E,) one label per
    unit of ``data``; cells in ``order`` (default: sorted labels); a cell takes part in verdicts
    when both genders have at least ``min_per_gender`` units in it."""

    def __init__(self, data: StudyCounts, labels: Sequence[str] | np.ndarray, *, n_resamples: int = 2000,
                 seed: int = 0, confidence: float = 0.95, min_per_gender: int = MIN_PER_GENDER,
                 order: Sequence[str] | None = None) -> None:
        labels = np.asarray(labels, dtype=str)
        if labels.shape != (len(data.entity_ids),):
            raise ValueError(f"{labels.shape[0] if labels.ndim else 0} group labels for {len(data.entity_ids)} units")
        if min_per_gender < 2:
            raise ValueError(f"min_per_gender must be at least 2, got {min_per_gender}")
        present = sorted(set(labels.tolist()))
        self.cells = [c for c in order if c in present] if order is not None else present
        missing = sorted(set(present) - set(self.cells))
        if missing:
            raise ValueError(f"group labels {missing[:3]} are not among the cells {list(order or [])}")
        self.data, self.labels, self.min_per_gender = data, labels, int(min_per_gender)
        self.design = Design(data, n_resamples=n_resamples, seed=seed, confidence=confidence, strata=labels)
        self.n_resamples, self.confidence = n_resamples, confidence
        self._cols = {g: {c: np.flatnonzero(labels[data.gender == g] == c) for c in self.cells}
                      for g in ("male", "female")}
        self._cache: dict[tuple, dict[str, dict[str, np.ndarray]]] = {}

    # ---------------------------------------------------------------- sizes
    def sizes(self) -> dict[str, dict[str, int]]:
        """Units per cell and gender: {cell: {"male": n, "female": n}}."""
        return {c: {g: int(self._cols[g][c].size) for g in ("male", "female")} for c in self.cells}

    def enough(self, cell: str) -> bool:
        """Whether ``cell`` has ``min_per_gender`` units of each gender (a verdict is allowed)."""
        return min(self.sizes()[cell].values()) >= self.min_per_gender

    def cell_df(self, cell: str) -> float:
        """The persons' part's degrees of freedom in ``cell``: its smaller gender's units less the
        resampling strata they fill (at least 1)."""
        out = []
        fold = self.data.fold if self.data.fold is not None else np.zeros(len(self.labels), dtype=np.int64)
        for g in ("male", "female"):
            m = (self.data.gender == g) & (self.labels == cell)
            strata = set(zip(fold[m].tolist(), self.data.population[m].tolist()))
            out.append(int(m.sum()) - max(len(strata), 1))
        return float(max(min(out), 1))

    # ---------------------------------------------------------------- replicates
    def metrics(self, variant: str, seeds: Sequence[int], mode: str = "combined") -> dict[str, dict[str, np.ndarray]]:
        """Seed-averaged base metrics of ``variant`` within each cell: {cell: {name: (B,) or (1,)}}
        (``mode`` as :meth:`wgbstats.design.Design.metrics`)."""
        seeds = tuple(int(s) for s in seeds)
        key = (variant, seeds, mode)
        if key in self._cache:
            return self._cache[key]
        d = self.design
        c = np.stack([self.data.counts[variant][s] for s in seeds]).astype(float)  # (S, E, R, 3)
        s_, r_ = c.shape[0], c.shape[2]
        flat = {g: c[:, self.data.gender == g].transpose(1, 0, 2, 3).reshape(-1, s_ * r_ * 3)
                for g in ("male", "female")}                                        # (E_g, S*R*3)
        out = {}
        for cell in self.cells:
            totals = {}
            for g in ("male", "female"):
                cols = self._cols[g][cell]
                if mode in ("combined", "entity"):
                    totals[g] = (d._w[g][:, cols] @ flat[g][cols]).reshape(-1, s_, r_, 3)
                elif mode in ("seed", "point"):
                    totals[g] = flat[g][cols].sum(axis=0).reshape(1, s_, r_, 3)
                else:
                    raise ValueError(f"unknown mode {mode!r}; expected one of {list(MODES) + ['point']}")
            per_seed = base_metrics(totals["male"], totals["female"], d.labels)     # name -> (B|1, S)
            if mode in ("combined", "seed"):
                out[cell] = {k: d._drawn_mean(v, seeds) for k, v in per_seed.items()}
            else:
                out[cell] = {k: v.mean(axis=1) for k, v in per_seed.items()}
        self._cache[key] = out
        return out

    # ---------------------------------------------------------------- estimates
    def estimate(self, stat: Callable[[Mapping[str, Mapping[str, Mapping[str, np.ndarray]]]], np.ndarray],
                 variants: Sequence[str], cells: Sequence[str], *, seeds: Sequence[int] | None = None) -> Estimate:
        """``stat({variant: {cell: {metric: array}}})`` on the point data and every replicate;
        ``cells`` are the cells it reads (their smallest persons' df is the estimate's)."""
        variants = list(variants)
        for c in cells:
            if c not in self.cells:
                raise ValueError(f"unknown cell {c!r}; have {self.cells}")
        seeds = list(seeds) if seeds is not None else self.data.common_seeds(variants)
        if not seeds:
            raise ValueError(f"variants {variants} share no seed")
        point = float(np.asarray(stat({v: self.metrics(v, seeds, "point") for v in variants}))[0])
        reps = {m: np.asarray(stat({v: self.metrics(v, seeds, m) for v in variants}), dtype=float) for m in MODES}
        df = min(self.cell_df(c) for c in cells) if cells else self.design.df_entity
        return estimate_from_replicates(point, reps, seeds, self.confidence, df)

    def cell_metric(self, variant: str, cell: str, name: str, *, seeds: Sequence[int] | None = None) -> Estimate:
        """A base metric within one cell (e.g. ``"f1_gap:spouse"``: the gender gap in the cell)."""
        return self.estimate(lambda m: m[variant][cell][name], [variant], [cell], seeds=seeds)

    def between(self, variant: str, a: str, b: str, name: str, *, seeds: Sequence[int] | None = None) -> Estimate:
        """``name`` in cell ``a`` minus in cell ``b``: of a gap, the interaction (is the gap larger
        in a?); of a metric of both genders, a gap between cells."""
        return self.estimate(lambda m: m[variant][a][name] - m[variant][b][name], [variant], [a, b], seeds=seeds)

    def range(self, variant: str, name: str, cells: Sequence[str] | None = None, *, alpha: float = 0.05,
              seeds: Sequence[int] | None = None, n_draws: int = MAXT_DRAWS) -> RangeEstimate:
        """Max minus min of ``name`` over ``cells`` (default: every cell with enough units) with
        its simultaneous interval at ``1 - alpha`` (module docstring)."""
        cells = list(cells) if cells is not None else [c for c in self.cells if self.enough(c)]
        if len(cells) < 2:
            raise ValueError(f"a range needs at least 2 cells, got {cells}")
        point = {c: self.metrics(variant, seeds or self.data.seeds(variant), "point")[c][name][0] for c in cells}
        pairs = list(combinations(cells, 2))
        ests = [self.between(variant, a, b, name, seeds=seeds) for a, b in pairs]
        hi_cell, lo_cell = max(cells, key=lambda c: point[c]), min(cells, key=lambda c: point[c])
        bad = next((e.degenerate for e in ests if e.degenerate), None)
        reps = np.stack([(e.replicates - e.value) / e.se if e.se > 0 else np.zeros_like(e.replicates)
                         for e in ests], axis=1)
        corr = np.corrcoef(reps, rowvar=False) if len(ests) > 1 else np.ones((1, 1))
        corr = np.nan_to_num(np.atleast_2d(corr), nan=0.0)
        np.fill_diagonal(corr, 1.0)
        crit = maxt_critical(corr, alpha, n_draws=n_draws)
        level = per_comparison_level(crit)
        half = [reference_critical(level, e) * e.se if not e.degenerate else float("inf") for e in ests]
        low, high, k = range_bounds([e.value for e in ests], half)
        rows = [{"cells": [a, b], "value": e.value, "se": e.se, "half_width": h,
                 "ci": [e.value - h, e.value + h], "excludes_zero": bool(abs(e.value) > h)}
                for (a, b), e, h in zip(pairs, ests, half)]
        return RangeEstimate(metric=name, variant=variant, cells=cells, value=float(point[hi_cell] - point[lo_cell]),
                             ci=[low, high], level=1 - alpha, critical_maxt=crit, per_comparison_level=level,
                             max_cell=hi_cell, min_cell=lo_cell, driving_pair=list(pairs[k]),
                             pairs_excluding_zero=[r["cells"] for r in rows if r["excludes_zero"]],
                             pairs=rows, degenerate=bad)


def sizes_table(sizes: Mapping[str, Mapping[str, int]], min_per_gender: int) -> list[dict]:
    """Rows {cell, male, female, enough} of :meth:`CellDesign.sizes`."""
    return [{"cell": c, "male": n["male"], "female": n["female"],
             "enough": bool(min(n.values()) >= min_per_gender)} for c, n in sizes.items()]


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)
