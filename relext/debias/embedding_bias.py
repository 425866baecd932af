"""Gender bias of word embeddings: direct bias (Bolukbasi et al. 2016) and WEAT (Caliskan et al. 2017).

* ``direct_bias(kv, g)``: mean ``|cos(w, g)|**c`` over the gender-neutral profession words of
  debiaswe found in the vocabulary (professions listed as gender-specific, such as "actress",
  are left out). After hard debiasing it is zero by construction for every neutralized word, so
  it checks the implementation, not the method; WEAT is the independent check.
* ``weat(kv, X, Y, A, B)``: effect size ``(mean_x s(x) - mean_y s(y)) / std_{w in X+Y} s(w)``
  with ``s(w) = mean_a cos(w, a) - mean_b cos(w, b)`` (sample std), and the one-sided permutation
  p-value ``P[S(X_i, Y_i) >= S(X, Y)]`` over equal-size re-partitions of ``X + Y`` -- exact when
  there are at most ``max_exact`` partitions, else ``n_permutations`` seeded samples.

Words missing from the vocabulary are dropped and reported; a set with fewer than 2 words left
gives ``NaN`` results.

Why not ``wefe`` (1.0.1, the Word Embedding Fairness Evaluation framework): it pins
``numpy<=1.26.4`` and ``scipy<1.13`` (this project runs numpy 2 and scipy 1.17, so installing it
would downgrade both); it has WEAT but no direct bias; its WEAT effect size divides by the
population standard deviation (``ddof=0``; ours by the sample one, ``ddof=1``), and
its permutation p-value draws words *with replacement* from an unseeded generator and has no
exact method (ours: exact over all equal-size partitions up to ``max_exact``, else seeded).
``tests/relext/test_wefe_crosscheck.py`` checks, where ``wefe`` is importable (it imports with
numpy 2 when installed with ``pip install --no-deps wefe``), that the WEAT statistic agrees to
float precision and the effect size after the ``ddof`` conversion; it is skipped elsewhere.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from relext.debias.direction import direct_bias, find_words, gender_direction, neutral_professions, unit_vectors
from relext.debias.hard_debias import HardDebias

__all__ = ["WEAT_TESTS", "WeatResult", "weat", "weat_all", "gendered_professions", "bias_report", "direct_bias",
           "neutral_professions"]

#: Caliskan et al. 2017, WEAT 6-8 (attribute sets: male/female terms; WEAT 6 uses names there).
WEAT_TESTS: dict[str, dict[str, list[str]]] = {
    "career_family": {
        "X": "executive management professional corporation salary office business career".split(),
        "Y": "home parents children family cousins marriage wedding relatives".split(),
        "A": "male man boy brother he him his son".split(),
        "B": "female woman girl sister she her hers daughter".split(),
    },
    "math_arts": {
        "X": "math algebra geometry calculus equations computation numbers addition".split(),
        "Y": "poetry art dance literature novel symphony drama sculpture".split(),
        "A": "male man boy brother he him his son".split(),
        "B": "female woman girl sister she her hers daughter".split(),
    },
    "science_arts": {
        "X": "science technology physics chemistry Einstein NASA experiment astronomy".split(),
        "Y": "poetry art Shakespeare dance literature novel symphony drama".split(),
        "A": "brother father uncle grandfather son he his him".split(),
        "B": "sister mother aunt grandmother daughter she hers her".split(),
    },
}


@dataclass
class WeatResult:
    test: str
    effect_size: float
    p_value: float
    statistic: float
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    missing: list[str]
    exact: bool
    n_permutations: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def weat(kv, X: Sequence[str], Y: Sequence[str], A: Sequence[str], B: Sequence[str], *,
         test: str = "custom", n_permutations: int = 10_000, max_exact: int = 100_000,
         seed: int = 0) -> WeatResult:
    """WEAT effect size and one-sided permutation p-value (see the module docstring)."""
    sets, missing = [], []
    for words in (X, Y, A, B):
        f, m = find_words(kv, words)
        sets.append(f)
        missing.extend(m)
    x, y, a, b = sets
    if min(len(s) for s in sets) < 2:
        return WeatResult(test, float("nan"), float("nan"), float("nan"), len(x), len(y), len(a),
                          len(b), missing, False, 0, seed)
    W = unit_vectors(kv, x + y)
    s = (W @ unit_vectors(kv, a).T).mean(axis=1) - (W @ unit_vectors(kv, b).T).mean(axis=1)
    nx = len(x)
    sx, sy = s[:nx], s[nx:]
    stat = float(sx.sum() - sy.sum())
    effect = float((sx.mean() - sy.mean()) / np.std(s, ddof=1))
    total = float(s.sum())
    n = len(s)
    n_parts = math.comb(n, nx)
    if n_parts <= max_exact:
        exact = True
        stats = np.fromiter((2 * s[list(idx)].sum() - total for idx in itertools.combinations(range(n), nx)),
                            dtype=np.float64, count=n_parts)
    else:
        exact = False
        rng = np.random.default_rng(seed)
        stats = np.empty(n_permutations)
        for i in range(n_permutations):
            idx = rng.permutation(n)[:nx]
            stats[i] = 2 * s[idx].sum() - total
    p = float(np.mean(stats >= stat - 1e-12))
    return WeatResult(test, effect, p, stat, len(x), len(y), len(a), len(b), missing, exact,
                      int(len(stats)), seed)


def weat_all(kv, *, seed: int = 0, n_permutations: int = 10_000) -> dict[str, dict[str, Any]]:
    """Every test of ``WEAT_TESTS`` on ``kv``."""
    return {name: weat(kv, **sets, test=name, seed=seed, n_permutations=n_permutations).to_dict()
            for name, sets in WEAT_TESTS.items()}


def gendered_professions(kv, direction: np.ndarray, k: int = 10) -> dict[str, list[list]]:
    """The ``k`` neutral professions with the largest projection on each side of ``direction``."""
    found, _ = find_words(kv, neutral_professions())
    if not found:
        return {"feminine": [], "masculine": []}
    g = np.asarray(direction, dtype=np.float64)
    cos = unit_vectors(kv, found) @ (g / np.linalg.norm(g))
    order = np.argsort(cos)
    return {"feminine": [[found[i], round(float(cos[i]), 4)] for i in order[::-1][:k]],
            "masculine": [[found[i], round(float(cos[i]), 4)] for i in order[:k]]}


def bias_report(kv, *, seed: int = 0, n_permutations: int = 10_000, debiaser=None) -> dict[str, Any]:
    """Direct bias and WEAT of ``kv`` before and after hard debiasing (``debiaser``: a HardDebias).

    "after" is measured twice for the direct bias: along the direction found in the original
    vectors (zero by construction) and along the direction found again in the debiased vectors.
    """
    hd = debiaser if debiaser is not None else HardDebias()
    g, ginfo = gender_direction(kv)
    after_kv = hd.transform_vectors(kv, seed=seed)
    g2, _ = gender_direction(after_kv)
    return {
        "vocabulary": len(kv.index_to_key),
        "dim": int(kv.vector_size),
        "gender_direction": ginfo,
        "direct_bias_before": direct_bias(kv, g),
        "direct_bias_after": direct_bias(after_kv, g),
        "direct_bias_after_own_direction": direct_bias(after_kv, g2),
        "most_gendered_professions_before": gendered_professions(kv, g),
        "weat_before": weat_all(kv, seed=seed, n_permutations=n_permutations),
        "weat_after": weat_all(after_kv, seed=seed, n_permutations=n_permutations),
        "hard_debias": hd.describe(),
    }
