"""What you load is what you built: benchmark folders are keyed in the `datasets` cache by the
fingerprint of their data, and `wikigenderbias.load` / `relext.protocols.data.load_dataset_dict` check what
they return against the folder's own report.

All tests of a session share one HF_HOME (tests/conftest.py), so a folder loaded by one test is in
the cache when the next one loads a folder of the same name: the situation of a researcher who
rebuilds the benchmark.
"""
from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

import wikigenderbias
from relext.protocols.data import load_dataset_dict
from wgb.cli import cli
from wikigenderbias.card import fingerprint, refresh_card, render_card
from wikigenderbias.export import write_benchmark
from wikigenderbias.release import DESCRIPTION, data_dir
from wikigenderbias.schema import SPLITS


def _other_entities(tiny_entities) -> dict[str, list[dict]]:
    """A second, different build: fewer train entities and other sentences."""
    ents = tiny_entities()
    ents["train"] = ents["train"][:1]
    ents["train"][0]["relations"][0]["sentences"] = ["Roe wed John Roe in Paris ."]
    ents["female_test"][0]["relations"][1]["sentences"].append("Fox moved to Rome again .")
    return ents


def _write(folder: Path, ents) -> Path:
    return write_benchmark(folder, ents, description=f"Build {folder}.", report={"source": "test"}, progress=False,
                           overwrite=True)


def _ids_on_disk(folder: Path, config: str = "sentences") -> dict[str, list[str]]:
    key = "id" if config == "sentences" else "entity_id"
    return {s: pq.read_table(folder / "data" / config / f"{s}-00000-of-00001.parquet", columns=[key])[key].to_pylist()
            for s in SPLITS}


def _ids(ds, config: str = "sentences") -> dict[str, list[str]]:
    key = "id" if config == "sentences" else "entity_id"
    return {s: ds[s][key] for s in SPLITS}


def _assert_own_rows(folder: Path) -> None:
    """`datasets.load_dataset`, `wikigenderbias.load` and relext's loader all return the folder's rows."""
    want = _ids_on_disk(folder)
    assert _ids(datasets.load_dataset(str(folder), "sentences")) == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fingerprinted folder loads without a reload
        assert _ids(wikigenderbias.load(path=folder)) == want
        assert _ids(load_dataset_dict(folder)) == want
    assert _ids(wikigenderbias.load("entities", path=folder), "entities") == _ids_on_disk(folder, "entities")


def test_two_builds_in_same_named_folders_load_their_own_rows(tmp_path, tiny_records):
    a = _write(tmp_path / "a" / "build", tiny_records())
    b = _write(tmp_path / "b" / "build", _other_entities(tiny_records))
    assert _ids_on_disk(a) != _ids_on_disk(b)
    for folder in (a, b, a):
        _assert_own_rows(folder)
    fa = datasets.load_dataset(str(a), "sentences")["train"].cache_files[0]["filename"]
    fb = datasets.load_dataset(str(b), "sentences")["train"].cache_files[0]["filename"]
    assert Path(fa).parent != Path(fb).parent  # two cache entries, keyed by the data


def test_a_rebuild_in_the_same_folder_loads_the_new_rows(tmp_path, tiny_records):
    folder = tmp_path / "build"
    _write(folder, tiny_records())
    _assert_own_rows(folder)
    _write(folder, _other_entities(tiny_records))
    _assert_own_rows(folder)


def test_a_build_named_wikigenderbias_is_not_the_embedded_release(tmp_path, tiny_records):
    embedded = datasets.load_dataset(str(data_dir()), "sentences")  # in the cache under "wikigenderbias"
    assert embedded["train"].num_rows == 36365
    folder = _write(tmp_path / "wikigenderbias", tiny_records())
    _assert_own_rows(folder)
    assert wikigenderbias.load(path=folder)["train"].num_rows == 9
    assert wikigenderbias.load()["train"].num_rows == 36365  # and the release still loads as itself


def test_wgb_re_train_trains_on_the_folder_it_is_given(tmp_path, tiny_records):
    a = _write(tmp_path / "a" / "wikigenderbias", tiny_records())
    b = _write(tmp_path / "b" / "wikigenderbias", _other_entities(tiny_records))
    conf = tmp_path / "conf.json"
    conf.write_text(json.dumps({"word_dim": 8, "hidden": 6, "max_length": 30, "w2v_epochs": 1, "threads": 1,
                                "w2v_min_count": 1, "cache_dir": str(tmp_path / "w2v")}))
    for name, folder in (("a", a), ("b", b)):
        run = tmp_path / f"run-{name}"
        args = ["re", "train", str(run), "--config", str(conf), "--encoder", "cnn", "--selector", "average",
                "--epochs", "1", "--batch-size", "4", "--dataset", str(folder), "--no-predict", "--quiet"]
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output
        data = json.loads((run / "metrics.json").read_text())["data"]
        on_disk = _ids_on_disk(folder)
        assert data["train"]["rows"] == len(on_disk["train"])
        assert data["validation"]["rows"] == len(on_disk["validation"])


