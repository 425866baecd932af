"""One config format: `wgb re train`, `wgb kge train` and `wgb data build` take the same settings
as YAML or JSON (through `wgbcore.config`); the trainers are replaced by spies, nothing trains."""
import json

import pytest
import yaml
from click.testing import CliRunner

from wgb.cli import cli

SETTINGS = {
    "re": {"encoder": "cnn", "selector": "average", "epochs": 2, "lr": 0.05, "dataset_transform": ["cda"]},
    "kge": {"model": "distmult", "dim": 8, "epochs": 3, "lr": 0.02},
    "build": {"require": ["spouse"], "workers": 1, "split": {"train": 0.7, "validation": 0.1, "test": 0.2, "seed": 3},
              "distant": {"pronouns": True}},
}


def _write(path, data):
    path.write_text(yaml.safe_dump(data) if path.suffix in (".yaml", ".yml") else json.dumps(data))
    return str(path)


class Stop(ValueError):
    pass


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_re_train_config(tmp_path, monkeypatch, suffix):
    import relext.training.train

    seen = {}

    def spy(cfg, run_dir, progress=True):
        seen["cfg"] = cfg
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "metrics.json").write_text(json.dumps({"select_metric": "micro_f1", "best_score": 0.5,
                                                          "best_epoch": 1, "epochs_run": 1}))
        return run_dir

    monkeypatch.setattr(relext.training.train, "train", spy)
    conf = _write(tmp_path / f"c{suffix}", SETTINGS["re"])
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "run"), "--config", conf, "--seed", "4",
                                   "--no-predict", "--quiet"])
    assert res.exit_code == 0, res.output
    cfg = seen["cfg"]
    assert (cfg.encoder, cfg.selector, cfg.epochs, cfg.lr, cfg.dataset_transform, cfg.seed) == (
        "cnn", "average", 2, 0.05, ["cda"], 4)


def test_re_train_yaml_errors_name_file_and_key(tmp_path):
    (tmp_path / "bad.yaml").write_text("encoder: cnn\nepochs: [1\n")
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "r"), "--config", str(tmp_path / "bad.yaml")])
    assert res.exit_code != 0 and "bad.yaml:" in res.output and "malformed YAML" in res.output
    (tmp_path / "typo.yml").write_text("hiden: 3\n")
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "r"), "--config", str(tmp_path / "typo.yml")])
    assert res.exit_code != 0 and "typo.yml" in res.output and "hiden" in res.output


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_kge_train_config(tmp_path, monkeypatch, suffix, tiny_graph_dir):
    import kge.train

    seen = {}

    def spy(graph, config, out_dir, **kwargs):
        seen["cfg"] = config
        raise Stop("stop here")

    monkeypatch.setattr(kge.train, "train", spy)
    conf = _write(tmp_path / f"c{suffix}", SETTINGS["kge"])
    res = CliRunner().invoke(cli, ["kge", "train", str(tiny_graph_dir), "--out", str(tmp_path / "o"),
                                   "--config", conf, "--quiet"])
    assert "stop here" in res.output
    cfg = seen["cfg"]
    assert (cfg.model, cfg.dim, cfg.epochs, cfg.lr) == ("distmult", 8, 3, 0.02)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_data_build_config(tmp_path, monkeypatch, suffix):
    import wikigenderbias.build

    seen = {}

    def spy(config):
        seen["cfg"] = config
        raise Stop("stop here")

    monkeypatch.setattr(wikigenderbias.build, "build", spy)
    (tmp_path / "db.nt").write_text("")
    (tmp_path / "wiki.xml").write_text("")
    conf = _write(tmp_path / f"b{suffix}", {**SETTINGS["build"], "dbpedia": [str(tmp_path / "db.nt")],
                                            "wikipedia": [str(tmp_path / "wiki.xml")], "out": str(tmp_path / "bench")})
    res = CliRunner().invoke(cli, ["data", "build", "--config", conf, "--quiet"])
    assert "stop here" in res.output
    cfg = seen["cfg"]
    assert tuple(cfg.require) == ("spouse",) and cfg.split.seed == 3 and cfg.split.train == 0.7
    assert cfg.distant.pronouns is True
    (tmp_path / "bad.yaml").write_text("out: [x\n")
    res = CliRunner().invoke(cli, ["data", "build", "--config", str(tmp_path / "bad.yaml")])
    assert res.exit_code != 0 and "bad.yaml:" in res.output and "malformed YAML" in res.output


@pytest.fixture
def tiny_graph_dir(tmp_path):
    from kge.graph import KnowledgeGraph

    g = KnowledgeGraph(["a", "b", "c"], ["r"], [[0, 0, 1], [1, 0, 2]], [[0, 0, 2]], [[2, 0, 0]], name="t")
    return g.save(tmp_path / "graph")
