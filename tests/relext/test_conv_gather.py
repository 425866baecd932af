"""The CNN/PCNN convolution's gather path (``conv_impl="gather"``) against the dense path:
the same outputs and gradients up to float rounding (padding, edge positions, empty pieces and
hand-made position ids included), each path deterministic, and the choice part of a run's
identity (a record without the field is a dense run)."""
import json

import numpy as np
import pytest
import torch

from relext.model.bags import word_features
from relext.model.encoders import get_encoder
from relext.model.encoders.conv_gather import PackedPiecewiseMax, _consecutive, packed_tokens
from relext.model.encoders.cnn import piecewise_max
from relext.training.train import TrainConfig, train
from relext.model.vocab import Vocab
from support.relext_data import tiny_dataset

WORDS = "alice bob married was born in paris a singer the of and to".split()
VOCAB = Vocab.from_words(WORDS)


def _random_table(seed: int, n: int = 9, max_length: int = 14):
    """Random sentences (lengths 1..20, some cut to max_length; unknown words; one sentence with
    head and tail at the same token, one with both mentions unlocated) through word_features."""
    rng = np.random.default_rng(seed)
    tokens, heads, tails = [], [], []
    for i in range(n):
        m = int(rng.integers(1, 21)) if i else 1
        toks = [str(rng.choice(WORDS + ["zzz", "qqq"])) for _ in range(m)]
        h = int(rng.integers(0, m))
        t = h if i == 2 else int(rng.integers(0, m))
        tokens.append(toks)
        heads.append([h, h + 1] if i != 3 else [-1, -1])
        tails.append([t, t + 1] if i != 3 else [-1, -1])
    return word_features(tokens, np.array(heads), np.array(tails), VOCAB, max_length)


def _pair(name: str, seed: int, kernel: int = 3, **kw):
    torch.manual_seed(seed)
    dense = get_encoder(name, num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=7,
                        kernel=kernel, conv_impl="dense", **kw)
    gather = get_encoder(name, num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=7,
                         kernel=kernel, conv_impl="gather", **kw)
    gather.load_state_dict(dense.state_dict())
    with torch.no_grad():                       # a learned bias and position rows, not the init's
        for enc in (dense, gather):
            torch.manual_seed(seed + 100)
            enc.conv.bias.normal_()
    return dense, gather


def _params(enc):
    return [enc.embed.word.weight, enc.embed.pos1.weight, enc.embed.pos2.weight, enc.conv.weight, enc.conv.bias]


def _compare(dense, gather, batch, seed=0):
    out_d, out_g = dense(batch), gather(batch)
    torch.testing.assert_close(out_g, out_d, atol=1e-5, rtol=1e-5)
    g = torch.randn(out_d.shape, generator=torch.Generator().manual_seed(seed))
    grads_d = torch.autograd.grad((out_d * g).sum(), _params(dense))
    grads_g = torch.autograd.grad((out_g * g).sum(), _params(gather))
    for name, a, b in zip(("word", "pos1", "pos2", "weight", "bias"), grads_d, grads_g):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4, msg=lambda m, name=name: f"{name}: {m}")
    return out_d


