import json

from click.testing import CliRunner

from wgb.cli import cli


def test_train_and_eval_commands(tmp_path, tiny_graph):
    tiny_graph.save(tmp_path / "graph")
    runner = CliRunner()
    out = tmp_path / "emb"
    res = runner.invoke(cli, ["kge", "train", str(tmp_path / "graph"), "--model", "distmult", "--dim", "8",
                              "--epochs", "2", "--batch-size", "16", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert summary["epochs_run"] == 2 and 0 < summary["test"]["mrr"] <= 1
    assert (out / "DONE").exists()
    res = runner.invoke(cli, ["kge", "eval", str(out), str(tmp_path / "graph"), "--quiet"])
    assert res.exit_code == 0, res.output
    metrics = json.loads((out / "metrics_test.json").read_text())
    assert metrics["mrr"] == summary["test"]["mrr"] and metrics["num_triples"] == len(tiny_graph.test)


def test_cli_errors(tmp_path, tiny_graph, graph_factory):
    runner = CliRunner()
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tr\tb\nbroken\n")
    res = runner.invoke(cli, ["kge", "train", str(bad), "--out", str(tmp_path / "o"), "--epochs", "1"])
    assert res.exit_code != 0 and "bad.tsv:2" in res.output
    # embeddings of one graph evaluated on another
    tiny_graph.save(tmp_path / "g1")
    graph_factory(num_people=40).save(tmp_path / "g2")
    res = runner.invoke(cli, ["kge", "train", str(tmp_path / "g1"), "--dim", "4", "--epochs", "1", "--no-test",
                              "--out", str(tmp_path / "e"), "--quiet"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["kge", "eval", str(tmp_path / "e"), str(tmp_path / "g2")])
    assert res.exit_code != 0 and "embeddings are for 37 entities" in res.output
