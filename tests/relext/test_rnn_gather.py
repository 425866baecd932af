"""The RNN/BiRNN recurrence's gather path (``rnn_impl="gather"``) against the fused path: the same
outputs and gradients up to float rounding (GRU and LSTM, one and two directions, padding,
length-1 sentences, padding ids inside sentences), padding that contributes nothing, each path
deterministic, and the choice part of a run's identity (a record without it is a fused run)."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from relext.model.bags import word_features
from relext.model.encoders import get_encoder
from relext.training.train import TrainConfig, train
from relext.model.vocab import Vocab
from support.relext_data import tiny_dataset

WORDS = "alice bob married was born in paris a singer the of and to".split()
VOCAB = Vocab.from_words(WORDS)
ROOT = Path(__file__).resolve().parents[2]


def _batch(seed: int, n: int = 9, max_length: int = 14):
    """Random sentences (lengths 1..20, some cut to max_length; unknown words; unlocated mentions)."""
    rng = np.random.default_rng(seed)
    tokens, heads, tails = [], [], []
    for i in range(n):
        m = int(rng.integers(1, 21)) if i else 1
        toks = [str(rng.choice(WORDS + ["zzz", "qqq"])) for _ in range(m)]
        h, t = int(rng.integers(0, m)), int(rng.integers(0, m))
        tokens.append(toks)
        heads.append([h, h + 1] if i != 3 else [-1, -1])
        tails.append([t, t + 1] if i != 3 else [-1, -1])
    table = word_features(tokens, np.array(heads), np.array(tails), VOCAB, max_length)
    return table.gather(torch.arange(n))


def _params(enc):
    return [p for p in enc.parameters() if p.requires_grad]


def _run(enc, batch, impl, weights):
    enc.impl = impl
    out = enc(batch)
    grads = torch.autograd.grad((out * weights).sum(), _params(enc))
    return out, grads


@pytest.mark.parametrize("name", ["rnn", "birnn"])
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_gather_equals_fused_in_float64(name, cell):
    batch = _batch(1)
    batch["tokens"][0, 0] = 0                       # a padding id inside a sentence: read, never trained
    torch.manual_seed(0)
    enc = get_encoder(name, num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=5, cell=cell).double()
    w = torch.randn(batch["lengths"].shape[0], enc.out_dim, dtype=torch.float64)
    out_f, g_f = _run(enc, batch, "fused", w)
    out_g, g_g = _run(enc, batch, "gather", w)
    torch.testing.assert_close(out_g, out_f, atol=1e-12, rtol=1e-10)
    for (k, _), a, b in zip(((k, p) for k, p in enc.named_parameters() if p.requires_grad), g_f, g_g):
        torch.testing.assert_close(b, a, atol=1e-12, rtol=1e-10, msg=k)
    assert float(g_g[0][0].abs().sum()) == 0.0      # word row 0 (padding): no gradient on either path
    assert float(g_f[0][0].abs().sum()) == 0.0


@pytest.mark.parametrize("name", ["rnn", "birnn"])
def test_gather_equals_fused_in_float32(name):
    batch = _batch(2, n=12, max_length=20)
    torch.manual_seed(1)
    enc = get_encoder(name, num_words=len(VOCAB), word_dim=8, pos_dim=3, max_length=20, hidden=16)
    w = torch.randn(12, enc.out_dim)
    out_f, g_f = _run(enc, batch, "fused", w)
    out_g, g_g = _run(enc, batch, "gather", w)
    torch.testing.assert_close(out_g, out_f, atol=1e-5, rtol=1e-4)
    for a, b in zip(g_f, g_g):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_padding_contributes_nothing(cell):
    """What sits past a sentence's length (any ids, any width of padding) changes neither the
    output nor any gradient; the position embeddings' padding row gets no gradient."""
    batch = _batch(3)
    batch["pos1"][1, 0] = 0                          # a padding position id at a real token
    torch.manual_seed(2)
    enc = get_encoder("birnn", num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=5, cell=cell)
    w = torch.randn(9, enc.out_dim)
    out, grads = _run(enc, batch, "gather", w)
    lengths = batch["lengths"]
    noisy = {k: v.clone() for k, v in batch.items()}
    pad = torch.arange(batch["tokens"].shape[1])[None] >= lengths[:, None]
    gen = torch.Generator().manual_seed(5)
    for k in ("tokens", "pos1", "pos2"):
        noisy[k][pad] = torch.randint(1, 20, (int(pad.sum()),), generator=gen) % (len(VOCAB) if k == "tokens" else 27) + 1
        noisy[k] = torch.cat([noisy[k], torch.full((9, 4), 3)], 1)               # wider padding as well
    out2, grads2 = _run(enc, noisy, "gather", w)
    assert torch.equal(out, out2)
    assert all(torch.equal(a, b) for a, b in zip(grads, grads2))
    names = [k for k, p in enc.named_parameters() if p.requires_grad]
    g = dict(zip(names, grads))
    assert float(g["embed.pos1.weight"][0].abs().sum()) == 0.0
    assert float(g["embed.pos2.weight"][0].abs().sum()) == 0.0


