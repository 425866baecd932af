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

``scores`` form (what ``wgb re predict`` writes, :func:`relext.evaluate.read_predictions`)::

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

**Decision rules** for the scores form, as in :mod:`relext.evaluate`: ``argmax`` (default; the top
class, NA included) or ``threshold`` (one threshold maximising validation micro F1; needs the
validation rows). The predicted form is taken as it is.

**Intervals.** One run: the per-run bootstrap over test entities of :func:`relext.fairness.gender_gaps`
(the numbers of ``wgb re eval``); a gap is flagged when its interval excludes 0. Several runs:
the study-design layer (:mod:`relext.design`): a two-level bootstrap over runs (as seeds) and
test entities, Benjamini-Hochberg across all gaps reported; a gap is flagged when its adjusted
p-value is below ``alpha`` (never from fewer than 3 runs).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from relext.metrics import micro_f1_from_counts, prf_from_counts
from wikigenderbias.schema import GENDERS, RELATIONS

__all__ = ["RULES", "RunPredictions", "GapRow", "ScoreReport", "read_prediction_set", "run_from_rows",
           "fold_sets", "merge_folds", "read_run",
           "score_runs", "score_files", "gender_gaps", "estimates_df", "verdicts_df"]

RULES = ("argmax", "threshold")
TEST_FILES = ("male_test.jsonl", "female_test.jsonl")
VALIDATION_FILE = "validation.jsonl"
_NOT_SCORED = ("validation", "train")
_METRIC_NAMES = {"f1": "F1", "eo": "EO (recall)"}


def gender_gaps(y_true, y_pred, *, sensitive_features, groups, **kwargs):
    """fairlearn-style entry point: (n, R) bool gold and predicted relations, the gender of each
    bag and its entity (article) -> the F1 and EO gaps with bootstrap intervals
    (:func:`relext.fairness.gender_gaps`)."""
    from relext.fairness import gender_gaps as _gaps

    return _gaps(y_true, y_pred, sensitive_features=sensitive_features, groups=groups, **kwargs)


# --------------------------------------------------------------------------------------------
# Reading prediction sets
# --------------------------------------------------------------------------------------------
@dataclass
class RunPredictions:
    """The test bags of one run: ids, gender, gold and predicted relations (``(n, R)`` bool)."""

    name: str
    bag_ids: np.ndarray
    entity_ids: np.ndarray
    genders: np.ndarray
    y_true: np.ndarray
    y_pred: np.ndarray
    form: str                      # "scores" or "predicted"
    thresholds: list[float] | None = None
    #: cross-fitted sets: the fold whose model predicted each bag (None: one model)
    folds: np.ndarray | None = None


def _relation_id(value: Any, where: str, field_name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{where}: field {field_name!r} holds {value!r}, not a relation")
    if isinstance(value, int):
        if 0 <= value < len(RELATIONS):
            return value
        raise ValueError(f"{where}: field {field_name!r} holds relation id {value}; ids are 0..{len(RELATIONS) - 1} "
                         f"({', '.join(RELATIONS)})")
    if isinstance(value, str) and value in RELATIONS:
        return RELATIONS.index(value)
    raise ValueError(f"{where}: field {field_name!r} holds unknown relation {value!r}; expected one of "
                     f"{list(RELATIONS)} or their ids")


def _relations(row: Mapping, key: str, where: str) -> list[int]:
    value = row[key]
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"{where}: field {key!r} must be a list of relations, got {value!r:.80}")
    return [_relation_id(v, where, key) for v in value]


