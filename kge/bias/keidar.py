"""Keidar, Zhong, Zhang, Shrestha & Paudel (2021), "Towards Automatic Bias Detection in Knowledge
Graphs": a table of bias scores per sensitive relation (x model) from three measures.

* a profession classifier on entity embeddings (random forest or MLP, scikit-learn) predicts the
  ``num_classes - 1`` most frequent target items + OTHER for the test facts of the target relation;
  its predictions form a *predictions frame* in the authors' format (``entity, relation, true_tail,
  pred`` and one column per sensitive relation holding the person's tail id, ``-1`` = unknown or
  rarer than ``min_tail_count`` in the test rows);
* **demographic parity distance** (DPD): ``sum_{a in A} sum_t |P(pred=t | a) - P(pred=t | not a)|``
  over observed values A (``not a`` includes the unknowns) and target classes t, divided by
  ``|A|`` (``normalisation="files"``, the authors' published DPD_*.csv files) or by ``|A|+1``
  (``normalisation="code"``, their current Measurement.py). Default: the files' convention;
* **predictive parity distance** (PPD): ``sum_{a in A} |precision(a) - precision(not a)|`` / ``|A|``
  with micro precision and ``not a`` = the other known values; 0 when fewer than two values are known.
  Equal to the authors' PPD_*.csv to the last bit when fed their preds_df_*.csv (a test);
* **translational likelihood bias** (TLB): Fisher's one-step measure with the authors' step 1e-3,
  between the two most frequent values (or the given a, b), over the persons holding them.
  Per-item rows plus an aggregate (mean |score| over items; the paper's eq. 6 sums per-tail scores,
  the authors' code does not aggregate TLB).

Per-group rates are exact integer ratios (``backend="fairlearn"`` computes them with fairlearn's
``MetricFrame`` instead: the same numbers, ~100x slower); the sums run in the authors' order so
the floats agree exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from kge.bias.context import GraphView
from kge.bias.embedding import entity_matrix, model_name
from kge.bias.fisher import Fisher
from kge.bias.result import BiasResult, BiasRow, BiasSpec

NORMALISATIONS = ("files", "code")
CLASSIFIERS = ("rf", "mlp")


# -- the two classification measures on a predictions frame ------------------------------------------
def _attribute_set(col: pd.Series) -> list:
    s = list(set(col))
    if -1 in s:
        s.remove(-1)
    return s


def _mean(mask: np.ndarray) -> float:
    """``sum(mask) / len(mask)`` as the authors compute it (exact integer division)."""
    return int(mask.sum()) / len(mask)


def demographic_parity_distance(preds: pd.DataFrame, relation: str, *, normalisation: str = "files",
                                per_value: dict | None = None, backend: str = "numpy") -> float:
    """DPD of ``relation`` (a column of ``preds``); see the module docstring. ``backend="fairlearn"``
    computes the per-group selection rates with ``fairlearn.metrics.MetricFrame`` (same numbers,
    about 100x slower on this machine)."""
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"unknown DPD normalisation '{normalisation}'; expected one of {list(NORMALISATIONS)}")
    if relation not in preds.columns:
        raise ValueError(f"predictions frame has no column for sensitive relation '{relation}'")
    pred_set = set(preds.pred)
    targets = [t for t in list(set(preds.true_tail.values)) if t in pred_set]
    col = preds[relation]
    attrs = _attribute_set(col)
    if not attrs:
        return 0.0
    colv, pred = col.to_numpy(), preds.pred.to_numpy()
    total = 0.0
    for attr in attrs:
        grp = colv == attr
        if grp.all():  # nobody outside the group: P(pred | not a) undefined, term skipped
            continue
        rates = _selection_rates(pred, grp, targets, preds.true_tail.to_numpy(), backend)
        part = 0.0
        for t in targets:
            d = abs(rates[True][t] - rates[False][t])
            total += d
            part += d
        if per_value is not None:
            per_value[attr] = part
    return total / (len(attrs) + (1 if normalisation == "code" else 0))


def _selection_rates(pred, grp, targets, y_true, backend):
    if backend == "numpy":
        return {g: {t: _mean(pred[grp == g] == t) for t in targets} for g in (True, False)}
    if backend == "fairlearn":
        from fairlearn.metrics import MetricFrame, selection_rate

        mf = MetricFrame(metrics={t: partial(selection_rate, pos_label=t) for t in targets}, y_true=y_true,
                         y_pred=pred, sensitive_features=grp)
        return {g: {t: mf.by_group.loc[g, t] for t in targets} for g in (True, False)}
    raise ValueError(f"unknown backend '{backend}'; expected 'numpy' or 'fairlearn'")


def predictive_parity_distance(preds: pd.DataFrame, relation: str, *, per_value: dict | None = None,
                               backend: str = "numpy") -> float:
    """PPD of ``relation``; see the module docstring (micro precision == accuracy here)."""
    if relation not in preds.columns:
        raise ValueError(f"predictions frame has no column for sensitive relation '{relation}'")
    col = preds[relation]
    attrs = _attribute_set(col)
    if len(attrs) <= 1:
        return 0.0
    known = preds[col != -1]
    kcol = known[relation].to_numpy()
    y, p = known.true_tail.to_numpy(), known.pred.to_numpy()
    total = 0.0
    for attr in attrs:
        grp = kcol == attr
        if backend == "numpy":
            d = abs(_mean(y[grp] == p[grp]) - _mean(y[~grp] == p[~grp]))
        elif backend == "fairlearn":
            from fairlearn.metrics import MetricFrame
            from sklearn.metrics import accuracy_score

            g = MetricFrame(metrics=accuracy_score, y_true=y, y_pred=p, sensitive_features=grp).by_group
            d = abs(g.loc[True] - g.loc[False])
        else:
            raise ValueError(f"unknown backend '{backend}'; expected 'numpy' or 'fairlearn'")
        total += d
        if per_value is not None:
            per_value[attr] = d
    return total / len(attrs)


# -- building a predictions frame from embeddings -----------------------------------------------------------
@dataclass
class ProfessionClassifier:
    """Classifier of the target relation's item from a person's entity embedding."""

    kind: str = "rf"  # rf | mlp
    num_classes: int = 6
    max_depth: int | None = 10
    n_estimators: int = 100
    seed: int = 0

    def build(self):
        if self.kind == "rf":
            from sklearn.ensemble import RandomForestClassifier

            return RandomForestClassifier(n_estimators=self.n_estimators, max_depth=self.max_depth,
                                          class_weight="balanced", random_state=self.seed, n_jobs=1)
        if self.kind == "mlp":
            from sklearn.neural_network import MLPClassifier

            return MLPClassifier(hidden_layer_sizes=(256, 16), max_iter=200, early_stopping=True,
                                 random_state=self.seed)
        raise ValueError(f"unknown classifier '{self.kind}'; expected one of {list(CLASSIFIERS)}")


_CACHE: dict = {}


def classify_target(model, view: GraphView, target_relation: str, clf: ProfessionClassifier) -> tuple[pd.DataFrame, dict]:
    """Train on the fact splits' target facts, predict the test split's. Returns the frame
    ``entity, relation, true_tail, pred`` (class ids; the last class is OTHER) and info."""
    key = (id(model), id(view), target_relation, clf.kind, clf.num_classes, clf.max_depth, clf.n_estimators, clf.seed)
    if key in _CACHE:
        return _CACHE[key]
    t_rel = view.relation_id(target_relation, "target relation")
    test = view.splits.get("test")
    if test is None or not (test[:, 1] == t_rel).any():
        raise ValueError(f"the classifier measures need test facts of '{target_relation}'; the graph has none")
    test = test[test[:, 1] == t_rel]
    train = view.rel_triples(t_rel)
    vals, counts = np.unique(train[:, 2], return_counts=True)
    keep = vals[np.lexsort((vals, -counts))][: clf.num_classes - 1]
    other = len(keep)
    cls_of = {int(v): i for i, v in enumerate(keep)}

    def labels(t):
        return np.array([cls_of.get(int(x), other) for x in t[:, 2]])

    E = entity_matrix(model).float().numpy()
    c = clf.build()
    c.fit(E[train[:, 0]], labels(train))
    pred = c.predict(E[test[:, 0]])
    frame = pd.DataFrame({"entity": test[:, 0], "relation": target_relation, "true_tail": labels(test),
                          "pred": pred.astype(np.int64)})
    y, p = frame.true_tail.to_numpy(), frame.pred.to_numpy()
    from sklearn.metrics import balanced_accuracy_score

    info = {"classes": [view.entity_names[int(v)] for v in keep] + ["OTHER"], "train_rows": int(len(train)),
            "test_rows": int(len(test)), "accuracy": float((y == p).mean()),
            "balanced_accuracy": float(balanced_accuracy_score(y, p))}
    _CACHE[key] = (frame, info)
    return frame, info


def sensitive_column(view: GraphView, persons: np.ndarray, relation: str, min_tail_count: int = 10) -> np.ndarray:
    """Each person's tail id for ``relation`` (the most frequent one when they have several), -1
    where unknown or where the value occurs fewer than ``min_tail_count`` times in these rows."""
    rel = view.relation_id(relation, "sensitive relation")
    facts = np.concatenate(list(view.splits.values()), 0)
    facts = facts[facts[:, 1] == rel]
    vals, counts = np.unique(facts[:, 2], return_counts=True)
    freq = dict(zip(vals.tolist(), counts.tolist()))
    best: dict[int, int] = {}
    for h, t in zip(facts[:, 0].tolist(), facts[:, 2].tolist()):
        cur = best.get(h)
        if cur is None or (freq[t], -t) > (freq[cur], -cur):
            best[h] = t
    col = np.array([best.get(int(p), -1) for p in persons], dtype=np.int64)
    v, c = np.unique(col[col >= 0], return_counts=True)
    rare = set(v[c < min_tail_count].tolist())
    if rare:
        col[np.isin(col, list(rare))] = -1
    return col


def predictions_frame(model, view: GraphView, target_relation: str, sensitive_relations, clf: ProfessionClassifier,
                      min_tail_count: int = 10) -> tuple[pd.DataFrame, dict]:
    frame, info = classify_target(model, view, target_relation, clf)
    frame = frame.copy()
    for r in sensitive_relations:
        frame[r] = sensitive_column(view, frame.entity.to_numpy(), r, min_tail_count)
    return frame, info


# -- registered measures ------------------------------------------------------------------------------------
@dataclass
class _ClassifierMeasure:
    classifier: str = "rf"
    num_classes: int = 6
    max_depth: int | None = 10
    n_estimators: int = 100
    min_tail_count: int = 10
    preds: pd.DataFrame | None = None  # a given predictions frame (e.g. the authors' CSV)
    needs_model: bool = True

    def check(self, view, model, spec) -> None:
        """What :meth:`_frame` would refuse after training a classifier, checked first."""
        if self.preds is not None:
            return
        t_rel = view.relation_id(spec.target_relation, "target relation")
        test = view.splits.get("test")
        if test is None or not (test[:, 1] == t_rel).any():
            raise ValueError(f"the classifier measures need test facts of '{spec.target_relation}'; the graph has none")

    def _frame(self, view, model, spec, seed):
        if self.preds is not None:
            return self.preds, {"source": "given predictions frame"}
        view.check_model(model)
        view.relation_id(spec.sensitive_relation, "sensitive relation")  # names first, then training
        view.relation_id(spec.target_relation, "target relation")
        clf = ProfessionClassifier(self.classifier, self.num_classes, self.max_depth, self.n_estimators, seed=seed)
        return predictions_frame(model, view, spec.target_relation, [spec.sensitive_relation], clf, self.min_tail_count)

    def _rows(self, view, spec, model_lbl, total, per_value):
        names = view.entity_names if view is not None else None

        def nm(v):
            return names[int(v)] if names is not None and 0 <= int(v) < len(names) else str(v)

        rows = [BiasRow(self.name, model_lbl, spec.sensitive_relation, None, None, spec.target_relation, "*", float(total),
                        extra={"aggregate": True})]
        rows += [BiasRow(self.name, model_lbl, spec.sensitive_relation, nm(v), None, spec.target_relation, nm(v),
                         float(s)) for v, s in per_value.items()]
        return rows

    def _cfg(self):
        return {"classifier": self.classifier, "num_classes": self.num_classes, "max_depth": self.max_depth,
                "n_estimators": self.n_estimators,
                "min_tail_count": self.min_tail_count, "given_preds": self.preds is not None}


@dataclass
class DPD(_ClassifierMeasure):
    """Registered as ``keidar_dpd``. Row ``*``: the relation's DPD; other rows: per-value terms."""

    normalisation: str = "files"
    name: str = "keidar_dpd"

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        frame, info = self._frame(view, model, spec, seed)
        per = {}
        total = demographic_parity_distance(frame, spec.sensitive_relation, normalisation=self.normalisation, per_value=per)
        lbl = model_label or model_name(model)
        return BiasResult(self.name, lbl, spec, self._rows(view, spec, lbl, total, per),
                          {"dpd": total, "classifier": info, "normalisation": self.normalisation},
                          config={**self._cfg(), "normalisation": self.normalisation}, seed=seed)