@pytest.mark.parametrize("name", ["cnn", "pcnn"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("bucket_size", [0, 2])
def test_gather_equals_dense_outputs_and_gradients(name, seed, bucket_size):
    table = _random_table(seed)
    batch = table.gather(torch.randperm(len(table), generator=torch.Generator().manual_seed(seed)))
    assert (batch["lengths"] < batch["tokens"].shape[1]).any()          # padding in the batch
    packed = packed_tokens(batch)
    assert _consecutive(packed["pos1"], packed["sent"]) and _consecutive(packed["pos2"], packed["sent"])
    dense, gather = _pair(name, seed, bucket_size=bucket_size)
    out = _compare(dense, gather, batch, seed)
    if name == "pcnn":
        # sentence 2 has head == tail: its middle piece is empty and pools to 0 on both paths
        row = int((batch["head"] == batch["tail"]).nonzero()[0])
        assert (batch["pieces"][row] != 2).all() and torch.equal(out[row, 7:14], torch.zeros(7))


@pytest.mark.parametrize("name", ["cnn", "pcnn"])
@pytest.mark.parametrize("kernel", [1, 5])
def test_gather_equals_dense_for_other_kernels(name, kernel):
    """Kernel 5: two taps missing at each end of short sentences (four edge cases)."""
    batch = _random_table(3).gather(torch.arange(9))
    dense, gather = _pair(name, 3, kernel=kernel)
    _compare(dense, gather, batch)


@pytest.mark.parametrize("name", ["cnn", "pcnn"])
def test_hand_made_position_ids_take_the_general_form(name):
    """Position ids that do not step by one within a sentence (never from word_features) give the
    dense path's numbers too, through one gathered row per tap and table."""
    table = _random_table(4)
    batch = table.gather(torch.arange(len(table)))
    g = torch.Generator().manual_seed(0)
    valid = torch.arange(batch["tokens"].shape[1]).unsqueeze(0) < batch["lengths"].unsqueeze(1)
    for k in ("pos1", "pos2"):
        batch[k] = torch.where(valid, torch.randint(1, 28, batch[k].shape, generator=g), 0)
    packed = packed_tokens(batch)
    assert not _consecutive(packed["pos1"], packed["sent"])
    dense, gather = _pair(name, 4)
    _compare(dense, gather, batch)


def test_padding_and_batch_company_do_not_change_a_sentence():
    """A sentence pools the same alone and inside a padded batch (the gather path packs the real
    tokens only, so padding positions cannot contribute)."""
    table = _random_table(5)
    _, gather = _pair("pcnn", 5)
    gather.eval()
    full = gather(table.gather(torch.arange(len(table))))
    for i in range(len(table)):
        torch.testing.assert_close(gather(table.gather(torch.tensor([i])))[0], full[i], atol=1e-5, rtol=1e-5)


def test_padding_positions_never_reach_the_pooling():
    """Whatever the padding positions hold (here: real word and position ids), the gather path
    reads only positions < length; the dense path masks them in its pooling (piece 0)."""
    batch = _random_table(6).gather(torch.arange(9))
    poisoned = dict(batch)
    pad = torch.arange(batch["tokens"].shape[1]).unsqueeze(0) >= batch["lengths"].unsqueeze(1)
    for k in ("tokens", "pos1", "pos2"):
        poisoned[k] = torch.where(pad, 5, batch[k])
    _, gather = _pair("pcnn", 6)
    torch.testing.assert_close(gather(poisoned), gather(batch))
    packed = packed_tokens(batch)
    assert packed["tokens"].shape[0] == int(batch["lengths"].sum())


def test_packed_pooling_matches_piecewise_max():
    """PackedPiecewiseMax over packed slots = PiecewiseMax(relu=True) over the padded layout,
    values and gradients; tokens of slot 0 are not pooled; empty slots give 0."""
    g = torch.Generator().manual_seed(0)
    n, l, h = 5, 6, 4
    y = torch.randn(n, l, h, generator=g)
    y[1, :3] = -torch.rand(3, h, generator=g)                   # a piece of negatives only: ReLU gives 0
    piece = torch.randint(0, 4, (n, l), generator=g)
    piece[2] = 0                                                # every piece of row 2 empty
    grad = torch.randn(n, 3, h, generator=g)
    x1 = y.clone().requires_grad_(True)
    ref = piecewise_max(x1, piece, 3, relu=True)
    ref.backward(grad)
    slot = torch.where(piece > 0, torch.arange(n).unsqueeze(1) * 3 + piece, 0).reshape(-1)
    x2 = y.reshape(-1, h).clone().requires_grad_(True)
    out = PackedPiecewiseMax.apply(x2, slot, 3 * n).view(n, 3, h)
    out.backward(grad)
    assert torch.equal(out, ref)
    assert torch.equal(out[2], torch.zeros(3, h))
    torch.testing.assert_close(x2.grad.view(n, l, h), x1.grad, atol=0, rtol=0)


def test_each_path_is_deterministic():
    batch = _random_table(7).gather(torch.arange(9))
    for impl in ("dense", "gather"):
        runs = []
        for _ in range(2):
            torch.manual_seed(0)
            enc = get_encoder("pcnn", num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=7,
                              conv_impl=impl)
            out = enc(batch)
            runs.append([out, *torch.autograd.grad(out.square().sum(), _params(enc))])
        assert all(torch.equal(a, b) for a, b in zip(*runs)), impl


def test_frozen_word_vectors():
    batch = _random_table(8).gather(torch.arange(9))
    dense, gather = _pair("pcnn", 8)
    for enc in (dense, gather):
        enc.embed.word.weight.requires_grad_(False)
    out_d, out_g = dense(batch), gather(batch)
    rest = lambda e: _params(e)[1:]  # noqa: E731
    for a, b in zip(torch.autograd.grad(out_d.sum(), rest(dense)), torch.autograd.grad(out_g.sum(), rest(gather))):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)


def test_bad_conv_impl():
    with pytest.raises(ValueError, match="conv_impl must be one of"):
        get_encoder("pcnn", num_words=3, conv_impl="fft")
    with pytest.raises(ValueError, match="conv_impl must be one of"):
        TrainConfig(conv_impl="fft").validate()


# ------------------------------------------------------------------------------------------------
# the run's identity
# ------------------------------------------------------------------------------------------------
def test_conv_impl_in_the_identity():
    dense, gather = TrainConfig(conv_impl="dense"), TrainConfig(conv_impl="gather")
    # a new run's default: gather for PCNN and CNN (their equivalence studies passed)
    assert TrainConfig().conv_impl == "gather" == TrainConfig(encoder="pcnn").conv_impl
    assert TrainConfig(encoder="cnn").conv_impl == "gather"
    assert TrainConfig.from_json({"encoder": "pcnn"}).conv_impl == "gather"      # a user's config file
    assert "conv_impl" not in dense.identity()                 # the identity every dense run has
    assert gather.identity()["conv_impl"] == "gather"
    assert dense.differences(gather) == ["conv_impl"] == gather.differences(dense)
    # an encoder without a convolution: the field changes nothing, so it is not in the identity
    assert TrainConfig(encoder="rnn", conv_impl="gather").differences(TrainConfig(encoder="rnn")) == []
    # a run record without the field was trained by the dense path, whatever the default
    rec = {k: v for k, v in gather.to_json().items() if k != "conv_impl"}
    assert TrainConfig.from_json(rec, record=True).conv_impl == "dense"
    assert TrainConfig.from_json(rec, record=True).differences(gather) == ["conv_impl"]


@pytest.fixture(scope="module")
def ds():
    return tiny_dataset(n_train=16, n_eval=4)


def _small(tmp_path, **kw):
    base = dict(encoder="pcnn", selector="attention", epochs=2, batch_size=8, word_dim=8, hidden=8,
                max_length=30, w2v_epochs=1, patience=0, threads=1, cache_dir=str(tmp_path / "w2v"))
    return TrainConfig(**{**base, **kw})


def test_gather_runs_are_recorded_deterministic_and_never_mixed(tmp_path, ds):
    cfg = _small(tmp_path, conv_impl="gather")
    a = train(cfg, tmp_path / "a", dataset=ds, progress=False)
    b = train(cfg, tmp_path / "b", dataset=ds, progress=False)
    assert json.loads((a / "config.json").read_text())["conv_impl"] == "gather"
    sa, sb = (torch.load(d / "model.pt", weights_only=True)["state_dict"] for d in (a, b))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    la, lb = ([e["train_loss"] for e in json.loads((d / "metrics.json").read_text())["epochs"]] for d in (a, b))
    assert la == lb
    # a folder of the other path is refused, from either side
    with pytest.raises(ValueError, match=r"another config \(fields \['conv_impl'\]"):
        train(_small(tmp_path, conv_impl="dense"), a, dataset=ds, progress=False)
    legacy = tmp_path / "legacy"                    # a dense run written before the field existed
    legacy.mkdir()
    rec = {k: v for k, v in _small(tmp_path, conv_impl="dense").current().to_json().items() if k != "conv_impl"}
    (legacy / "config.json").write_text(json.dumps({**rec, "package_version": "0.1.0"}))
    (legacy / "DONE").write_text("")
    assert train(_small(tmp_path, conv_impl="dense"), legacy, dataset=ds, progress=False) == legacy
    # a legacy dense run asked for with the new default (PCNN: gather) is refused, never reused
    with pytest.raises(ValueError, match=r"another config \(fields \['conv_impl'\]"):
        train(_small(tmp_path), legacy, dataset=ds, progress=False)
    with pytest.raises(ValueError, match=r"another config \(fields \['conv_impl'\]"):
        train(cfg, legacy, dataset=ds, progress=False)


def test_gather_run_predicts_with_its_own_path(tmp_path, ds):
    """predict rebuilds the model from the run's record: a gather run's predictions come from the
    gather path (the same scores as a dense model with its weights, to float rounding)."""
    from relext.training.predict import predict_split
    from relext.training.train import model_from_config

    out = train(_small(tmp_path, conv_impl="gather", epochs=1), tmp_path / "g", dataset=ds, progress=False)
    preds = predict_split(out, "validation", dataset=ds)
    assert preds and all(len(p["scores"]) == 5 for p in preds)
    cfg = TrainConfig.from_json(out / "config.json", record=True)
    vocab = Vocab.load(out / "vocab.json")
    model = model_from_config(cfg, vocab)
    assert model.encoder.conv_impl == "gather"


def test_cli_conv_impl_option(tmp_path):
    from click.testing import CliRunner

    from wgb.cli import cli

    data = tmp_path / "data"
    tiny_dataset(n_train=12, n_eval=3).save_to_disk(str(data))
    conf = tmp_path / "conf.json"
    conf.write_text(json.dumps({"word_dim": 8, "hidden": 6, "max_length": 30, "w2v_epochs": 1, "threads": 1,
                                "cache_dir": str(tmp_path / "w2v")}))
    args = ["re", "train", str(tmp_path / "run"), "--config", str(conf), "--conv-impl", "gather", "--epochs", "1",
            "--batch-size", "8", "--dataset", str(data), "--quiet", "--no-predict"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "config.json").read_text())["conv_impl"] == "gather"


