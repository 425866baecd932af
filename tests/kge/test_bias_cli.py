"""`wgb kge bias` and `wgb kge report` end to end on a small synthetic graph."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bias_fixtures import planted_graph, planted_model  # noqa: E402
from wgb.cli import cli  # noqa: E402


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("kgebias")
    g = planted_graph(n=400, occupations=6)
    gdir = g.write_tsv(root / "graph")
    m = planted_model("transe", g)
    # the entity order of the loaded TSV graph decides the row order of the embeddings
    from kge.embeddings import save_model
    from kge.graph import load_graph

    kg = load_graph(gdir)
    order = [g.entities.index(n) for n in kg.entities]
    rorder = [g.relations.index(n) for n in kg.relations]
    with torch.no_grad():
        m.entity.weight.copy_(m.entity.weight[order].clone())
        m.relation.weight.copy_(m.relation.weight[rorder].clone())
    emb = save_model(m, root / "emb", kg, extra={"graph_path": str(gdir)})
    return root, gdir, emb, g


def test_bias_then_report(setup):
    root, gdir, emb, g = setup
    out = root / "bias.json"
    r = CliRunner().invoke(cli, ["kge", "bias", str(emb), str(gdir), "--measure", "fisher", "--measure", "data",
                                 "--measure", "bourli_debias", "--sensitive", "gender", "--a", "male", "--b", "female",
                                 "--target", "profession", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    fisher = [x for x in doc["rows"] if x["measure"] == "fisher"]
    truth = {g.entities[o]: bool(a) for o, a in zip(g.occupation_ids(), g.occupation_is_a)}
    assert fisher and all((x["score"] > 0) == truth[x["item"]] for x in fisher)
    rep = root / "report"
    r = CliRunner().invoke(cli, ["kge", "report", str(out), "--out", str(rep), "--top", "5"])
    assert r.exit_code == 0, r.output
    md = (rep / "report.md").read_text()
    assert "fisher" in md and "Top 5 towards male" in md and "| occupation_" in md
    assert "<table>" in (rep / "report.html").read_text()
    assert list((rep / "plots").glob("*.png")) and (rep / "DONE").exists()


@pytest.mark.slow
def test_all_measures_and_graph_from_emb_config(setup):
    root, gdir, emb, g = setup
    out = root / "all.json"
    r = CliRunner().invoke(cli, ["kge", "bias", str(emb), "--measure", "all", "--option", "delta=10",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    measures = {x["measure"] for x in json.loads(out.read_text())["results"]}
    assert {"data", "fisher", "bourli_analogy", "keidar_dpd", "keidar_tlb"} <= measures
    r = CliRunner().invoke(cli, ["kge", "report", str(out), "--out", str(root / "rep_all")])
    assert r.exit_code == 0, r.output


def test_data_measure_needs_no_embeddings(setup):
    root, gdir, emb, g = setup
    r = CliRunner().invoke(cli, ["kge", "bias", "-", str(gdir), "--measure", "data", "--out", str(root / "d.json")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["kge", "bias", "-", str(gdir), "--measure", "fisher", "--out", str(root / "x.json")])
    assert r.exit_code != 0 and "only works with measures that need no embeddings" in r.output


@pytest.mark.parametrize("args,message", [
    (["--sensitive", "genre"], "sensitive relation 'genre' is not in the graph"),
    (["--a", "martian"], "a='martian' is not a tail of 'gender'"),
    (["--target", "job"], "target relation 'job' is not in the graph"),
    (["--measure", "nope"], "unknown bias measure 'nope'"),
    (["--option", "nonsense=1"], "belong to none of the measures"),
])
def test_bad_input_is_a_clear_error(setup, args, message):
    root, gdir, emb, g = setup
    r = CliRunner().invoke(cli, ["kge", "bias", str(emb), str(gdir), "--out", str(root / "e.json")] + args)
    assert r.exit_code != 0
    assert message in r.output, r.output


def test_embeddings_of_another_graph_are_rejected(setup, tmp_path):
    root, gdir, emb, g = setup
    other = planted_graph(n=100, occupations=3).write_tsv(tmp_path / "other")
    r = CliRunner().invoke(cli, ["kge", "bias", str(emb), str(other), "--out", str(tmp_path / "e.json")])
    assert r.exit_code != 0 and "embeddings are for" in r.output, r.output


def test_report_rejects_malformed_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("[1, 2")
    r = CliRunner().invoke(cli, ["kge", "report", str(p), "--out", str(tmp_path / "r")])
    assert r.exit_code != 0 and "bad.json: not valid JSON" in r.output


@pytest.mark.parametrize("strategy", ["remove", "random-remove", "add"])
def test_du_debias_retrains_and_reports_before_after(setup, strategy):
    root, gdir, emb, g = setup
    out = root / f"du_{strategy}.json"
    r = CliRunner().invoke(cli, ["kge", "du-debias", str(emb), str(gdir), "--strategy", strategy,
                                 "--occupation", "occupation_0", "--k", "20", "--epochs", "2",
                                 "--threads", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["items"] == ["occupation_0"] and doc["strategy"] == strategy.replace("-", "_")
    before, after = doc["before"]["occupation_0"], doc["after"]["occupation_0"]
    assert before != after                                   # retrained embeddings, new B_gr
    changed = doc["changed"]["occupation_0"]
    if strategy == "random-remove":
        assert changed == 20
    else:   # IF-REMOVE takes at most k triples that influence B_gr; "add": dummy entities added
        assert 0 < changed <= (20 if strategy == "remove" else 10**6)
    assert doc["retrain_config"]["epochs"] == 2


def test_du_debias_errors_name_the_problem(setup):
    root, gdir, emb, g = setup
    r = CliRunner().invoke(cli, ["kge", "du-debias", str(emb), str(gdir), "--occupation", "no_such_job",
                                 "--epochs", "1", "--out", str(root / "x.json")])
    assert r.exit_code != 0 and "no_such_job" in r.output
    r = CliRunner().invoke(cli, ["kge", "du-debias", str(emb), str(gdir), "--occupation", "occupation_0",
                                 "--occupation", "occupation_1", "--out", str(root / "x.json")])
    assert r.exit_code != 0 and "exactly one occupation" in r.output
    assert not (root / "x.json").exists()
