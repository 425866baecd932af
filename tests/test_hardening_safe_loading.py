"""No code execution from data files: kge checkpoints are read with ``weights_only=True`` and the
build cache of `wgb data build` is JSON, so crafted files are refused (or ignored) and run nothing.
(relext's model.pt / checkpoint.pt: tests/relext/test_predict.py and tests/test_hardening_cli.py.)"""
from __future__ import annotations

import json
import pickle

import pytest
import torch

from support.hardening import Exploit, crafted_torch_file, make_graph

torch.set_num_threads(1)


# ------------------------------------------------------------------------------ kge checkpoints
def _cfg(**kw):
    from kge.train import TrainConfig

    return TrainConfig(**{"dim": 4, "epochs": 2, "batch_size": 32, "evaluate_test": False, **kw})


def test_kge_checkpoint_holds_tensors_and_plain_values_only(tmp_path):
    from kge.train import load_checkpoint, train

    g = make_graph()
    train(g, _cfg(epochs=1, eval_every=1), tmp_path / "run", progress=False)
    ck = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)  # what a resume reads
    assert ck["graph"] == g.fingerprint() and ck["epoch"] == 1
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["config"]["dim"] == 4


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("content", ["crafted", "garbage", "truncated", "empty", "not_a_dict", "missing_keys"])
def test_kge_bad_checkpoint_is_a_one_line_error_and_runs_nothing(tmp_path, content):
    from kge.train import CheckpointError, load_checkpoint, train

    g = make_graph()
    out = tmp_path / "run"
    train(g, _cfg(epochs=1), out, progress=False)
    (out / "DONE").unlink()
    ck = out / "checkpoint.pt"
    marker = tmp_path / "pwned"
    if content == "crafted":
        crafted_torch_file(ck, marker)
    elif content == "garbage":
        ck.write_bytes(pickle.dumps(Exploit(marker)))  # a bare pickle, not even a torch zip
    elif content == "truncated":
        ck.write_bytes(ck.read_bytes()[:400])
    elif content == "empty":
        ck.write_bytes(b"")
    elif content == "not_a_dict":
        torch.save([torch.zeros(2)], ck)
    else:
        torch.save({"config": {}, "epoch": 1}, ck)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(ck)
    msg = str(err.value)
    assert msg.startswith(f"{ck}: ") and "\n" not in msg and "--overwrite" in msg
    with pytest.raises(CheckpointError):  # and so does resuming
        train(g, _cfg(epochs=2), out, progress=False)
    assert not marker.exists() and not (out / "DONE").exists()


def test_kge_checkpoint_of_another_model_shape_is_a_clear_error(tmp_path):
    from kge.train import CheckpointError, train

    g = make_graph()
    out = tmp_path / "run"
    train(g, _cfg(epochs=1), out, progress=False)
    (out / "DONE").unlink()
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    ck["model"]["entity.weight"] = torch.zeros(3, 4)
    torch.save(ck, out / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="does not fit a transe model"):
        train(g, _cfg(epochs=2), out, progress=False)


# ---------------------------------------------------------------------------- build part files
def _part():
    from wikigenderbias.parts import PartResult
    from wikigenderbias.dbpedia import Issues

    issues = Issues(limit=2)
    issues.add("bad_page", "wiki.xml:3", "no title")
    recs = [{"entity_id": eid, "entity": eid, "gender": g, "source_page": f"wiki.xml:{i}",
             "relations": [{"relation": "spouse", "tail": "X\nY \u2028 \"q\"", "sentences": ["a\tb", "é"],
                            "positions": []}]}
            for i, (eid, g) in enumerate([("Zoe", "female"), ("Adam", "male"), ("Mia", "female")])]
    return PartResult("wiki.xml", recs, {"pages": 3}, {"examples:spouse": 3}, issues, 1.5, ["Nobody"], 0.5)


def test_build_parts_are_json_and_round_trip(tmp_path):
    from wikigenderbias.parts import load_part, read_records, records_file, save_part, summary_file

    summary = save_part(tmp_path, "k1", _part())
    assert records_file(tmp_path, "k1").name == "k1.records.jsonl"
    json.loads(summary_file(tmp_path, "k1").read_text(encoding="utf-8"))  # plain JSON
    assert load_part(tmp_path, "k1") == summary
    assert summary.heads == [("Zoe", "female", "wiki.xml:0"), ("Adam", "male", "wiki.xml:1"),
                             ("Mia", "female", "wiki.xml:2")]
    recs = list(read_records(records_file(tmp_path, "k1")))
    assert [r["entity_id"] for r in recs] == ["Adam", "Mia", "Zoe"]  # sorted, one record per line
    assert recs[0]["relations"][0]["tail"] == "X\nY \u2028 \"q\"" and "source_page" not in recs[0]


def test_crafted_build_cache_files_run_nothing(tmp_path):
    from wikigenderbias.parts import load_part, read_records, records_file, save_part, summary_file

    marker = tmp_path / "pwned"
    save_part(tmp_path, "k1", _part())
    # a crafted summary: not JSON, so the part counts as unfinished (it is read again)
    summary_file(tmp_path, "k1").write_bytes(pickle.dumps(Exploit(marker)))
    assert load_part(tmp_path, "k1") is None
    # the old pickle names are never opened
    (tmp_path / "k2.records.pkl").write_bytes(pickle.dumps(Exploit(marker)))
    (tmp_path / "k2.summary.pkl").write_bytes(pickle.dumps(Exploit(marker)))
    assert load_part(tmp_path, "k2") is None
    # a crafted records file behind a valid summary: an error naming file:line
    save_part(tmp_path, "k3", _part())
    with open(records_file(tmp_path, "k3"), "ab") as fh:
        fh.write(pickle.dumps(Exploit(marker)) + b"\n")
    with pytest.raises(ValueError, match=r"k3\.records\.jsonl:4: unreadable build cache record"):
        list(read_records(records_file(tmp_path, "k3")))
    assert not marker.exists()
