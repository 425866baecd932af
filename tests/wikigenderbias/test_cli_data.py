"""`wgb data ...` through click's test runner."""
from __future__ import annotations

import json

from click.testing import CliRunner

from wgb.cli import cli


def test_info_and_stats_and_export(tmp_path, tiny_folder):
    runner = CliRunner()
    r = runner.invoke(cli, ["data", "info", "--dataset", str(tiny_folder)])
    assert r.exit_code == 0, r.output
    assert "train" in r.output and "mentions located" in r.output

    r = runner.invoke(cli, ["data", "stats", "--dataset", str(tiny_folder), "--out", str(tmp_path / "st")])
    assert r.exit_code == 0, r.output
    stats = json.loads((tmp_path / "st" / "stats.json").read_text())
    assert stats["source"] == str(tiny_folder)
    assert (tmp_path / "st" / "stats.png").read_bytes()[:4] == b"\x89PNG"

    r = runner.invoke(cli, ["data", "export", "--format", "opennre", "--dataset", str(tiny_folder),
                            "--out", str(tmp_path / "onre")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "onre" / "rel2id.json").is_file()
    manifest = json.loads((tmp_path / "onre" / "manifest.json").read_text())
    assert manifest["unlocated"]["policy"] == "start" and manifest["source"]["dataset"] == str(tiny_folder)
    assert manifest["source"]["fingerprint"] == json.loads((tiny_folder / "report.json").read_text())[
        "fingerprint"]["sha256"]
    assert "0 dropped" in r.output
    r = runner.invoke(cli, ["data", "export", "--dataset", str(tiny_folder), "--out", str(tmp_path / "onre")])
    assert r.exit_code != 0 and "--overwrite" in r.output


def test_missing_benchmark_folder_is_a_clear_error(tmp_path):
    r = CliRunner().invoke(cli, ["data", "stats", "--dataset", str(tmp_path / "nothing")])
    assert r.exit_code == 1
    assert "nothing: benchmark folder not found" in r.output


def test_convert_release_bad_file(tmp_path):
    bad = tmp_path / "Wikigender.json"
    bad.write_text("{not json")
    r = CliRunner().invoke(cli, ["data", "convert-release", str(bad), "--out", str(tmp_path / "out")])
    assert r.exit_code == 1 and "Wikigender.json: malformed JSON at line 1" in r.output
    assert not (tmp_path / "out").exists()


def test_debias_data_writes_parquet_with_checksums(tmp_path, tiny_folder):
    import hashlib
    import json

    from click.testing import CliRunner
    from datasets import load_dataset

    from wgb.cli import cli

    out = tmp_path / "cda"
    res = CliRunner().invoke(cli, ["re", "debias-data", "cda", str(out), "--dataset", str(tiny_folder)])
    assert res.exit_code == 0, res.output
    info = json.loads((out / "debias.json").read_text())
    assert info["name"] == "cda" and info["files"]
    for rel, f in info["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == f["sha256"]
    ds = load_dataset("parquet", data_dir=str(out / "data" / "sentences"))
    train_rel = next(k for k in info["files"] if "/train-" in k)
    assert ds["train"].num_rows == info["files"][train_rel]["rows"]
