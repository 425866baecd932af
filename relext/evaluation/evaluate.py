"""Evaluation of bag-level relation extractors from their prediction files.

Everything here works on the *predictions file* of a run (``run_dir/predictions/<split>.jsonl``),
one JSON object per evaluation bag (one bag per entity pair)::

    {"bag_id", "split", "entity_id", "head", "tail", "gender": "male"|"female",
     "labels": [gold relation ids], "scores": [one probability per relation id],
     "sentence_ids": [...]}

Relation ids follow :data:`wikigenderbias.schema.RELATIONS` (0 is NA).

Two decision rules turn scores into predictions (both are reported, both documented):

``argmax``
    Each bag is assigned the single highest-scoring class *including NA*; a bag predicted NA
    predicts no relation. This is what a deployed extractor does and needs no tuning.
``threshold``
    Each positive relation r is predicted for a bag when ``score[r] >= t`` (a bag may receive
    several relations, NA's score is ignored). The threshold is chosen to maximise micro F1 over
    the (bag, positive relation) pairs of the **validation** split and then applied unchanged to
    the test splits (``threshold_mode="global"``: one threshold for all relations;
    ``"per_relation"``: one threshold per relation, each maximising that relation's F1 on
    validation). The test splits never influence the threshold.

Per positive relation, precision / recall / F1 are one-vs-rest: a bag is a gold positive for r
when r is among its labels, a predicted positive when the rule predicts r. Micro F1 pools the
true / false positives and false negatives of the four positive relations; macro F1 is the mean
of their F1s. Undefined ratios (0/0) are 0, as in scikit-learn with ``zero_division=0``.

PR-AUC follows OpenNRE: every (bag, positive relation) score is ranked, precision and recall are
traced down the ranking (recall over all gold (bag, relation) facts) and integrated with the
trapezoid rule. ``curve_max_f1`` is the best micro F1 on that curve: this is the number OpenNRE
prints as "micro F1", and it is tuned on the test split itself, so it is reported for comparison
only.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

# count metrics and the per-entity counts file live in relext.evaluation.metrics (fairness and the design
# layer read them without this module); re-exported here
from relext.evaluation.metrics import (ENTITY_COUNTS, _div, micro_f1_from_counts, prf_from_counts,  # noqa: F401
                            read_entity_counts, relation_counts, write_entity_counts)
from relext.evaluation.decisions import (THRESHOLD_MODES, argmax_decisions, best_thresholds, curve_max_f1,  # noqa: F401
                              macro_f1, micro_f1, per_relation_prf, pr_auc, pr_curve, threshold_decisions)
from wikigenderbias.schema import GENDERS, RELATIONS

#: The split names evaluated; ``pooled`` is male_test + female_test.
TEST_SPLITS: tuple[str, ...] = ("male_test", "female_test")
VALIDATION_SPLIT = "validation"
POOLED = "pooled"

_REQUIRED = ("bag_id", "entity_id", "gender", "labels", "scores")


# --------------------------------------------------------------------------------------------
# Reading predictions
# --------------------------------------------------------------------------------------------
def validate_row(row: Any, *, where: str, n_relations: int = len(RELATIONS)) -> dict:
    """Check one prediction row; raise ``ValueError`` naming ``where`` and the field."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key in _REQUIRED:
        if key not in row:
            raise ValueError(f"{where}: missing field {key!r}")
    if row["gender"] not in GENDERS:
        raise ValueError(f"{where}: field 'gender' is {row['gender']!r}; expected one of {GENDERS}")
    scores = row["scores"]
    if not isinstance(scores, list) or len(scores) != n_relations:
        raise ValueError(
            f"{where}: field 'scores' must be a list of {n_relations} numbers "
            f"(one per relation {RELATIONS}), got {scores!r:.80}"
        )
    if not all(isinstance(s, (int, float)) and math.isfinite(s) for s in scores):
        raise ValueError(f"{where}: field 'scores' holds a non-finite or non-numeric value")
    labels = row["labels"]
    if not isinstance(labels, list) or not all(
        isinstance(x, int) and 0 <= x < n_relations for x in labels
    ):
        raise ValueError(
            f"{where}: field 'labels' must be a list of relation ids in [0, {n_relations}), "
            f"got {labels!r:.80}"
        )
    return row


