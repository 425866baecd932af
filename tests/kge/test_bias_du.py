"""Du et al. 2022 measures on graphs whose answers are known by construction."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from kge.bias import MEASURES, du
from kge.graph import KnowledgeGraph
from kge.models.base import KGEModel


class SqTransE(KGEModel):
    """TransE with the paper's squared L2 error psi = ||h + r - t||^2 (score = -psi)."""

    name = "sq_transe"

    def __init__(self, ent: np.ndarray, rel: np.ndarray):
        super().__init__(len(ent), len(rel), ent.shape[1])
        self.entity = torch.nn.Embedding.from_pretrained(torch.tensor(ent, dtype=torch.float64), freeze=False)
        self.relation = torch.nn.Embedding.from_pretrained(torch.tensor(rel, dtype=torch.float64), freeze=False)

    def score_emb(self, h, r, t):
        return -((h + self.relation(r) - t) ** 2).sum(-1)


ENTS = ["male", "female", "nurse", "engineer", "m0", "m1", "m2", "f0", "f1", "x"]
RELS = ["gender", "profession", "knows"]


def toy_graph() -> KnowledgeGraph:
    e = {n: i for i, n in enumerate(ENTS)}
    g, p, k = 0, 1, 2
    train = [
        (e["m0"], g, e["male"]), (e["m1"], g, e["male"]), (e["m2"], g, e["male"]),
        (e["f0"], g, e["female"]), (e["f1"], g, e["female"]),
        (e["m0"], p, e["engineer"]), (e["m1"], p, e["engineer"]), (e["f0"], p, e["engineer"]),
        (e["m2"], p, e["nurse"]), (e["f0"], p, e["nurse"]), (e["f1"], p, e["nurse"]),
        (e["x"], k, e["f1"]),
    ]
    return KnowledgeGraph(ENTS, RELS, np.array(train), np.zeros((0, 3)), np.zeros((0, 3)), name="toy")


def toy_model(seed: int = 0) -> SqTransE:
    rng = np.random.default_rng(seed)
    return SqTransE(rng.normal(size=(len(ENTS), 3)), rng.normal(size=(len(RELS), 3)))


def test_group_bias_by_hand():
    # relation vectors 0; engineer at the origin; males at distance 1, the female at distance 2
    ent = np.zeros((len(ENTS), 2))
    ent[ENTS.index("m0")] = [1, 0]
    ent[ENTS.index("m1")] = [0, -1]
    ent[ENTS.index("f0")] = [0, 2]
    ent[ENTS.index("nurse")] = [5, 5]
    model = SqTransE(ent, np.zeros((3, 2)))
    res = du.du_bias(model, toy_graph())
    rows = {r["item"]: r for r in res.rows([du.MEASURE_GROUP])}
    assert rows["engineer"]["score"] == pytest.approx(4.0 - 1.0)  # mean_f psi - mean_m psi
    assert (rows["engineer"]["count_a"], rows["engineer"]["count_b"]) == (2, 1)
    assert (rows["nurse"]["count_a"], rows["nurse"]["count_b"]) == (1, 2)
    # nurse: m2 at origin (psi 50), f0 (psi 25+9=34), f1 at origin (50)
    assert rows["nurse"]["score"] == pytest.approx((34 + 50) / 2 - 50)
    for r in res.rows():
        assert set(r) == {"measure", "model", "sensitive_relation", "a", "b", "target_relation", "item",
                          "score", "count_a", "count_b"}
        assert (r["sensitive_relation"], r["a"], r["b"], r["target_relation"]) == (
            "gender", "male", "female", "profession")


def test_individual_bias_closed_form_by_hand():
    ent = np.zeros((len(ENTS), 2))
    ent[ENTS.index("male")] = [2, 0]  # a - b = (2, 0)
    ent[ENTS.index("f1")] = [1, 0]  # f1 + r_p - nurse = (1, 0)
    model = SqTransE(ent, np.zeros((3, 2)))
    groups = du.build_groups(toy_graph())
    pair = du.pair_individual_bias(model, groups, hessian="degree", damping=1.0)
    i = np.flatnonzero((groups.pair_person == ENTS.index("f1")) & (groups.pair_item == ENTS.index("nurse")))[0]
    # f1 occurs 3 times (gender, profession, knows as tail): alpha = 3 + 1; B_in = -4 * (1*2) / 4
    assert pair[i] == pytest.approx(-2.0)
    paper = du.pair_individual_bias(model, groups, hessian="degree", damping=1.0, scale="paper")
    assert paper[i] == pytest.approx(-2.0 / 12)


