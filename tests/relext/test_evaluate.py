"""Evaluation metrics against hand-computed values on tiny prediction sets."""
import json
import math

import numpy as np
import pytest

from relext.evaluation.evaluate import (
    PredictionTable,
    argmax_decisions,
    best_thresholds,
    curve_max_f1,
    evaluate_predictions,
    macro_f1,
    micro_f1,
    per_relation_prf,
    pr_auc,
    read_predictions,
    threshold_decisions,
)
from support.relext_data import synthetic_predictions


def row(i, labels, scores, gender="male", entity=None):
    return {"bag_id": f"b{i}", "split": "x", "entity_id": entity or f"e{i}", "head": "h",
            "tail": f"t{i}", "gender": gender, "labels": labels, "scores": scores,
            "sentence_ids": [f"s{i}"]}


def onehot(j, p=0.9):
    s = [(1 - p) / 4] * 5
    s[j] = p
    return s


# bags: gold -> argmax
TINY = [
    row(1, [1], onehot(1)),  # TP spouse
    row(2, [1], onehot(0)),  # FN spouse
    row(3, [0], onehot(1)),  # FP spouse
    row(4, [2], onehot(2)),  # TP hypernym
    row(5, [3], onehot(4)),  # FN birthDate, FP birthPlace
    row(6, [4], onehot(4)),  # TP birthPlace
]


def test_argmax_per_relation_hand_computed():
    t = PredictionTable.from_rows(TINY)
    pred = argmax_decisions(t.scores)
    prf = per_relation_prf(t.y_true, pred)
    assert prf["spouse"]["precision"] == pytest.approx(0.5)
    assert prf["spouse"]["recall"] == pytest.approx(0.5)
    assert prf["spouse"]["f1"] == pytest.approx(0.5)
    assert prf["hypernym"]["f1"] == pytest.approx(1.0)
    assert prf["birthDate"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 0}
    assert prf["birthPlace"]["precision"] == pytest.approx(0.5)
    assert prf["birthPlace"]["recall"] == pytest.approx(1.0)
    assert prf["birthPlace"]["f1"] == pytest.approx(2 / 3)
    assert micro_f1(t.y_true, pred) == pytest.approx(0.6)  # tp 3, fp 2, fn 2
    assert macro_f1(t.y_true, pred) == pytest.approx((0.5 + 1 + 0 + 2 / 3) / 4)


def test_matches_sklearn_one_vs_rest():
    from sklearn.metrics import f1_score, precision_score, recall_score

    rows = synthetic_predictions("male_test", n_entities=30, accuracy=0.6, seed=3)
    t = PredictionTable.from_rows(rows)
    pred = argmax_decisions(t.scores)
    prf = per_relation_prf(t.y_true, pred)
    for j, rel in enumerate(["spouse", "hypernym", "birthDate", "birthPlace"], start=1):
        assert prf[rel]["f1"] == pytest.approx(f1_score(t.y_true[:, j], pred[:, j], zero_division=0))
        assert prf[rel]["precision"] == pytest.approx(precision_score(t.y_true[:, j], pred[:, j], zero_division=0))
        assert prf[rel]["recall"] == pytest.approx(recall_score(t.y_true[:, j], pred[:, j], zero_division=0))


def test_pr_auc_and_curve_max_f1_hand_computed():
    rows = [row(1, [1], [0.05, 0.6, 0.2, 0.1, 0.05]), row(2, [2], [0.0, 0.5, 0.3, 0.15, 0.05])]
    t = PredictionTable.from_rows(rows)
    # ranking: A1 .6 ok, B1 .5, B2 .3 ok, ... -> (r, p): (.5, 1), (.5, .5), (1, 2/3), (1, ...)
    assert pr_auc(t.y_true, t.scores) == pytest.approx(0.5 * (0.5 + 2 / 3) / 2)
    assert curve_max_f1(t.y_true, t.scores) == pytest.approx(0.8)


def test_best_threshold_global_and_per_relation():
    val = [row(1, [1], [0.1, 0.7, 0.01, 0.01, 0.01]),
           row(2, [0], [0.3, 0.6, 0.01, 0.01, 0.01]),
           row(3, [2], [0.4, 0.01, 0.5, 0.01, 0.01])]
    t = PredictionTable.from_rows(val)
    g = best_thresholds(t.y_true, t.scores, mode="global")
    assert math.isinf(g[0]) and np.allclose(g[1:], 0.5)  # F1 at .7/.6/.5 = .667/.5/.8
    p = best_thresholds(t.y_true, t.scores, mode="per_relation")
    assert p[1] == pytest.approx(0.7) and p[2] == pytest.approx(0.5)
    assert math.isinf(p[3]) and math.isinf(p[4])  # no gold: predict nothing
    dec = threshold_decisions(t.scores, g)
    assert dec[:, 0].sum() == 0 and dec[1, 1] and dec[2, 2] and not dec[2, 1]
    with pytest.raises(ValueError, match="unknown threshold mode"):
        best_thresholds(t.y_true, t.scores, mode="nope")


def test_evaluate_predictions_splits_and_threshold_from_validation():
    preds = {
        "validation": synthetic_predictions("validation", gender="mixed", seed=1),
        "male_test": synthetic_predictions("male_test", seed=2),
        "female_test": synthetic_predictions("female_test", seed=3),
    }
    res = evaluate_predictions(preds, n_resamples=50)
    assert set(res.scores) == {"argmax", "threshold"}
    assert set(res.scores["argmax"]) == {"male_test", "female_test", "pooled"}
    assert res.scores["argmax"]["pooled"].n_bags == 120
    assert res.scores["argmax"]["male_test"].n_entities == 20
    # the threshold depends on validation only
    preds2 = {**preds, "male_test": synthetic_predictions("male_test", seed=9)}
    assert evaluate_predictions(preds2, n_resamples=50).thresholds == res.thresholds
    # without validation there is no threshold variant
    no_val = evaluate_predictions({k: preds[k] for k in ("male_test", "female_test")}, n_resamples=10)
    assert set(no_val.scores) == {"argmax"} and no_val.thresholds is None
    d = json.loads(json.dumps(res.to_dict()))
    from relext.evaluation.evaluate import EvalResult

    assert EvalResult.from_dict(d).scores["argmax"]["pooled"].micro_f1 == res.scores["argmax"]["pooled"].micro_f1


def test_missing_test_split_is_an_error():
    with pytest.raises(ValueError, match="female_test"):
        evaluate_predictions({"male_test": synthetic_predictions("male_test")})


@pytest.mark.parametrize("line,msg", [
    ("{not json", "malformed JSON"),
    (json.dumps({"bag_id": "b", "entity_id": "e", "gender": "male", "labels": [1]}), "'scores'"),
    (json.dumps({"bag_id": "b", "entity_id": "e", "gender": "other", "labels": [1], "scores": [0.2] * 5}), "'gender'"),
    (json.dumps({"bag_id": "b", "entity_id": "e", "gender": "male", "labels": [7], "scores": [0.2] * 5}), "'labels'"),
    (json.dumps({"bag_id": "b", "entity_id": "e", "gender": "male", "labels": [1], "scores": [0.2] * 4}), "'scores'"),
])
def test_read_predictions_errors_name_file_line_field(tmp_path, line, msg):
    p = tmp_path / "p.jsonl"
    good = json.dumps(TINY[0])
    p.write_text(good + "\n" + line + "\n")
    with pytest.raises(ValueError, match=msg) as e:
        read_predictions(p)
    assert f"{p}:2" in str(e.value)
