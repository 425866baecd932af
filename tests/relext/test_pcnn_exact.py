"""The CNN/PCNN speed-ups change no bit: the piecewise max pooling against its earlier
implementation (kept below as the reference), alone and in whole training runs.

Runs trained before and after a speed-up must stay comparable (a study may mix them), so a
faster path of a default code path must give bit-identical losses, weights and predictions for
the same seed and thread count; these tests compare bit patterns, not values (``-0.0`` and ``0.0``
differ here)."""
import pytest
import torch

import relext.model.encoders.cnn as cnn
from relext.training.train import TrainConfig, train
from support.relext_data import tiny_dataset


class ReferencePiecewiseMax(torch.autograd.Function):
    """The piecewise max as the study's runs were trained with (element-wise gather of the
    expanded slot index, then ``masked_fill_`` where a token is not its piece's maximum)."""

    @staticmethod
    def forward(ctx, y, piece, k, relu=False):
        n, l, h = y.shape
        slot = (torch.arange(n, device=y.device).unsqueeze(1) * (k + 1) + piece).reshape(-1, 1).expand(-1, h)
        out = y.new_full((n * (k + 1), h), float("-inf"))
        out = out.scatter_reduce(0, slot, y.reshape(-1, h), reduce="amax", include_self=True)
        if relu:
            out.clamp_(min=0)
        ctx.save_for_backward(y, slot, out)
        ctx.relu = relu
        ctx.k = k
        return out.view(n, k + 1, h)[:, 1:]

    @staticmethod
    def backward(ctx, grad):
        y, slot, out = ctx.saved_tensors
        n, l, h = y.shape
        full = torch.cat([grad.new_zeros(n, 1, h), grad], 1).reshape(-1, h)
        if ctx.relu:
            full = full * (out > 0)
        gy = full.gather(0, slot).masked_fill_(y.reshape(-1, h) != out.gather(0, slot), 0)
        return gy.view(n, l, h), None, None, None


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(torch.int32) if t.dtype == torch.float32 else t.detach()


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(_bits(a), _bits(b))


@pytest.mark.parametrize("k,relu", [(3, True), (3, False), (1, True)])
def test_piecewise_max_matches_reference_bit_for_bit(k, relu):
    g = torch.Generator().manual_seed(1)
    n, l, h = 7, 9, 5
    y = torch.randn(n, l, h, generator=g)
    y[0, 1] = y[0, 2]                       # a tie: both tokens get the gradient
    y[1, :4] = -torch.rand(4, h, generator=g)   # a piece of negative values only (ReLU gives 0)
    piece = torch.randint(0, k + 1, (n, l), generator=g)
    piece[2] = 0                            # an all-padding sentence: every piece empty
    grad = torch.randn(n, k, h, generator=g)
    grad[3, 0, :2] = -0.0                   # signed zeros are kept
    outs = []
    for fn in (cnn.PiecewiseMax, ReferencePiecewiseMax):
        x = y.clone().requires_grad_(True)
        out = fn.apply(x, piece, k, relu)
        out.backward(grad)
        outs.append((out, x.grad))
    assert _same_bits(outs[0][0], outs[1][0])
    assert _same_bits(outs[0][1], outs[1][1])
    assert outs[0][1].abs().sum() > 0


@pytest.fixture(scope="module")
def ds():
    return tiny_dataset(n_train=16, n_eval=4)


@pytest.mark.parametrize("encoder", ["pcnn", "cnn"])
def test_training_is_bit_identical_to_the_reference_pooling(tmp_path, ds, monkeypatch, encoder):
    """One training epoch (then validation) with the current pooling and with the reference:
    identical weights, losses and validation scores."""
    cfg = TrainConfig(encoder=encoder, selector="attention", epochs=1, batch_size=8, word_dim=8, hidden=8,
                      max_length=30, w2v_epochs=1, patience=0, threads=1, bucket_size=4,
                      cache_dir=str(tmp_path / "w2v"))
    runs = {}
    for name, fn in (("current", cnn.PiecewiseMax), ("reference", ReferencePiecewiseMax)):
        monkeypatch.setattr(cnn, "PiecewiseMax", fn)
        runs[name] = train(cfg, tmp_path / name, dataset=ds, progress=False)
    monkeypatch.undo()
    states = {k: torch.load(v / "model.pt", weights_only=True)["state_dict"] for k, v in runs.items()}
    assert states["current"].keys() == states["reference"].keys()
    for key in states["current"]:
        assert _same_bits(states["current"][key], states["reference"][key]), key
    import json

    metrics = {k: json.loads((v / "metrics.json").read_text())["epochs"] for k, v in runs.items()}
    strip = lambda hist: [{k: v for k, v in e.items() if not k.endswith("_seconds")} for e in hist]  # noqa: E731
    assert strip(metrics["current"]) == strip(metrics["reference"])