@dataclass
class PPD(_ClassifierMeasure):
    """Registered as ``keidar_ppd``. Row ``*``: the relation's PPD; other rows: per-value terms."""

    name: str = "keidar_ppd"

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        frame, info = self._frame(view, model, spec, seed)
        per = {}
        total = predictive_parity_distance(frame, spec.sensitive_relation, per_value=per)
        lbl = model_label or model_name(model)
        return BiasResult(self.name, lbl, spec, self._rows(view, spec, lbl, total, per),
                          {"ppd": total, "classifier": info}, config=self._cfg(), seed=seed)


@dataclass
class TLB:
    """Registered as ``keidar_tlb``: Fisher's measure with step 1e-3 between a and b (default: the
    two most frequent values of the sensitive relation) over the persons holding exactly one of
    them. Rows: one per item (``score`` towards a, ``extra.score_b`` towards b) and ``*`` = mean
    ``|score|`` over items."""

    alpha: float = 1e-3
    name: str = "keidar_tlb"
    needs_model: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not self.alpha > 0:
            raise ValueError(f"keidar_tlb: alpha (Fisher's step) must be a number > 0, got {self.alpha!r}")

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        if spec.a is None or spec.b is None:
            s_rel = view.relation_id(spec.sensitive_relation, "sensitive relation")
            vals = view.values(s_rel)
            if len(vals) < 2:
                raise ValueError(f"'{spec.sensitive_relation}' has fewer than 2 values; TLB needs two")
            a = spec.a or view.entity_names[vals[0]]
            b = spec.b or next(view.entity_names[v] for v in vals if view.entity_names[v] != a)
            spec = BiasSpec(spec.sensitive_relation, a, b, spec.target_relation)
        fa = Fisher(alpha=self.alpha, persons="groups").run(view, model, spec, seed=seed, model_label=model_label)
        rev = BiasSpec(spec.sensitive_relation, spec.b, spec.a, spec.target_relation)
        fb = Fisher(alpha=self.alpha, persons="groups").run(view, model, rev, seed=seed, model_label=model_label)
        rows = []
        for ra, rb in zip(fa.rows, fb.rows):
            rows.append(BiasRow(self.name, ra.model, spec.sensitive_relation, spec.a, spec.b, spec.target_relation,
                                ra.item, ra.score, ra.count_a, ra.count_b, extra={"score_b": rb.score}))
        agg = float(np.mean([abs(r.score) for r in rows])) if rows else float("nan")
        rows.insert(0, BiasRow(self.name, fa.model, spec.sensitive_relation, spec.a, spec.b, spec.target_relation, "*",
                               agg, extra={"aggregate": True}))
        return BiasResult(self.name, fa.model, spec, rows, {"tlb": agg, **fa.summary},
                          config={"alpha": self.alpha}, seed=seed)


def keidar_table(results) -> pd.DataFrame:
    """The paper's output: one row per sensitive relation, one column per (measure, model), from
    the aggregate (``*``) rows of DPD / PPD / TLB results."""
    recs = []
    for r in results:
        if not r.measure.startswith("keidar_"):
            continue
        for row in r.rows:
            if row.item == "*":
                recs.append({"relation": r.spec.sensitive_relation, "measure": r.measure, "model": r.model,
                             "score": row.score})
    if not recs:
        return pd.DataFrame()
    df = pd.DataFrame(recs)
    return df.pivot_table(index="relation", columns=["measure", "model"], values="score", aggfunc="first")


def read_preds_csv(path) -> pd.DataFrame:
    """Read an authors'-format ``preds_df_*.csv`` (first column = index)."""
    from wgbcore.fileio import reading

    with reading(path, "predictions CSV"):
        df = pd.read_csv(path, index_col=0)
    missing = [c for c in ("entity", "true_tail", "pred") if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a predictions frame, missing column(s) {missing}")
    return df
