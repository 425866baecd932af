"""Bias results: JSON round trip, atomic writes, clear errors on malformed reports."""
from __future__ import annotations

import json

import pytest

from kge.bias import run_measure
from kge.bias.result import BiasResult, BiasSpec, load_results, save_results
from kge.synthetic import generate


def test_round_trip(tmp_path):
    g = generate(n_individuals=300, n_occupations=6, seed=0)
    res = run_measure("data", g, None, BiasSpec("gender", "male", "female"), seed=7)
    p = tmp_path / "bias.json"
    save_results([res], p)
    doc = json.loads(p.read_text())
    assert doc["rows"][0].keys() >= {"measure", "model", "sensitive_relation", "a", "b", "target_relation", "item",
                                     "score", "count_a", "count_b"}
    back = load_results(p)
    assert len(back) == 1 and back[0].seed == 7 and back[0].config == res.config
    assert [(r.item, r.score) for r in back[0].rows] == [(r.item, r.score) for r in res.rows]
    assert not list(tmp_path.glob(".*.tmp"))


def test_rows_only_file_loads(tmp_path):
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([{"measure": "fisher", "model": "transe", "sensitive_relation": "gender", "a": "male",
                              "b": "female", "target_relation": "profession", "item": "nurse", "score": -0.1,
                              "count_a": 1, "count_b": 5}]))
    (r,) = load_results(p)
    assert r.rows[0].item == "nurse" and r.spec.a == "male"


def test_malformed_reports_are_named(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON \\(line 1"):
        load_results(p)
    p.write_text(json.dumps([{"measure": "x"}]))
    with pytest.raises(ValueError, match="row 0 lacks field"):
        load_results(p)


def test_nan_scores_are_written_as_null(tmp_path):
    r = BiasResult("x", "m", BiasSpec("g", "a", "b"), [], summary={"v": float("nan")})
    save_results([r], tmp_path / "n.json")
    assert json.loads((tmp_path / "n.json").read_text())["results"][0]["summary"]["v"] is None
