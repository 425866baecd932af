"""The fused RNN path (relext.model.encoders.rnn) against torch's nn.GRU / nn.LSTM it replaces on CPU:
same function and gradients, the packed layout, old state dicts, determinism, a short training."""
import json

import pytest
import torch

from relext.model.encoders.rnn import BiRNNEncoder, FusedGRU, RNNEncoder, packing, reverse_index
from support.relext_data import tiny_dataset

V = 30
CASES = [(cls, cell) for cls in (RNNEncoder, BiRNNEncoder) for cell in ("gru", "lstm")]


def _batch(lengths, width=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor(lengths)
    width = width or int(lengths.clamp(min=1).max())
    valid = torch.arange(width) < lengths.clamp(min=1).unsqueeze(1)
    rand = lambda hi: torch.randint(1, hi, (len(lengths), width), generator=g) * valid  # noqa: E731
    return {"tokens": rand(V), "pos1": rand(24), "pos2": rand(24), "lengths": lengths}


def _encoder(cls, cell, dtype=torch.float64, seed=1, hidden=5):
    torch.manual_seed(seed)
    return cls(V, word_dim=6, pos_dim=2, max_length=12, hidden=hidden, cell=cell).to(dtype)


def _run(enc, batch, impl, g):
    enc.impl = impl
    out = enc(batch)
    return out, torch.autograd.grad((out * g).sum(), list(enc.parameters()))


# lengths with ties, a length-1 and an empty (clamped) sentence, unsorted, one row padded beyond all
LENGTHS = [3, 9, 1, 5, 9, 0, 4, 2, 9, 7]


@pytest.mark.parametrize("cls,cell", CASES)
def test_fused_equals_module_forward_and_backward(cls, cell):
    enc = _encoder(cls, cell)
    batch = _batch(LENGTHS, width=11)
    g = torch.randn(len(LENGTHS), enc.out_dim, dtype=torch.float64)
    ref, gref = _run(enc, batch, "module", g)
    out, gout = _run(enc, batch, "fused", g)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    for (name, _), a, b in zip(enc.named_parameters(), gout, gref):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12, msg=name)
        assert name.startswith("embed") or b.abs().sum() > 0      # every recurrent tensor gets a gradient


@pytest.mark.parametrize("cls,cell", CASES)
def test_fused_float32_and_inference_mode(cls, cell):
    enc = _encoder(cls, cell, torch.float32, hidden=16)
    batch = _batch([40, 3, 17, 40, 1, 25], seed=3)
    enc.impl = "module"
    ref = enc(batch)
    enc.impl = "fused"
    torch.testing.assert_close(enc(batch), ref, rtol=1e-5, atol=1e-6)
    with torch.inference_mode():                 # nothing saved for backward, same numbers
        torch.testing.assert_close(enc(batch), ref.detach(), rtol=1e-5, atol=1e-6)
    assert enc.impl == "fused" and RNNEncoder(V).impl == "auto"
    enc.impl = "cudnn"
    with pytest.raises(ValueError, match="rnn impl must be"):
        enc(batch)
    enc.impl = "fused"
    empty = {k: v[:0] for k, v in batch.items()}
    assert enc(empty).shape == (0, enc.out_dim)


def test_fused_gru_gradcheck():
    """The hand-written backward against finite differences, input projections included."""
    torch.manual_seed(0)
    lengths = torch.tensor([2, 4, 1, 4])
    order, row, col, col_rev, batch_sizes, last = packing(lengths)
    d, h = 2, 3
    gi = torch.randn(d, int(lengths.sum()), 3 * h, dtype=torch.float64, requires_grad=True)
    w = torch.randn(d, 3 * h, h, dtype=torch.float64, requires_grad=True)
    b = torch.randn(d, 3 * h, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y, z: FusedGRU.apply(x, y, z, batch_sizes, order, last, True), (gi, w, b))


