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
    assert metrics["type_constrained"] is False
    res = runner.invoke(cli, ["kge", "eval", str(out), str(tmp_path / "graph"), "--quiet", "--type-constrain",
                              "--out", str(tmp_path / "typed.json")])
    assert res.exit_code == 0, res.output
    typed = json.loads((tmp_path / "typed.json").read_text())
    assert typed["type_constrained"] is True and typed["mrr"] >= metrics["mrr"]


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


def test_profile_flag_sets_the_preset_and_flags_override_it(tmp_path, tiny_graph):
    """`--profile openke` trains with the preset's fields (recorded in the run's config); a flag
    or a config file field overrides one field and keeps the rest (p_norm 1 from the preset)."""
    from kge.train_profiles import PROFILES

    tiny_graph.save(tmp_path / "graph")
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text("model_kwargs: {}\nmargin: 2.0\n")
    out = tmp_path / "emb"
    res = CliRunner().invoke(cli, ["kge", "train", str(tmp_path / "graph"), "--profile", "openke", "--config",
                                   str(cfg_file), "--dim", "8", "--epochs", "1", "--batch-size", "16",
                                   "--optimizer", "adagrad", "--out", str(out), "--quiet", "--no-test"])
    assert res.exit_code == 0, res.output
    cfg = json.loads((out / "result.json").read_text())["config"]
    pre = PROFILES["openke"]
    assert (cfg["sampler"], cfg["negatives"], cfg["loss"]) == (pre["sampler"], pre["negatives"], pre["loss"])
    assert cfg["model_kwargs"] == {"p_norm": 1} and cfg["margin"] == 2.0 and cfg["dim"] == 8
    assert cfg["optimizer"] == "adagrad"
    bad = CliRunner().invoke(cli, ["kge", "train", "--profile", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "nope" in bad.output
    pbg = CliRunner().invoke(cli, ["kge", "train", "--engine", "pbg", "--profile", "openke", "--out", str(tmp_path / "y")])
    assert pbg.exit_code == 2 and "--profile" in pbg.output
    ranged = CliRunner().invoke(cli, ["kge", "train", str(tmp_path / "graph"), "--profile", "range", "--dim", "8",
                                      "--epochs", "1", "--batch-size", "16", "--out", str(tmp_path / "r"), "--quiet",
                                      "--no-test"])
    assert ranged.exit_code == 0, ranged.output
    rc = json.loads((tmp_path / "r" / "result.json").read_text())["config"]
    assert rc["tail_candidates"] == "range" and rc["loss"] == "softmax"
    bad = CliRunner().invoke(cli, ["kge", "train", str(tmp_path / "graph"), "--tail-candidates", "range",
                                   "--out", str(tmp_path / "z")])
    assert bad.exit_code != 0 and "softmax" in bad.output