@pytest.mark.parametrize("hessian", du.HESSIANS)
def test_autograd_equals_transe_closed_form(hessian):
    model, groups = toy_model(1), du.build_groups(toy_graph())
    auto = du.pair_individual_bias(model, groups, hessian=hessian, damping=0.5)
    closed = du.transe_individual_bias(model.entity.weight.detach().numpy(), model.relation.weight.detach().numpy(),
                                       groups, hessian=hessian, damping=0.5)
    np.testing.assert_allclose(auto, closed, rtol=1e-10)
    assert np.abs(auto).min() > 0


def test_hessian_diagonal_du_formula():
    groups = du.build_groups(toy_graph())
    # |G| = 12 triples, |E| = 10: alpha = max(N_e - 2.4, 0) + lambda
    alpha = du.hessian_diagonal(groups, hessian="du", damping=0.1)
    f0 = ENTS.index("f0")  # gender + 2 professions = 3
    assert alpha[f0] == pytest.approx(3 - 2.4 + 0.1)
    assert alpha[ENTS.index("x")] == pytest.approx(0.1)  # degree 1 < 2.4: clipped to 0, then damped
    with pytest.raises(ValueError, match="damping"):
        du.hessian_diagonal(groups, damping=0)
    with pytest.raises(ValueError, match="unknown hessian"):
        du.hessian_diagonal(groups, hessian="exact")


def test_weighted_and_vanilla_aggregation():
    model = toy_model(2)
    res = du.du_bias(model, toy_graph(), hessian="degree")
    g = res.groups
    for i, item in enumerate(res.items):
        sel = g.pair_item == item
        a, b = res.pair_bias[sel & g.pair_is_a], res.pair_bias[sel & ~g.pair_is_a]
        assert res.individual_weighted[i] == pytest.approx(a.mean() + b.mean())
        assert res.individual_vanilla[i] == pytest.approx(res.pair_bias[sel].mean())


def test_influence_matches_hand_gradient():
    graph, model = toy_graph(), toy_model(3)
    groups = du.build_groups(graph)
    alpha = du.hessian_diagonal(groups, hessian="degree", damping=1.0)
    infl = du.triple_influence(model, graph, "engineer", hessian="degree", damping=1.0)
    E, R = model.entity.weight.detach().numpy(), model.relation.weight.detach().numpy()
    o, rp = ENTS.index("engineer"), 1
    males, females = [ENTS.index("m0"), ENTS.index("m1")], [ENTS.index("f0")]
    res = lambda s: E[s] + R[rp] - E[o]  # noqa: E731
    grad = {s: -2 * res(s) / 2 for s in males}
    grad.update({s: 2 * res(s) / 1 for s in females})
    grad[o] = -2 * res(females[0]) / 1 + sum(2 * res(s) for s in males) / 2
    assert infl.group_bias == pytest.approx(float(res(females[0]) @ res(females[0])
                                                  - np.mean([res(s) @ res(s) for s in males])))
    tr = graph.train
    expect = {}
    for i, (h, r, t) in enumerate(tr):
        d = E[h] + R[r] - E[t]
        v = 0.0
        if h in grad:
            v += grad[h] @ (2 * d) / alpha[h]
        if t in grad:
            v += grad[t] @ (-2 * d) / alpha[t]
        if v != 0:
            expect[i] = v
    got = dict(zip(infl.triple_index.tolist(), infl.delta.tolist()))
    assert set(got) == set(expect)
    for i in expect:
        assert got[i] == pytest.approx(expect[i])
    # x -knows-> f1 does not touch engineer's persons: no influence
    assert 11 not in got


def test_debiasing_order_moves_towards_zero():
    graph, model = toy_graph(), toy_model(4)
    infl = du.triple_influence(model, graph, "engineer")
    order = infl.debiasing_order()
    assert len(order)
    for row in order:
        change = infl.predicted_change(np.array([row]))
        assert np.sign(change) == -np.sign(infl.group_bias)