def _strip_fingerprint(folder: Path) -> None:
    """Make ``folder`` look like one written before folders carried a fingerprint."""
    report = json.loads((folder / "report.json").read_text())
    report.pop("fingerprint")
    (folder / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (folder / "README.md").write_text(render_card(description="old", report=report))


def test_an_old_folder_without_fingerprint_is_reloaded_then_refreshed(tmp_path, tiny_records):
    a = _write(tmp_path / "a" / "oldbuild", tiny_records())
    b = _write(tmp_path / "b" / "oldbuild", _other_entities(tiny_records))
    for f in (a, b):
        _strip_fingerprint(f)
    assert datasets.load_dataset(str(a), "sentences")["train"].num_rows == 9
    # the bug this guards against: the same card, the same folder name -> the same cache entry
    assert datasets.load_dataset(str(b), "sentences")["train"].num_rows == 9
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = wikigenderbias.load(path=b)
    assert _ids(ds) == _ids_on_disk(b)
    messages = [str(w.message) for w in caught]
    assert any("carry no data fingerprint" in m for m in messages)
    assert any("cache served other data (train: 9 rows loaded, the folder holds 4" in m for m in messages)
    r = CliRunner().invoke(cli, ["data", "refresh-card", "--dataset", str(b)])
    assert r.exit_code == 0 and "data fingerprint sha256:" in r.output, r.output
    assert json.loads((b / "report.json").read_text())["fingerprint"] == fingerprint(b)
    _assert_own_rows(b)


def test_data_replaced_after_writing_is_a_clear_error(tmp_path, tiny_records):
    a = _write(tmp_path / "a" / "build", tiny_records())
    b = _write(tmp_path / "b" / "build", _other_entities(tiny_records))
    rel = Path("data") / "sentences" / "train-00000-of-00001.parquet"
    shutil.copyfile(b / rel, a / rel)
    with pytest.raises(ValueError, match=r"train-00000-of-00001\.parquet differ from the fingerprint"):
        wikigenderbias.load(path=a)
    r = CliRunner().invoke(cli, ["data", "stats", "--dataset", str(a), "--out", str(tmp_path / "st")])
    assert r.exit_code == 1 and "refresh-card" in r.output
    refresh_card(a)
    assert "Build " in (a / "README.md").read_text()  # the card's own description is kept
    _assert_own_rows(a)


def test_a_wrong_cache_entry_is_reloaded_or_refused(tmp_path, monkeypatch, tiny_records):
    a = _write(tmp_path / "a" / "build", tiny_records())
    b = _write(tmp_path / "b" / "build", _other_entities(tiny_records))
    real = datasets.load_dataset
    served_a = datasets.load_dataset(str(a), "sentences")

    def stale(path, *args, **kwargs):  # a cache that serves a's data unless told to rebuild
        return real(path, *args, **kwargs) if kwargs.get("download_mode") == "force_redownload" else served_a

    monkeypatch.setattr(datasets, "load_dataset", stale)
    with pytest.warns(UserWarning, match=r"cache served other data \(train: 9 rows loaded, the folder holds 4"):
        ds = wikigenderbias.load(path=b)
    assert _ids(ds) == _ids_on_disk(b)
    with pytest.warns(UserWarning, match="cache served other data"):
        assert _ids(load_dataset_dict(b)) == _ids_on_disk(b)
    monkeypatch.setattr(datasets, "load_dataset", lambda *a_, **k: served_a)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=r"do not match the folder's report\.json.*"
                                                                     r"carry fingerprint"):
        wikigenderbias.load(path=b)
    with pytest.raises(ValueError, match="rows loaded, the folder holds"):  # no second try when told not to cache
        wikigenderbias.load(path=b, download_mode="force_redownload")


def test_the_embedded_release_carries_the_fingerprint_of_its_data():
    folder = data_dir()
    report = json.loads((folder / "report.json").read_text())
    assert report["fingerprint"] == fingerprint(folder)
    # the card is generated (scripts/convert_release.py --card-only), never edited by hand
    # ... apart from the bodies of blocks generated from results files (scripts/readme_tables.py)
    blocks = re.compile(r"(<!-- BEGIN generated:[\w-]+ -->\n).*?(<!-- END generated:[\w-]+ -->)", re.S)
    assert blocks.sub(r"\1\2", (folder / "README.md").read_text()) == \
        blocks.sub(r"\1\2", render_card(description=DESCRIPTION, report=report))
    header = yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])
    infos = {i["config_name"]: i for i in header["dataset_info"]}
    for config, fp in report["fingerprint"]["configs"].items():
        assert infos[config]["download_checksums"] == fp["files"]
        assert {s["name"]: s["num_examples"] for s in infos[config]["splits"]} == fp["rows"]
    ds = wikigenderbias.load()
    assert ds["female_test"].info.download_checksums == report["fingerprint"]["configs"]["sentences"]["files"]
    assert {s: ds[s].num_rows for s in SPLITS} == report["fingerprint"]["configs"]["sentences"]["rows"]
