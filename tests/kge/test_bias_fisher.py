"""Fisher et al. 2020: closed form == autograd, and a value computed by hand."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bias_fixtures import planted_graph, planted_model  # noqa: E402
from kge.bias import BiasSpec, GraphView, resolve, run_measure  # noqa: E402
from kge.bias.fisher import fisher_bias  # noqa: E402
from kge.models import get_model  # noqa: E402


@pytest.mark.parametrize("name", ["distmult", "complex"])
@pytest.mark.parametrize("rest", [False, True])
def test_closed_form_equals_autograd(name, rest):
    torch.manual_seed(0)
    g = planted_graph(n=300)
    m = get_model(name, len(g.entities), len(g.relations), dim=6)  # random parameters
    assert m.linear_in_head
    view = GraphView.from_graph(g)
    grp = resolve(view, BiasSpec("gender", "male", None if rest else "female"))
    args = (m, grp.persons, grp.s_rel, grp.a_id, grp.b_ids, grp.t_rel, grp.items)
    closed = fisher_bias(*args, method="closed")
    auto = fisher_bias(*args, method="autograd")
    assert np.abs(closed).max() > 1e-6
    np.testing.assert_allclose(closed, auto, rtol=1e-4, atol=1e-9)


def test_closed_form_refuses_nonlinear_models():
    g = planted_graph(n=300)
    m = get_model("transe", len(g.entities), len(g.relations), dim=6)
    with pytest.raises(ValueError, match="closed form needs a score linear in the head"):
        run_measure("fisher", g, m, BiasSpec("gender", "male", "female"), method="closed")


def test_transe_value_by_hand():
    """One person at the origin, a = +e1, b = -e1, zero relations, L2 TransE:
    m(h) = -|h - a| + |h - b|, grad at 0 = a/|a| - b/|b| = 2 e1, h' = 2 alpha e1,
    bias(p) = -|h' - p| + |p|."""
    g = planted_graph(n=300)
    m = get_model("transe", len(g.entities), len(g.relations), dim=3, p_norm=2)
    with torch.no_grad():
        m.relation.weight.zero_()
        E = m.entity.weight
        E.zero_()
        E[g.a_id] = torch.tensor([1.0, 0, 0])
        E[g.b_id] = torch.tensor([-1.0, 0, 0])
        occ = g.occupation_ids()
        E[occ[0]] = torch.tensor([2.0, 1.0, 0])
        E[occ[1]] = torch.tensor([-2.0, 0, 1.0])
    person = g.person_ids()[:1]
    alpha = 0.01
    out = fisher_bias(m, person, 0, g.a_id, [g.b_id], 1, occ[:2], alpha=alpha, method="autograd")
    h2 = np.array([2 * alpha, 0, 0])
    want = [-np.linalg.norm(h2 - [2, 1, 0]) + np.sqrt(5), -np.linalg.norm(h2 - [-2, 0, 1]) + np.sqrt(5)]
    np.testing.assert_allclose(out, want, rtol=1e-5)
    assert out[0] > 0 > out[1]


def test_counts_are_persons_per_group():
    g = planted_graph()
    res = run_measure("fisher", g, planted_model("transe", g), BiasSpec("gender", "male", "female"))
    facts = g.train[g.train[:, 1] == 1]
    for r in res.rows:
        o = g.entities.index(r.item)
        holders = facts[facts[:, 2] == o, 0] - 2 - g.config.n_occupations
        assert r.count_a == int(g.person_is_a[holders].sum())
        assert r.count_b == int((~g.person_is_a[holders]).sum())
    assert res.summary["persons"] == len(np.unique(facts[:, 0]))
    top = res.top(3, min_count=10_000)
    assert top == []  # no occupation is that common: min_count filters


@pytest.mark.parametrize("name,kw", [("transe", {}), ("transe", {"p_norm": 1}), ("transh", {}), ("distmult", {}),
                                     ("complex", {}), ("rotate", {})])
def test_pairwise_fast_path_equals_score_emb(name, kw):
    """The matrix-product shortcut gives score_emb's numbers for every registered model."""
    from kge.bias.embedding import pairwise_scores

    torch.manual_seed(1)
    m = get_model(name, 60, 3, dim=8, **kw)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_()
    H, T = m.entity.weight[:25].detach(), m.entity.weight[25:].detach()
    np.testing.assert_allclose(pairwise_scores(m, H, 2, T).numpy(), pairwise_scores(m, H, 2, T, exact=True).numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,kw", [("transe", {}), ("transh", {}), ("distmult", {}), ("complex", {}), ("rotate", {})])
def test_stable_score_change_equals_the_difference_of_scores(name, kw):
    from kge.bias.embedding import pairwise_scores, score_change

    torch.manual_seed(2)
    m = get_model(name, 60, 3, dim=8, **kw)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_()
    H, T = m.entity.weight[:25].detach(), m.entity.weight[25:].detach()
    H2 = H + 0.01 * torch.randn_like(H)
    want = (pairwise_scores(m, H2, 1, T, exact=True).double() - pairwise_scores(m, H, 1, T, exact=True).double())
    got = score_change(m, H, H2, 1, T)
    assert got is not None
    np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=1e-3, atol=2e-5)