def _equivalence_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "re_equivalence.py"
    spec = importlib.util.spec_from_file_location("re_equivalence", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_equivalence_study_statistics():
    """The study's TOST: the 90% t interval of the paired differences inside (-margin, margin)
    <=> both one-sided tests reject at 5%; its summary pairs runs by seed."""
    from scipy import stats

    eq = _equivalence_module()
    d = [0.001, -0.001, 0.002, 0.0, 0.001]
    r = eq.tost(d, 0.005)
    lo, hi = stats.t.interval(0.90, 4, loc=np.mean(d), scale=stats.sem(d))
    assert r["ci_low"] == pytest.approx(lo) and r["ci_high"] == pytest.approx(hi)
    assert r["verdict"] == "equivalent" and max(r["p_lower"], r["p_upper"]) < 0.05
    wide = eq.tost([0.01, -0.01, 0.004], 0.005)
    assert wide["verdict"] == "not shown equivalent" and max(wide["p_lower"], wide["p_upper"]) >= 0.05
    assert eq.tost([0.001], 0.005)["verdict"] == "too few seeds"
    assert eq.seeds_needed(0.0, 0.01, 0.005) == 13 and eq.seeds_needed(0.006, 0.001, 0.005) is None
    runs = [{"encoder": "pcnn", "seed": s, "path": p,
             "quantities": {"argmax": {"micro_f1": 0.9 + s / 100 + (0.001 * s if p == "gather" else 0)}}}
            for s in range(3) for p in ("dense", "gather")] + [
        {"encoder": "pcnn", "seed": 3, "path": "dense", "quantities": {"argmax": {"micro_f1": 0.5}}}]   # no pair yet
    summary = eq.summarize(runs, ["pcnn"], 0.005, 0.05)["pcnn"]
    assert summary["seeds"] == [0, 1, 2]
    row = summary["argmax"]["quantities"][0]
    assert row["diff"] == pytest.approx([0.0, 0.001, 0.002]) and row["verdict"] == "equivalent"
    assert summary["verdict"] == "equivalent"
