"""Score any relation extractor's predictions on WikiGenderBias: F1 gap and equality of
opportunity per relation, with intervals (``wgb re score``).

**Input: one prediction set per run** (a training seed, or one run of a non-wgb system). A set is

* a JSON-lines file holding the test bags of both genders (rows whose ``split`` is
  ``validation`` or ``train`` are used only to pick thresholds, never scored), or
* a folder with ``male_test.jsonl`` and ``female_test.jsonl`` (and optionally
  ``validation.jsonl``): the ``predictions/`` folder of a ``wgb re train`` run, or a run folder
  holding one;
* a **cross-fitted** set (``--protocol crossfit``): a folder of ``fold0`` .. ``fold<K-1>`` sets,
  each one of the above (e.g. the fold run directories ``...-fold<k>``, or ``fold<k>.jsonl``),
  whose persons are disjoint: every person predicted once, by a model that never saw them. The
  folds are joined into one run; the intervals resample persons within fold and gender.

**Rows.** One JSON object per evaluation bag (one bag per entity pair), in either of two forms:

``scores`` form (what ``wgb re predict`` writes, :func:`relext.evaluation.evaluate.read_predictions`)::

    {"bag_id": "...", "entity_id": "...", "gender": "male"|"female",
     "labels": [gold relation ids], "scores": [one score per relation id, NA first]}

``predicted`` form (a system that outputs labels, not scores)::

    {"bag_id": "...", "entity_id": "...", "gender": "female",
     "labels": ["spouse"], "predicted": ["spouse"]}

Relations are ids or names of :data:`wikigenderbias.schema.RELATIONS` (``NA``, ``spouse``,
``hypernym``, ``birthDate``, ``birthPlace``); ``predicted: []`` or ``["NA"]`` predicts no
relation. ``entity_id`` is the article (the head entity): bags of one article are resampled
together and must share one gender. Optional fields (``split``, ``head``, ``tail``,
``sentence_ids``) are ignored. A file holds each ``bag_id`` once; every run must cover the same
test bags. Errors name the file and line.

**The runs of one study** are checked as a set before anything is scored
(:mod:`relext.evaluation.run_sets`): distinct (no run twice, through symlinks or as identical decisions),
complete (every fold of a cross-fitted run), dealt with one fold seed, current (a run folder's
predictions as its provenance records), valid and agreeing gold labels, no bag twice under new
ids, the same bags in every run, and (``wgb re score``) every test bag of the data scored unless a
subset is asked for; an error starts with the name of the check that failed.

**Decision rules** for the scores form, as in :mod:`relext.evaluation.evaluate`: ``argmax`` (default; the top
class, NA included) or ``threshold`` (one threshold maximising validation micro F1; needs the
validation rows). The predicted form is taken as it is.

**Intervals.** One run: the per-run bootstrap over test entities of :func:`relext.evaluation.fairness.gender_gaps`
(the numbers of ``wgb re eval``); a gap is flagged when its interval excludes 0. Several runs:
the study-design layer (:mod:`relext.design`): a two-level bootstrap over runs (as seeds) and
test entities, Benjamini-Hochberg across all gaps reported; a gap is flagged when its adjusted
p-value is below ``alpha`` (never from fewer than 3 runs).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from relext.evaluation.metrics import micro_f1_from_counts, prf_from_counts
from relext.evaluation.prediction_sets import (RULES, TEST_FILES, VALIDATION_FILE, RunPredictions, fold_sets,  # noqa: F401
                                    merge_folds, read_prediction_set, read_run, run_from_rows)
from wikigenderbias.schema import GENDERS, RELATIONS

__all__ = ["RULES", "RunPredictions", "GapRow", "ScoreReport", "read_prediction_set", "run_from_rows",
           "fold_sets", "merge_folds", "read_run",
           "score_runs", "score_files", "gender_gaps", "estimates_df", "verdicts_df"]

_METRIC_NAMES = {"f1": "F1", "eo": "EO (recall)"}


def gender_gaps(y_true, y_pred, *, sensitive_features, groups, **kwargs):
    """fairlearn-style entry point: (n, R) bool gold and predicted relations, the gender of each
    bag and its entity (article) -> the F1 and EO gaps with bootstrap intervals
    (:func:`relext.evaluation.fairness.gender_gaps`)."""
    from relext.evaluation.fairness import gender_gaps as _gaps

    return _gaps(y_true, y_pred, sensitive_features=sensitive_features, groups=groups, **kwargs)


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------
@dataclass
class GapRow:
    """One gender gap of one relation (or ``micro``): male, female, gap and its interval."""

    relation: str
    metric: str                 # "f1" (F1 gap) or "eo" (equality of opportunity: recall gap)
    male: float
    female: float
    gap: float                  # male - female
    ci_low: float
    ci_high: float
    flagged: bool
    p_adjusted: float | None    # several runs: Benjamini-Hochberg adjusted p-value
    n_runs: int
    note: str = ""              # why a test was impossible (fewer than 3 runs, zero width)


@dataclass
class ScoreReport:
    """What ``wgb re score`` reports: the gaps of every relation, per-run micro F1 by gender."""

    runs: list[str]
    rule: str
    form: str
    method: str                 # how intervals were formed
    confidence: float
    n_resamples: int
    n_bags: int
    n_entities: dict[str, int]
    gaps: list[GapRow]
    per_run: list[dict] = field(default_factory=list)
    alpha: float | None = None
    #: what the checks of the run set let through but the reader must know (a subset scored)
    warnings: list[str] = field(default_factory=list)
    #: ``--groups``: the per-cell report of :mod:`relext.evaluation.cell_gaps` (None without groups)
    groups: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def to_df(self):
        """The gaps as a pandas DataFrame, one row per (relation, metric)."""
        import pandas as pd

        return pd.DataFrame([asdict(g) for g in self.gaps])

    def gap(self, relation: str, metric: str = "f1") -> GapRow:
        for g in self.gaps:
            if g.relation == relation and g.metric == metric:
                return g
        raise KeyError(f"no {metric} gap for relation {relation!r}")

    def to_markdown(self) -> str:
        pct = f"{self.confidence:.0%}"
        head = (f"# Gender gaps of {len(self.runs)} run(s)\n\n"
                + "".join(f"**Warning: {w}.**\n\n" for w in self.warnings) +
                f"{self.n_bags} test bags per run, {self.n_entities.get('male', 0)} male and "
                f"{self.n_entities.get('female', 0)} female articles; decision rule {self.rule} "
                f"({self.form} form). Intervals: {pct} {self.method} ({self.n_resamples} resamples). "
                "Gap = male - female; **bold** gaps are flagged"
                + (f" (Benjamini-Hochberg adjusted p < {self.alpha})." if self.alpha is not None
                   else " (interval excludes 0).") + "\n\n")
        lines = ["| relation | metric | male | female | gap | interval |" + (" p (BH) |" if self.alpha else ""),
                 "|---|---|---|---|---|---|" + ("---|" if self.alpha else "")]
        for g in self.gaps:
            gap = f"{g.gap:+.4f}"
            cells = [g.relation, _METRIC_NAMES[g.metric], f"{g.male:.4f}", f"{g.female:.4f}",
                     f"**{gap}**" if g.flagged else gap, f"[{g.ci_low:+.4f}, {g.ci_high:+.4f}]"]
            if self.alpha:
                cells.append("-" if g.p_adjusted is None else f"{g.p_adjusted:.3g}")
            lines.append("| " + " | ".join(cells) + " |")
        notes = sorted({g.note for g in self.gaps if g.note})
        tail = "".join(f"\nNote: {n}." for n in notes)
        per_run = ["", "| run | micro F1 male | micro F1 female | micro F1 |", "|---|---|---|---|"]
        per_run += [f"| {r['run']} | {r['micro_f1_male']:.4f} | {r['micro_f1_female']:.4f} | {r['micro_f1']:.4f} |"
                    for r in self.per_run]
        cells = ""
        if self.groups:
            from relext.evaluation.cell_gaps import markdown as cells_markdown

            cells = "\n" + cells_markdown(self.groups)
        return head + "\n".join(lines) + "\n" + tail + "\n".join(per_run) + "\n" + cells


def _entity_counts(run: RunPredictions) -> tuple[np.ndarray, np.ndarray]:
    from relext.evaluation.fairness import entity_counts

    return entity_counts(run.y_true, run.y_pred, run.entity_ids)


def _per_run(run: RunPredictions) -> dict:
    from relext.evaluation.metrics import relation_counts

    out = {"run": run.name}
    for g in GENDERS:
        m = run.genders == g
        out[f"micro_f1_{g}"] = float(micro_f1_from_counts(relation_counts(run.y_true[m], run.y_pred[m])))
    out["micro_f1"] = float(micro_f1_from_counts(relation_counts(run.y_true, run.y_pred)))
    return out


def score_runs(runs: Sequence[RunPredictions], *, n_resamples: int = 1000, confidence: float = 0.95,
               seed: int = 0, alpha: float = 0.05, rule: str = "argmax", configs: Sequence[dict | None] | None = None,
               warnings: Sequence[str] = (), groups: dict | None = None) -> ScoreReport:
    """The gender-gap report of one or several runs (module docstring), checked first as the runs
    of one study (:func:`relext.evaluation.run_sets.check_runs`; ``configs``: each run's config, if any).
    ``groups``: keyword arguments of :func:`relext.evaluation.cell_gaps.score_groups` (``columns``, ``eras``,
    ``dataset``, ``min_per_gender``): the per-cell report of the same runs."""
    from relext.evaluation.run_sets import check_runs

    runs = list(runs)
    if not runs:
        raise ValueError("no runs to score")
    for run in runs:
        for g in GENDERS:
            if not np.any(run.genders == g):
                raise ValueError(f"{run.name}: no test bags of gender {g!r}; a gap needs both")
    check_runs(runs, configs)
    first = runs[0]
    n_ent = {g: int(len(set(first.entity_ids[first.genders == g].tolist()))) for g in GENDERS}
    forms = sorted({r.form for r in runs})
    per_run = [_per_run(r) for r in runs]
    if len(runs) == 1:
        gaps = _single_run(first, n_resamples=n_resamples, confidence=confidence, seed=seed)
        method = "bootstrap over test entities (resampled within each gender)"
        alpha_out = None
    else:
        gaps = _several_runs(runs, n_resamples=n_resamples, confidence=confidence, seed=seed, alpha=alpha)
        method = ("two-level bootstrap over runs (as seeds) x test entities (relext.design), "
                  "Benjamini-Hochberg across the gaps")
        alpha_out = alpha
    cells = None
    if groups:
        from relext.evaluation.cell_gaps import score_groups

        cells = score_groups(study_counts(runs), **groups, n_resamples=n_resamples, seed=seed,
                             confidence=confidence, alpha=alpha)
    return ScoreReport(runs=[r.name for r in runs], rule=rule, form="+".join(forms), method=method,
                       confidence=confidence, n_resamples=n_resamples, n_bags=len(first.bag_ids),
                       n_entities=n_ent, gaps=gaps, per_run=per_run, alpha=alpha_out, warnings=list(warnings),
                       groups=cells)


def _single_run(run: RunPredictions, *, n_resamples: int, confidence: float, seed: int) -> list[GapRow]:
    from relext.evaluation.fairness import MICRO, gender_gaps as _gaps

    est = _gaps(run.y_true, run.y_pred, sensitive_features=run.genders, groups=run.entity_ids,
                n_resamples=n_resamples, confidence=confidence, seed=seed)
    out = []
    for g in est:
        metric = "f1" if g.metric == "f1" else "eo"
        out.append(GapRow(relation=g.relation if g.relation != MICRO else "micro", metric=metric,
                          male=g.male, female=g.female, gap=g.gap, ci_low=g.ci_low, ci_high=g.ci_high,
                          flagged=g.flagged, p_adjusted=None, n_runs=1))
    return out


def study_counts(runs: Sequence[RunPredictions]):
    """The runs' per-article counts as one variant ``"model"`` with one seed per run
    (:class:`relext.evaluation.study_counts.StudyCounts`; a cross-fitted run's folds kept)."""
    from relext.evaluation.study_counts import StudyCounts

    ids = gender = fold = None
    counts: dict[int, np.ndarray] = {}
    for i, run in enumerate(runs):
        e_ids, c = _entity_counts(run)
        g_of = dict(zip(run.entity_ids.tolist(), run.genders.tolist()))
        e_gender = np.array([g_of[e] for e in e_ids.tolist()], dtype=str)
        if ids is None:
            ids, gender = e_ids, e_gender
            if run.folds is not None:
                f_of = dict(zip(run.entity_ids.tolist(), run.folds.tolist()))
                fold = np.array([f_of[e] for e in e_ids.tolist()], dtype=np.int64)
        elif not (np.array_equal(ids, e_ids) and np.array_equal(gender, e_gender)):
            raise ValueError(f"{run.name}: other test articles or genders than {runs[0].name}; "
                             "every run must be evaluated on the same test set")
        counts[i] = c
    return StudyCounts(ids, gender, {"model": counts}, fold=fold)


def _several_runs(runs: Sequence[RunPredictions], *, n_resamples: int, confidence: float, seed: int,
                  alpha: float) -> list[GapRow]:
    from wgbstats.design import Design, flags

    data = study_counts(runs)
    ids, gender = data.entity_ids, data.gender
    counts = data.counts["model"]
    design = Design(data, n_resamples=n_resamples, seed=seed, confidence=confidence)
    seeds = sorted(counts)
    # point values per gender: mean over runs of each run's metric
    male, female = gender == "male", gender == "female"
    stack = np.stack([counts[s] for s in seeds])                    # (S, E, R, 3)
    tot = {"male": stack[:, male].sum(1), "female": stack[:, female].sum(1)}  # (S, R, 3)
    prf = {g: prf_from_counts(t) for g, t in tot.items()}
    micro = {g: micro_f1_from_counts(t) for g, t in tot.items()}

    rows, ests = [], []
    for j, rel in enumerate(RELATIONS):
        if j == 0:
            continue
        for metric, name, k in (("f1", f"f1_gap:{rel}", 2), ("eo", f"eo_gap:{rel}", 1)):
            e = design.metric("model", name, seeds=seeds)
            ests.append(e)
            rows.append((rel, metric, float(prf["male"][k][:, j].mean()), float(prf["female"][k][:, j].mean()), e))
    e = design.metric("model", "micro_f1_gap", seeds=seeds)
    ests.append(e)
    rows.append(("micro", "f1", float(micro["male"].mean()), float(micro["female"].mean()), e))
    fl = flags(ests, alpha=alpha, method="bh")
    return [GapRow(relation=rel, metric=metric, male=m, female=f, gap=e.value, ci_low=e.ci[0], ci_high=e.ci[1],
                   flagged=x["flagged"], p_adjusted=float(x["p_adjusted"]), n_runs=e.n_seeds,
                   note=e.degenerate or "")
            for (rel, metric, m, f, e), x in zip(rows, fl)]


def score_files(paths: Sequence[str | Path], *, rule: str = "argmax", threshold_mode: str = "global",
                n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                alpha: float = 0.05, coverage: bool = False, data: str | Path | None = None,
                allow_subset: bool = False, groups: dict | None = None) -> ScoreReport:
    """Read one prediction set per path (module docstring; a cross-fitted set is a folder of
    ``fold<k>`` sets) as the runs of one study -- every check of :mod:`relext.evaluation.run_sets` passed
    before anything is scored -- and score them together. ``coverage``: the runs must score every
    test bag of ``data`` (a benchmark folder; None: the config's dataset, else the embedded
    release), or ``allow_subset`` (the report then warns)."""
    from relext.evaluation.run_sets import parts_of, read_study, test_set

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    reference = None
    if coverage:
        first = parts_of(paths[0]) if paths else []
        if data is None and first and first[0].config:
            data = first[0].config.get("dataset")
        reference = test_set(data, crossfit=bool(first) and first[0].fold is not None)
    runs, notes = read_study(paths, rule=rule, threshold_mode=threshold_mode, reference=reference,
                             allow_subset=allow_subset)
    configs = [p[0].config for p in map(parts_of, paths)]
    if groups is not None and groups.get("dataset") is None and data is not None:
        groups = {**groups, "dataset": str(data)}
    return score_runs(runs, n_resamples=n_resamples, confidence=confidence, seed=seed, alpha=alpha, rule=rule,
                      configs=configs, warnings=notes, groups=groups)


# DataFrames of the design layer's results (kept importable from here)
from relext.evaluation.frames import estimates_df, verdicts_df  # noqa: E402,F401