def read_predictions(path: str | Path) -> list[dict]:
    """Read a predictions JSON-lines file, validating every row (errors name file and line)."""
    from wgbcore.atomicio import iter_jsonl

    return [validate_row(row, where=where) for where, row in iter_jsonl(path)]


@dataclass(frozen=True)
class PredictionTable:
    """Columns of a set of prediction rows, as numpy arrays."""

    bag_ids: np.ndarray      # (n,) object
    entity_ids: np.ndarray   # (n,) object
    genders: np.ndarray      # (n,) object, "male"/"female"
    y_true: np.ndarray       # (n, R) bool: multi-hot gold relations
    scores: np.ndarray       # (n, R) float

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping], *, where: str = "predictions") -> "PredictionTable":
        n, r = len(rows), len(RELATIONS)
        y_true = np.zeros((n, r), dtype=bool)
        scores = np.zeros((n, r), dtype=np.float64)
        for i, row in enumerate(rows):
            validate_row(row, where=f"{where} row {i}")
            y_true[i, list(row["labels"])] = True
            scores[i] = row["scores"]
        return cls(
            bag_ids=np.array([row["bag_id"] for row in rows], dtype=object),
            entity_ids=np.array([row["entity_id"] for row in rows], dtype=object),
            genders=np.array([row["gender"] for row in rows], dtype=object),
            y_true=y_true,
            scores=scores,
        )

    def __len__(self) -> int:
        return len(self.bag_ids)

    def select(self, mask: np.ndarray) -> "PredictionTable":
        return PredictionTable(
            self.bag_ids[mask], self.entity_ids[mask], self.genders[mask],
            self.y_true[mask], self.scores[mask],
        )

    @staticmethod
    def concat(tables: Iterable["PredictionTable"]) -> "PredictionTable":
        tables = list(tables)
        return PredictionTable(
            *(np.concatenate([getattr(t, f) for t in tables]) for f in
              ("bag_ids", "entity_ids", "genders", "y_true", "scores"))
        )


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@dataclass
class RelationScores:
    relation: str
    precision: float
    recall: float
    f1: float
    support: int
    predicted: int


@dataclass
class SplitScores:
    """Scores of one decision rule on one split."""

    split: str
    variant: str
    n_bags: int
    n_entities: int
    relations: list[RelationScores]
    micro_f1: float
    macro_f1: float
    pr_auc: float
    curve_max_f1: float

    def relation(self, name: str) -> RelationScores:
        for r in self.relations:
            if r.relation == name:
                return r
        raise KeyError(name)


def score_split(table: PredictionTable, y_pred: np.ndarray, *, split: str, variant: str) -> SplitScores:
    prf = per_relation_prf(table.y_true, y_pred)
    return SplitScores(
        split=split,
        variant=variant,
        n_bags=len(table),
        n_entities=int(len(set(table.entity_ids.tolist()))),
        relations=[RelationScores(relation=k, **v) for k, v in prf.items()],
        micro_f1=micro_f1(table.y_true, y_pred),
        macro_f1=macro_f1(table.y_true, y_pred),
        pr_auc=pr_auc(table.y_true, table.scores),
        curve_max_f1=curve_max_f1(table.y_true, table.scores),
    )


from wgbcore.provenance import output_status, package_version, record_outputs  # noqa: E402,F401


