"""The resolver and every registered debiaser / study variant on the tiny fixtures."""
from __future__ import annotations

import json

import numpy as np
import pytest

from relext.debias import (DEBIASERS, ORDER, STUDY_VARIANTS, Compose, Debiaser, canonical_name,
                           get_debiaser)
from support.debias_data import planted_vectors, tiny_dsdict

OPTIONS = {"anonymize": {"ner": "gazetteer"}}


def _make(name):
    canon = canonical_name(name)
    opts = {p: OPTIONS[p] for p in canon.split("+") if p in OPTIONS}
    if "+" not in canon:
        return get_debiaser(canon, **opts.get(canon, {}))
    return get_debiaser(canon, **opts)


@pytest.fixture(scope="module")
def data():
    return tiny_dsdict()


@pytest.fixture(scope="module")
def vectors():
    return planted_vectors(seed=2)[0]


@pytest.mark.parametrize("name", sorted(set(DEBIASERS) | set(STUDY_VARIANTS)))
def test_every_debiaser_keeps_splits_features_and_vocabulary(name, data, vectors):
    d = _make(name)
    assert isinstance(d, Debiaser)
    assert d.name == canonical_name(name)
    out = d.transform_dataset(data, seed=0)
    assert list(out) == list(data)
    for split in data:
        assert out[split].features == data[split].features
        ids = out[split]["id"]
        assert len(set(ids)) == len(ids)
        for r in out[split]:
            n = len(r["tokens"])
            for key in ("head_span", "tail_span"):
                s, e = r[key]
                assert (s, e) == (-1, -1) or 0 <= s < e <= n
    parts = d.name.split("+")
    for split in ("male_test", "female_test"):
        if "anonymize" not in parts:
            assert out[split].to_list() == data[split].to_list()
        else:
            assert len(out[split]) == len(data[split])
    grow = 2 if "cda" in parts or "duplicate" in parts else 1
    assert len(out["train"]) == grow * len(data["train"])
    kv = d.transform_vectors(vectors)
    assert kv.index_to_key == vectors.index_to_key
    if "hard_debias" not in parts:
        assert kv is vectors
    else:
        assert not np.allclose(kv.vectors, vectors.vectors)
    json.dumps(d.describe())  # recorded in run configs


def test_combinations_run_in_the_fixed_order():
    assert canonical_name("hard_debias+cda+anonymize") == "anonymize+cda+hard_debias"
    assert canonical_name("all") == "anonymize+cda+hard_debias"
    assert canonical_name("CDA") == "cda" and canonical_name("gender-swap") == "cda"
    d = get_debiaser("cda+anonymize", anonymize={"ner": "gazetteer"}, cda={"swap_names": False})
    assert isinstance(d, Compose) and [p.name for p in d.parts] == ["anonymize", "cda"]
    assert d.parts[0].ner == "gazetteer" and d.parts[1].swap_names is False
    assert d.describe()["order"] == ["anonymize", "cda"]
    assert list(ORDER) == ["anonymize", "cda", "duplicate", "hard_debias"]
    with pytest.raises(ValueError, match="equal-budget control"):
        canonical_name("cda+duplicate")


def test_anonymize_then_cda_swaps_the_labelled_rows(data):
    out = get_debiaser("anonymize+cda", anonymize={"ner": "gazetteer"}).transform_dataset(data)
    train = out["train"].to_list()
    n = len(train) // 2
    assert train[n]["id"].endswith("~cda") and train[n]["tokens"][:3] == ["E1", "married", "E2"]
    assert train[n]["gender"] == 1 - train[0]["gender"]


@pytest.mark.parametrize("bad,match", [
    ("debias", "unknown debiaser 'debias'"),
    ("cda+cda", "names a method twice"),
    ("none+cda", "cannot be combined"),
    ("", "unknown debiaser"),
])
def test_bad_names_are_clear_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        get_debiaser(bad)


def test_unknown_options_are_clear_errors():
    with pytest.raises(ValueError, match="do not name a part"):
        get_debiaser("anonymize+cda", ner="gazetteer")
    with pytest.raises(ValueError, match="bad option for 'cda'"):
        get_debiaser("cda", ner="gazetteer")


def test_options_can_be_written_into_the_name():
    name = "cda[swap_names=false]+anonymize[ner=gazetteer]"
    assert canonical_name(name) == "anonymize[ner=gazetteer]+cda[swap_names=false]"
    d = get_debiaser(name)
    assert d.parts[0].ner == "gazetteer" and d.parts[1].swap_names is False
    assert get_debiaser("anonymize[ner=gazetteer]").ner == "gazetteer"
    with pytest.raises(ValueError, match="bad option for 'cda'"):
        get_debiaser("cda[colour=red]")
    with pytest.raises(ValueError, match="not key=value"):
        get_debiaser("cda[swap_names]")
