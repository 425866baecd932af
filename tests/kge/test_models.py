import numpy as np
import pytest
import torch

from kge.embeddings import EmbeddingShapeError, load_model, save_model
from kge.models import MODELS, KGEModel, get_model

NAMES = MODELS.names()  # every registered model: a new one is tested here without touching this file


def _model(name, e=11, r=3, dim=6, seed=0):
    torch.manual_seed(seed)
    m = get_model(name, e, r, dim=dim)
    with torch.no_grad():  # make relations generic (TransH normals etc. random too)
        for p in m.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return m


def test_resolver():
    assert {"transe", "transh", "distmult", "complex", "rotate"} <= set(NAMES)
    with pytest.raises(ValueError, match=r"unknown model 'foo'; expected one of \["):
        get_model("foo", 3, 1)
    assert get_model("TransE", 3, 1, dim=2, p_norm=1).p_norm == 1


@pytest.mark.parametrize("name", NAMES)
def test_interface_and_broadcasting(name):
    m = _model(name)
    assert isinstance(m, KGEModel) and m.name == name
    assert m.entity.weight.shape == (11, m.entity_dim) and m.entity.sparse
    h = m.entity.weight[:4]
    t = m.entity.weight[4:9]
    s = m.score_emb(h[:, None, :], torch.tensor([[0, 1, 2, 0, 1]]), t[None, :, :])
    assert s.shape == (4, 5)
    loop = torch.stack([torch.stack([m.score_emb(h[i], torch.tensor(j % 3), t[j]) for j in range(5)]) for i in range(4)])
    torch.testing.assert_close(s, loop)


@pytest.mark.parametrize("name", NAMES)
def test_one_to_all_fast_paths_match_score_emb(name):
    m = _model(name)
    h, r, t = torch.tensor([0, 3, 5]), torch.tensor([0, 2, 1]), torch.tensor([7, 1, 5])
    w = m.entity.weight.detach()
    with torch.no_grad():
        ref_t = m.score_emb(w[h][:, None, :], r[:, None], w[None, :, :])
        ref_h = m.score_emb(w[None, :, :], r[:, None], w[t][:, None, :])
        torch.testing.assert_close(m.score_t(h, r), ref_t, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(m.score_h(r, t), ref_h, atol=1e-4, rtol=1e-4)
        cand = torch.tensor([2, 4])
        torch.testing.assert_close(m.score_t(h, r, cand), ref_t[:, cand], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(m.score_hrt(h, r, t), ref_t[torch.arange(3), t], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_differentiable_and_linear_flag(name):
    m = _model(name)
    h = m.entity.weight[:2].detach().clone().requires_grad_()
    t = m.entity.weight[2:4].detach()
    r = torch.tensor([0, 1])
    m.score_emb(h, r, t).sum().backward()
    assert h.grad is not None and torch.isfinite(h.grad).all() and h.grad.abs().sum() > 0
    # linear_in_head must be True exactly when the score is linear in h
    with torch.no_grad():
        a, b = torch.randn(2, m.entity_dim), torch.randn(2, m.entity_dim)
        lin = torch.allclose(m.score_emb(2 * a + 3 * b, r, t), 2 * m.score_emb(a, r, t) + 3 * m.score_emb(b, r, t),
                             atol=1e-4)
    assert lin == m.linear_in_head


@pytest.mark.parametrize("name", NAMES)
def test_save_load_round_trip(tmp_path, tiny_graph, name):
    m = _model(name, tiny_graph.num_entities, tiny_graph.num_relations)
    save_model(m, tmp_path / "emb", tiny_graph, extra={"seed": 3})
    assert (tmp_path / "emb" / "entities.npy").exists() and (tmp_path / "emb" / "relations.npy").exists()
    assert (tmp_path / "emb" / "entities.tsv").read_text().splitlines() == tiny_graph.entities
    m2 = load_model(tmp_path / "emb", tiny_graph)
    assert type(m2) is type(m)
    for (n1, p1), (n2, p2) in zip(m.named_parameters(), m2.named_parameters()):
        assert n1 == n2
        torch.testing.assert_close(p1, p2, rtol=0, atol=0)
    np.testing.assert_array_equal(np.load(tmp_path / "emb" / "entities.npy"), m.entity.weight.detach().numpy())


def test_load_errors(tmp_path, tiny_graph, graph_factory):
    m = _model("transe", tiny_graph.num_entities, tiny_graph.num_relations)
    save_model(m, tmp_path / "emb", tiny_graph)
    other = graph_factory(num_people=40)
    with pytest.raises(EmbeddingShapeError, match="embeddings are for 37 entities / 4 relations but graph"):
        load_model(tmp_path / "emb", other)
    np.save(tmp_path / "emb" / "entities.npy", np.zeros((37, 5), dtype=np.float32))
    with pytest.raises(EmbeddingShapeError, match=r"entities.npy: shape \(37, 5\)"):
        load_model(tmp_path / "emb")
    with pytest.raises(FileNotFoundError, match="config.json missing"):
        load_model(tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_rank_scores_order_like_scores(name):
    m = _model(name)
    h, r = torch.tensor([0, 3, 5]), torch.tensor([0, 2, 1])
    with torch.no_grad():
        for fast, ref in (("rank_scores_t", m.score_t(h, r)), ("rank_scores_h", m.score_h(r, h))):
            if not hasattr(m, fast):
                continue
            got = getattr(m, fast)(h, r) if fast.endswith("t") else getattr(m, fast)(r, h)
            assert torch.equal(torch.argsort(got, dim=1, stable=True), torch.argsort(ref, dim=1, stable=True))