@dataclass
class EvalResult:
    """Everything ``wgb re eval`` reports for one run."""

    run_dir: str
    seed: int | None
    config: dict
    version: str
    threshold_mode: str
    thresholds: list[float] | None          # per relation id; None without validation
    scores: dict[str, dict[str, SplitScores]]  # variant -> split -> scores
    gaps: dict[str, list]                   # variant -> [fairness.GapEstimate]
    bootstrap: dict = field(default_factory=dict)
    #: per decision rule, per test entity: (tp, fp, fn) of every relation -- the input of the
    #: study-design layer (seed x entity bootstrap, paired comparisons); written to
    #: ``entity_counts.npz`` by :func:`evaluate_run`, not part of ``eval.json``
    entity_counts: dict | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("entity_counts", None)
        d["thresholds"] = None if self.thresholds is None else [
            None if not math.isfinite(t) else t for t in self.thresholds]
        return d

    def to_df(self, kind: str = "relations"):
        """A pandas DataFrame of the result. ``kind``: ``"relations"`` (one row per decision rule,
        split and relation: precision, recall, F1, support, predicted), ``"summary"`` (per rule and
        split: bags, entities, micro/macro F1, PR-AUC, curve max F1) or ``"gaps"`` (per rule, relation
        and metric: the gender gaps with their bootstrap intervals)."""
        import pandas as pd

        if kind == "relations":
            rows = [{"variant": v, "split": s, **asdict(r)}
                    for v, by_split in self.scores.items() for s, sc in by_split.items() for r in sc.relations]
        elif kind == "summary":
            rows = [{"variant": v, **{k: x for k, x in asdict(sc).items() if k != "relations"}}
                    for v, by_split in self.scores.items() for sc in by_split.values()]
        elif kind == "gaps":
            rows = [{"variant": v, **asdict(g)} for v, gaps in self.gaps.items() for g in gaps]
        else:
            raise ValueError(f"unknown kind {kind!r}; expected relations, summary or gaps")
        return pd.DataFrame(rows)

    @classmethod
    def from_dict(cls, d: dict) -> "EvalResult":
        from relext.evaluation.fairness import GapEstimate

        scores = {
            v: {s: SplitScores(**{**sc, "relations": [RelationScores(**r) for r in sc["relations"]]})
                for s, sc in by_split.items()}
            for v, by_split in d["scores"].items()
        }
        gaps = {v: [GapEstimate(**g) for g in lst] for v, lst in d["gaps"].items()}
        thresholds = None if d.get("thresholds") is None else [
            math.inf if t is None else t for t in d["thresholds"]]
        return cls(**{**d, "scores": scores, "gaps": gaps, "thresholds": thresholds})


def evaluate_predictions(
    predictions: Mapping[str, Sequence[Mapping]],
    *,
    threshold_mode: str = "global",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    bootstrap_seed: int = 0,
    run_dir: str = "",
    config: dict | None = None,
) -> EvalResult:
    """Evaluate prediction rows per split (keys: ``male_test``, ``female_test``, optionally
    ``validation`` for the threshold variant) and estimate the gender gaps with bootstrap CIs."""
    from relext.evaluation.fairness import gender_gaps

    if threshold_mode not in THRESHOLD_MODES:
        raise ValueError(
            f"unknown threshold mode {threshold_mode!r}; expected one of {list(THRESHOLD_MODES)}")
    missing = [s for s in TEST_SPLITS if s not in predictions]
    if missing:
        raise ValueError(f"predictions lack the test split(s) {missing}; got {sorted(predictions)}")
    tables = {s: PredictionTable.from_rows(rows, where=s) for s, rows in predictions.items()}
    for s in TEST_SPLITS:
        if len(tables[s]) == 0:
            raise ValueError(f"split {s!r} has no prediction rows")
    tables[POOLED] = PredictionTable.concat(tables[s] for s in TEST_SPLITS)

    thresholds = None
    decide = {"argmax": lambda t: argmax_decisions(t.scores)}
    if VALIDATION_SPLIT in tables and len(tables[VALIDATION_SPLIT]):
        val = tables[VALIDATION_SPLIT]
        thresholds = best_thresholds(val.y_true, val.scores, mode=threshold_mode)
        decide["threshold"] = lambda t: threshold_decisions(t.scores, thresholds)

    scores: dict[str, dict[str, SplitScores]] = {}
    gaps: dict[str, list] = {}
    counts: dict[str, np.ndarray] = {}
    pooled_ids = genders_of = None
    for variant, rule in decide.items():
        scores[variant] = {
            s: score_split(tables[s], rule(tables[s]), split=s, variant=variant)
            for s in (*TEST_SPLITS, POOLED)
        }
        pooled = tables[POOLED]
        gaps[variant] = gender_gaps(
            pooled.y_true, rule(pooled),
            sensitive_features=pooled.genders, groups=pooled.entity_ids,
            n_resamples=n_resamples, confidence=confidence, seed=bootstrap_seed,
        )
        from relext.evaluation.fairness import entity_counts

        pooled_ids, counts[variant] = entity_counts(pooled.y_true, rule(pooled), pooled.entity_ids)
        if genders_of is None:
            g = dict(zip(pooled.entity_ids.tolist(), pooled.genders.tolist()))
            genders_of = np.array([g[e] for e in pooled_ids.tolist()], dtype=str)
    config = dict(config or {})
    return EvalResult(
        run_dir=str(run_dir),
        seed=config.get("seed"),
        config=config,
        version=package_version(),
        threshold_mode=threshold_mode,
        thresholds=None if thresholds is None else [float(t) for t in thresholds],
        scores=scores,
        gaps=gaps,
        bootstrap={"n_resamples": n_resamples, "confidence": confidence, "seed": bootstrap_seed,
                   "unit": "entity_id, resampled within each gender's test set"},
        entity_counts={"entity_ids": np.asarray(pooled_ids, dtype=str), "gender": genders_of,
                       **{f"counts_{v}": c.astype(np.int32) for v, c in counts.items()}},
    )


