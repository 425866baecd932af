"""No silent wrong results and no partial outputs: graph fingerprints on resume, NaN embeddings,
empty evaluation splits, cached predictions checked against their model, new-text sentences that
mention neither entity, and settings validated before any work or any folder is created."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from support.hardening import copy_run, kge_fixture, make_graph, relext_fixture, write_tsv
from wgb.cli import cli

torch.set_num_threads(1)


def _cfg(**kw):
    from kge.train import TrainConfig

    return TrainConfig(**{"dim": 4, "epochs": 2, "batch_size": 32, "evaluate_test": False, **kw})


# ------------------------------------------------------------------------------ kge fingerprints
def test_fingerprint_follows_names_triples_and_their_order(tmp_path):
    from kge.graph import load_graph

    g = make_graph()
    fp = g.fingerprint()
    assert load_graph(write_tsv(g, tmp_path / "a.tsv")).fingerprint() == \
        load_graph(write_tsv(g, tmp_path / "b.tsv")).fingerprint()
    shuffled = load_graph(write_tsv(g, tmp_path / "c.tsv", shuffle_seed=3))
    assert shuffled.num_entities == g.num_entities and len(shuffled.train) == len(g.train) + len(g.valid) + len(g.test)
    assert shuffled.fingerprint()["names_sha256"] != load_graph(tmp_path / "a.tsv").fingerprint()["names_sha256"]
    reordered = make_graph()
    reordered.train = reordered.train[::-1].copy()  # same names, same triples, other order
    assert reordered.fingerprint()["names_sha256"] == fp["names_sha256"]
    assert reordered.fingerprint()["triples_sha256"] != fp["triples_sha256"]


@pytest.mark.parametrize("finished", [False, True])
def test_resume_refuses_another_graph_of_the_same_size(tmp_path, finished):
    from kge.train import ConfigMismatchError, train

    g = make_graph()
    out = tmp_path / "run"
    train(g, _cfg(epochs=1), out, progress=False)
    if not finished:
        (out / "DONE").unlink()
    other = make_graph()
    other.train = other.train[::-1].copy()
    with pytest.raises(ConfigMismatchError, match="another graph.*triples or their order differ.*--overwrite"):
        train(other, _cfg(epochs=1 if finished else 2), out, progress=False)
    # the same graph still resumes, and matches an uninterrupted run exactly
    resumed = train(g, _cfg(epochs=2), out, progress=False)
    full = train(g, _cfg(epochs=2), tmp_path / "full", progress=False)
    assert resumed.resumed_from_epoch == 1
    assert torch.equal(resumed.model.entity.weight, full.model.entity.weight)


def test_config_mismatch_message_names_the_cli_flag(tmp_path):
    from kge.train import ConfigMismatchError, train

    g = make_graph()
    train(g, _cfg(epochs=1), tmp_path / "run", progress=False)
    with pytest.raises(ConfigMismatchError, match=r"dim: 4 -> 8.*--overwrite"):
        train(g, _cfg(epochs=1, dim=8), tmp_path / "run", progress=False)


def test_failure_before_any_file_leaves_no_empty_run_dir(tmp_path, monkeypatch):
    import kge.train as kt

    with pytest.raises(ValueError, match=r"model 'transe' has no option\(s\) \['no_such_option'\]"):
        _cfg(model_kwargs={"no_such_option": 1})

    def broken(*a, **k):
        raise RuntimeError("cannot build the model")

    monkeypatch.setattr(kt, "get_model", broken)
    with pytest.raises(RuntimeError):
        kt.train(make_graph(), _cfg(), tmp_path / "new", progress=False)
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()  # a dir that existed before is never removed
    with pytest.raises(RuntimeError):
        kt.train(make_graph(), _cfg(), tmp_path / "kept", progress=False)
    assert (tmp_path / "kept").is_dir()


@pytest.mark.parametrize("field,value", [("lr", -1.0), ("num_threads", -3), ("num_threads", 0), ("margin", -1.0),
                                         ("patience", -1), ("valid_max_triples", 0), ("max_train_seconds", 0.0),
                                         ("lr", float("nan")), ("dim", 2.5), ("regularization", float("inf"))])
def test_train_config_ranges(field, value):
    from kge.train import TrainConfig

    with pytest.raises(ValueError, match=f"TrainConfig.{field} must be"):
        TrainConfig(**{field: value})


def test_diverging_training_is_an_error_not_nan_embeddings(tmp_path, monkeypatch):
    import kge.train as kt
    import kge.train_step as ks

    real, real_grad = ks.get_loss, ks.get_loss_grad

    def nan_loss(name):
        fn = real(name)
        return lambda pos, neg, margin: fn(pos, neg, margin) * float("nan")

    def nan_grad(name):  # the closed-form path (loss and its derivatives) diverges too
        fn = real_grad(name)
        if fn is None:
            return None
        return lambda pos, neg, margin: tuple(x * float("nan") for x in fn(pos, neg, margin))

    monkeypatch.setattr(ks, "get_loss", nan_loss)
    monkeypatch.setattr(ks, "get_loss_grad", nan_grad)
    with pytest.raises(ValueError, match="diverged in epoch 1"):
        kt.train(make_graph(), _cfg(), tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "DONE").exists() and not (tmp_path / "run" / "checkpoint.pt").exists()


# ------------------------------------------------------------------------ NaN, empty splits
def test_nan_embeddings_are_never_scored(tmp_path):
    from kge.bias import BiasSpec, run_measure
    from kge.embeddings import load_model
    from kge.evaluate import evaluate
    from kge.train import train

    g = make_graph()
    res = train(g, _cfg(epochs=1), tmp_path / "emb", progress=False)
    model = res.model
    with torch.no_grad():
        model.entity.weight[0, 0] = float("inf")
    with pytest.raises(ValueError, match="NaN or infinite"):
        run_measure("fisher", g, model, BiasSpec("gender", "male", "female"))
    e = np.load(tmp_path / "emb" / "entities.npy")
    e[:, 0] = np.nan
    np.save(tmp_path / "emb" / "entities.npy", e)
    with pytest.raises(ValueError, match=r"entities\.npy holds 37 NaN"):
        load_model(tmp_path / "emb", g)
    ok = train(g, _cfg(epochs=1), tmp_path / "emb2", progress=False).model
    empty = make_graph()
    empty.test = empty.test[:0]
    with pytest.raises(ValueError, match="no test triples"):
        evaluate(ok, empty, "test", progress=False)


def test_kge_eval_writes_finite_metrics_only(tmp_path):
    fx = kge_fixture(tmp_path)
    out = tmp_path / "m.json"
    res = CliRunner().invoke(cli, ["kge", "eval", str(fx["emb"]), str(fx["graph"]), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    m = json.loads(out.read_text())
    assert m["num_triples"] > 0 and all(np.isfinite(m[k]) for k in ("mrr", "hits_at_1", "hits_at_10"))


# -------------------------------------------------------------------- cached relext predictions
@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    return relext_fixture(tmp_path_factory.getbasetemp())


def test_predictions_record_their_model_and_config(trained_run):
    from relext.training.predict import check_predictions, model_fingerprint

    from wgbcore.provenance import file_sha256

    prov = json.loads((trained_run / "predictions" / "provenance.json").read_text())
    assert set(prov) == {"validation", "male_test", "female_test"}
    stamp = model_fingerprint(trained_run)
    for split, rec in prov.items():
        assert {k: rec[k] for k in stamp} == stamp
        assert rec["predictions_sha256"] == file_sha256(trained_run / "predictions" / f"{split}.jsonl")
        assert len(rec["dataset_sha256"]) == 64
    assert check_predictions(trained_run) == []


def test_eval_with_cached_predictions_of_another_config_is_refused(trained_run, tmp_path):
    run = copy_run(trained_run, tmp_path / "run")
    prov_path = run / "predictions" / "provenance.json"
    prov = json.loads(prov_path.read_text())
    prov["male_test"]["config"]["epochs"] = 7  # predicted under another config
    prov_path.write_text(json.dumps(prov))
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot", "--resamples", "100"])
    assert res.exit_code == 1 and "male_test.jsonl: written under another config (fields ['epochs']" in res.output
    assert not (run / "eval.json").exists()


def test_eval_with_unverifiable_predictions_predicts_them_again(trained_run, tmp_path):
    run = copy_run(trained_run, tmp_path / "run")
    (run / "predictions" / "provenance.json").unlink()  # as written by an older wgb
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    assert res.output.count("warning:") == 3 and "written by an older wgb" in res.output
    assert "predicting it again" in res.output
    assert set(json.loads((run / "predictions" / "provenance.json").read_text())) == \
        {"validation", "male_test", "female_test"}
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot", "--resamples", "100"])
    assert res.exit_code == 0 and "warning" not in res.output


def test_extract_split_checks_cached_predictions(trained_run, tmp_path):
    import torch as th

    from relext.extract import extract_split

    run = copy_run(trained_run, tmp_path / "run")
    assert extract_split(run, "male_test") is not None
    saved = th.load(run / "model.pt", weights_only=True)
    saved["state_dict"] = {k: v * 2 for k, v in saved["state_dict"].items()}
    th.save(saved, run / "model.pt")
    with pytest.raises(ValueError, match="written by another model"):
        extract_split(run, "male_test")
    res = CliRunner().invoke(cli, ["re", "extract", str(run), "--split", "male_test", "-o", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 1 and "another model" in res.output and not (tmp_path / "t.jsonl").exists()


def test_extract_text_skips_sentences_without_their_head_or_tail_when_asked(trained_run, tmp_path):
    text = tmp_path / "t.jsonl"
    text.write_text("".join(json.dumps(d) + "\n" for d in [
        {"head": "Ann Lee", "tail": "Bob Ray", "gender": "female", "text": "Ann Lee married Bob Ray in 1990."},
        {"head": "Carl Moe", "tail": "Paris", "text": "It rained all day."},
        {"head": "Ann Lee", "tail": "Bob Ray", "text": "Nobody came."},
        {"head": "Ann Lee", "tail": "Bob Ray", "text": "Ann Lee stayed home."},  # the tail is missing
    ]))
    out = tmp_path / "triples.jsonl"
    res = CliRunner().invoke(cli, ["re", "extract", str(trained_run), "--text", str(text), "--rule", "all",
                                   "-o", str(out)])  # refused by default, naming the first such line
    assert res.exit_code == 1 and f"{text}:2: the sentence does not mention" in res.output and not out.exists()
    res = CliRunner().invoke(cli, ["re", "extract", str(trained_run), "--text", str(text), "--rule", "all",
                                   "-o", str(out), "--unmentioned", "skip"])
    assert res.exit_code == 0, res.output
    assert "skipped 3 sentence(s) that do not mention their head and their tail" in res.output
    assert f"{text}:2" in res.output and f"{text}:4" in res.output
    triples = [json.loads(line) for line in out.read_text().splitlines()]
    assert triples and {t["head"] for t in triples} == {"Ann Lee"}
    assert all(len(t["source"]["sentence_ids"]) == 1 for t in triples)


# --------------------------------------------------------------------- wgb run: before any work
def test_run_settings_are_checked_before_any_work(tmp_path, monkeypatch):
    import wgb.pipeline.stages as stages

    called = []
    monkeypatch.setattr(stages, "_extractor_stages", lambda *a, **k: called.append(a))
    for bad in (["--set", "kge_epochs=abc"], ["--set", "kge_dim=2.5"], ["--set", "n_resamples=true"],
                ["--set", "kge_batch_size=-4"], ["--kge-model", "nope"]):
        res = CliRunner().invoke(cli, ["run", "--profile", "tiny", "--out", str(tmp_path / "o"), *bad])
        assert res.exit_code == 1, (bad, res.output)
        assert not (tmp_path / "o").exists() and not called
