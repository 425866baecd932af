"""Every registered bias measure on a graph whose answer is known by construction.

The synthetic graph plants a bias (a-occupations held by a-persons with probability 0.9) and the
planted embeddings put a-persons and a-occupations on the a side of one axis, b on the other, with
every relation an identity map, for each of the five models. Each measure has a checker that says
what its output must be on such a graph (here, or as the measure class's own ``known_answer``); a
newly registered measure without one fails.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib: helpers beside us
from bias_fixtures import MODEL_NAMES, planted_graph, planted_model
from kge.bias import MEASURES, BiasSpec, get_measure, run_measure

SPEC = BiasSpec("gender", "male", "female", "profession")
ALL = MEASURES.names()  # every registered measure: a new one is run here without touching this file
OWN = [m for m in ALL if not m.startswith("du_")]  # Du et al.'s known answers are tested in test_bias_du*


@pytest.fixture(scope="module")
def graph():
    return planted_graph()


def _truth(graph):
    return {graph.entities[o]: bool(a) for o, a in zip(graph.occupation_ids(), graph.occupation_is_a)}


def _signs_match(result, truth, field="score"):
    rows = [r for r in result.rows if r.item in truth]
    assert len(rows) == len(truth)
    return all((getattr(r, field) > 0) == truth[r.item] for r in rows)


def check_data(res, graph):
    assert _signs_match(res, _truth(graph))
    assert res.summary["items_a"] + res.summary["items_b"] + res.summary["items_neutral"] == len(res.rows)


def check_fisher(res, graph):
    assert _signs_match(res, _truth(graph))


def check_bourli_projection(res, graph):
    truth = _truth(graph)
    assert _signs_match(res, truth)
    assert all(r.extra["orientation"] == ("male" if truth[r.item] else "female") for r in res.rows)
    assert res.summary["agree_a_pct"] == 100.0 and res.summary["agree_b_pct"] == 100.0


def check_bourli_analogy(res, graph):
    truth = _truth(graph)
    assert res.rows, "no analogy pair found"
    best = res.rows[0]
    # "female is to x as male is to y": x a female occupation, y a male one
    assert not truth[best.extra["x"]] and truth[best.extra["y"]]
    assert best.score > 0.8


def check_bourli_topk(res, graph):
    truth = _truth(graph)
    for r in res.rows:  # top-K heads of an a-occupation are all a-persons, and conversely
        k = r.extra["K"]
        if k <= min(r.count_a, r.count_b):
            assert r.extra["predicted_a"] == (k if truth[r.item] else 0)
    assert all(v["a"] > 0 and v["b"] > 0 for v in res.summary["amplification_pct"].values())


def check_bourli_clustering(res, graph):
    persons = [r for r in res.rows if r.item.startswith("persons:")]
    assert len(persons) >= 2
    # clusters separate the values almost perfectly: every cluster is far from the 50 % population share
    assert min(abs(r.score) for r in persons) > 0.3
    assert sum(r.count_a + r.count_b for r in persons) == res.summary["persons"]


def check_bourli_debias(res, graph):
    by_lam = {r.extra["lambda"]: r for r in res.rows}
    assert by_lam[0.0].extra["projection_a"] > 0.5
    assert by_lam[1.0].extra["projection_a"] < 1e-5 and by_lam[1.0].extra["projection_b"] < 1e-5
    assert by_lam[0.5].extra["projection_a"] == pytest.approx(by_lam[0.0].extra["projection_a"] / 2, rel=1e-4)
    assert 0.0 <= by_lam[1.0].score <= 1.0 and by_lam[0.0].score > 0.5


def check_keidar_dpd(res, graph):
    # a classifier that follows the (biased) occupations predicts differently per gender
    assert res.rows[0].item == "*" and res.rows[0].score > 0.5


def check_keidar_ppd(res, graph):
    # the embeddings carry each person's occupation: equally precise for both values
    assert res.rows[0].item == "*" and res.rows[0].score < 0.05


def check_keidar_tlb(res, graph):
    truth = _truth(graph)
    assert _signs_match(type(res)(res.measure, res.model, res.spec, res.rows[1:]), truth)
    assert all((r.extra["score_b"] > 0) != truth[r.item] for r in res.rows[1:])
    assert res.rows[0].score == pytest.approx(np.mean([abs(r.score) for r in res.rows[1:]]))


CHECKERS = {name[len("check_"):]: f for name, f in globals().items() if name.startswith("check_")}
# a measure may carry its own known answer on the planted graph: ``known_answer(result, graph)``
# (a static method of its class), so a new measure is one file plus its registration
for _name in OWN:
    _own = getattr(MEASURES.get(_name), "known_answer", None)
    if _name not in CHECKERS and _own is not None:
        CHECKERS[_name] = _own


def _config(name):
    if name in ("keidar_dpd", "keidar_ppd"):
        return {"n_estimators": 20}
    return {"delta": 10.0} if name == "bourli_analogy" else {}


@pytest.mark.parametrize("name", OWN)
def test_every_measure_has_a_checker(name):
    assert name in CHECKERS, f"measure {name} has no known-answer test"


@pytest.mark.parametrize("model_name", ["transe", "distmult"])
@pytest.mark.parametrize("name", OWN)
def test_measure_recovers_planted_bias(name, model_name, graph):
    model = planted_model(model_name, graph)
    res = run_measure(name, graph, model, SPEC, seed=0, **_config(name))
    assert res.measure == name and res.seed == 0 and res.version
    CHECKERS[name](res, graph)


@pytest.mark.parametrize("model_name", MODEL_NAMES)
@pytest.mark.parametrize("name", ["fisher", "bourli_projection", "bourli_topk", "keidar_tlb"])
def test_embedding_measures_on_every_model(name, model_name, graph):
    res = run_measure(name, graph, planted_model(model_name, graph), SPEC, **_config(name))
    CHECKERS[name](res, graph)


@pytest.mark.parametrize("name", OWN)
def test_same_seed_same_numbers(name, graph):
    model = planted_model("transe", graph)
    r1 = run_measure(name, graph, model, SPEC, seed=3, **_config(name))
    r2 = run_measure(name, graph, model, SPEC, seed=3, **_config(name))
    s1 = [(r.item, r.score) for r in r1.rows]
    s2 = [(r.item, r.score) for r in r2.rows]
    assert s1 == s2


def test_no_bias_gives_small_fisher_and_data_scores():
    g = planted_graph(bias_prob=0.5, seed=1)
    res = run_measure("data", g, None, SPEC)
    assert max(abs(r.score) for r in res.rows) < 0.1
    biased = run_measure("data", planted_graph(bias_prob=1.0, seed=1), None, SPEC)
    assert max(abs(r.score) for r in biased.rows) > 0.2


def test_ppd_detects_unequal_precision(graph):
    """b-persons whose embeddings say nothing of their occupation get worse predictions."""
    fair = run_measure("keidar_ppd", graph, planted_model("transe", graph), SPEC, n_estimators=20)
    unfair = run_measure("keidar_ppd", graph, planted_model("transe", graph, strip_b_codes=True), SPEC,
                         n_estimators=20)
    assert unfair.rows[0].score > fair.rows[0].score + 0.2


def test_unknown_measure_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown bias measure 'nope'.*fisher"):
        get_measure("nope")


@pytest.mark.parametrize("name", OWN)
@pytest.mark.parametrize("bad,match", [
    (BiasSpec("genre", "male", "female"), "sensitive relation 'genre' is not in the graph"),
    (BiasSpec("gender", "male", "martian"), "attribute value b of 'gender'.*'martian'"),
    (BiasSpec("gender", "male", "female", "job"), "target relation 'job' is not in the graph"),
])
def test_bad_names_are_clear_errors(name, bad, match, graph):
    if name.startswith("keidar_") and bad.b == "martian":
        pytest.skip("DPD/PPD take a relation, not values")
    with pytest.raises(ValueError, match=match):
        run_measure(name, graph, planted_model("transe", graph), bad, **_config(name))


@pytest.mark.parametrize("name", ALL)
def test_every_measure_follows_the_protocol(name, graph):
    """Built by name with its defaults, a measure returns a BiasResult of itself whose rows carry
    the report fields, the same for the same seed."""
    from kge.bias.result import ROW_FIELDS, BiasResult

    m = MEASURES.make(name)
    assert m.name == name and isinstance(m.needs_model, bool)
    model = planted_model("transe", graph) if m.needs_model else None
    res = run_measure(name, graph, model, SPEC, seed=5, model_label="planted", **_config(name))
    assert isinstance(res, BiasResult) and res.measure == name and res.seed == 5 and res.version
    assert res.rows and all(r.measure == name for r in res.rows)
    for row in res.rows:
        d = row.to_dict()
        assert all(f in d for f in ROW_FIELDS) and (d["score"] is None or isinstance(d["score"], (int, float)))
    again = run_measure(name, graph, model, SPEC, seed=5, model_label="planted", **_config(name))
    assert [(r.item, r.score) for r in again.rows] == [(r.item, r.score) for r in res.rows]


@pytest.mark.parametrize("name", [n for n in ALL if MEASURES[n]().needs_model])
def test_embeddings_of_another_graph_are_rejected(name, graph):
    other = planted_graph(n=300)
    with pytest.raises(ValueError, match="embeddings have .* entities but the graph has"):
        run_measure(name, graph, planted_model("transe", other), SPEC, **_config(name))


def test_rest_mode_compares_a_with_all_other_values():
    g = planted_graph()
    res = run_measure("fisher", g, planted_model("distmult", g), BiasSpec("gender", "male", None))
    assert res.spec.b is None and res.summary["b_values"] == 1
    assert _signs_match(res, _truth(g))
    assert not any(math.isnan(r.score) for r in res.rows)


@pytest.mark.slow
def test_mlp_classifier_also_sees_the_planted_bias(graph):
    res = run_measure("keidar_dpd", graph, planted_model("transe", graph), SPEC, classifier="mlp")
    assert res.summary["classifier"]["accuracy"] > 0.8
    check_keidar_dpd(res, graph)


def test_keidar_table_has_one_row_per_relation_and_one_column_per_model(graph):
    from kge.bias import keidar_table

    results = []
    for model_name in ("transe", "distmult"):
        m = planted_model(model_name, graph)
        for name in ("keidar_dpd", "keidar_ppd"):
            results.append(run_measure(name, graph, m, SPEC, n_estimators=10))
    t = keidar_table(results)
    assert list(t.index) == ["gender"]
    assert set(t.columns) == {(n, m) for n in ("keidar_dpd", "keidar_ppd") for m in ("transe", "distmult")}