@pytest.mark.parametrize("name", ["rnn", "birnn"])
def test_each_path_is_deterministic(name):
    batch = _batch(4)
    for impl in ("fused", "gather"):
        runs = []
        for _ in range(2):
            torch.manual_seed(0)
            enc = get_encoder(name, num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=7)
            enc.impl = impl
            out = enc(batch)
            runs.append([out, *torch.autograd.grad(out.square().sum(), _params(enc))])
        assert all(torch.equal(a, b) for a, b in zip(*runs)), impl


def test_eval_mode_and_empty_batch():
    torch.manual_seed(0)
    enc = get_encoder("birnn", num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=5,
                      rnn_impl="gather")
    batch = _batch(5)
    with torch.no_grad():
        a = enc(batch)
        enc.impl = "fused"
        b = enc(batch)
    torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    enc.impl = "auto"
    empty = {k: v[:0] for k, v in batch.items()}
    assert enc(empty).shape == (0, enc.out_dim)


def test_rnn_impl_picks_the_cpu_path(monkeypatch):
    from relext.model.encoders import rnn as rnn_mod

    calls = []
    monkeypatch.setattr(rnn_mod.RNNEncoder, "gather_forward", lambda self, b, l: calls.append("gather") or
                        torch.zeros(len(l), self.out_dim))
    enc = get_encoder("rnn", num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=5, rnn_impl="gather")
    enc(_batch(6))
    assert calls == ["gather"]
    enc.rnn_impl = "fused"
    enc(_batch(6))
    assert calls == ["gather"]


def test_bad_rnn_impl():
    with pytest.raises(ValueError, match="rnn_impl must be one of"):
        get_encoder("rnn", num_words=3, rnn_impl="loop")
    with pytest.raises(ValueError, match="rnn_impl must be one of"):
        TrainConfig(encoder="rnn", rnn_impl="loop").validate()


# ------------------------------------------------------------------------------------------------
# the run's identity
# ------------------------------------------------------------------------------------------------
def test_rnn_impl_in_the_identity():
    fused, gather = TrainConfig(encoder="rnn"), TrainConfig(encoder="rnn", rnn_impl="gather")
    assert fused.rnn_impl == "fused"                            # today's path stays the default
    assert "rnn_impl" not in fused.identity()                   # the identity every committed run has
    assert gather.identity()["rnn_impl"] == "gather"
    assert fused.differences(gather) == ["rnn_impl"] == gather.differences(fused)
    assert TrainConfig(encoder="birnn", rnn_impl="gather").differences(TrainConfig(encoder="birnn")) == ["rnn_impl"]
    # an encoder without a recurrence: the field changes nothing, so it is not in the identity
    assert TrainConfig(encoder="pcnn", rnn_impl="gather").differences(TrainConfig(encoder="pcnn")) == []
    rec = {k: v for k, v in gather.to_json().items() if k != "rnn_impl"}
    assert TrainConfig.from_json(rec, record=True).rnn_impl == "fused"
    assert TrainConfig.from_json(rec, record=True).differences(gather) == ["rnn_impl"]


def test_committed_rnn_records_keep_their_identity():
    """Every committed RNN/BiRNN run record reads as a fused run, with no rnn_impl in its identity.

    Records written before the field existed lack it; records written since list every field and
    must say ``"fused"``: no committed run was trained with another recurrence."""
    records = sorted((ROOT / "results").glob("**/runs/*rnn-*/config.json"))
    if not records:
        pytest.skip("no committed RNN run records in this checkout")
    for path in records:
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert raw.get("config", raw).get("rnn_impl", "fused") == "fused", path
        cfg = TrainConfig.from_json(path, record=True)
        assert cfg.rnn_impl == "fused" and "rnn_impl" not in cfg.identity(), path


