"""Bad input for every command group, table-driven: the command fails with a one-line message
naming the file, line or field (exit code 1; 2 for a wrong command line), never a traceback,
and leaves nothing behind.

Each case: (id, setup, expected exit code, words the message must hold). ``setup(tmp, fx)``
prepares files under ``tmp`` and returns ``(args, paths that must not exist afterwards)``.
"""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from support.hardening import (copy_run, crafted_torch_file, kge_fixture, make_graph, relext_fixture, set_json,
                               write_tsv)
from wgb.cli import cli


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    return {**kge_fixture(root), "run": relext_fixture(root)}


def _emb(tmp, fx, name="emb"):
    return copy_run(fx["emb"], tmp / name)


def _run(tmp, fx, name="run"):
    return copy_run(fx["run"], tmp / name)


# ------------------------------------------------------------------------------------- wgb kge
def kge_empty_graph(tmp, fx):
    (tmp / "empty.tsv").write_text("")
    return ["kge", "train", str(tmp / "empty.tsv"), "--out", str(tmp / "o"), "--epochs", "1"], [tmp / "o"]


def kge_threads_negative(tmp, fx):
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--threads", "-3"], [tmp / "o"]


def kge_lr_negative(tmp, fx):
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--lr", "-1"], [tmp / "o"]


def kge_config_dim_word(tmp, fx):
    (tmp / "c.json").write_text('{"dim": "eight"}')
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--config", str(tmp / "c.json")], [tmp / "o"]


def kge_config_negative_lr(tmp, fx):
    (tmp / "c.yaml").write_text("lr: -1\n")
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--config", str(tmp / "c.yaml")], [tmp / "o"]


def kge_config_threads_zero(tmp, fx):
    (tmp / "c.json").write_text('{"num_threads": 0}')
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--config", str(tmp / "c.json")], [tmp / "o"]


def kge_config_malformed(tmp, fx):
    (tmp / "c.json").write_text('{"dim": 8,\n "epochs": }')
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--config", str(tmp / "c.json")], [tmp / "o"]


def _resume_dir(tmp, fx, damage: bytes | None):
    out = _emb(tmp, fx, "o")
    (out / "DONE").unlink()
    ck = out / "checkpoint.pt"
    ck.write_bytes(ck.read_bytes()[:300] if damage is None else damage)
    return ["kge", "train", str(fx["graph"]), "--out", str(out), "--dim", "4", "--epochs", "2", "--batch-size",
            "32", "--no-test", "--quiet"], [out / "DONE"]


def kge_truncated_checkpoint(tmp, fx):
    return _resume_dir(tmp, fx, None)


def kge_garbage_checkpoint(tmp, fx):
    return _resume_dir(tmp, fx, b"\x00garbage, not a checkpoint")


def kge_crafted_checkpoint(tmp, fx):
    args, gone = _resume_dir(tmp, fx, b"")
    crafted_torch_file(tmp / "o" / "checkpoint.pt", tmp / "pwned")
    return args, gone + [tmp / "pwned"]


def kge_other_size_graph(tmp, fx):
    out = _emb(tmp, fx, "o")
    (out / "DONE").unlink()
    return ["kge", "train", str(fx["graph40"]), "--out", str(out), "--dim", "4", "--epochs", "2", "--batch-size",
            "32", "--no-test", "--quiet"], [out / "DONE"]


def kge_shuffled_graph(tmp, fx):
    g = make_graph()
    write_tsv(g, tmp / "g.tsv")
    common = ["--dim", "4", "--epochs", "1", "--batch-size", "32", "--no-test", "--quiet", "--out", str(tmp / "o")]
    assert CliRunner().invoke(cli, ["kge", "train", str(tmp / "g.tsv"), *common]).exit_code == 0
    (tmp / "o" / "DONE").unlink()
    write_tsv(g, tmp / "g.tsv", shuffle_seed=1)  # same size, same triples, other line order
    return ["kge", "train", str(tmp / "g.tsv"), *common[:3], "2", *common[4:]], [tmp / "o" / "DONE"]


def kge_tsv_not_utf8(tmp, fx):
    (tmp / "g.tsv").write_bytes(b"a\tr\tb\nc\tr\t\xff\xfe\n")
    return ["kge", "train", str(tmp / "g.tsv"), "--out", str(tmp / "o")], [tmp / "o"]


