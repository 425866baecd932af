"""Splitting by head entity: seeded, stratified by gender, balanced test sets."""
import random

import pytest

from wikigenderbias.split import SplitConfig, split_entities


def entities(n_female, n_male):
    return ([{"entity_id": f"F{i:03d}", "gender": "female", "relations": []} for i in range(n_female)]
            + [{"entity_id": f"M{i:03d}", "gender": "male", "relations": []} for i in range(n_male)])


def ids(split):
    return {s: [e["entity_id"] for e in es] for s, es in split.items()}


def test_sizes_genders_and_no_head_in_two_splits():
    ents = entities(100, 300)
    out = split_entities(ents, SplitConfig(seed=3))
    assert set(out) == {"train", "validation", "male_test", "female_test"}
    # test = 10% of 400 heads, half per gender; validation keeps the 1:3 gender ratio
    assert len(out["female_test"]) == 20 and len(out["male_test"]) == 20
    assert all(e["gender"] == "female" for e in out["female_test"])
    assert all(e["gender"] == "male" for e in out["male_test"])
    assert len(out["validation"]) == 40
    assert sum(e["gender"] == "female" for e in out["validation"]) == 10
    assert len(out["train"]) == 400 - 80
    all_ids = [i for v in ids(out).values() for i in v]
    assert len(all_ids) == len(set(all_ids)) == 400


def test_seeded_and_order_independent():
    ents = entities(30, 70)
    a = split_entities(ents, SplitConfig(seed=1))
    shuffled = ents[:]
    random.Random(0).shuffle(shuffled)
    assert ids(split_entities(shuffled, SplitConfig(seed=1))) == ids(a)
    assert ids(split_entities(ents, SplitConfig(seed=2))) != ids(a)


def test_unbalanced_test_and_absolute_counts():
    out = split_entities(entities(100, 300), SplitConfig(test=0.1, balance_test=False))
    assert (len(out["female_test"]), len(out["male_test"])) == (10, 30)
    out = split_entities(entities(100, 300), SplitConfig(train=0.5, validation=0.1, test=0.1))
    assert len(out["train"]) == 50 + 150  # fractions summing below 1 leave heads out
    out = split_entities(entities(100, 300), SplitConfig(train=0.8, validation=20, test=40))
    assert len(out["validation"]) == 20 and len(out["female_test"]) == len(out["male_test"]) == 20


def test_balanced_test_limited_by_the_minority():
    out = split_entities(entities(3, 97), SplitConfig(train=0.7, test=0.2))
    assert len(out["female_test"]) == 3 and len(out["male_test"]) == 17


@pytest.mark.parametrize("kwargs, match", [({"test": -0.1}, ">= 0"), ({"train": 0.9, "test": 0.2}, "sum to")])
def test_bad_sizes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SplitConfig(**kwargs)


def test_duplicate_heads_and_unknown_gender_rejected():
    with pytest.raises(ValueError, match="occurs twice"):
        split_entities(entities(1, 0) * 2)
    with pytest.raises(ValueError, match="unknown gender"):
        split_entities([{"entity_id": "X", "gender": "other", "relations": []}])


def test_as_many_female_as_male_heads_and_no_heads():
    out = split_entities(entities(10, 10), SplitConfig(seed=0, test=4))
    assert len(out["female_test"]) == len(out["male_test"]) == 2
    assert split_entities([], SplitConfig()) == {s: [] for s in ("train", "validation", "male_test", "female_test")}