@pytest.fixture(scope="module")
def ds():
    return tiny_dataset(n_train=16, n_eval=4)


def _small(tmp_path, **kw):
    base = dict(encoder="birnn", selector="attention", epochs=2, batch_size=8, word_dim=8, hidden=8,
                max_length=30, w2v_epochs=1, patience=0, threads=1, cache_dir=str(tmp_path / "w2v"))
    return TrainConfig(**{**base, **kw})


def test_gather_runs_are_recorded_deterministic_and_never_mixed(tmp_path, ds):
    from relext.training.train import model_from_config

    cfg = _small(tmp_path, rnn_impl="gather")
    a = train(cfg, tmp_path / "a", dataset=ds, progress=False)
    b = train(cfg, tmp_path / "b", dataset=ds, progress=False)
    assert json.loads((a / "config.json").read_text())["rnn_impl"] == "gather"
    sa, sb = (torch.load(d / "model.pt", weights_only=True)["state_dict"] for d in (a, b))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    with pytest.raises(ValueError, match=r"another config \(fields \['rnn_impl'\]"):
        train(_small(tmp_path), a, dataset=ds, progress=False)
    rebuilt = model_from_config(TrainConfig.from_json(a / "config.json", record=True), Vocab.load(a / "vocab.json"))
    assert rebuilt.encoder.rnn_impl == "gather"
    legacy = tmp_path / "legacy"                    # a fused run written before the field existed
    legacy.mkdir()
    rec = {k: v for k, v in _small(tmp_path).current().to_json().items() if k != "rnn_impl"}
    (legacy / "config.json").write_text(json.dumps({**rec, "package_version": "0.1.0"}))
    (legacy / "DONE").write_text("")
    assert train(_small(tmp_path), legacy, dataset=ds, progress=False) == legacy
    with pytest.raises(ValueError, match=r"another config \(fields \['rnn_impl'\]"):
        train(cfg, legacy, dataset=ds, progress=False)


def test_cli_rnn_impl_option(tmp_path):
    from click.testing import CliRunner

    from wgb.cli import cli

    data = tmp_path / "data"
    tiny_dataset(n_train=12, n_eval=3).save_to_disk(str(data))
    conf = tmp_path / "conf.json"
    conf.write_text(json.dumps({"word_dim": 8, "hidden": 6, "max_length": 30, "w2v_epochs": 1, "threads": 1,
                                "cache_dir": str(tmp_path / "w2v")}))
    args = ["re", "train", str(tmp_path / "run"), "--config", str(conf), "--encoder", "rnn", "--rnn-impl", "gather",
            "--epochs", "1", "--batch-size", "8", "--dataset", str(data), "--quiet", "--no-predict"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "config.json").read_text())["rnn_impl"] == "gather"


def test_equivalence_study_pairs_the_recurrent_paths():
    """benchmarks/re_equivalence.py pairs an RNN's fused and gather runs by seed (a CNN's dense and
    gather), trains each path through its own config field and times each encoder apart."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("re_equivalence", ROOT / "benchmarks" / "re_equivalence.py")
    eq = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eq)
    assert eq.FIELDS["rnn"] == eq.FIELDS["birnn"] == "rnn_impl" and eq.PATHS_OF["birnn"] == ("fused", "gather")
    runs = [{"encoder": "rnn", "seed": s, "path": p, "trained_now": True, "epoch_train_s": [4.0 if p == "fused" else 2.0],
             "quantities": {"argmax": {"micro_f1": 0.8 + s / 100 + (0.002 * s if p == "gather" else 0)}}}
            for s in range(3) for p in ("fused", "gather")]
    runs.append({"encoder": "rnn", "seed": 3, "path": "fused", "trained_now": True, "epoch_train_s": [4.0],
                 "quantities": {"argmax": {"micro_f1": 0.5}}})                       # no pair yet
    summary = eq.summarize(runs, ["rnn"], 0.005, 0.05)["rnn"]
    assert summary["seeds"] == [0, 1, 2]
    assert summary["argmax"]["quantities"][0]["diff"] == pytest.approx([0.0, 0.002, 0.004])
    t = eq.timing(runs, 10)
    assert t["by_encoder"]["rnn"]["epoch_ratio"] == pytest.approx(2.0) and t["runs_left"] == 3
