"""The gender direction of word vectors and the direct bias along it (Bolukbasi et al. 2016).

* ``gender_direction(kv)``: the first principal component of debiaswe's definitional pairs'
  vectors, each pair centred on its own mean, pointing from masculine to feminine;
* ``direct_bias(kv, g)``: mean ``|cos(w, g)|**c`` over the gender-neutral profession words.

Shared by hard debiasing (:mod:`relext.debias.hard_debias`) and the embedding bias report
(:mod:`relext.debias.embedding_bias`), which both import this module.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from relext.debias import wordlists

__all__ = ["unit_rows", "gender_direction", "find_words", "unit_vectors", "neutral_professions", "direct_bias"]


def _lookup(kv, word: str) -> str | None:
    if word in kv.key_to_index:
        return word
    low = word.lower()
    return low if low in kv.key_to_index else None


def unit_rows(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def gender_direction(kv, pairs: Sequence[tuple[str, str]] | None = None, *,
                     vectors: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Unit gender direction (first PC of the centred pair vectors) and what was used.

    ``pairs`` are (feminine, masculine) like debiaswe's definitional pairs; the returned direction
    points from masculine to feminine on average.
    """
    pairs = list(pairs if pairs is not None else wordlists.definitional_pairs())
    vecs = unit_rows(np.asarray(kv.vectors, dtype=np.float64)) if vectors is None else vectors
    rows, used, skipped = [], [], []
    diffs = []
    for a, b in pairs:
        ka, kb = _lookup(kv, a), _lookup(kv, b)
        if ka is None or kb is None:
            skipped.append([a, b])
            continue
        va, vb = vecs[kv.key_to_index[ka]], vecs[kv.key_to_index[kb]]
        center = (va + vb) / 2
        rows.extend([va - center, vb - center])
        diffs.append(va - vb)
        used.append([ka, kb])
    if len(used) < 2:
        raise ValueError(f"hard_debias: only {len(used)} definitional pair(s) are in the vocabulary "
                         f"(missing: {skipped}); need at least 2 to find a gender direction")
    m = np.asarray(rows)
    m = m - m.mean(axis=0)
    _, svals, vt = np.linalg.svd(m, full_matrices=False)
    g = vt[0] / np.linalg.norm(vt[0])
    if float(np.mean(np.asarray(diffs) @ g)) < 0:
        g = -g
    explained = (svals ** 2) / float(np.sum(svals ** 2))
    return g, {"pairs_used": used, "pairs_missing": skipped,
               "explained_variance_ratio": [float(x) for x in explained[:10]]}


def find_words(kv, words: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(found, missing)``: each word as written, else lower-cased, when in the vocabulary."""
    found, missing = [], []
    for w in words:
        if w in kv.key_to_index:
            found.append(w)
        elif w.lower() in kv.key_to_index:
            found.append(w.lower())
        else:
            missing.append(w)
    return found, missing


def unit_vectors(kv, words: Sequence[str]) -> np.ndarray:
    """The words' vectors, each scaled to unit length."""
    m = np.asarray([kv[w] for w in words], dtype=np.float64).reshape(len(words), -1)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return m / n


def neutral_professions() -> list[str]:
    """debiaswe's professions that are not gender-specific words."""
    specific = {w.lower() for w in wordlists.gender_specific()}
    return [w for w in wordlists.professions() if w.lower() not in specific]


def direct_bias(kv, direction: np.ndarray, words: Sequence[str] | None = None, c: float = 1.0) -> dict[str, Any]:
    """Mean |cos(w, g)|^c over ``words`` (default: debiaswe's gender-neutral professions)."""
    words = list(words if words is not None else neutral_professions())
    found, missing = find_words(kv, words)
    g = np.asarray(direction, dtype=np.float64)
    g = g / np.linalg.norm(g)
    if not found:
        return {"value": float("nan"), "c": c, "n_words": 0, "n_missing": len(missing)}
    cos = unit_vectors(kv, found) @ g
    return {"value": float(np.mean(np.abs(cos) ** c)), "c": c, "n_words": len(found),
            "n_missing": len(missing)}
