"""`wgb re score` on a REAL run's predictions gives exactly `wgb re eval`'s numbers.

The run is the pretrained PCNN+attention extractor shipped in the package (a real training run on
the release's train split, `relext/pretrained/pcnn-attention`), copied to a temporary folder; `wgb re
eval` writes its predictions on the real validation and test splits of the embedded release (CPU
inference, about 6 s of CPU) and its eval.json; `wgb re score` then reads those prediction
files as any extractor's, and every gap, interval, flag and micro F1 must be identical.
(`tests/relext/test_score.py` checks the same equality on synthetic predictions in the default suite.)
"""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from wgb.cli import cli

pytestmark = pytest.mark.slow

RESAMPLES, SEED = 300, 5


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    from relext import pretrained

    run = tmp_path_factory.mktemp("real") / "pcnn-attention"
    shutil.copytree(pretrained.verify("pcnn-attention"), run)
    (run / "eval.json").unlink()    # re-made below from predictions written now
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot", "--resamples", str(RESAMPLES),
                                   "--bootstrap-seed", str(SEED)])
    assert res.exit_code == 0, res.output
    return run, json.loads((run / "eval.json").read_text())


def test_real_predictions_are_the_release_test_sets(real_run):
    run, ev = real_run
    from relext import pretrained

    # the shipped run's committed score: the predictions are that real model's on the real split
    shipped = json.loads((pretrained.path("pcnn-attention") / "eval.json").read_text())
    male = ev["scores"]["argmax"]["male_test"]
    assert male["micro_f1"] == shipped["scores"]["argmax"]["male_test"]["micro_f1"]
    rows = [json.loads(x) for s in ("male_test", "female_test")
            for x in (run / "predictions" / f"{s}.jsonl").read_text().splitlines()]
    assert len(rows) == male["n_bags"] + ev["scores"]["argmax"]["female_test"]["n_bags"] > 2000


@pytest.mark.parametrize("rule", ["argmax", "threshold"])
def test_score_equals_eval_on_a_real_run(real_run, rule, tmp_path):
    run, ev = real_run
    out = tmp_path / "score.json"
    res = CliRunner().invoke(cli, ["re", "score", str(run / "predictions"), "--rule", rule, "--resamples",
                                   str(RESAMPLES), "--bootstrap-seed", str(SEED), "--out", str(out)])
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    metric = {"f1": "f1", "recall": "eo"}
    got = {(g["relation"], g["metric"]): g for g in rep["gaps"]}
    assert len(got) == len(ev["gaps"][rule]) == 9
    for g in ev["gaps"][rule]:
        r = got[(g["relation"], metric[g["metric"]])]
        assert (r["male"], r["female"], r["gap"], r["ci_low"], r["ci_high"], r["flagged"]) == (
            g["male"], g["female"], g["gap"], g["ci_low"], g["ci_high"], g["flagged"]), g["relation"]
    scores = ev["scores"][rule]
    per_run = rep["per_run"][0]
    assert per_run["micro_f1"] == pytest.approx(scores["pooled"]["micro_f1"], abs=1e-12)
    assert per_run["micro_f1_male"] == pytest.approx(scores["male_test"]["micro_f1"], abs=1e-12)
    assert per_run["micro_f1_female"] == pytest.approx(scores["female_test"]["micro_f1"], abs=1e-12)
    assert rep["n_bags"] == scores["pooled"]["n_bags"]
