import json

import numpy as np
import pytest
import torch

from kge.evaluate import evaluate
from kge.losses import LOSSES, get_loss
from kge.models import MODELS
from kge.sampling import bernoulli_head_probs, get_sampler
from kge.train import ConfigMismatchError, TrainConfig, train


def cfg(**kw):
    base = dict(model="transe", dim=8, epochs=4, batch_size=16, lr=0.05, negatives=2, seed=0, evaluate_test=False)
    base.update(kw)
    return TrainConfig(**base)


def _params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("name", MODELS.names())
def test_training_lowers_loss_and_is_deterministic(tiny_graph, name):
    a = train(tiny_graph, cfg(model=name, epochs=6), progress=False)
    assert a.history[-1]["loss"] < a.history[0]["loss"]
    b = train(tiny_graph, cfg(model=name, epochs=6), progress=False)
    assert [r["loss"] for r in a.history] == [r["loss"] for r in b.history]
    for k, v in _params(a.model).items():
        assert torch.equal(v, _params(b.model)[k]), k
    c = train(tiny_graph, cfg(model=name, epochs=6, seed=1), progress=False)
    assert not torch.equal(c.model.entity.weight, a.model.entity.weight)


@pytest.mark.parametrize("loss", LOSSES.names())
def test_losses_and_bernoulli(tiny_graph, loss):
    r = train(tiny_graph, cfg(loss=loss, sampler="bernoulli", negatives=8, epochs=5), progress=False)
    assert np.isfinite(r.history[-1]["loss"]) and r.history[-1]["loss"] < r.history[0]["loss"]


def test_tiny_graph_is_learned(tiny_graph):
    """Training data is memorised: filtered train MRR far above an untrained model's."""
    c = cfg(model="distmult", dim=16, epochs=60, lr=0.05, negatives=8, loss="softplus")
    untrained = train(tiny_graph, cfg(model="distmult", dim=16, epochs=1, lr=0.0), progress=False)
    trained = train(tiny_graph, c, progress=False)
    before = evaluate(untrained.model, tiny_graph, "train", progress=False).mrr
    after = evaluate(trained.model, tiny_graph, "train", progress=False).mrr
    assert after > 0.5 and after > before + 0.3


def test_resume_after_interruption_matches_uninterrupted(tmp_path, tiny_graph):
    c = cfg(epochs=5, eval_every=1, checkpoint_every=1)
    full = train(tiny_graph, c, tmp_path / "full", progress=False)

    class Interrupt(Exception):
        pass

    def stop_at_3(epoch, record):
        if epoch == 3:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(tiny_graph, c, tmp_path / "cut", progress=False, on_epoch_end=stop_at_3)
    assert (tmp_path / "cut" / "checkpoint.pt").exists() and not (tmp_path / "cut" / "DONE").exists()
    resumed = train(tiny_graph, c, tmp_path / "cut", progress=False)
    assert resumed.resumed_from_epoch == 3
    assert [r["loss"] for r in resumed.history] == [r["loss"] for r in full.history]
    assert [r["valid"]["mrr"] for r in resumed.history] == [r["valid"]["mrr"] for r in full.history]
    assert torch.equal(resumed.model.entity.weight, full.model.entity.weight)
    assert (tmp_path / "cut" / "DONE").exists()
    # a finished dir is returned as is; another config is refused
    again = train(tiny_graph, c, tmp_path / "cut", progress=False)
    assert again.history == resumed.history and torch.equal(again.model.entity.weight, full.model.entity.weight)
    with pytest.raises(ConfigMismatchError, match="lr: 0.05 -> 0.1"):
        train(tiny_graph, cfg(epochs=5, eval_every=1, lr=0.1), tmp_path / "cut", progress=False)
    # asking for more epochs continues the run
    more = train(tiny_graph, cfg(epochs=7, eval_every=1), tmp_path / "cut", progress=False)
    assert more.epochs_run == 7 and more.resumed_from_epoch == 5


