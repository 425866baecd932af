"""The pretrained extractor shipped in relext/pretrained/: offline loading, OpenNRE-style infer,
the run's committed scores reproduced, damaged files refused, the CLI."""
import json
import shutil
import socket

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from relext import pretrained
from relext.evaluation.evaluate import PredictionTable, argmax_decisions, micro_f1
from relext.training.predict import load_trained, predict_split

NAME = "pcnn-attention"
# three real male_test rows (two spouse, one birthPlace) with both mentions located
ROW_IDS = ("male_test-00000-spouse-000", "male_test-00000-spouse-001", "male_test-00000-birthPlace-000")


@pytest.fixture(scope="module")
def model():
    return pretrained.load(NAME)


@pytest.fixture(scope="module")
def male_test():
    import wikigenderbias

    return wikigenderbias.load()["male_test"]


@pytest.fixture
def offline(monkeypatch):
    """No network, no training: connecting anywhere or training anything fails the test."""
    import relext.model.embeddings
    import relext.training.train

    def refuse(*args, **kwargs):
        raise AssertionError("network or training used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(relext.training.train, "train_extractor", refuse)
    monkeypatch.setattr(relext.model.embeddings, "train_word2vec", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _char_span(tokens, span):
    start = len(" ".join(tokens[: span[0]])) + (1 if span[0] else 0)
    return [start, len(" ".join(tokens[: span[1]]))]


def _items(row):
    """The row as OpenNRE items: token positions, character positions, names only."""
    toks, text = row["tokens"], " ".join(row["tokens"])
    h, t = row["head_span"], row["tail_span"]
    return [
        {"token": toks, "h": {"name": row["head"], "pos": h}, "t": {"name": row["tail"], "pos": t}},
        {"text": text, "h": {"name": row["head"], "pos": _char_span(toks, h)},
         "t": {"name": row["tail"], "pos": _char_span(toks, t)}},
        {"text": text, "h": {"name": row["head"]}, "t": {"name": row["tail"]}},
    ]


# --------------------------------------------------------------------------------------------
def test_shipped_files_sizes_and_checksums():
    assert pretrained.available() == [NAME]
    folder = pretrained.path(NAME)
    files = {p.name for p in folder.iterdir()}
    assert files == {"model.safetensors", "vocab.json.gz", "config.json", "metrics.json", "eval.json",
                     "PROVENANCE.md", "SHA256SUMS"}
    assert sum((folder / f).stat().st_size for f in files) < 7_000_000
    assert pretrained.verify(NAME) == folder
    with pytest.raises(ValueError, match="unknown pretrained extractor 'nope'.*pcnn-attention"):
        pretrained.path("nope")


def test_provenance_quotes_the_shipped_scores():
    folder = pretrained.path(NAME)
    prov = (folder / "PROVENANCE.md").read_text()
    metrics = json.loads((folder / "metrics.json").read_text())
    ev = json.loads((folder / "eval.json").read_text())
    cfg = json.loads((folder / "config.json").read_text())
    assert (cfg["encoder"], cfg["selector"], cfg["dataset"], cfg["dataset_transform"]) == ("pcnn", "attention", None, [])
    assert f"{metrics['best_score']:.4f}" in prov
    for split in ("male_test", "female_test"):
        assert f"| argmax | {split} | {ev['scores']['argmax'][split]['micro_f1']:.4f} |" in prov
    assert "scripts/study/debias_study.sh" in prov and "none-attention-seed0" in prov
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        assert line in prov


def test_loads_offline_without_training(offline):
    m = pretrained.load(NAME)
    assert m.config.encoder == "pcnn" and m.config.selector == "attention"
    assert not m.model.training
    rel, score = m.infer({"text": "Marie Curie married Pierre Curie in 1895 .",
                          "h": {"name": "Marie Curie", "pos": [0, 11]}, "t": {"name": "Pierre Curie", "pos": [20, 32]}})
    assert rel in m.relations and 0 <= score <= 1


def test_infer_on_real_benchmark_sentences(model, male_test):
    names = male_test.features["relation"].names
    rows = {r["id"]: r for r in male_test.filter(lambda r: r["id"] in ROW_IDS)}
    assert set(rows) == set(ROW_IDS)
    for rid in ROW_IDS:
        gold = names[rows[rid]["relation"]]
        for item in _items(rows[rid]):
            rel, score = model.infer(item)
            assert rel == gold, (rid, item, rel, score)
            assert 0.5 < score <= 1
    batch = model.infer_bags([[_items(rows[rid])[0]] for rid in ROW_IDS])
    assert [r for r, _ in batch] == [names[rows[rid]["relation"]] for rid in ROW_IDS]


def test_infer_bags_scores_equal_predict_split(model, male_test):
    """Bags built from OpenNRE items score exactly as the benchmark path (relext.training.predict)."""
    rows = predict_split(pretrained.path(NAME), "male_test", dataset={"male_test": male_test})[:25]
    # a sentence can serve several pairs (with other spans): key by sentence and pair
    by_key = {(r["sentence_id"], r["head"], r["tail"]): r for r in male_test.select(range(200))}
    # sentences with both mentions located (inference refuses the others: they name no pair)
    rows = [r for r in rows if all((s, r["head"], r["tail"]) in by_key
                                   and [-1, -1] not in (list(by_key[s, r["head"], r["tail"]]["head_span"]),
                                                        list(by_key[s, r["head"], r["tail"]]["tail_span"]))
                                   for s in r["sentence_ids"])]
    assert len(rows) >= 10
    bags = [[_items(by_key[s, r["head"], r["tail"]])[0] for s in r["sentence_ids"]] for r in rows]
    probs = model.predict_proba(bags)
    np.testing.assert_allclose(probs, np.array([r["scores"] for r in rows]), rtol=0, atol=1e-5)
    assert any(len(b) > 1 for b in bags)


def test_reproduces_the_runs_committed_micro_f1():
    folder = pretrained.path(NAME)
    ev = json.loads((folder / "eval.json").read_text())
    for split in ("male_test", "female_test"):
        table = PredictionTable.from_rows(predict_split(folder, split))
        got = micro_f1(table.y_true, argmax_decisions(table.scores))
        assert abs(got - ev["scores"]["argmax"][split]["micro_f1"]) < 1e-6, split
        assert len(table) == ev["scores"]["argmax"][split]["n_bags"]


def test_extract_split_writes_nothing_into_the_package():
    folder = pretrained.path(NAME)
    before = sorted(p.name for p in folder.iterdir())
    triples = pretrained.load(NAME).extract_split("male_test", min_score=0.5)
    assert triples and all(t["score"] >= 0.5 for t in triples)
    from relext.extract import extract_split

    assert len(extract_split(folder, "male_test", min_score=0.5)) == len(triples)  # cache off by default here
    assert sorted(p.name for p in folder.iterdir()) == before


def test_extract_text_with_the_pretrained_model(model, tmp_path):
    lines = [{"head": "Marie Curie", "tail": "Pierre Curie", "gender": "female",
              "text": "In 1895 Marie Curie married Pierre Curie ."},
             {"head": "Marie Curie", "tail": "Warsaw", "text": "Marie Curie was born in Warsaw ."}]
    src = tmp_path / "new.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    triples = {t["tail"]: t for t in model.extract_text(src)}
    assert triples["Pierre Curie"]["relation"] == "spouse" and triples["Warsaw"]["relation"] == "birthPlace"
    # the gender given on one line of a head holds for its other lines
    assert {t["head_gender"] for t in triples.values()} == {"female"}


@pytest.mark.parametrize("item,msg", [
    ({"text": "Ann met Bob .", "h": {"pos": [0, 3]}, "t": {"pos": [8, 30]}}, r"t\.pos must be \[start, end\) character"),
    ({"token": ["Ann", "met", "Bob"], "h": {"pos": [0, 1]}, "t": {"pos": [2, 2]}}, r"t\.pos must be .* token"),
    ({"text": "Ann met Bob .", "token": ["Ann"], "h": {"pos": [0, 3]}, "t": {"pos": [8, 11]}}, "exactly one of"),
    ({"text": "Ann met Bob .", "h": {"pos": [0, 3]}}, "field 't'"),
    ({"text": "Ann met Bob .", "h": {"pos": [0, 3]}, "t": {}}, "needs 'pos' or a 'name'"),
    ({"text": "Ann   Bob", "h": {"pos": [0, 3]}, "t": {"pos": [3, 6]}}, "covers no token"),
])
def test_bad_items_are_clear_errors(model, item, msg):
    with pytest.raises(ValueError, match=msg):
        model.infer(item)
    with pytest.raises(ValueError, match="bag 1: empty"):
        model.infer_bags([[{"text": "Ann met Bob .", "h": {"name": "Ann"}, "t": {"name": "Bob"}}], []])


# --------------------------------------------------------------------------------------------
# damaged or crafted model files
# --------------------------------------------------------------------------------------------
def _copy(tmp_path):
    dst = tmp_path / NAME
    shutil.copytree(pretrained.path(NAME), dst)
    return dst


def _one_line_error(fn, *match):
    with pytest.raises(ValueError) as info:
        fn()
    text = str(info.value)
    assert "\n" not in text
    for m in match:
        assert m in text, text
    return text


def test_a_copied_folder_is_a_run_directory(tmp_path):
    dst = _copy(tmp_path)
    cfg, vocab, model = load_trained(dst)
    assert cfg.encoder == "pcnn" and len(vocab) > 1000


def test_corrupt_model_file_is_refused(tmp_path):
    dst = _copy(tmp_path)
    (dst / "model.safetensors").write_bytes(b"\x00\x01not a safetensors file" * 10)
    _one_line_error(lambda: load_trained(dst), "model.safetensors", "not a readable safetensors model")


def test_a_pickle_in_place_of_the_model_runs_nothing(tmp_path):
    from support.hardening import crafted_torch_file

    dst = _copy(tmp_path)
    marker = tmp_path / "pwned"
    crafted_torch_file(dst / "model.safetensors", marker, payload_key="state_dict")
    _one_line_error(lambda: load_trained(dst), "model.safetensors", "not a readable safetensors model")
    # a crafted model.pt in a folder without model.safetensors is refused too
    (dst / "model.safetensors").unlink()
    crafted_torch_file(dst / "model.pt", marker, payload_key="state_dict")
    _one_line_error(lambda: load_trained(dst), "model.pt", "not a readable relext model")
    assert not marker.exists()


def test_truncated_model_file_is_refused(tmp_path):
    dst = _copy(tmp_path)
    data = (dst / "model.safetensors").read_bytes()
    (dst / "model.safetensors").write_bytes(data[: len(data) // 2])
    _one_line_error(lambda: load_trained(dst), "model.safetensors")


def test_crafted_model_files_are_refused(tmp_path):
    from safetensors.torch import save_file

    from relext.training.predict import _read_safetensors

    dst = _copy(tmp_path)
    good = _read_safetensors(dst / "model.safetensors")
    record = {"format_version": 1, "config": good["config"], "vocab_fingerprint": good["vocab_fingerprint"]}
    meta = {"relext": json.dumps(record)}
    state = dict(good["state_dict"])
    # a tensor of another shape
    state["classifier.weight"] = torch.zeros(3, 7)
    save_file(state, str(dst / "model.safetensors"), metadata=meta)
    _one_line_error(lambda: load_trained(dst), "model.safetensors", "do not fit the model")
    # no relext metadata
    save_file(dict(good["state_dict"]), str(dst / "model.safetensors"))
    _one_line_error(lambda: load_trained(dst), "not a relext model file")
    save_file(dict(good["state_dict"]), str(dst / "model.safetensors"), metadata={"relext": "{oops"})
    _one_line_error(lambda: load_trained(dst), "not valid JSON")
    save_file(dict(good["state_dict"]), str(dst / "model.safetensors"),
              metadata={"relext": json.dumps({**record, "format_version": 2})})
    _one_line_error(lambda: load_trained(dst), "format_version 1")
    # another vocabulary
    save_file(dict(good["state_dict"]), str(dst / "model.safetensors"),
              metadata={"relext": json.dumps({**record, "vocab_fingerprint": "0" * 64})})
    _one_line_error(lambda: load_trained(dst), "vocabulary fingerprint differs")
    # another config
    other = {**good["config"], "hidden": 100}
    save_file(dict(good["state_dict"]), str(dst / "model.safetensors"),
              metadata={"relext": json.dumps({**record, "config": other})})
    _one_line_error(lambda: load_trained(dst), "fields ['hidden'] differ")


def test_damaged_vocabulary_is_refused(tmp_path):
    dst = _copy(tmp_path)
    (dst / "vocab.json.gz").write_bytes(b"not gzip")
    _one_line_error(lambda: load_trained(dst), "vocab.json.gz", "not a gzipped JSON vocabulary")


def test_checksums_are_checked_on_load(tmp_path, monkeypatch):
    dst = _copy(tmp_path)
    monkeypatch.setattr(pretrained, "ROOT", tmp_path)
    assert pretrained.load(NAME).path == dst
    data = bytearray((dst / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one flipped bit in a weight: still a valid safetensors file
    (dst / "model.safetensors").write_bytes(bytes(data))
    _one_line_error(lambda: pretrained.load(NAME), "model.safetensors", "sha256 differs")
    assert pretrained.load(NAME, check=False).path == dst


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def test_cli_infer_and_extract_with_the_pretrained_model(tmp_path):
    from wgb.cli import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["re", "infer", "--pretrained", "--text", "Marie Curie married Pierre Curie in 1895 .",
                              "--head", "Marie Curie", "--tail", "Pierre Curie", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["relation"] in out["scores"] and abs(sum(out["scores"].values()) - 1) < 1e-5
    res = runner.invoke(cli, ["re", "infer", "--pretrained", NAME, "--text", "Ann met Bob .", "--head", "Ann",
                              "--tail", "Bob", "--head-pos", "0,3", "--tail-pos", "8,11"])
    assert res.exit_code == 0 and res.output.split("\t")[0] in pretrained.load(NAME).relations
    folder = pretrained.path(NAME)
    before = sorted(p.name for p in folder.iterdir())
    out_file = tmp_path / "t.jsonl"
    res = runner.invoke(cli, ["re", "extract", "--pretrained", "--split", "female_test", "-o", str(out_file)])
    assert res.exit_code == 0, res.output
    assert out_file.read_text().count("\n") > 500
    assert sorted(p.name for p in folder.iterdir()) == before
    res = runner.invoke(cli, ["re", "extract", str(tmp_path), "--pretrained", "--split", "male_test"])
    assert res.exit_code == 2 and "exactly one of RUN_DIR or --pretrained" in res.output
    res = runner.invoke(cli, ["re", "extract", "--pretrained", "nope", "--split", "male_test"])
    assert res.exit_code == 2 and "unknown pretrained extractor 'nope'" in res.output


def test_every_shipped_file_is_package_data():
    """pyproject.toml's package-data globs take every file of every shipped model (so it installs)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(pretrained.__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("installed without the source tree")
    globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["relext.pretrained"]
    for name in pretrained.available():
        for f in pretrained.path(name).iterdir():
            rel = f"{name}/{f.name}"
            assert any(fnmatch.fnmatch(rel, g) for g in globs), rel
