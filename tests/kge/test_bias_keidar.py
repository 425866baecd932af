"""Keidar et al.: DPD / PPD against the authors' published outputs, and on hand-built frames."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kge.bias.keidar import (DPD, PPD, ProfessionClassifier, demographic_parity_distance, keidar_table,
                             predictive_parity_distance, read_preds_csv)
from kge.bias.result import BiasSpec

REF = Path(__file__).resolve().parents[1] / "data" / "kgbiasdetec_fb15k237"
MODELS = ["transe", "complex", "distmult", "rotate", "conve"]


def _ref(kind, model):
    return pd.read_csv(REF / f"{kind}_{model}.csv.gz", index_col=0)


@pytest.mark.parametrize("model", MODELS)
def test_ppd_equals_the_authors_files_exactly(model):
    preds = read_preds_csv(REF / f"preds_df_{model}.csv.gz")
    ref = _ref("PPD", model)
    assert len(ref) >= 4
    for rel, want in zip(ref.relations, ref.bias_scores):
        assert predictive_parity_distance(preds, rel) == want, rel


@pytest.mark.parametrize("model", MODELS)
def test_dpd_equals_the_authors_files_with_files_normalisation(model):
    preds = read_preds_csv(REF / f"preds_df_{model}.csv.gz")
    ref = _ref("DPD", model)
    for rel, want in zip(ref.relations, ref.bias_scores):
        assert demographic_parity_distance(preds, rel) == want, rel
        # their current code divides by |A| + 1 instead of |A|
        n = len({v for v in preds[rel] if v != -1})
        code = demographic_parity_distance(preds, rel, normalisation="code")
        assert code == pytest.approx(want * n / (n + 1), abs=1e-15)


def test_fairlearn_backend_gives_the_same_numbers():
    preds = read_preds_csv(REF / "preds_df_transe.csv.gz")
    for rel in ["/people/person/gender"]:  # MetricFrame is slow: one relation is enough
        assert demographic_parity_distance(preds, rel, backend="fairlearn") == demographic_parity_distance(preds, rel)
        assert predictive_parity_distance(preds, rel, backend="fairlearn") == predictive_parity_distance(preds, rel)


def _frame(rows):
    return pd.DataFrame(rows, columns=["entity", "true_tail", "pred", "g"])


def test_dpd_and_ppd_by_hand():
    # value 1: predictions always class 0 (half right); value 2: always class 1 (all right); one unknown
    df = _frame([(0, 0, 0, 1), (1, 1, 0, 1), (2, 1, 1, 2), (3, 1, 1, 2), (4, 0, 1, -1)])
    # DPD, value 1: P(pred=0|1)=1 vs P(pred=0|not 1)=0 -> 1; pred=1: 0 vs 1 -> 1; sum 2
    # value 2: P(pred=0|2)=0 vs 2/3 ; P(pred=1|2)=1 vs 1/3 -> 4/3 ; total 10/3 over |A|=2
    assert demographic_parity_distance(df, "g") == pytest.approx(10 / 6)
    assert demographic_parity_distance(df, "g", normalisation="code") == pytest.approx(10 / 9)
    # PPD: precision(1)=1/2, precision(2)=1 (unknown row excluded) -> (1/2 + 1/2) / 2
    assert predictive_parity_distance(df, "g") == pytest.approx(0.5)
    # one known value only: PPD is 0 by definition
    assert predictive_parity_distance(_frame([(0, 0, 0, 1), (1, 1, 0, -1)]), "g") == 0.0


def test_identical_groups_have_zero_distances():
    df = _frame([(i, i % 2, i % 2, 1 + (i // 2) % 2) for i in range(8)])
    assert demographic_parity_distance(df, "g") == 0.0
    assert predictive_parity_distance(df, "g") == 0.0


def test_measures_accept_a_given_frame_and_build_the_table():
    preds = read_preds_csv(REF / "preds_df_transe.csv.gz")
    rel = "/people/person/nationality"
    spec = BiasSpec(rel, target_relation="/people/person/profession")
    d = DPD(preds=preds).run(None, None, spec, model_label="transe")
    p = PPD(preds=preds).run(None, None, spec, model_label="transe")
    assert d.rows[0].item == "*" and d.rows[0].score == _ref("DPD", "transe").set_index("relations").bias_scores[rel]
    assert p.rows[0].score == _ref("PPD", "transe").set_index("relations").bias_scores[rel]
    table = keidar_table([d, p])
    assert table.loc[rel, ("keidar_dpd", "transe")] == d.rows[0].score


def test_bad_normalisation_and_classifier_are_errors():
    with pytest.raises(ValueError, match="unknown DPD normalisation 'x'"):
        demographic_parity_distance(_frame([(0, 0, 0, 1)]), "g", normalisation="x")
    with pytest.raises(ValueError, match="unknown classifier 'svm'"):
        ProfessionClassifier("svm").build()
    with pytest.raises(ValueError, match="no column for sensitive relation 'h'"):
        predictive_parity_distance(_frame([(0, 0, 0, 1)]), "h")


def test_read_preds_csv_rejects_other_files(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text(",a,b\n0,1,2\n")
    with pytest.raises(ValueError, match="x.csv: not a predictions frame"):
        read_preds_csv(p)
