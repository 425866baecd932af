import numpy as np
import pytest
import torch

from kge.evaluate import FilterIndex, evaluate, filtered_ranks, rank_metrics
from kge.models import MODELS, get_model


def brute_force_ranks(model, triples, known, filtered=True, allowed=None):
    """Reference: score every candidate with score_emb one at a time, filter, realistic rank."""
    known = {tuple(x) for x in np.asarray(known).tolist()}
    w = model.entity.weight.detach()
    out = {"head": [], "tail": []}
    with torch.no_grad():
        for h, r, t in np.asarray(triples).tolist():
            for side in ("head", "tail"):
                scores = []
                for e in range(model.num_entities):
                    hh, tt = (e, t) if side == "head" else (h, e)
                    scores.append(float(model.score_emb(w[hh], torch.tensor(r), w[tt])))
                true = scores[h if side == "head" else t]
                better = equal = 0
                for e, s in enumerate(scores):
                    cand = (e, r, t) if side == "head" else (h, r, e)
                    if e == (h if side == "head" else t) or (filtered and cand in known):
                        continue
                    if allowed is not None and e not in allowed[side][r]:
                        continue
                    better += s > true
                    equal += s == true
                out[side].append(1 + better + equal / 2)
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("name", MODELS.names())
@pytest.mark.parametrize("filtered", [True, False])
def test_ranks_match_brute_force(tiny_graph, name, filtered):
    torch.manual_seed(1)
    m = get_model(name, tiny_graph.num_entities, tiny_graph.num_relations, dim=5)
    known = tiny_graph.all_triples()
    ours = filtered_ranks(m, tiny_graph.test, known if filtered else None, tiny_graph.num_relations, batch_size=3,
                          progress=False)
    ref = brute_force_ranks(m, tiny_graph.test, known, filtered)
    for side in ("head", "tail"):
        np.testing.assert_allclose(ours[side], ref[side], atol=1e-6)


@pytest.mark.parametrize("name", ["transe", "distmult"])
def test_type_constrained_ranks_match_brute_force(tiny_graph, name):
    """OpenKE's type_constrain: an answer is ranked only among the entities seen on its side of
    the relation in training; never worse than the unconstrained rank."""
    from kge.evaluate import type_masks

    torch.manual_seed(2)
    m = get_model(name, tiny_graph.num_entities, tiny_graph.num_relations, dim=5)
    known, tr = tiny_graph.all_triples(), tiny_graph.train
    masks = type_masks(tr, tiny_graph.num_entities, tiny_graph.num_relations)
    allowed = {side: {r: set(tr[tr[:, 1] == r, col].tolist()) for r in range(tiny_graph.num_relations)}
               for side, col in (("head", 0), ("tail", 2))}
    ours = filtered_ranks(m, tiny_graph.test, known, tiny_graph.num_relations, batch_size=3, progress=False,
                          type_constrain=masks)
    ref = brute_force_ranks(m, tiny_graph.test, known, True, allowed)
    free = filtered_ranks(m, tiny_graph.test, known, tiny_graph.num_relations, batch_size=3, progress=False)
    for side in ("head", "tail"):
        np.testing.assert_allclose(ours[side], ref[side], atol=1e-6)
        assert np.all(ours[side] <= free[side]) and np.any(ours[side] < free[side])


def test_ties_and_duplicate_queries(tiny_graph):
    m = get_model("distmult", tiny_graph.num_entities, tiny_graph.num_relations, dim=4)
    with torch.no_grad():
        m.entity.weight.zero_()  # every score 0: all ties
    # the same (h, r) query twice with different answers
    triples = np.array([[0, 3, 1], [0, 3, 2], [5, 0, 30]])
    ours = filtered_ranks(m, triples, tiny_graph.all_triples(), tiny_graph.num_relations, batch_size=2, progress=False)
    ref = brute_force_ranks(m, triples, np.concatenate([tiny_graph.all_triples(), triples]))
    for side in ("head", "tail"):
        np.testing.assert_allclose(ours[side], ref[side])
    raw = filtered_ranks(m, triples, None, tiny_graph.num_relations, progress=False)
    assert np.allclose(raw["tail"], 1 + (tiny_graph.num_entities - 1) / 2)


def test_filter_index():
    triples = np.array([[0, 0, 1], [0, 0, 2], [0, 1, 3], [4, 0, 1], [0, 0, 1]])
    f = FilterIndex(triples, 2, "tail")
    rows, cols = f.lookup(np.array([0 * 2 + 0, 9, 4 * 2 + 0]))
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(0, 1), (0, 2), (2, 1)]
    f = FilterIndex(triples, 2, "head")
    rows, cols = f.lookup(np.array([1 * 2 + 0]))
    assert sorted(cols.tolist()) == [0, 4]


def test_metrics_and_evaluate(tiny_graph):
    m = rank_metrics(np.array([1, 2, 4, 20]))
    assert m["mrr"] == pytest.approx((1 + 0.5 + 0.25 + 0.05) / 4)
    assert (m["hits_at_1"], m["hits_at_3"], m["hits_at_10"]) == (0.25, 0.5, 0.75)
    model = get_model("transe", tiny_graph.num_entities, tiny_graph.num_relations, dim=4)
    res = evaluate(model, tiny_graph, "test", progress=False)
    assert res.num_ranks == 2 * len(tiny_graph.test) and 0 < res.mrr <= 1
    assert set(res.sides) == {"head", "tail"}
    sub = evaluate(model, tiny_graph, "valid", max_triples=5, progress=False)
    assert sub.num_triples == 5
    bad = get_model("transe", 5, tiny_graph.num_relations, dim=4)
    with pytest.raises(ValueError, match="model has 5 entities"):
        evaluate(bad, tiny_graph)
