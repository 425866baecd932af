"""The trainer's fast path and its options: closed-form gradients against autograd, the row
optimizers against torch's own, optimizer choice, old run dirs, devices and profiles."""
import json

import pytest
import torch

from kge.losses import LOSSES, get_loss, get_loss_grad
from kge.models import MODELS, get_model
from kge.optim import ROW_OPTIMIZERS, make_row_optimizer
from kge.train import ConfigMismatchError, TrainConfig, _Run, train
from kge.train_profiles import PROFILES, profile_config

CLOSED_FORM = [(m, p) for m in MODELS.names() if hasattr(MODELS.get(m), "score_pairs_grad") for p in (1, 2)]


def cfg(**kw):
    base = dict(model="transe", dim=8, epochs=3, batch_size=16, lr=0.05, negatives=2, seed=0, evaluate_test=False)
    base.update(kw)
    return TrainConfig(**base)


def test_translational_models_have_the_fast_path():
    assert {"transe", "transh"} <= {m for m, _ in CLOSED_FORM}


@pytest.mark.parametrize("name,p", CLOSED_FORM)
@pytest.mark.parametrize("loss", LOSSES.names())
@pytest.mark.parametrize("k", [1, 3])
def test_closed_form_gradients_equal_autograd(name, p, loss, k):
    torch.manual_seed(0)
    m = get_model(name, 20, 3, 6, p_norm=p).double()
    for e in m.modules():
        if isinstance(e, torch.nn.Embedding):
            e.sparse = False
    b, d = 7, m.entity_dim
    h, t = torch.randn(b, d, dtype=torch.float64), torch.randn(b, d, dtype=torch.float64)
    e = torch.randn(b, k, d, dtype=torch.float64)
    r, ch = torch.randint(3, (b,)), torch.rand(b, k) < 0.5
    ch[0, 0], ch[1, 0] = True, False  # both sides occur
    leaves = [x.requires_grad_() for x in (h, t, e)]
    pos, neg = m.score_pairs(h, r, t, e, ch)
    get_loss(loss)(pos, neg, 0.7).backward()
    with torch.no_grad():
        pos2, neg2, backward = m.score_pairs_grad(h, r, t, e, ch)
        _, dpos, dneg = get_loss_grad(loss)(pos2, neg2, 0.7)
        per_id, dense = backward(dpos, dneg)
    assert torch.allclose(pos2, pos) and torch.allclose(neg2, neg)
    ref = torch.cat([leaves[0].grad, leaves[1].grad, leaves[2].grad.reshape(-1, d)])
    assert torch.allclose(per_id, ref, atol=1e-12)
    assert {id(p) for p, _ in dense} == {id(q) for q in m.parameters() if q is not m.entity.weight}
    for param, g in dense:
        assert torch.allclose(g, param.grad, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES.names())
def test_loss_grads_equal_autograd(loss):
    pos = torch.randn(9, dtype=torch.float64, requires_grad=True)
    neg = torch.randn(9, 4, dtype=torch.float64, requires_grad=True)
    value = get_loss(loss)(pos, neg, 0.5)
    value.backward()
    v2, dpos, dneg = get_loss_grad(loss)(pos.detach(), neg.detach(), 0.5)
    assert torch.allclose(v2, value.detach()) and torch.allclose(dpos, pos.grad) and torch.allclose(dneg, neg.grad)


@pytest.mark.parametrize("name", ["transe", "transh"])
def test_fast_path_trains_like_autograd(tiny_graph, name):
    """Same seed, closed form vs autograd: the same losses and vectors up to float rounding."""
    c = cfg(model=name, epochs=2, sampler="bernoulli")
    fast, slow = _Run(tiny_graph, c, None), _Run(tiny_graph, c, None)
    assert fast.step.closed_form
    slow.step.closed_form = False
    for ep in range(2):
        a, b = fast._epoch(ep), slow._epoch(ep)
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    for (k, v), w in zip(fast.model.state_dict().items(), slow.model.state_dict().values()):
        assert torch.allclose(v, w, atol=1e-5), k


def _sparse_steps(opt_name, torch_opt, n=12, d=5, steps=6):
    """Row optimizer vs torch's optimizer on the same sparse gradients."""
    gen = torch.Generator().manual_seed(1)
    w0 = torch.randn(n, d, generator=gen)
    ours = make_row_optimizer(opt_name, w0.clone(), 0.1)
    ref = torch.nn.Parameter(w0.clone())
    opt = torch_opt([ref])
    for _ in range(steps):
        ids = torch.randint(n, (7,), generator=gen)
        g_ids = torch.randn(7, d, generator=gen)
        rows, inv, handle = ours.gather(ids)
        ours.step(handle, torch.zeros_like(rows).index_add_(0, inv, g_ids))
        ref.grad = torch.sparse_coo_tensor(ids[None], g_ids, (n, d), check_invariants=True).coalesce()
        opt.step()
    ours.sync()
    return ours.weight, ref.detach()


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
@pytest.mark.parametrize("name,factory", [
    ("adam", lambda p: torch.optim.SparseAdam(p, lr=0.1)),
    ("adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, eps=1e-10)),
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1)),
])
def test_row_optimizers_match_torch(name, factory):
    ours, ref = _sparse_steps(name, factory)
    assert torch.allclose(ours, ref, atol=1e-6)