def _check_row(row: Any, where: str) -> str:
    """The row's form ("scores" or "predicted"); a ``ValueError`` naming ``where`` otherwise."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key in ("bag_id", "entity_id", "gender", "labels"):
        if key not in row:
            raise ValueError(f"{where}: missing field {key!r}")
    if row["gender"] not in GENDERS:
        raise ValueError(f"{where}: field 'gender' is {row['gender']!r}; expected one of {list(GENDERS)}")
    for key in ("bag_id", "entity_id"):
        if not isinstance(row[key], (str, int)) or isinstance(row[key], bool) or str(row[key]) == "":
            raise ValueError(f"{where}: field {key!r} must be a non-empty string, got {row[key]!r:.80}")
    has_scores, has_pred = "scores" in row, "predicted" in row
    if has_scores == has_pred:
        raise ValueError(f"{where}: a row holds either 'scores' (one per relation) or 'predicted' "
                         f"(relation labels), {'not both' if has_scores else 'found neither'}")
    if has_scores:
        s = row["scores"]
        if not isinstance(s, list) or len(s) != len(RELATIONS) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in s):
            raise ValueError(f"{where}: field 'scores' must be a list of {len(RELATIONS)} finite numbers "
                             f"(one per relation {list(RELATIONS)}), got {s!r:.80}")
        return "scores"
    return "predicted"


def _read_rows(path: Path) -> list[tuple[str, dict]]:
    from wgbcore.atomicio import iter_jsonl

    return list(iter_jsonl(path))


def read_prediction_set(path: str | Path) -> list[tuple[str, dict]]:
    """``(where, row)`` of every row of one run's predictions: a JSON-lines file, a folder with
    ``male_test.jsonl`` + ``female_test.jsonl`` (+ ``validation.jsonl``), or a run folder with a
    ``predictions/`` folder. Rows from ``validation.jsonl`` get ``split: validation``."""
    path = Path(path)
    if path.is_dir():
        folder = path / "predictions" if (path / "predictions").is_dir() else path
        missing = [f for f in TEST_FILES if not (folder / f).is_file()]
        if missing:
            raise ValueError(f"{path}: a predictions folder holds {' and '.join(TEST_FILES)}; missing {missing}")
        out = []
        for name in (VALIDATION_FILE, *TEST_FILES):
            if (folder / name).is_file():
                split = name.removesuffix(".jsonl")
                out += [(w, {**r, "split": split} if isinstance(r, dict) else r)
                        for w, r in _read_rows(folder / name)]
        return out
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such predictions file or folder")
    return _read_rows(path)


def run_from_rows(rows: Sequence[tuple[str, dict]], *, name: str = "run", rule: str = "argmax",
                  threshold_mode: str = "global") -> RunPredictions:
    """Check the rows (errors name file and line) and turn them into one run's decisions."""
    from relext.evaluate import argmax_decisions, best_thresholds, threshold_decisions

    if rule not in RULES:
        raise ValueError(f"unknown decision rule {rule!r}; expected one of {list(RULES)}")
    forms: set[str] = set()
    seen: dict[str, str] = {}
    gender_of: dict[str, tuple[str, str]] = {}
    test, val = [], []
    for where, row in rows:
        form = _check_row(row, where)
        forms.add(form)
        if len(forms) > 1:
            raise ValueError(f"{where}: this row has {form!r} but earlier rows of {name} the other form; "
                             "one run uses one form")
        if row.get("split") in _NOT_SCORED:
            val.append((where, row))
            continue
        bag = str(row["bag_id"])
        if bag in seen:
            raise ValueError(f"{where}: duplicate bag_id {bag!r} (first at {seen[bag]})")
        seen[bag] = where
        ent = str(row["entity_id"])
        if ent in gender_of and gender_of[ent][0] != row["gender"]:
            raise ValueError(f"{where}: entity {ent!r} is {row['gender']!r} here but {gender_of[ent][0]!r} "
                             f"at {gender_of[ent][1]}; the gender is the article's subject's")
        gender_of.setdefault(ent, (row["gender"], where))
        test.append((where, row))
    if not test:
        raise ValueError(f"{name}: no test rows (rows of split validation/train are not scored)")
    form = forms.pop()
    n, r = len(test), len(RELATIONS)
    y_true = np.zeros((n, r), dtype=bool)
    for i, (where, row) in enumerate(test):
        y_true[i, _relations(row, "labels", where)] = True
    thresholds = None
    if form == "predicted":
        if rule != "argmax":
            raise ValueError(f"{name}: the 'predicted' form holds decisions already; the threshold rule needs scores")
        y_pred = np.zeros((n, r), dtype=bool)
        for i, (where, row) in enumerate(test):
            y_pred[i, _relations(row, "predicted", where)] = True
        y_pred[~y_pred[:, 1:].any(axis=1), 0] = True   # no positive relation: NA
    else:
        scores = np.array([row["scores"] for _, row in test], dtype=float)
        if rule == "argmax":
            y_pred = argmax_decisions(scores)
        else:
            if not val:
                raise ValueError(f"{name}: the threshold rule picks its threshold on validation rows "
                                 "(split 'validation' or validation.jsonl); there are none")
            vt = np.zeros((len(val), r), dtype=bool)
            for i, (where, row) in enumerate(val):
                vt[i, _relations(row, "labels", where)] = True
            vs = np.array([row["scores"] for _, row in val], dtype=float)
            t = best_thresholds(vt, vs, mode=threshold_mode)
            y_pred = threshold_decisions(scores, t)
            thresholds = [float(x) for x in t]
    return RunPredictions(
        name=name,
        bag_ids=np.array([str(row["bag_id"]) for _, row in test], dtype=object),
        entity_ids=np.array([str(row["entity_id"]) for _, row in test], dtype=object),
        genders=np.array([row["gender"] for _, row in test], dtype=object),
        y_true=y_true, y_pred=y_pred, form=form, thresholds=thresholds)


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
        return head + "\n".join(lines) + "\n" + tail + "\n".join(per_run) + "\n"