def kge_jsonl_not_utf8(tmp, fx):
    (tmp / "t.jsonl").write_bytes(b'{"head": "a", "relation": "r", "tail": "b"}\n{"head": "\xff"}\n')
    return ["kge", "train", str(tmp / "t.jsonl"), "--out", str(tmp / "o")], [tmp / "o"]


def kge_jsonl_gz_truncated(tmp, fx):
    data = gzip.compress(b'{"head": "a", "relation": "r", "tail": "b"}\n' * 50)
    (tmp / "t.tsv.gz").write_bytes(data[: len(data) // 2])
    (tmp / "g").mkdir()
    shutil.move(tmp / "t.tsv.gz", tmp / "g" / "train.tsv.gz")
    return ["kge", "train", str(tmp / "g"), "--out", str(tmp / "o")], [tmp / "o"]


def kge_openke_bad_count(tmp, fx):
    (tmp / "ok").mkdir()
    (tmp / "ok" / "entity2id.txt").write_text("two\na\t0\nb\t1\n")
    (tmp / "ok" / "relation2id.txt").write_text("1\nr\t0\n")
    (tmp / "ok" / "train2id.txt").write_text("1\n0 1 0\n")
    return ["kge", "train", str(tmp / "ok"), "--out", str(tmp / "o")], [tmp / "o"]


def kge_eval_out_proc(tmp, fx):
    return ["kge", "eval", str(fx["emb"]), str(fx["graph"]), "--out", "/proc/x.json"], [Path("/proc/x.json")]


def kge_eval_out_under_file(tmp, fx):
    (tmp / "afile").write_text("{}")
    return ["kge", "eval", str(fx["emb"]), str(fx["graph"]), "--out", str(tmp / "afile" / "m.json")], []


def kge_eval_empty_test(tmp, fx):
    g = make_graph()
    g.test = g.test[:0]
    g.save(tmp / "g")
    emb = _emb(tmp, fx)
    return ["kge", "eval", str(emb), str(tmp / "g")], [emb / "metrics_test.json"]


def _nan_emb(tmp, fx):
    emb = _emb(tmp, fx)
    e = np.load(emb / "entities.npy")
    e[3, 1] = np.nan
    np.save(emb / "entities.npy", e)
    return emb


def kge_eval_nan_embeddings(tmp, fx):
    emb = _nan_emb(tmp, fx)
    return ["kge", "eval", str(emb), str(fx["graph"])], [emb / "metrics_test.json"]


def kge_bias_nan_embeddings(tmp, fx):
    emb = _nan_emb(tmp, fx)
    return ["kge", "bias", str(emb), str(fx["graph"]), "--measure", "fisher", "--out", str(tmp / "b.json")], \
        [tmp / "b.json"]


def kge_eval_truncated_npy(tmp, fx):
    emb = _emb(tmp, fx)
    p = emb / "entities.npy"
    p.write_bytes(p.read_bytes()[:100])
    return ["kge", "eval", str(emb), str(fx["graph"])], [emb / "metrics_test.json"]


def kge_eval_pickled_npy(tmp, fx):
    emb = _emb(tmp, fx)
    np.save(emb / "entities.npy", np.array([object()] * 3, dtype=object), allow_pickle=True)
    return ["kge", "eval", str(emb), str(fx["graph"])], [emb / "metrics_test.json"]


def kge_eval_config_without_model(tmp, fx):
    emb = _emb(tmp, fx)
    d = json.loads((emb / "config.json").read_text())
    del d["model"]
    (emb / "config.json").write_text(json.dumps(d))
    return ["kge", "eval", str(emb), str(fx["graph"])], [emb / "metrics_test.json"]


def kge_eval_threads_negative(tmp, fx):
    return ["kge", "eval", str(fx["emb"]), str(fx["graph"]), "--threads", "-3"], []


def kge_bias_out_proc(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--out", "/proc/b.json"], []


def kge_bias_other_graph(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph40"]), "--out", str(tmp / "b.json")], [tmp / "b.json"]


def kge_report_bad_json(tmp, fx):
    (tmp / "b.json").write_text('{"results": [')
    return ["kge", "report", str(tmp / "b.json"), "--out", str(tmp / "rep")], [tmp / "rep"]


def kge_du_out_under_file(tmp, fx):
    (tmp / "afile").write_text("")
    return ["kge", "du-debias", str(fx["emb"]), str(fx["graph"]), "--occupation", "nurse",
            "--out", str(tmp / "afile" / "du.json")], []


# -------------------------------------------------------------------------------------- wgb re
def re_eval_corrupt_model(tmp, fx):
    run = _run(tmp, fx)
    shutil.rmtree(run / "predictions")
    (run / "model.pt").write_bytes((run / "model.pt").read_bytes()[:200])
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json", run / "predictions"]


def re_eval_crafted_model(tmp, fx):
    run = _run(tmp, fx)
    shutil.rmtree(run / "predictions")
    crafted_torch_file(run / "model.pt", tmp / "pwned", payload_key="state_dict")
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json", tmp / "pwned"]


def re_eval_crafted_model_cached_predictions(tmp, fx):
    run = _run(tmp, fx)
    crafted_torch_file(run / "model.pt", tmp / "pwned", payload_key="state_dict")
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json", tmp / "pwned"]


def re_eval_predictions_of_another_model(tmp, fx):
    import torch

    run = _run(tmp, fx)
    saved = torch.load(run / "model.pt", weights_only=True)
    saved["state_dict"] = {k: v + 1 for k, v in saved["state_dict"].items()}  # retrained: same config
    torch.save(saved, run / "model.pt")
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json"]


def re_eval_config_not_the_models(tmp, fx):
    run = _run(tmp, fx)
    set_json(run / "config.json", hidden=9)
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json"]


def re_eval_predictions_not_utf8(tmp, fx):
    run = _run(tmp, fx)
    with open(run / "predictions" / "male_test.jsonl", "ab") as fh:
        fh.write(b'{"bag_id": "\xff"}\n')
    _rehash(run, "male_test")  # past the file-hash check: the reader's own error
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json"]


def _rehash(run, split):
    from wgbcore.provenance import file_sha256

    prov = json.loads((run / "predictions" / "provenance.json").read_text())
    prov[split]["predictions_sha256"] = file_sha256(run / "predictions" / f"{split}.jsonl")
    (run / "predictions" / "provenance.json").write_text(json.dumps(prov))


def re_extract_out_proc(tmp, fx):
    return ["re", "extract", str(fx["run"]), "--split", "male_test", "--out", "/proc/t.jsonl"], []


def re_extract_text_mentions_nothing(tmp, fx):
    (tmp / "t.jsonl").write_text(json.dumps({"head": "Ann Lee", "tail": "Bob Ray", "text": "It rained all day."}) + "\n")
    return ["re", "extract", str(fx["run"]), "--text", str(tmp / "t.jsonl"), "--out", str(tmp / "x.jsonl")], \
        [tmp / "x.jsonl"]


def re_extract_text_not_utf8(tmp, fx):
    (tmp / "t.jsonl").write_bytes(b'{"head": "A", "tail": "B", "text": "A met B."}\n{"head": "\xe9"}\n')
    return ["re", "extract", str(fx["run"]), "--text", str(tmp / "t.jsonl"), "--out", str(tmp / "x.jsonl")], \
        [tmp / "x.jsonl"]


def re_train_config_lr_word(tmp, fx):
    (tmp / "c.json").write_text('{"lr": "fast"}')
    return ["re", "train", str(tmp / "r"), "--config", str(tmp / "c.json")], [tmp / "r"]


def re_train_threads_negative(tmp, fx):
    return ["re", "train", str(tmp / "r"), "--threads", "-3"], [tmp / "r"]


def re_train_run_dir_under_file(tmp, fx):
    (tmp / "afile").write_text("")
    return ["re", "train", str(tmp / "afile" / "r")], []


# ------------------------------------------------------------------------------------- wgb run
def run_set_wrong_type(tmp, fx):
    return ["run", "--profile", "tiny", "--set", "kge_epochs=abc", "--out", str(tmp / "o")], [tmp / "o"]


def run_set_zero(tmp, fx):
    return ["run", "--profile", "tiny", "--set", "re_epochs=0", "--out", str(tmp / "o")], [tmp / "o"]


def run_threads_negative(tmp, fx):
    return ["run", "--profile", "tiny", "--threads", "-3", "--out", str(tmp / "o")], [tmp / "o"]


def run_out_under_file(tmp, fx):
    (tmp / "afile").write_text("")
    return ["run", "--profile", "tiny", "--out", str(tmp / "afile" / "run")], []


# ------------------------------------------------------------------------------------ wgb data
def data_stats_out_under_file(tmp, fx):
    (tmp / "afile").write_text("")
    return ["data", "stats", "--out", str(tmp / "afile" / "stats")], []


def data_export_out_proc(tmp, fx):
    return ["data", "export", "--out", "/proc/opennre"], []


def data_build_out_proc(tmp, fx):
    (tmp / "db.nt").write_text("")
    (tmp / "wiki.xml").write_text("")
    return ["data", "build", "--dbpedia", str(tmp / "db.nt"), "--wikipedia", str(tmp / "wiki.xml"),
            "--out", "/proc/bench"], []


def data_build_config_out_under_file(tmp, fx):
    (tmp / "db.nt").write_text("")
    (tmp / "wiki.xml").write_text("")
    (tmp / "afile").write_text("")
    (tmp / "b.json").write_text(json.dumps({"out": str(tmp / "afile" / "bench")}))
    return ["data", "build", "--dbpedia", str(tmp / "db.nt"), "--wikipedia", str(tmp / "wiki.xml"),
            "--config", str(tmp / "b.json")], []


def data_annotate_export_out_proc(tmp, fx):
    return ["data", "annotate-export", str(tmp), "--out", "/proc/tasks.csv"], []


CASES = [
    # wgb kge
    (kge_empty_graph, 1, ["empty.tsv", "no triples"]),
    (kge_threads_negative, 2, ["--threads", "-3"]),
    (kge_lr_negative, 2, ["--lr", "-1"]),
    (kge_config_dim_word, 2, ["c.json", "dim", "eight"]),
    (kge_config_negative_lr, 2, ["c.yaml", "lr", ">= 0"]),
    (kge_config_threads_zero, 2, ["c.json", "num_threads"]),
    (kge_config_malformed, 2, ["c.json:2", "malformed JSON"]),
    (kge_truncated_checkpoint, 1, ["checkpoint.pt", "not a readable kge checkpoint", "--overwrite"]),
    (kge_garbage_checkpoint, 1, ["checkpoint.pt", "not a readable kge checkpoint"]),
    (kge_crafted_checkpoint, 1, ["checkpoint.pt", "could run code"]),
    (kge_other_size_graph, 1, ["another graph", "num_entities: 37 -> 47", "--overwrite"]),
    (kge_shuffled_graph, 1, ["another graph", "names or their order differ"]),
    (kge_tsv_not_utf8, 1, ["g.tsv:2", "not UTF-8"]),
    (kge_jsonl_not_utf8, 1, ["t.jsonl:2", "not UTF-8"]),
    (kge_jsonl_gz_truncated, 1, ["train.tsv.gz", "cannot read"]),
    (kge_openke_bad_count, 1, ["entity2id.txt:1", "number of names"]),
    (kge_eval_out_proc, 2, ["--out", "/proc"]),
    (kge_eval_out_under_file, 2, ["--out", "afile", "not a folder"]),
    (kge_eval_empty_test, 1, ["no test triples", "NaN"]),
    (kge_eval_nan_embeddings, 1, ["entities.npy", "NaN"]),
    (kge_bias_nan_embeddings, 1, ["entities.npy", "NaN"]),
    (kge_eval_truncated_npy, 1, ["entities.npy", "not a readable .npy"]),
    (kge_eval_pickled_npy, 1, ["entities.npy", "not a readable .npy"]),
    (kge_eval_config_without_model, 1, ["config.json", "'model' missing"]),
    (kge_eval_threads_negative, 2, ["--threads"]),
    (kge_bias_out_proc, 2, ["--out", "/proc"]),
    (kge_bias_other_graph, 1, ["37 entities", "47"]),
    (kge_report_bad_json, 1, ["b.json", "not valid JSON"]),
    (kge_du_out_under_file, 2, ["--out", "not a folder"]),
    # wgb re
    (re_eval_corrupt_model, 1, ["model.pt", "not a readable relext model"]),
    (re_eval_crafted_model, 1, ["model.pt", "could run code"]),
    (re_eval_crafted_model_cached_predictions, 1, ["model.pt", "could run code"]),
    (re_eval_predictions_of_another_model, 1, ["predictions", "another model", "model.pt"]),
    (re_eval_config_not_the_models, 1, ["config.json", "does not match", "hidden"]),
    (re_eval_predictions_not_utf8, 1, ["male_test.jsonl:", "not UTF-8"]),
    (re_extract_out_proc, 2, ["--out", "/proc"]),
    (re_extract_text_mentions_nothing, 1, ["t.jsonl:1", "does not mention its head 'Ann Lee' nor its tail",
                                           "--unmentioned skip"]),
    (re_extract_text_not_utf8, 1, ["t.jsonl:2", "not UTF-8"]),
    (re_train_config_lr_word, 2, ["c.json", "lr", "fast"]),
    (re_train_threads_negative, 2, ["--threads"]),
    (re_train_run_dir_under_file, 2, ["RUN_DIR", "not a folder"]),
    # wgb run
    (run_set_wrong_type, 1, ["kge_epochs", "whole number"]),
    (run_set_zero, 1, ["re_epochs", ">= 1"]),
    (run_threads_negative, 2, ["--threads"]),
    (run_out_under_file, 2, ["--out", "not a folder"]),
    # wgb data
    (data_stats_out_under_file, 2, ["--out", "not a folder"]),
    (data_export_out_proc, 2, ["--out", "/proc"]),
    (data_build_out_proc, 2, ["--out", "/proc"]),
    (data_build_config_out_under_file, 2, ["--out", "not a folder"]),
    (data_annotate_export_out_proc, 2, ["--out", "/proc"]),
]


@pytest.mark.parametrize("setup,code,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_bad_input(setup, code, words, fx, tmp_path, monkeypatch):
    monkeypatch.delenv("WGB_DEBUG", raising=False)
    args, gone = setup(tmp_path, fx)
    res = CliRunner().invoke(cli, args)
    out = res.output
    assert res.exit_code == code, out
    assert isinstance(res.exception, SystemExit), f"uncaught {res.exception!r}"  # no traceback
    assert "Traceback" not in out
    message = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert len(message) == 1, out
    for w in words:
        assert w in message[0], f"{w!r} not in {message[0]!r}"
    for p in gone:
        assert not Path(p).exists(), f"{p} was left behind"
    assert not list(tmp_path.rglob(".wgb-write-check-*")) and not list(tmp_path.rglob(".*.tmp"))


def test_debug_flag_and_environment_show_the_traceback(fx, tmp_path, monkeypatch):
    from kge.embeddings import EmbeddingShapeError

    args = ["kge", "eval", str(fx["emb"]), str(fx["graph40"])]
    monkeypatch.delenv("WGB_DEBUG", raising=False)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    res = CliRunner().invoke(cli, ["--debug", *args])
    assert isinstance(res.exception, EmbeddingShapeError)
    monkeypatch.setenv("WGB_DEBUG", "1")
    res = CliRunner().invoke(cli, args)
    assert isinstance(res.exception, EmbeddingShapeError)


def test_unexpected_errors_are_one_line_with_their_type(fx, tmp_path, monkeypatch):
    import kge.evaluate

    def boom(*a, **k):
        raise RuntimeError("something broke\nsecond line")

    monkeypatch.delenv("WGB_DEBUG", raising=False)
    monkeypatch.setattr(kge.evaluate, "evaluate", boom)
    res = CliRunner().invoke(cli, ["kge", "eval", str(fx["emb"]), str(fx["graph"]), "--out", str(tmp_path / "m.json")])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert "Error: RuntimeError: something broke second line (rerun with --debug" in res.output
    assert not (tmp_path / "m.json").exists()


def test_every_command_that_takes_seeds_reads_ranges_the_same_way():
    """`wgb re grid`, `wgb re debias-grid` and `wgb run` share one --seeds parser: 0-4 is 0,1,2,3,4
    everywhere, and a bad list is a one-line error naming the option."""
    from click.testing import CliRunner

    from wgb.cli import cli
    from wgb.cli_protocol import parse_seeds

    assert parse_seeds("0-4") == [0, 1, 2, 3, 4] and parse_seeds("3,0-1") == [3, 0, 1]
    with pytest.raises(ValueError, match="seeds repeat"):
        parse_seeds("0-2,1")
    for args in (["re", "grid", "--seeds", "x-y"], ["re", "debias-grid", "/tmp/never", "--seeds", "x-y"],
                 ["run", "--seeds", "x-y", "--out", "/tmp/never"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code != 0 and "0-9" in r.output and "Traceback" not in r.output, (args, r.output)