@pytest.mark.parametrize("opt", ROW_OPTIMIZERS.names())
def test_optimizers_train_deterministic_and_resume(tmp_path, tiny_graph, opt):
    c = cfg(optimizer=opt, lr=0.5 if opt == "sgd" else 0.05, epochs=4, checkpoint_every=1)
    a = train(tiny_graph, c, progress=False)
    assert a.history[-1]["loss"] < a.history[0]["loss"]
    b = train(tiny_graph, c, progress=False)
    assert torch.equal(a.model.entity.weight, b.model.entity.weight)

    class Stop(Exception):
        pass

    def stop(epoch, record):
        if epoch == 2:
            raise Stop

    with pytest.raises(Stop):
        train(tiny_graph, c, tmp_path / "r", progress=False, on_epoch_end=stop)
    resumed = train(tiny_graph, c, tmp_path / "r", progress=False)
    assert resumed.resumed_from_epoch == 2 and torch.equal(resumed.model.entity.weight, a.model.entity.weight)


def test_run_dirs_without_the_new_fields_still_resume(tmp_path, tiny_graph):
    """A checkpoint and result written before `optimizer`/`device` existed: read as their defaults."""
    c = cfg(epochs=2)
    first = train(tiny_graph, c, tmp_path / "r", progress=False)
    ck_path = tmp_path / "r" / "checkpoint.pt"
    ck = torch.load(ck_path, weights_only=True)
    for key in ("optimizer", "device"):
        ck["config"].pop(key)
    torch.save(ck, ck_path)
    res = json.loads((tmp_path / "r" / "result.json").read_text())
    for key in ("optimizer", "device"):
        res["config"].pop(key)
    (tmp_path / "r" / "result.json").write_text(json.dumps(res))
    again = train(tiny_graph, c, tmp_path / "r", progress=False)  # finished: returned as is
    assert torch.equal(again.model.entity.weight, first.model.entity.weight)
    more = train(tiny_graph, cfg(epochs=3), tmp_path / "r", progress=False)  # continues from the checkpoint
    assert more.resumed_from_epoch == 2 and more.epochs_run == 3
    with pytest.raises(ConfigMismatchError, match="optimizer: 'adam' -> 'sgd'"):
        train(tiny_graph, cfg(epochs=3, optimizer="sgd"), tmp_path / "r", progress=False)


def test_config_checks_device_and_optimizer():
    with pytest.raises(ValueError, match="TrainConfig.device must be"):
        TrainConfig(device="gpu")
    with pytest.raises(ValueError, match="unknown optimizer"):
        TrainConfig(optimizer="lbfgs")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_one_clear_line(tmp_path, tiny_graph):
    with pytest.raises(ValueError, match="'cuda' asked for but CUDA is not available") as err:
        train(tiny_graph, cfg(device="cuda"), tmp_path / "out", progress=False)
    assert "\n" not in str(err.value) and not (tmp_path / "out").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cli_device_cuda_without_cuda(tmp_path, tiny_graph):
    from click.testing import CliRunner

    from wgb.cli import cli

    graph_dir = tiny_graph.save(tmp_path / "graph")
    res = CliRunner().invoke(cli, ["kge", "train", str(graph_dir), "--out", str(tmp_path / "o"),
                                   "--epochs", "1", "--device", "cuda", "--quiet"])
    assert res.exit_code != 0
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert any("CUDA is not available" in x for x in lines) and len([x for x in lines if "Error" in x]) == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", ["transe", "transh", "distmult"])
def test_cuda_trains_like_cpu(tmp_path, tiny_graph, name):
    c = dict(model=name, epochs=3, evaluate_test=True, sampler="bernoulli")
    cpu = train(tiny_graph, cfg(**c), progress=False)
    gpu = train(tiny_graph, cfg(**c, device="cuda"), tmp_path / "g", progress=False)
    assert gpu.model.entity.weight.device.type == "cpu"  # handed back on the CPU
    assert [r["loss"] for r in gpu.history] == pytest.approx([r["loss"] for r in cpu.history], rel=1e-4)
    assert torch.allclose(gpu.model.entity.weight, cpu.model.entity.weight, atol=1e-4)
    assert gpu.test["mrr"] == pytest.approx(cpu.test["mrr"], abs=1e-3)
    resumed = train(tiny_graph, cfg(**{**c, "epochs": 4}, device="cpu"), tmp_path / "g", progress=False)
    assert resumed.resumed_from_epoch == 3  # a CUDA run dir continues on the CPU


def test_profiles_build_valid_configs():
    assert "openke" in PROFILES
    for name in PROFILES:
        c = profile_config(name, model="transh", epochs=2)
        assert c.model == "transh" and c.epochs == 2
    with pytest.raises(ValueError, match="unknown profile"):
        profile_config("nope")


def test_dense_adam_fast_step_equals_torch_adam_bit_for_bit():
    """DenseAdam's direct fused step gives exactly torch.optim.Adam(fused=True)'s numbers, and
    falls back to it where the fast path does not apply (first step, amsgrad, weight decay)."""
    from kge.optim import DenseAdam

    for kw in ({}, {"amsgrad": True}, {"weight_decay": 0.01}):
        g = torch.Generator().manual_seed(0)
        a = torch.nn.Parameter(torch.randn(13, 8, generator=g))
        b = torch.nn.Parameter(a.detach().clone())
        oa, ob = DenseAdam([a], lr=0.01, fused=True, **kw), torch.optim.Adam([b], lr=0.01, fused=True, **kw)
        for _ in range(5):
            grad = torch.randn(13, 8, generator=g)
            a.grad, b.grad = grad.clone(), grad.clone()
            oa.step()
            ob.step()
        assert torch.equal(a, b), kw
        assert torch.equal(oa.state[a]["exp_avg_sq"], ob.state[b]["exp_avg_sq"])
        assert float(oa.state[a]["step"]) == float(ob.state[b]["step"]) == 5.0
