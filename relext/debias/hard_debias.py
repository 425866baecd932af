"""Hard debiasing of word embeddings (Bolukbasi et al. 2016), on gensim ``KeyedVectors``.

Follows debiaswe's ``debias()``:

1. all vectors are normalised to unit length;
2. the gender direction is the first principal component of the definitional pairs' vectors,
   each pair centred on its own mean (debiaswe's ``doPCA``); its sign is fixed so that it points
   from the masculine to the feminine word of the pairs (only for reporting: the method itself is
   sign-free);
3. neutralize: every word not in the gender-specific list loses its component along the
   direction (a word counts as gender-specific when it, or its lower-case form, is listed);
4. equalize: for each equalize pair, in lower, Title and UPPER case, with both words in the
   vocabulary, both words become ``mu_perp +- sqrt(1 - |mu_perp|^2) g`` (``mu_perp``: the pair's
   mean without its gender component), keeping which of the two was on which side;
5. vectors are normalised again.

The result is unit-length vectors (as debiaswe returns); ``restore_norms=True`` scales every
vector back to its original length instead. Pairs are looked up as written, then lower-cased;
pairs with a word missing from the vocabulary are skipped and counted in ``describe()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from relext.debias import wordlists
from relext.debias.base import package_version
from relext.debias.direction import direct_bias, gender_direction, unit_rows

__all__ = ["HardDebias", "gender_direction", "unit_rows", "is_gender_specific"]


def is_gender_specific(word: str, specific: frozenset[str], specific_lower: frozenset[str]) -> bool:
    return word in specific or word.lower() in specific_lower


@dataclass
class HardDebias:
    """Neutralize + equalize (Bolukbasi et al.); ``transform_dataset`` is the identity."""

    definitional: Sequence[tuple[str, str]] | None = None
    equalize: Sequence[tuple[str, str]] | None = None
    gender_specific: frozenset[str] | None = None
    restore_norms: bool = False
    #: keep the debiased word embeddings fixed while the extractor trains (otherwise training
    #: moves them and the gender direction can return); read by :func:`relext.training.train.train`
    freeze: bool = False
    name: str = field(default="hard_debias", init=False)

    def __post_init__(self) -> None:
        self._report: dict[str, Any] = {}

    def transform_dataset(self, dsdict, *, seed: int = 0):
        return dsdict

    def transform_vectors(self, kv, *, seed: int = 0):
        """A new ``KeyedVectors`` with debiased vectors (the input is not modified)."""
        from gensim.models import KeyedVectors

        specific = frozenset(self.gender_specific if self.gender_specific is not None
                             else wordlists.gender_specific())
        specific_lower = frozenset(w.lower() for w in specific)
        equalize = list(self.equalize if self.equalize is not None else wordlists.equalize_pairs())
        orig = np.asarray(kv.vectors, dtype=np.float64)
        orig_norms = np.linalg.norm(orig, axis=1)
        vecs = unit_rows(orig)
        g, ginfo = gender_direction(kv, self.definitional, vectors=vecs)
        before = direct_bias(kv, g)
        keys = list(kv.index_to_key)
        neutral = np.array([not is_gender_specific(w, specific, specific_lower) for w in keys])
        proj = vecs @ g
        vecs[neutral] -= np.outer(proj[neutral], g)
        vecs = unit_rows(vecs)
        candidates = []
        for a, b in equalize:
            for f in (str.lower, str.title, str.upper):
                pair = (f(a), f(b))
                if pair not in candidates:
                    candidates.append(pair)
        n_eq = 0
        for a, b in candidates:
            if a in kv.key_to_index and b in kv.key_to_index:
                ia, ib = kv.key_to_index[a], kv.key_to_index[b]
                mu = (vecs[ia] + vecs[ib]) / 2
                y = mu - (mu @ g) * g
                z = float(np.sqrt(max(0.0, 1.0 - float(y @ y))))
                if (vecs[ia] - vecs[ib]) @ g < 0:
                    z = -z
                vecs[ia] = z * g + y
                vecs[ib] = -z * g + y
                n_eq += 1
        vecs = unit_rows(vecs)
        if self.restore_norms:
            vecs = vecs * orig_norms[:, None]
        out = KeyedVectors(vector_size=kv.vector_size, dtype=kv.vectors.dtype)
        out.add_vectors(keys, vecs.astype(kv.vectors.dtype))
        after = direct_bias(out, g)
        self._report = {
            "gender_direction": ginfo,
            "neutralized_words": int(neutral.sum()),
            "gender_specific_in_vocab": int((~neutral).sum()),
            "equalized_pairs": n_eq,
            "direct_bias_before": before,
            "direct_bias_after": after,
        }
        self.last_direction = g
        return out

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "definitional": "debiaswe definitional_pairs.json" if self.definitional is None else "custom",
            "equalize": "debiaswe equalize_pairs.json" if self.equalize is None else "custom",
            "gender_specific": "debiaswe gender_specific_full.json" if self.gender_specific is None else "custom",
            "restore_norms": self.restore_norms,
            "freeze": self.freeze,
            "wgb_version": package_version(),
        }
        if self._report:
            d["report"] = self._report
        return d
