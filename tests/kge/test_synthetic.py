"""The synthetic graph generator (Bourli 2021, §6.1.1)."""
from __future__ import annotations

import numpy as np
import pytest

from kge.synthetic import SyntheticConfig, generate, planted_embeddings, zipf_sizes


def test_zipf_sizes_sum_and_order():
    s = zipf_sizes(50, 10_000, 1.5)
    assert s.sum() == 10_000 and (s >= 1).all()
    assert (np.diff(s) <= 0).all() and s[0] > 10 * s[-1]


def test_graph_shape_and_split():
    g = generate(n_individuals=1000, n_occupations=20, seed=0)
    n_ent = 2 + 20 + 1000
    assert len(g.entities) == n_ent and g.relations == ["gender", "profession"]
    occ_facts = np.concatenate([g.train[g.train[:, 1] == 1], g.test])
    assert len(occ_facts) == 1000  # one occupation per person
    assert len(g.test) == pytest.approx(200, abs=60)
    # every test person and occupation is known from train
    assert set(g.test[:, 2]) <= set(g.train[g.train[:, 1] == 1, 2])
    assert set(g.test[:, 0]) <= set(g.train[g.train[:, 1] == 0, 0])
    assert np.bincount(occ_facts[:, 2] - 2, minlength=20).tolist() == g.occupation_size.tolist()


@pytest.mark.parametrize("p", [0.5, 0.7, 0.9, 1.0])
def test_bias_probability_is_planted(p):
    g = generate(n_individuals=4000, n_occupations=10, zipf_a=0.2, bias_prob=p, seed=1)
    facts = np.concatenate([g.train[g.train[:, 1] == 1], g.test])
    person = facts[:, 0] - 2 - 10
    occ = facts[:, 2] - 2
    same = g.person_is_a[person] == g.occupation_is_a[occ]
    assert same.mean() == pytest.approx(p, abs=0.03)


def test_population_ratio():
    g = generate(n_individuals=1000, population_ratio=0.7, seed=2)
    assert g.person_is_a.sum() == 700
    gender = g.train[g.train[:, 1] == 0]
    assert (gender[:, 2] == g.a_id).sum() == 700


def test_same_seed_same_graph_and_different_seed_differs():
    a, b, c = generate(seed=5), generate(seed=5), generate(seed=6)
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)
    assert not np.array_equal(a.train, c.train)


def test_bad_parameters_are_errors():
    with pytest.raises(ValueError, match="bias_prob must lie in"):
        SyntheticConfig(bias_prob=0.3)
    with pytest.raises(ValueError, match="population_ratio"):
        SyntheticConfig(population_ratio=1.0)


def test_loads_as_knowledge_graph_and_tsv(tmp_path):
    g = generate(n_individuals=200, n_occupations=5, seed=0)
    kg = g.to_knowledge_graph()
    assert kg.num_entities == len(g.entities)
    g.write_tsv(tmp_path)
    lines = (tmp_path / "train.tsv").read_text().splitlines()
    assert len(lines) == len(g.train) and lines[0].count("\t") == 2


def test_planted_embeddings_put_values_on_both_sides():
    g = generate(n_individuals=300, n_occupations=6, seed=0)
    E = planted_embeddings(g, dim=8)
    assert E.shape == (len(g.entities), 8)
    assert E[g.a_id, 0] > 0 > E[g.b_id, 0]
    assert (np.sign(E[g.occupation_ids(), 0]) == np.where(g.occupation_is_a, 1, -1)).all()
    assert (np.sign(E[g.person_ids(), 0]) == np.where(g.person_is_a, 1, -1)).all()
