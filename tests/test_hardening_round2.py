"""Bad input, round 2 (issue 30), table-driven like tests/test_hardening_cli.py: every case is one
command that must fail with a one-line ``Error:`` naming the file, row or field (exit 1; 2 for a
wrong command line), never a traceback, and leave nothing behind.

Case names start with the pattern of the issue they belong to: p1 cached results that cannot be
checked, p2 sentences without their head or tail at inference, p3 ``kge report`` input, p5
third-party errors without file names, p6 ``refresh-card`` against the features, p7 KGE value
checks, p8 provenance of run folders, p9 two writers of one folder (pattern 4, the grid, is
tested with the grid). Each case: (setup, exit code, words the message must hold);
``setup(tmp, fx)`` builds its inputs under ``tmp`` and returns ``(args, paths that must not
exist afterwards)``. What is predicted again rather than refused is in tests/test_hardening_caches.py.
"""
from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from support.hardening import copy_run, kge_fixture, make_graph, relext_fixture
from support.hardening2 import bench_folder, copy, pykeen_folder
from wgb.cli import cli
from wgbcore.lock import FolderLock


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    return {**kge_fixture(root), "run": relext_fixture(root), "bench": bench_folder(root)}


_HELD: list[FolderLock] = []


@pytest.fixture(autouse=True)
def _release_held_locks():
    yield
    while _HELD:
        _HELD.pop().release()


def _emb(tmp, fx, name="emb"):
    return copy_run(fx["emb"], tmp / name)


def _run(tmp, fx, name="run"):
    return copy_run(fx["run"], tmp / name)


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


# ---------------------------------------------------------------- p1: caches that cannot be checked
def p1_re_eval_predictions_without_model(tmp, fx):
    run = _run(tmp, fx)
    (run / "model.pt").unlink()
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json"]


def p1_re_extract_predictions_without_model(tmp, fx):
    run = _run(tmp, fx)
    (run / "model.pt").unlink()
    return ["re", "extract", str(run), "--split", "male_test", "-o", str(tmp / "t.jsonl")], [tmp / "t.jsonl"]


def _edit_predictions(run: Path) -> None:
    p = run / "predictions" / "validation.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines()]
    rows[0]["scores"] = [0.0, 1.0] + [0.0] * (len(rows[0]["scores"]) - 2)  # still well-formed
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))


def p1_re_eval_predictions_edited(tmp, fx):
    run = _run(tmp, fx)
    _edit_predictions(run)
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json"]


def p1_re_extract_predictions_edited(tmp, fx):
    run = _run(tmp, fx)
    _edit_predictions(run)
    return ["re", "extract", str(run), "--split", "validation", "-o", str(tmp / "t.jsonl")], [tmp / "t.jsonl"]


# ---------------------------------------------------------------- p2: no head or tail at inference
def p2_re_infer_neither_mentioned(tmp, fx):
    return ["re", "infer", str(fx["run"]), "--text", "It rained all day .", "--head", "Ann Lee",
            "--tail", "Bob Ray"], []


def p2_re_infer_tail_not_mentioned(tmp, fx):
    return ["re", "infer", str(fx["run"]), "--text", "Ann Lee stayed home .", "--head", "Ann Lee",
            "--tail", "Bob Ray"], []


def p2_re_infer_position_not_located(tmp, fx):
    return ["re", "infer", str(fx["run"]), "--text", "Ann Lee met Bob Ray .", "--head", "Ann Lee",
            "--tail", "Bob Ray", "--tail-pos=-1,-1"], []


def p2_re_infer_pretrained(tmp, fx):
    return ["re", "infer", "--pretrained", "--text", "Marie Curie was a chemist .", "--head", "Marie Curie",
            "--tail", "Pierre Curie"], []


def p2_re_extract_text_one_line_without_tail(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "Ann Lee", "tail": "Bob Ray", "text": "Ann Lee married Bob Ray ."},
                                 {"head": "Ann Lee", "tail": "Bob Ray", "text": "Ann Lee stayed home ."}])
    return ["re", "extract", str(fx["run"]), "--text", str(t), "-o", str(tmp / "x.jsonl")], [tmp / "x.jsonl"]


def p2_re_extract_text_pretrained(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "Ann Lee", "tail": "Rome", "text": "Ann Lee was born in Paris ."}])
    return ["re", "extract", "--pretrained", "--text", str(t), "-o", str(tmp / "x.jsonl")], [tmp / "x.jsonl"]