def test_add_dummy_entities_counts():
    graph = toy_graph()
    new, added = du.add_dummy_entities(graph, ["engineer"], c=1.0)
    # engineer: 2 male, 1 female -> c * (2 - 1) = 1 dummy, linked to female and engineer
    assert added == {"engineer": 1}
    assert new.num_entities == graph.num_entities + 1
    assert new.entities[:len(ENTS)] == ENTS
    extra = new.train[len(graph.train):]
    dummy = graph.num_entities
    assert sorted(map(tuple, extra.tolist())) == sorted([(dummy, 0, ENTS.index("female")),
                                                        (dummy, 1, ENTS.index("engineer"))])
    _, capped = du.add_dummy_entities(graph, ["engineer"], c=10.0, cap=5)
    assert capped == {"engineer": 4}


def test_remove_triples_keeps_entities():
    graph = toy_graph()
    new = du.remove_triples(graph, np.array([0, 5]))
    assert len(new.train) == len(graph.train) - 2 and new.entities == graph.entities
    assert (graph.train[0] != new.train).any(axis=1).all()


def test_errors_name_the_problem():
    graph = toy_graph()
    with pytest.raises(ValueError, match="sensitive relation 'sex'"):
        du.build_groups(graph, sensitive_relation="sex")
    with pytest.raises(ValueError, match="attribute value b 'woman'"):
        du.build_groups(graph, b="woman")
    with pytest.raises(ValueError, match="occupation 'pilot'"):
        du.triple_influence(toy_model(), graph, "pilot")
    wrong = SqTransE(np.zeros((len(ENTS) + 2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="embeddings have 12 entities but the graph has 10"):
        du.du_bias(wrong, graph)
    with pytest.raises(ValueError, match="embeddings have 12 entities"):
        du.triple_influence(wrong, graph, "nurse")
    with pytest.raises(ValueError, match="nothing to measure"):
        du.build_groups(graph, a="nurse", b="engineer")


def test_same_seed_same_numbers():
    a = du.du_bias(toy_model(5), toy_graph()).rows()
    b = du.du_bias(toy_model(5), toy_graph()).rows()
    assert a == b


def test_registered_transe_uses_the_papers_squared_error():
    from kge.models import get_model

    torch.manual_seed(0)
    model = get_model("transe", len(ENTS), len(RELS), dim=4)
    assert du.resolve_psi(model) == "squared"
    assert du.resolve_psi(get_model("transe", len(ENTS), len(RELS), dim=4, p_norm=1)) == "negscore"
    groups = du.build_groups(toy_graph())
    auto = du.pair_individual_bias(model, groups)
    closed = du.transe_individual_bias(model.entity.weight.detach().numpy(), model.relation.weight.detach().numpy(),
                                       groups)
    np.testing.assert_allclose(auto, closed, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="unknown psi"):
        du.resolve_psi(model, "cubed")


@pytest.mark.parametrize("name", [n for n in MEASURES.names() if n.startswith("du_")])
def test_measure_components_follow_the_bias_protocol(name):
    from kge.bias.context import GraphView
    from kge.bias.result import BiasSpec

    view = GraphView.from_graph(toy_graph())
    spec = BiasSpec("gender", "male", "female", "profession")
    res = MEASURES.make(name).run(view, toy_model(6), spec, seed=3, model_label="toy")
    assert res.measure == name and res.seed == 3 and res.model == "toy"
    assert sorted(r.item for r in res.rows) == ["engineer", "nurse"]
    assert all(r.measure == name and np.isfinite(r.score) for r in res.rows)
    direct = du.du_bias(toy_model(6), toy_graph())
    key = {du.MEASURE_GROUP: "group_bias", du.MEASURE_INDIVIDUAL: "individual_weighted",
           du.MEASURE_INDIVIDUAL_VANILLA: "individual_vanilla"}[name]
    want = dict(zip([ENTS[i] for i in direct.items], getattr(direct, key)))
    for r in res.rows:
        assert r.score == pytest.approx(want[r.item])
    with pytest.raises(ValueError, match="two attribute values"):
        MEASURES.make(name).run(view, toy_model(6), BiasSpec("gender", "male", None, "profession"))


def test_influence_all_equals_one_by_one():
    graph, model = toy_graph(), toy_model(7)
    many = du.influence_all(model, graph, progress=False)
    assert sorted(ENTS[r.item] for r in many) == ["engineer", "nurse"]
    for r in many:
        one = du.triple_influence(model, graph, r.item)
        np.testing.assert_array_equal(r.triple_index, one.triple_index)
        np.testing.assert_allclose(r.delta, one.delta, rtol=1e-12)