def _entity_counts(run: RunPredictions) -> tuple[np.ndarray, np.ndarray]:
    from relext.fairness import entity_counts

    return entity_counts(run.y_true, run.y_pred, run.entity_ids)


def _per_run(run: RunPredictions) -> dict:
    from relext.metrics import relation_counts

    out = {"run": run.name}
    for g in GENDERS:
        m = run.genders == g
        out[f"micro_f1_{g}"] = float(micro_f1_from_counts(relation_counts(run.y_true[m], run.y_pred[m])))
    out["micro_f1"] = float(micro_f1_from_counts(relation_counts(run.y_true, run.y_pred)))
    return out


def _check_same_bags(runs: Sequence[RunPredictions]) -> None:
    first = runs[0]
    ref = set(first.bag_ids.tolist())
    for run in runs[1:]:
        bags = set(run.bag_ids.tolist())
        if bags != ref:
            missing, extra = sorted(ref - bags), sorted(bags - ref)
            what = (f"lacks {len(missing)} bag(s) of {first.name} (first: {missing[0]!r})" if missing
                    else f"has {len(extra)} bag(s) {first.name} lacks (first: {extra[0]!r})")
            raise ValueError(f"{run.name}: {what}; every run must predict the same test bags")


def score_runs(runs: Sequence[RunPredictions], *, n_resamples: int = 1000, confidence: float = 0.95,
               seed: int = 0, alpha: float = 0.05, rule: str = "argmax") -> ScoreReport:
    """The gender-gap report of one or several runs (module docstring)."""
    runs = list(runs)
    if not runs:
        raise ValueError("no runs to score")
    for run in runs:
        for g in GENDERS:
            if not np.any(run.genders == g):
                raise ValueError(f"{run.name}: no test bags of gender {g!r}; a gap needs both")
    _check_same_bags(runs)
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
    return ScoreReport(runs=[r.name for r in runs], rule=rule, form="+".join(forms), method=method,
                       confidence=confidence, n_resamples=n_resamples, n_bags=len(first.bag_ids),
                       n_entities=n_ent, gaps=gaps, per_run=per_run, alpha=alpha_out)


def _single_run(run: RunPredictions, *, n_resamples: int, confidence: float, seed: int) -> list[GapRow]:
    from relext.fairness import MICRO, gender_gaps as _gaps

    est = _gaps(run.y_true, run.y_pred, sensitive_features=run.genders, groups=run.entity_ids,
                n_resamples=n_resamples, confidence=confidence, seed=seed)
    out = []
    for g in est:
        metric = "f1" if g.metric == "f1" else "eo"
        out.append(GapRow(relation=g.relation if g.relation != MICRO else "micro", metric=metric,
                          male=g.male, female=g.female, gap=g.gap, ci_low=g.ci_low, ci_high=g.ci_high,
                          flagged=g.flagged, p_adjusted=None, n_runs=1))
    return out