def p7_re_extract_min_score_nan(tmp, fx):
    return ["re", "extract", str(fx["run"]), "--split", "male_test", "--min-score", "nan",
            "-o", str(tmp / "t.jsonl")], [tmp / "t.jsonl"]


# ------------------------------------------------------------------------- p3: kge report input
def _bias_doc(**row) -> dict:
    r = {"measure": "fisher", "model": "transe", "sensitive_relation": "gender", "a": "male", "b": "female",
         "target_relation": "profession", "item": "nurse", "score": 0.25, "count_a": 3, "count_b": 9, "extra": {}}
    r.update(row)
    return {"format": "wgb-kge-bias/1", "results": [{
        "measure": "fisher", "model": "transe",
        "spec": {"sensitive_relation": "gender", "a": "male", "b": "female", "target_relation": "profession"},
        "rows": [r], "summary": {}, "config": {}, "seed": 0, "version": "x", "seconds": 0.0, "created": ""}]}


def _report(tmp, doc, text=None):
    (tmp / "b.json").write_text(text if text is not None else json.dumps(doc))
    return ["kge", "report", str(tmp / "b.json"), "--out", str(tmp / "rep")], [tmp / "rep"]


def p3_kge_report_nan_score(tmp, fx):
    return _report(tmp, None, json.dumps(_bias_doc(score=0.5)).replace("0.5", "NaN"))


def p3_kge_report_string_score(tmp, fx):
    return _report(tmp, _bias_doc(score="high"))


def p3_kge_report_boolean_count(tmp, fx):
    return _report(tmp, _bias_doc(count_a=True))


def p3_kge_report_other_format(tmp, fx):
    doc = _bias_doc()
    doc["format"] = "wgb-kge-bias/9"
    return _report(tmp, doc)


def p3_kge_report_spec_not_an_object(tmp, fx):
    doc = _bias_doc()
    doc["results"][0]["spec"] = ["gender", "male"]
    return _report(tmp, doc)


def p3_kge_report_spec_unknown_field(tmp, fx):
    doc = _bias_doc()
    doc["results"][0]["spec"]["gendr"] = "x"
    return _report(tmp, doc)


def p3_kge_report_rows_file_nan(tmp, fx):
    row = _bias_doc()["results"][0]["rows"][0]
    return _report(tmp, None, json.dumps([row]).replace("0.25", "Infinity"))


