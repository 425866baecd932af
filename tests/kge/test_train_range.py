"""Training against the relation's range (``tail_candidates="range"``, kge.train_range): every
model that can is tested the day it gets ``score_vectors_t``; configs that cannot are refused."""
import numpy as np
import pytest
import torch

from kge.evaluate import filtered_ranks
from kge.models import MODELS, get_model
from kge.train import TrainConfig, train
from kge.train_range import relation_ranges

RANGE_MODELS = [m for m in MODELS.names() if hasattr(MODELS.get(m), "score_vectors_t")]


def cfg(**kw):
    base = dict(model="transe", dim=8, epochs=4, batch_size=16, lr=0.05, negatives=4, seed=0, evaluate_test=False,
                loss="softmax", tail_candidates="range")
    base.update(kw)
    return TrainConfig(**base)


def test_the_translational_and_bilinear_models_can():
    assert {"transe", "transh", "distmult", "complex"} <= set(RANGE_MODELS)


@pytest.mark.parametrize("name", RANGE_MODELS)
def test_score_vectors_t_equals_score_emb(name):
    """Known answer: the batched scores against candidate vectors are the model's own scores."""
    torch.manual_seed(0)
    m = get_model(name, 9, 3, dim=4)
    w = m.entity.weight.detach()
    h, cand = w[[0, 2, 5]], w[[1, 3, 4, 8]]
    got = m.score_vectors_t(h, 2, cand)
    want = torch.stack([m.score_emb(h[i:i + 1].expand(4, -1), torch.full((4,), 2), cand) for i in range(3)])
    assert got.shape == (3, 4)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", RANGE_MODELS)
def test_range_training_learns_deterministically_and_resumes(tmp_path, tiny_graph, name):
    a = train(tiny_graph, cfg(model=name), progress=False)
    losses = [h["loss"] for h in a.history]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
    b = train(tiny_graph, cfg(model=name), progress=False)
    assert [h["loss"] for h in b.history] == losses  # one seed, identical numbers
    # interrupted after 2 epochs and resumed: the same numbers as the run straight through
    train(tiny_graph, cfg(model=name, epochs=2), tmp_path / "run", progress=False)
    c = train(tiny_graph, cfg(model=name), tmp_path / "run", progress=False)
    assert [h["loss"] for h in c.history] == losses


def test_range_training_ranks_tails_better_than_sampled_negatives(tiny_graph):
    """On the tiny graph's person -> attribute relations, training against the range puts the
    true tail higher (tail side, filtered) than the same budget of sampled negatives."""
    def tail_mrr(c):
        r = train(tiny_graph, c, progress=False)
        ranks = filtered_ranks(r.model, tiny_graph.test, tiny_graph.all_triples(), tiny_graph.num_relations,
                               sides=("tail",), progress=False)["tail"]
        return float(np.mean(1 / ranks))

    ranged = tail_mrr(cfg(model="distmult", epochs=20))
    sampled = tail_mrr(cfg(model="distmult", epochs=20, tail_candidates="sampled"))
    assert ranged > sampled


def test_ranges_are_the_training_tails():
    tr = np.array([[0, 0, 5], [1, 0, 6], [2, 0, 5], [0, 1, 7]])
    r = relation_ranges(tr, 3)
    assert [x.tolist() for x in r] == [[5, 6], [7], []]


def test_configs_that_cannot_train_against_the_range_are_refused():
    with pytest.raises(ValueError, match="loss 'softmax'"):
        cfg(loss="margin")
    with pytest.raises(ValueError, match="no regularization|regularization"):
        cfg(regularization=0.1)
    with pytest.raises(ValueError, match="'sampled' or 'range'"):
        cfg(tail_candidates="all")
    if "rotate" not in RANGE_MODELS:
        with pytest.raises(ValueError, match="rotate"):
            cfg(model="rotate")