def _several_runs(runs: Sequence[RunPredictions], *, n_resamples: int, confidence: float, seed: int,
                  alpha: float) -> list[GapRow]:
    from relext.design import Design, StudyCounts, flags

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
    data = StudyCounts(ids, gender, {"model": counts}, fold=fold)
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


def fold_sets(path: str | Path) -> list[tuple[int, Path]] | None:
    """The fold prediction sets of a cross-fitted set -- a folder whose children are named
    ``fold<k>`` (a prediction set each: a JSON-lines file ``fold<k>.jsonl``, or a folder as
    :func:`read_prediction_set` reads, e.g. the fold's run directory) -- or None for a plain set."""
    import re

    path = Path(path)
    if not path.is_dir() or any((path / f).is_file() for f in TEST_FILES) or (path / "predictions").is_dir():
        return None
    found = []
    for child in sorted(path.iterdir()):
        m = re.fullmatch(r"(?:.*-)?fold(\d+)(?:\.jsonl)?", child.name)
        if m:
            found.append((int(m.group(1)), child))
    if not found:
        return None
    ks = [k for k, _ in found]
    if sorted(ks) != list(range(len(ks))):
        raise ValueError(f"{path}: fold sets {ks}; a cross-fitted set holds fold0 .. fold<K-1>, each once")
    return found


def merge_folds(parts: Sequence[tuple[int, RunPredictions]], *, name: str) -> RunPredictions:
    """One run from its folds' predictions: persons must be disjoint across folds (each person is
    predicted once, by the model of its own fold); bag ids are prefixed with the fold."""
    owner: dict[str, int] = {}
    for k, run in parts:
        for e in set(run.entity_ids.tolist()):
            if e in owner:
                raise ValueError(f"{name}: person {e!r} is predicted in fold {owner[e]} and fold {k}; "
                                 "cross-fitted folds hold disjoint persons")
            owner[e] = k
    forms = {run.form for _, run in parts}
    if len(forms) > 1:
        raise ValueError(f"{name}: folds mix the 'scores' and 'predicted' forms")
    cat = lambda attr: np.concatenate([getattr(run, attr) for _, run in parts])  # noqa: E731
    return RunPredictions(
        name=name, bag_ids=np.concatenate([np.array([f"fold{k}/{b}" for b in run.bag_ids], dtype=object)
                                           for k, run in parts]),
        entity_ids=cat("entity_ids"), genders=cat("genders"), y_true=cat("y_true"), y_pred=cat("y_pred"),
        form=forms.pop(), thresholds=None,
        folds=np.concatenate([np.full(len(run.bag_ids), k, dtype=np.int64) for k, run in parts]))


def read_run(path: str | Path, *, rule: str = "argmax", threshold_mode: str = "global") -> RunPredictions:
    """One run's predictions: a plain prediction set, or a cross-fitted one (:func:`fold_sets`;
    the threshold rule picks each fold's threshold on that fold's own validation rows)."""
    folds = fold_sets(path)
    if folds is None:
        return run_from_rows(read_prediction_set(path), name=str(path), rule=rule, threshold_mode=threshold_mode)
    parts = [(k, run_from_rows(read_prediction_set(p), name=str(p), rule=rule, threshold_mode=threshold_mode))
             for k, p in folds]
    return merge_folds(parts, name=str(path))


def score_files(paths: Sequence[str | Path], *, rule: str = "argmax", threshold_mode: str = "global",
                n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                alpha: float = 0.05) -> ScoreReport:
    """Read one prediction set per path (module docstring; a cross-fitted set is a folder of
    ``fold<k>`` sets) and score them together."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    runs = [read_run(p, rule=rule, threshold_mode=threshold_mode) for p in paths]
    if len({r.folds is None for r in runs}) > 1:
        raise ValueError("mix of cross-fitted and plain prediction sets; score them separately")
    return score_runs(runs, n_resamples=n_resamples, confidence=confidence, seed=seed, alpha=alpha, rule=rule)


# DataFrames of the design layer's results (kept importable from here)
from relext.frames import estimates_df, verdicts_df  # noqa: E402,F401
