"""`wgb re train` through click's CliRunner."""
import json

from click.testing import CliRunner

from support.relext_data import tiny_dataset
from wgb.cli import cli


def test_train_command_writes_run_and_predictions(tmp_path):
    data = tmp_path / "data"
    tiny_dataset(n_train=12, n_eval=3).save_to_disk(str(data))
    conf = tmp_path / "conf.json"
    conf.write_text(json.dumps({"word_dim": 8, "hidden": 6, "max_length": 30, "w2v_epochs": 1, "threads": 1,
                                "cache_dir": str(tmp_path / "w2v")}))
    args = ["re", "train", str(tmp_path / "run"), "--config", str(conf), "--encoder", "cnn", "--selector",
            "average", "--epochs", "1", "--batch-size", "8", "--dataset", str(data), "--quiet"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    run = tmp_path / "run"
    assert (run / "DONE").exists() and "best validation micro_f1" in res.output
    saved = json.loads((run / "config.json").read_text())
    assert saved["selector"] == "average" and saved["hidden"] == 6 and saved["dataset"] == str(data)
    for split in ("validation", "male_test", "female_test"):
        assert (run / "predictions" / f"{split}.jsonl").read_text().strip()


def test_train_command_clear_errors(tmp_path):
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "r"), "--encoder", "foo", "--quiet"])
    assert res.exit_code != 0 and "unknown encoder 'foo'" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"encoder": "pcnn", "hiden": 3}))
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "r"), "--config", str(bad)])
    assert res.exit_code != 0 and "hiden" in res.output


def test_a_recorded_config_retrains_with_the_transforms_it_now_names(tmp_path):
    """A run's own config.json (with its transform versions) given as --config with another
    --dataset-transform trains that transform at this wgb's version, not the recorded one's."""
    data = tmp_path / "data"
    tiny_dataset(n_train=12, n_eval=3).save_to_disk(str(data))
    conf = tmp_path / "conf.json"
    conf.write_text(json.dumps({"word_dim": 8, "hidden": 6, "max_length": 30, "w2v_epochs": 1, "threads": 1,
                                "cache_dir": str(tmp_path / "w2v"), "dataset_transform": ["anonymize"],
                                "transform_versions": {"anonymize": 2}, "package_version": "0.1.0"}))
    args = ["re", "train", str(tmp_path / "run"), "--config", str(conf), "--dataset-transform", "duplicate",
            "--epochs", "1", "--batch-size", "8", "--dataset", str(data), "--quiet"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["dataset_transform"] == ["duplicate"] and saved["transform_versions"] == {}