# ------------------------------------------------------------------- p5: errors name their file
def p5_kge_bias_preds_csv_ragged(tmp, fx):
    (tmp / "p.csv").write_text(",entity,true_tail,pred\n0,1,2,3\n1,1,2,3,4,5,6\n")
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "keidar_dpd", "--preds",
            str(tmp / "p.csv"), "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p5_kge_train_gzipped_triples_truncated(tmp, fx):
    data = gzip.compress(b'{"head": "a", "relation": "r", "tail": "b"}\n' * 200)
    (tmp / "t.jsonl.gz").write_bytes(data[: len(data) // 2])
    return ["kge", "train", str(tmp / "t.jsonl.gz"), "--out", str(tmp / "o")], [tmp / "o"]


def p5_kge_train_yaml_config_not_utf8(tmp, fx):
    (tmp / "c.yaml").write_bytes(b"dim: 8\nname: \xff\xfe\n")
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--config", str(tmp / "c.yaml")], [tmp / "o"]


def p5_pykeen_import_id_map_not_gzip(tmp, fx):
    pk = pykeen_folder(fx["emb"], tmp / "pk")
    (pk / "training_triples" / "entity_to_id.tsv.gz").write_bytes(b"id\tlabel\n0\ta\n")
    return ["kge", "pykeen", "import", str(pk), str(tmp / "o")], [tmp / "o"]


def p5_re_eval_saved_dataset_unreadable(tmp, fx):
    run = _run(tmp, fx)
    data = tmp / "data"
    data.mkdir()
    (data / "dataset_dict.json").write_text('{"splits": ["validation"]}')
    (data / "validation").mkdir()
    (data / "validation" / "dataset_info.json").write_text("{}")
    (data / "validation" / "state.json").write_text("{not json")
    cfg = json.loads((run / "config.json").read_text())
    cfg["dataset"] = str(data)
    (run / "config.json").write_text(json.dumps(cfg))
    import torch

    saved = torch.load(run / "model.pt", weights_only=True)  # a model of that config: past the config check
    saved["config"]["dataset"] = str(data)
    torch.save(saved, run / "model.pt")
    import shutil

    shutil.rmtree(run / "predictions")
    return ["re", "eval", str(run), "--no-plot", "--resamples", "100"], [run / "eval.json", run / "predictions"]


def p5_data_annotate_export_parquet_garbage(tmp, fx):
    bench = copy(fx["bench"], tmp / "bench")
    (bench / "data" / "sentences" / "male_test-00000-of-00001.parquet").write_bytes(b"PAR1 garbage PAR1")
    return ["data", "annotate-export", str(bench), "--out", str(tmp / "tasks.csv")], [tmp / "tasks.csv"]


# ---------------------------------------------------------- p6: refresh-card against the features
def _rewrite_parquet(path: Path, fn) -> None:
    import pyarrow.parquet as pq

    table = fn(pq.read_table(path))
    pq.write_table(table, path)


def _refresh(tmp, fx, change):
    bench = copy(fx["bench"], tmp / "bench")
    change(bench)
    before = (bench / "report.json").read_text()
    return ["data", "refresh-card", "--dataset", str(bench)], [], (bench, before)


def p6_refresh_card_missing_column(tmp, fx):
    f = "data/sentences/male_test-00000-of-00001.parquet"
    args, gone, _ = _refresh(tmp, fx, lambda b: _rewrite_parquet(b / f, lambda t: t.drop(["tail_match"])))
    return args, gone


def p6_refresh_card_relation_out_of_range(tmp, fx):
    import pyarrow as pa

    def change(t):
        rel = t.column("relation").to_pylist()
        rel[0] = 99
        i = t.schema.get_field_index("relation")
        return t.set_column(i, t.schema.field(i), pa.array(rel, t.schema.field(i).type))

    f = "data/sentences/female_test-00000-of-00001.parquet"
    args, gone, _ = _refresh(tmp, fx, lambda b: _rewrite_parquet(b / f, change))
    return args, gone


def p6_refresh_card_column_of_another_type(tmp, fx):
    import pyarrow as pa

    def change(t):
        i = t.schema.get_field_index("gender")
        return t.set_column(i, "gender", pa.array([str(x) for x in t.column("gender").to_pylist()]))

    f = "data/entities/validation-00000-of-00001.parquet"
    args, gone, _ = _refresh(tmp, fx, lambda b: _rewrite_parquet(b / f, change))
    return args, gone


# --------------------------------------------------------------------------- p7: KGE values
def p7_kge_train_nan_score(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "a", "relation": "r", "tail": "b", "score": 0.9},
                                 '{"head": "c", "relation": "r", "tail": "d", "score": NaN}'])
    return ["kge", "train", str(t), "--out", str(tmp / "o"), "--min-score", "0.5"], [tmp / "o"]


def p7_kge_train_boolean_score(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "a", "relation": "r", "tail": "b", "score": True}])
    return ["kge", "train", str(t), "--out", str(tmp / "o"), "--min-score", "0.5"], [tmp / "o"]


def p7_kge_train_min_score_nan(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "a", "relation": "r", "tail": "b", "score": 0.9}])
    return ["kge", "train", str(t), "--out", str(tmp / "o"), "--min-score", "nan"], [tmp / "o"]


def p7_kge_train_gender_triple_contradicts_head_gender(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "Ann", "relation": "spouse", "tail": "Bob", "head_gender": "female"},
                                 {"head": "Ann", "relation": "gender", "tail": "male"}])
    return ["kge", "train", str(t), "--out", str(tmp / "o")], [tmp / "o"]


