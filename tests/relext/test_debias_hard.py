"""Hard debiasing, direct bias and WEAT on planted synthetic vectors."""
from __future__ import annotations

import numpy as np
import pytest
from support.debias_data import planted_vectors
from gensim.models import KeyedVectors

from relext.debias import wordlists
from relext.debias.embedding_bias import direct_bias, neutral_professions, weat, weat_all
from relext.debias.hard_debias import HardDebias, gender_direction


@pytest.fixture(scope="module")
def planted():
    return planted_vectors(seed=1)


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_gender_direction_recovers_the_planted_one(planted):
    kv, g = planted
    est, info = gender_direction(kv)
    assert abs(_cos(est, g)) > 0.99
    # oriented from masculine to feminine: "she" - "he" points along it
    assert (kv["she"] - kv["he"]) @ est > 0
    assert len(info["pairs_used"]) == 10 and info["explained_variance_ratio"][0] > 0.5


def test_neutralize_and_equalize(planted):
    kv, g = planted
    before = kv.vectors.copy()
    hd = HardDebias()
    out = hd.transform_vectors(kv)
    np.testing.assert_array_equal(kv.vectors, before)  # input untouched
    assert out.index_to_key == kv.index_to_key
    est = hd.last_direction
    specific = {w.lower() for w in wordlists.gender_specific()}
    for w in out.index_to_key:
        v = out[w]
        assert abs(np.linalg.norm(v) - 1) < 1e-5
        if w.lower() not in specific:
            assert abs(v @ est) < 1e-5, w
    # gender-specific words keep a gender component
    assert abs(out["he"] @ est) > 0.3 and abs(out["actress"] @ est) > 0.05
    # equalized pairs are mirror images: equal similarity to every neutral word
    for a, b in [("he", "she"), ("king", "queen"), ("man", "woman")]:
        for w in ("filler0", "filler1", neutral_professions()[0]):
            assert abs(_cos(out[a], out[w]) - _cos(out[b], out[w])) < 1e-5
        assert out[a] @ est < 0 < out[b] @ est  # each stays on its side
    rep = hd.describe()["report"]
    assert rep["direct_bias_before"]["value"] > 0.2
    assert rep["direct_bias_after"]["value"] < 1e-5
    assert rep["equalized_pairs"] > 20


def test_restore_norms_keeps_lengths(planted):
    kv, _ = planted
    out = HardDebias(restore_norms=True).transform_vectors(kv)
    np.testing.assert_allclose(np.linalg.norm(out.vectors, axis=1), np.linalg.norm(kv.vectors, axis=1),
                               rtol=1e-5)


def test_too_few_definitional_pairs_is_a_clear_error():
    kv = KeyedVectors(vector_size=4)
    kv.add_vectors(["he", "she", "table"], np.eye(3, 4, dtype=np.float32))
    with pytest.raises(ValueError, match="only 1 definitional pair"):
        HardDebias().transform_vectors(kv)


def test_direct_bias_skips_gender_specific_professions(planted):
    kv, g = planted
    assert "actress" not in neutral_professions() and "architect" in neutral_professions()
    d = direct_bias(kv, g)
    assert d["n_words"] > 10 and 0 < d["value"] < 1
    assert direct_bias(kv, g, words=["nope"])["n_words"] == 0


def _weat_vectors(sign: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    dim = 16
    axis = np.zeros(dim)
    axis[0] = 1.0
    words = {}
    for w in "x1 x2 x3 x4 x5".split():
        words[w] = rng.normal(size=dim) * 0.3 + sign * axis
    for w in "y1 y2 y3 y4 y5".split():
        words[w] = rng.normal(size=dim) * 0.3 - sign * axis
    for w in "a1 a2 a3".split():
        words[w] = rng.normal(size=dim) * 0.3 + axis
    for w in "b1 b2 b3".split():
        words[w] = rng.normal(size=dim) * 0.3 - axis
    kv = KeyedVectors(vector_size=dim)
    kv.add_vectors(list(words), np.asarray(list(words.values()), dtype=np.float32))
    return kv


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_weat_detects_a_planted_association(sign):
    kv = _weat_vectors(sign)
    sets = dict(X="x1 x2 x3 x4 x5".split(), Y="y1 y2 y3 y4 y5".split(), A="a1 a2 a3".split(),
                B="b1 b2 b3".split())
    r = weat(kv, **sets)
    assert r.exact and r.n_permutations == 252
    if sign > 0:
        assert r.effect_size > 1.5 and r.p_value < 0.01
    else:
        assert r.effect_size < -1.5 and r.p_value > 0.99
    sampled = weat(kv, **sets, max_exact=10, n_permutations=2000, seed=3)
    assert not sampled.exact and abs(sampled.p_value - r.p_value) < 0.02
    assert weat(kv, **sets, max_exact=10, n_permutations=500, seed=3).p_value == \
        weat(kv, **sets, max_exact=10, n_permutations=500, seed=3).p_value


def test_weat_with_missing_words_is_nan():
    kv = _weat_vectors(1.0)
    r = weat(kv, X=["x1", "zz"], Y=["y1", "y2"], A=["a1", "a2"], B=["b1", "b2"])
    assert np.isnan(r.effect_size) and r.missing == ["zz"]


def test_hard_debias_reduces_weat_on_planted_vectors(planted):
    kv, _ = planted
    before = weat_all(kv, n_permutations=200)
    after = weat_all(HardDebias().transform_vectors(kv), n_permutations=200)
    assert set(before) == {"career_family", "math_arts", "science_arts"}
    for name in before:
        assert abs(after[name]["effect_size"]) <= abs(before[name]["effect_size"]) + 1e-6 or \
            np.isnan(before[name]["effect_size"])