# --------------------------------------------------------------------------------------------
# Run directories
# --------------------------------------------------------------------------------------------
EVAL_SPLITS: tuple[str, ...] = (VALIDATION_SPLIT, *TEST_SPLITS)


def prediction_path(run_dir: str | Path, split: str) -> Path:
    return Path(run_dir) / "predictions" / f"{split}.jsonl"


def ensure_predictions(run_dir: str | Path, splits: Sequence[str] = EVAL_SPLITS, *,
                       predict_fn=None, dataset=None, notes: list | None = None) -> None:
    """Write the run's missing prediction files (``relext.training.predict.write_predictions``), and those
    ``relext.training.predict.verify_predictions`` finds stale (why: to ``notes``); it refuses the rest of
    what cannot be checked. A custom ``predict_fn`` keeps its own files unchecked."""
    from relext.training.predict import verify_predictions

    stale = verify_predictions(run_dir, splits, dataset=dataset) if predict_fn is None else {}
    for s, why in stale.items() if notes is not None else ():
        notes.append(f"{prediction_path(run_dir, s)}: not used ({why}); predicting it again")
    missing = [s for s in splits if s in stale or not prediction_path(run_dir, s).exists()]
    if not missing:
        return
    if predict_fn is None:
        from relext.training.predict import write_predictions as predict_fn  # noqa: N813
    kwargs = {"dataset": dataset} if dataset is not None else {}
    predict_fn(Path(run_dir), splits=tuple(missing), **kwargs)
    still = [s for s in missing if not prediction_path(run_dir, s).exists()]
    if still:
        raise FileNotFoundError(f"{run_dir}: no predictions written for split(s) {still}")


def read_run_config(run_dir: str | Path) -> dict:
    path = Path(run_dir) / "config.json"
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: malformed JSON ({exc.msg})") from None


def evaluate_run(
    run_dir: str | Path,
    *,
    threshold_mode: str = "global",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    bootstrap_seed: int = 0,
    predict_fn=None,
    dataset=None,
    write: bool = True,
    notes: list | None = None,
) -> EvalResult:
    """Evaluate a run directory: predictions (written if missing) -> eval.json + eval.md."""
    from relext.evaluation.report import eval_markdown
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"run directory {run_dir} does not exist")
    ensure_predictions(run_dir, predict_fn=predict_fn, dataset=dataset, notes=notes)
    preds = {s: read_predictions(prediction_path(run_dir, s)) for s in EVAL_SPLITS
             if prediction_path(run_dir, s).exists()}
    result = evaluate_predictions(
        preds, threshold_mode=threshold_mode, n_resamples=n_resamples, confidence=confidence,
        bootstrap_seed=bootstrap_seed, run_dir=str(run_dir), config=read_run_config(run_dir),
    )
    from relext.protocols.crossfit import entity_annotations

    result.entity_counts.update(entity_annotations(result.config, result.entity_counts["entity_ids"], dataset))
    if write:
        write_entity_counts(run_dir / ENTITY_COUNTS, result.entity_counts)
        atomic_write_json(run_dir / "eval.json", result.to_dict())
        atomic_write_text(run_dir / "eval.md", eval_markdown(result))
        # what later steps read, checked against these hashes (wgbcore.provenance.output_status)
        record_outputs([run_dir / ENTITY_COUNTS, run_dir / "eval.json"])
    return result


def load_eval(run_dir: str | Path) -> EvalResult:
    """A run's ``eval.json``, checked against the sha256 recorded when it was written (a file
    changed since: :class:`wgbcore.provenance.OutputChanged` naming it)."""
    from wgbcore.fileio import reading

    path = Path(run_dir) / "eval.json"
    output_status(path)
    with reading(path, "evaluation (eval.json)"):
        return EvalResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