def p7_kge_bias_gender_triple_before_head_gender(tmp, fx):
    t = _jsonl(tmp / "t.jsonl", [{"head": "Ann", "relation": "gender", "tail": "male"},
                                 {"head": "Ann", "relation": "spouse", "tail": "Bob", "head_gender": "female"}])
    return ["kge", "bias", "-", str(t), "--measure", "data", "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p7_kge_bias_topk_negative_ks(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "bourli_topk", "--option", "ks=10,-5",
            "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p7_kge_bias_topk_zero_ks(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "bourli_topk", "--option", "ks=0",
            "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p7_kge_eval_type_constrain_relation_unseen_in_training(tmp, fx):
    g = make_graph()
    friend = g.relation_to_id["friend"]
    g.test = np.concatenate([g.test, g.train[g.train[:, 1] == friend]])
    g.train = g.train[g.train[:, 1] != friend]
    g.valid = g.valid[g.valid[:, 1] != friend]
    g.save(tmp / "g")
    emb = _emb(tmp, fx)
    return ["kge", "eval", str(emb), str(tmp / "g"), "--type-constrain"], [emb / "metrics_test.json"]


# ----------------------------------------------------------------- p8: provenance of run folders
def _tampered_pretrained(tmp):
    from relext import pretrained

    dst = copy(pretrained.path(), tmp / "pcnn")
    data = bytearray((dst / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one bit of one weight: still a well-formed file
    (dst / "model.safetensors").write_bytes(bytes(data))
    return dst


def p8_re_extract_tampered_pretrained_copy(tmp, fx):
    dst = _tampered_pretrained(tmp)
    return ["re", "extract", str(dst), "--split", "male_test", "-o", str(tmp / "t.jsonl")], [tmp / "t.jsonl"]


def p8_re_infer_tampered_pretrained_copy(tmp, fx):
    dst = _tampered_pretrained(tmp)
    return ["re", "infer", str(dst), "--text", "Ann Lee married Bob Ray .", "--head", "Ann Lee",
            "--tail", "Bob Ray"], []


def p8_re_eval_tampered_pretrained_copy(tmp, fx):
    dst = _tampered_pretrained(tmp)
    return ["re", "eval", str(dst), "--no-plot", "--resamples", "100"], [dst / "eval.md", dst / "predictions"]


def p8_pykeen_import_into_finished_run(tmp, fx):
    pk = pykeen_folder(fx["emb"], tmp / "pk")
    out = _emb(tmp, fx, "o")
    (out / "DONE").write_text("done\n")
    return ["kge", "pykeen", "import", str(pk), str(out)], []


def _no_fingerprint(tmp, fx):
    emb = _emb(tmp, fx)
    cfg = json.loads((emb / "config.json").read_text())
    cfg["graph"] = None
    (emb / "config.json").write_text(json.dumps(cfg))
    return emb


def p8_kge_bias_config_without_fingerprint(tmp, fx):
    emb = _no_fingerprint(tmp, fx)
    return ["kge", "bias", str(emb), str(fx["graph"]), "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p8_kge_eval_config_without_fingerprint(tmp, fx):
    emb = _no_fingerprint(tmp, fx)
    return ["kge", "eval", str(emb), str(fx["graph"])], [emb / "metrics_test.json"]


def p8_kge_du_config_without_fingerprint(tmp, fx):
    emb = _no_fingerprint(tmp, fx)
    return ["kge", "du-debias", str(emb), str(fx["graph"]), "--occupation", "nurse", "--a", "male", "--b", "female",
            "--out", str(tmp / "du.json")], [tmp / "du.json"]


def p8_kge_bias_all_bad_option_checked_first(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "all", "--a", "male", "--b", "female",
            "--option", "ks=-5", "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p8_kge_bias_all_rest_checked_first(tmp, fx):
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "all", "--a", "male", "--b", "rest",
            "--out", str(tmp / "b.json")], [tmp / "b.json"]


# ------------------------------------------------------------------ p9: two writers, one folder
def _held(path: Path) -> None:
    """Another writer (here: a lock taken by this process on its own) holds ``path``."""
    _HELD.append(FolderLock(path, beside=True).acquire())


def p9_kge_train(tmp, fx):
    _held(tmp / "o")
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--dim", "4", "--epochs", "1"], [tmp / "o"]


def p9_re_train(tmp, fx):
    _held(tmp / "r")
    return ["re", "train", str(tmp / "r"), "--epochs", "1"], [tmp / "r"]


def p9_data_build(tmp, fx):
    (tmp / "db.nt").write_text("")
    (tmp / "wiki.xml").write_text("")
    _held(tmp / "bench")
    return ["data", "build", "--dbpedia", str(tmp / "db.nt"), "--wikipedia", str(tmp / "wiki.xml"),
            "--out", str(tmp / "bench")], [tmp / "bench", tmp / "bench.parts"]


def p9_data_annotate_import_in_place(tmp, fx):
    bench = copy(fx["bench"], tmp / "bench")
    (tmp / "a.csv").write_text("item_id,answer_1,answer_2,answer_3\nx,yes,no,yes\n")
    _held(bench)
    return ["data", "annotate-import", str(bench), str(tmp / "a.csv"), "--quiet"], []


def p9_re_debias_data(tmp, fx):
    _held(tmp / "d")
    return ["re", "debias-data", "cda", str(tmp / "d"), "--dataset", str(fx["bench"])], [tmp / "d"]


def p9_kge_bias(tmp, fx):
    _held(tmp / "b.json")
    return ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--out", str(tmp / "b.json")], [tmp / "b.json"]


def p9_kge_du_debias(tmp, fx):
    _held(tmp / "du.json")
    return ["kge", "du-debias", str(fx["emb"]), str(fx["graph"]), "--occupation", "nurse", "--a", "male",
            "--b", "female", "--out", str(tmp / "du.json")], [tmp / "du.json"]


def p9_kge_pykeen_import(tmp, fx):
    pk = pykeen_folder(fx["emb"], tmp / "pk")
    _held(tmp / "o")
    return ["kge", "pykeen", "import", str(pk), str(tmp / "o")], [tmp / "o"]


def p9_run(tmp, fx):
    _held(tmp / "o")
    return ["run", "--profile", "tiny", "--out", str(tmp / "o")], [tmp / "o"]


LOCKED = ["in use by another wgb process", f"pid {os.getpid()}", "wait for it to finish"]

CASES = [
    # p1
    (p1_re_eval_predictions_without_model, 1, ["validation.jsonl", "cached predictions but no model", "model.pt"]),
    (p1_re_extract_predictions_without_model, 1, ["male_test.jsonl", "cached predictions but no model"]),
    (p1_re_eval_predictions_edited, 1, ["validation.jsonl", "changed since it was written", "provenance.json"]),
    (p1_re_extract_predictions_edited, 1, ["validation.jsonl", "changed since it was written"]),
    # p2
    (p2_re_infer_neither_mentioned, 1, ["--text", "does not mention its head 'Ann Lee' nor its tail 'Bob Ray'",
                                        "--unmentioned skip"]),
    (p2_re_infer_tail_not_mentioned, 1, ["--text", "does not mention its tail 'Bob Ray'"]),
    (p2_re_infer_position_not_located, 1, ["does not mention its tail 'Bob Ray'"]),
    (p2_re_infer_pretrained, 1, ["does not mention its tail 'Pierre Curie'"]),
    (p2_re_extract_text_one_line_without_tail, 1, ["t.jsonl:2", "does not mention its tail 'Bob Ray'",
                                                   "1 such line"]),
    (p2_re_extract_text_pretrained, 1, ["t.jsonl:1", "does not mention its tail 'Rome'"]),
    # p3
    (p3_kge_report_nan_score, 1, ["b.json", "results[0].rows[0].score", "nan"]),
    (p3_kge_report_string_score, 1, ["b.json", "results[0].rows[0].score", "must be a number", "'high'"]),
    (p3_kge_report_boolean_count, 1, ["b.json", "count_a", "whole number"]),
    (p3_kge_report_other_format, 1, ["b.json", "'format'", "wgb-kge-bias/9"]),
    (p3_kge_report_spec_not_an_object, 1, ["b.json", "results[0].spec must be an object"]),
    (p3_kge_report_spec_unknown_field, 1, ["b.json", "results[0].spec", "gendr"]),
    (p3_kge_report_rows_file_nan, 1, ["b.json", "row 0", "score", "inf"]),
    # p5
    (p5_kge_bias_preds_csv_ragged, 1, ["p.csv", "cannot read the predictions CSV", "ParserError"]),
    (p5_kge_train_gzipped_triples_truncated, 1, ["t.jsonl.gz", "cannot read the triples file"]),
    (p5_kge_train_yaml_config_not_utf8, 2, ["c.yaml", "not UTF-8"]),
    (p5_pykeen_import_id_map_not_gzip, 1, ["entity_to_id.tsv.gz", "cannot read the PyKEEN id map"]),
    (p5_re_eval_saved_dataset_unreadable, 1, ["data", "cannot read the saved DatasetDict"]),
    (p5_data_annotate_export_parquet_garbage, 1, ["male_test-00000-of-00001.parquet"]),
    # p6
    (p6_refresh_card_missing_column, 1, ["male_test-00000-of-00001.parquet", "['tail_match'] missing"]),
    (p6_refresh_card_relation_out_of_range, 1, ["female_test-00000-of-00001.parquet", "row 0", "'relation' holds 99",
                                                "0..4"]),
    (p6_refresh_card_column_of_another_type, 1, ["validation-00000-of-00001.parquet", "'gender' has type string"]),
    # p7
    (p7_kge_train_nan_score, 1, ["t.jsonl:2", "'score' is not a finite number"]),
    (p7_kge_train_boolean_score, 1, ["t.jsonl:1", "'score' is not a number: True"]),
    (p7_kge_train_min_score_nan, 2, ["--min-score", "'nan' is not a finite number"]),   # round 3: at parse
    (p7_re_extract_min_score_nan, 2, ["--min-score", "'nan' is not a finite number"]),
    (p7_kge_train_gender_triple_contradicts_head_gender, 1, ["t.jsonl:2", "contradicts the head_gender 'female'"]),
    (p7_kge_bias_gender_triple_before_head_gender, 1, ["t.jsonl:2", "head_gender 'female'", "t.jsonl:1",
                                                       "says 'male'"]),
    (p7_kge_bias_topk_negative_ks, 1, ["bourli_topk", "ks must be whole numbers >= 1", "-5"]),
    (p7_kge_bias_topk_zero_ks, 1, ["bourli_topk", "ks must be whole numbers >= 1"]),
    (p7_kge_eval_type_constrain_relation_unseen_in_training, 1, ["['friend'] never occur in training",
                                                                 "without --type-constrain"]),
    # p8
    (p8_re_extract_tampered_pretrained_copy, 1, ["model.safetensors", "sha256 differs", "SHA256SUMS"]),
    (p8_re_infer_tampered_pretrained_copy, 1, ["model.safetensors", "sha256 differs"]),
    (p8_re_eval_tampered_pretrained_copy, 1, ["model.safetensors", "sha256 differs"]),
    (p8_pykeen_import_into_finished_run, 1, ["not empty", "DONE", "--overwrite"]),
    (p8_kge_bias_config_without_fingerprint, 1, ["config.json", "no graph fingerprint"]),
    (p8_kge_eval_config_without_fingerprint, 1, ["config.json", "no graph fingerprint"]),
    (p8_kge_du_config_without_fingerprint, 1, ["config.json", "no graph fingerprint"]),
    (p8_kge_bias_all_bad_option_checked_first, 1, ["bourli_topk", "ks must be whole numbers"]),
    (p8_kge_bias_all_rest_checked_first, 1, ["du_", "set both a and b"]),
    # p9
    (p9_kge_train, 1, ["this embedding folder is in use", *LOCKED]),
    (p9_re_train, 1, ["this run is in use", *LOCKED]),
    (p9_data_build, 1, ["this dataset folder is in use", *LOCKED]),
    (p9_data_annotate_import_in_place, 1, ["this dataset folder is in use", *LOCKED]),
    (p9_re_debias_data, 1, ["this dataset folder is in use", *LOCKED]),
    (p9_kge_bias, 1, ["b.json", "this result file is in use", *LOCKED]),
    (p9_kge_du_debias, 1, ["du.json", "this result file is in use", *LOCKED]),
    (p9_kge_pykeen_import, 1, ["this embedding folder is in use", *LOCKED]),
    (p9_run, 1, ["this run folder is in use", *LOCKED]),
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


def test_the_table_covers_every_pattern_of_the_issue():
    patterns = {c[0].__name__.split("_")[0] for c in CASES}
    assert patterns == {"p1", "p2", "p3", "p5", "p6", "p7", "p8", "p9"}


# ------------------------------------------------------------------- the same inputs, accepted
def test_a_valid_bias_file_renders_and_a_failed_render_leaves_no_empty_plots(tmp_path, monkeypatch):
    import kge.report

    (tmp_path / "b.json").write_text(json.dumps(_bias_doc()))
    res = CliRunner().invoke(cli, ["kge", "report", str(tmp_path / "b.json"), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "report.md").exists()

    def boom(*a, **k):
        raise RuntimeError("plotting failed")

    monkeypatch.setattr(kge.report, "_render", boom)
    res = CliRunner().invoke(cli, ["kge", "report", str(tmp_path / "b.json"), "--out", str(tmp_path / "rep2")])
    assert res.exit_code == 1 and not (tmp_path / "rep2").exists()


def test_refresh_card_accepts_an_intact_folder(fx, tmp_path):
    bench = copy(fx["bench"], tmp_path / "bench")
    res = CliRunner().invoke(cli, ["data", "refresh-card", "--dataset", str(bench)])
    assert res.exit_code == 0, res.output
    # a refused folder keeps its report untouched
    f = bench / "data" / "sentences" / "male_test-00000-of-00001.parquet"
    _rewrite_parquet(f, lambda t: t.drop(["tail_match"]))
    before = (bench / "report.json").read_text()
    res = CliRunner().invoke(cli, ["data", "refresh-card", "--dataset", str(bench)])
    assert res.exit_code == 1 and (bench / "report.json").read_text() == before


def test_infer_skips_unmentioned_sentences_when_asked(fx):
    from relext.pretrained import Extractor

    m = Extractor.from_dir(fx["run"])
    good = {"text": "Ann Lee married Bob Ray .", "h": {"name": "Ann Lee"}, "t": {"name": "Bob Ray"}}
    bad = {"text": "Ann Lee stayed home .", "h": {"name": "Ann Lee"}, "t": {"name": "Bob Ray"}}
    with pytest.raises(ValueError, match=r"bag 1 item 0: the sentence does not mention its tail 'Bob Ray'"):
        m.infer_bags([[good], [bad]])
    skipped: list = []
    out = m.infer_bags([[good], [bad], [good, bad]], unmentioned="skip", skipped=skipped)
    assert out[1] is None and out[0] is not None and out[2] == out[0]  # the bad sentence leaves no trace
    assert skipped == ["bag 1 item 0: no tail 'Bob Ray'", "bag 2 item 1: no tail 'Bob Ray'"]
    probs = m.predict_proba([[bad]], unmentioned="skip")
    assert np.isnan(probs).all()
    res = CliRunner().invoke(cli, ["re", "infer", str(fx["run"]), "--text", "Ann Lee stayed home .", "--head",
                                   "Ann Lee", "--tail", "Bob Ray", "--unmentioned", "skip"])
    assert res.exit_code == 0 and "warning: skipped 1 sentence (no tail 'Bob Ray'); nothing predicted" in res.output
    assert "\t" not in res.output  # no relation printed


def test_kge_bias_all_computes_nothing_before_every_check_passed(fx, tmp_path, monkeypatch):
    import kge.bias

    ran = []
    monkeypatch.setattr(kge.bias, "run_measure", lambda *a, **k: ran.append(a[0]))
    res = CliRunner().invoke(cli, ["kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "all",
                                   "--a", "male", "--b", "female", "--option", "ks=-5",
                                   "--out", str(tmp_path / "b.json")])
    assert res.exit_code == 1 and ran == []


def test_pykeen_import_overwrite_leaves_no_marker_of_the_old_run(fx, tmp_path):
    pk = pykeen_folder(fx["emb"], tmp_path / "pk")
    out = copy_run(fx["emb"], tmp_path / "o")
    (out / "DONE").write_text("done\n")
    (out / "checkpoint.pt").write_bytes(b"old")
    res = CliRunner().invoke(cli, ["kge", "pykeen", "import", str(pk), str(out), "--overwrite"])
    assert res.exit_code == 0, res.output
    assert not (out / "DONE").exists() and not (out / "checkpoint.pt").exists()
    assert (out / "config.json").exists()


def test_a_lock_held_by_another_process_is_named_and_a_killed_holder_frees_it(fx, tmp_path):
    import signal
    import subprocess
    import sys
    import textwrap

    out = tmp_path / "o"
    code = textwrap.dedent(f"""
        import time
        from wgbcore.lock import folder_lock
        with folder_lock({str(out)!r}, what="embedding folder", beside=True):
            print("locked", flush=True)
            time.sleep(600)
    """)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert proc.stdout.readline().strip() == "locked"
        args = ["kge", "train", str(fx["graph"]), "--out", str(out), "--dim", "4", "--epochs", "1",
                "--batch-size", "32", "--no-test", "--quiet"]
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 1 and f"pid {proc.pid}" in res.output and not out.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    res = CliRunner().invoke(cli, args)  # the kernel freed the dead holder's lock
    assert res.exit_code == 0, res.output
    assert (out / "DONE").exists() and not list(tmp_path.glob(".o*.wgb.lock"))
    assert math.isfinite(json.loads((out / "config.json").read_text())["dim"])