def test_outputs_written(tmp_path, tiny_graph):
    r = train(tiny_graph, cfg(evaluate_test=True, epochs=2), tmp_path / "run", progress=False)
    for f in ("config.json", "entities.npy", "relations.npy", "entities.tsv", "result.json", "metrics.json", "DONE"):
        assert (tmp_path / "run" / f).exists(), f
    conf = json.loads((tmp_path / "run" / "config.json").read_text())
    assert conf["seed"] == 0 and conf["model"] == "transe" and conf["graph"]["num_entities"] == 37
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["mrr"] == r.test["mrr"]


def test_early_stopping(tiny_graph):
    r = train(tiny_graph, cfg(lr=0.0, epochs=20, eval_every=1, patience=2), progress=False)
    assert r.stopped_early and r.epochs_run == 3 and r.best_epoch == 1


def test_config_validation():
    with pytest.raises(ValueError, match="unknown model"):
        TrainConfig(model="nope")
    with pytest.raises(ValueError, match="unknown loss"):
        TrainConfig(loss="hinge2")
    with pytest.raises(ValueError, match="unknown EmbeddingConfig fields"):
        TrainConfig.from_dict({"modle": "transe"})
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        TrainConfig(epochs=0)
    with pytest.raises(ValueError, match="unknown loss"):
        get_loss("x")


def test_samplers(tiny_graph):
    # relation 0 (gender) is N-to-1: many heads per tail -> corrupt tails mostly
    p = bernoulli_head_probs(tiny_graph.train, tiny_graph.num_relations)
    assert p[0] < 0.2 and np.all((p >= 0) & (p <= 1))
    s = get_sampler("uniform", tiny_graph.num_entities, tiny_graph.num_relations)
    batch = torch.from_numpy(tiny_graph.train[:50])
    nh, nt = s.sample(batch, 7, torch.Generator().manual_seed(0))
    assert nh.shape == (50, 7)
    changed_h, changed_t = nh != batch[:, :1], nt != batch[:, 2:]
    assert not (changed_h & changed_t).any()  # one side per negative
    assert changed_h.any() and changed_t.any()


def test_time_budget_stops_after_an_epoch(tiny_graph):
    r = train(tiny_graph, cfg(epochs=10, max_train_seconds=1e-9), progress=False)
    assert r.epochs_run == 1 and r.stopped_early and r.stop_reason == "time_budget"
    r = train(tiny_graph, cfg(epochs=2), progress=False)
    assert r.stop_reason == "epochs" and not r.stopped_early


def test_typed_sampler_draws_of_the_relations_type_and_never_the_positive(tiny_graph):
    """`typed`: about half the replacements come from the entities seen on that side of the same
    relation, none is the positive's own entity, one side per negative, seeded."""
    from kge.sampling import SAMPLERS

    tr = tiny_graph.train
    s = get_sampler("typed", tiny_graph.num_entities, tiny_graph.num_relations, tr)
    assert "typed" in SAMPLERS.names()
    batch = torch.from_numpy(tr[:200])
    ents, head = s.corrupt(batch, 16, torch.Generator().manual_seed(0))
    again, _ = s.corrupt(batch, 16, torch.Generator().manual_seed(0))
    assert torch.equal(ents, again)
    rel = batch[:, 1:2].expand_as(ents)
    own = torch.where(head, batch[:, 0:1].expand_as(ents), batch[:, 2:3].expand_as(ents))
    tails = {r: set(tr[tr[:, 1] == r, 2].tolist()) for r in range(tiny_graph.num_relations)}
    heads = {r: set(tr[tr[:, 1] == r, 0].tolist()) for r in range(tiny_graph.num_relations)}
    in_type = torch.tensor([[(e in (heads if h else tails)[r]) for e, r, h in zip(er, rr, hr)]
                            for er, rr, hr in zip(ents.tolist(), rel.tolist(), head.tolist())])
    share = in_type.float().mean().item()
    uniform_share = np.mean([len(tails[r]) for r in range(tiny_graph.num_relations)]) / tiny_graph.num_entities
    assert share > 0.4 and share > uniform_share + 0.2
    # the positive's own entity is never drawn from the typed pool: it comes back only as often as
    # a uniform draw hits it (1 / entities of the uniform half), not 1 / (entities of the type)
    hits_own = (ents == own).float().mean().item()
    assert hits_own < 2 / tiny_graph.num_entities, (hits_own, tiny_graph.num_entities)
