"""`to_df()` of the result objects users get back: pandas DataFrames with one row per record."""
import json

import pandas as pd

from support.relext_data import synthetic_predictions


def test_eval_result_to_df():
    from relext.evaluation.evaluate import evaluate_predictions

    preds = {s: synthetic_predictions(s, n_entities=8, seed=i, gender="mixed" if s == "validation" else None)
             for i, s in enumerate(("validation", "male_test", "female_test"))}
    res = evaluate_predictions(preds, n_resamples=50)
    rel = res.to_df()
    assert list(rel.columns) == ["variant", "split", "relation", "precision", "recall", "f1", "support", "predicted"]
    assert len(rel) == 2 * 3 * 4   # rules x (male_test, female_test, pooled) x positive relations
    row = rel[(rel.variant == "argmax") & (rel.split == "pooled") & (rel.relation == "spouse")].iloc[0]
    assert row.f1 == res.scores["argmax"]["pooled"].relation("spouse").f1
    summary = res.to_df("summary")
    assert len(summary) == 6 and {"micro_f1", "pr_auc", "n_bags"} <= set(summary.columns)
    gaps = res.to_df("gaps")
    assert len(gaps) == 2 * 9 and {"variant", "relation", "metric", "gap", "ci_low", "ci_high"} <= set(gaps.columns)
    # a result read back from eval.json gives the same frame
    from relext.evaluation.evaluate import EvalResult

    again = EvalResult.from_dict(json.loads(json.dumps(res.to_dict())))
    pd.testing.assert_frame_equal(again.to_df("gaps"), gaps)


def test_bias_result_to_df(tmp_path):
    from kge.bias.result import BiasResult, BiasRow, BiasSpec, ROW_FIELDS, load_results, results_df, save_results

    spec = BiasSpec("gender", "male", "female", "profession")
    rows = [BiasRow("data", "-", "gender", "male", "female", "profession", "nurse", -0.5, 1, 9, {"p": 0.01}),
            BiasRow("data", "-", "gender", "male", "female", "profession", "engineer", 0.7, 8, 2)]
    r = BiasResult("data", "-", spec, rows, seed=3)
    df = r.to_df()
    assert list(df.columns[:len(ROW_FIELDS)]) == list(ROW_FIELDS) and list(df["item"]) == ["nurse", "engineer"]
    assert df.loc[0, "p"] == 0.01 and pd.isna(df.loc[1, "p"]) and set(df["seed"]) == {3}
    assert "p" not in r.to_df(extra=False).columns
    save_results([r, r], tmp_path / "bias.json")
    assert len(results_df(load_results(tmp_path / "bias.json"))) == 4
    assert list(results_df([]).columns) == [*ROW_FIELDS, "seed"]


def test_design_estimates_and_verdicts_to_df():
    import numpy as np

    from wgbstats.design import Claim, Design, flags, verdicts
    from relext.evaluation.study_counts import StudyCounts
    from relext.evaluation.score import estimates_df, verdicts_df

    rng = np.random.default_rng(0)
    gender = np.array(["male", "female"] * 10)
    counts = {v: {s: rng.integers(0, 4, size=(20, 5, 3)) for s in range(3)} for v in ("a", "b")}
    d = Design(StudyCounts([f"e{i}" for i in range(20)], gender, counts), n_resamples=200)
    ests = {"spouse": d.metric("a", "f1_gap:spouse"), "diff": d.difference("a", "b", "micro_f1_gap")}
    df = estimates_df(ests, flags=flags(list(ests.values())))
    assert list(df["name"]) == ["spouse", "diff"]
    assert {"value", "ci_low", "ci_high", "ci_seed_low", "ci_entity_high", "p_adjusted", "flagged"} <= set(df.columns)
    assert df.loc[0, "ci_low"] == ests["spouse"].ci[0] and df.loc[0, "seeds"] == "0,1,2"
    vs = verdicts([Claim("a > b", "micro F1 gap", +1, ests["diff"])])
    vdf = verdicts_df(vs)
    assert vdf.loc[0, "verdict"] == vs[0].verdict and vdf.loc[0, "ci_high"] == vs[0].ci[1]
