"""WEAT of relext.debias.embedding_bias against wefe's (skipped where wefe is not importable).

wefe is not a dependency (the reasons are in relext/debias/embedding_bias.py's docstring). Where it
is importable, the WEAT statistic must agree to float precision and the effect size once wefe's
population standard deviation is converted to our sample one; wefe's p-value is not compared
(it samples words with replacement from an unseeded generator).
"""
from __future__ import annotations

import numpy as np
import pytest

wefe = pytest.importorskip("wefe")


def _kv(words, planted=(), towards=None, seed=0, dim=20):
    """Random float64 vectors; the ``planted`` words moved towards the word ``towards``."""
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(len(words), dim))
    for w in planted:
        vecs[words.index(w)] += 4.0 * vecs[words.index(towards)]
    kv = KeyedVectors(vector_size=dim, dtype=np.float64)
    kv.add_vectors(list(words), vecs)
    return kv


@pytest.mark.parametrize("name", ["career_family", "math_arts", "science_arts"])
def test_weat_agrees_with_wefe(name):
    from wefe.metrics import WEAT
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    from relext.debias.embedding_bias import WEAT_TESTS, weat

    sets = WEAT_TESTS[name]
    words = list(dict.fromkeys(w for k in "XYAB" for w in sets[k]))
    kv = _kv(words, planted=sets["X"], towards=sets["A"][0], seed=1)   # X leans towards A
    ours = weat(kv, **sets, test=name, seed=0)
    query = Query([sets["X"], sets["Y"]], [sets["A"], sets["B"]], ["X", "Y"], ["A", "B"])
    theirs = WEAT().run_query(query, WordEmbeddingModel(kv, "random"), return_effect_size=True)
    n = ours.n_x + ours.n_y
    assert ours.statistic == pytest.approx(theirs["weat"], rel=1e-9, abs=1e-12)
    # ours: sample std (ddof=1); wefe: population std (ddof=0)
    assert ours.effect_size * np.sqrt(n / (n - 1)) == pytest.approx(theirs["effect_size"], rel=1e-9)
    assert ours.effect_size > 0.5   # the planted lean is seen