def test_packing_layout():
    lengths = torch.tensor([2, 3, 1, 3])
    order, row, col, col_rev, batch_sizes, last = packing(lengths)
    assert order.tolist() == [1, 3, 0, 2]                  # longest first, ties in batch order
    assert batch_sizes == [4, 3, 2]
    assert list(zip(row.tolist(), col.tolist())) == [(1, 0), (3, 0), (0, 0), (2, 0), (1, 1), (3, 1), (0, 1), (1, 2), (3, 2)]
    assert col_rev.tolist() == [2, 2, 1, 0, 1, 1, 0, 0, 0]
    assert [(row[k].item(), col[k].item()) for k in last] == [(0, 1), (1, 2), (2, 0), (3, 2)]
    back = reverse_index(row, col, col_rev, 4)
    assert torch.equal(row[back], row) and torch.equal(col[back], col_rev)


@pytest.mark.parametrize("cls", [RNNEncoder, BiRNNEncoder])
def test_state_dict_layout_is_the_old_one(cls):
    """Checkpoints written before the fused path (parameters of an nn.GRU named ``rnn``) load and
    give the fused path the module's outputs; another layout fails with a clear message."""
    enc = _encoder(cls, "gru", torch.float32)
    sfx = ["", "_reverse"] if cls.bidirectional else [""]
    keys = ["embed.word.weight", "embed.pos1.weight", "embed.pos2.weight"] + [
        f"rnn.{k}_l0{s}" for s in sfx for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert sorted(enc.state_dict()) == sorted(keys)
    old = torch.nn.GRU(10, 5, batch_first=True, bidirectional=cls.bidirectional)   # what the old class held
    state = {**{k: v for k, v in enc.state_dict().items() if k.startswith("embed")},
             **{f"rnn.{k}": v for k, v in old.state_dict().items()}}
    fresh = _encoder(cls, "gru", torch.float32, seed=7)
    fresh.load_state_dict(state)
    batch = _batch([4, 7, 2], seed=5)
    fresh.impl = "module"
    ref = fresh(batch)
    fresh.impl = "fused"
    torch.testing.assert_close(fresh(batch), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="rnn.weight_ih_l0"):     # e.g. an LSTM checkpoint
        _encoder(cls, "lstm", torch.float32).load_state_dict(state)


def test_same_seed_identical_bits():
    enc = _encoder(BiRNNEncoder, "gru", torch.float32, hidden=8)
    batch = _batch([9, 3, 6, 9, 1], seed=2)
    g = torch.randn(5, enc.out_dim)
    a = _run(enc, batch, "fused", g)
    b = _run(enc, batch, "fused", g)
    assert torch.equal(a[0], b[0]) and all(torch.equal(x, y) for x, y in zip(a[1], b[1]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_auto_uses_the_module_on_cuda():
    enc = _encoder(BiRNNEncoder, "gru", torch.float32).cuda()
    batch = {k: v.cuda() for k, v in _batch([4, 7, 2]).items()}
    out = enc(batch)
    enc.impl = "fused"
    torch.testing.assert_close(enc(batch), out, rtol=1e-4, atol=1e-5)


def test_rnn_training_same_seed_same_numbers(tmp_path, encoder="birnn"):
    """Two trainings with one seed give identical losses, metrics and weights (BiGRU: both
    directions)."""
    from relext.training.train import TrainConfig, train

    ds = tiny_dataset(n_train=12, n_eval=4)
    cfg = TrainConfig(encoder=encoder, selector="attention", epochs=2, batch_size=6, word_dim=8, hidden=8,
                      max_length=30, w2v_epochs=1, patience=0, threads=1, cache_dir=str(tmp_path / "w2v"))
    runs = [train(cfg, tmp_path / name, dataset=ds, progress=False) for name in ("a", "b")]
    ma, mb = (json.loads((r / "metrics.json").read_text())["epochs"] for r in runs)
    assert [(e["train_loss"], e["validation"]) for e in ma] == [(e["train_loss"], e["validation"]) for e in mb]
    sa, sb = (torch.load(r / "model.pt", weights_only=True)["state_dict"] for r in runs)
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
