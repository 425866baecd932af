"""Tiny synthetic benchmark and word vectors (for tests and examples; never real data)."""
from __future__ import annotations

import numpy as np
from datasets import Dataset, DatasetDict

from wikigenderbias.schema import RELATIONS, sentence_features


def row(split, ent, k, head, tail, relation, gender, text, head_span, tail_span):
    tokens = text.split()
    return {
        "id": f"{split}-{ent}-{relation}-{k:03d}",
        "entity_id": f"{split}-{ent}",
        "sentence_id": f"{split}-{ent}-s{k:03d}",
        "head": head,
        "tail": tail,
        "relation": RELATIONS.index(relation),
        "gender": ("female", "male").index(gender),
        "text": text,
        "tokens": tokens,
        "head_span": list(head_span),
        "tail_span": list(tail_span),
        "head_match": "full" if head_span[0] >= 0 else "none",
        "tail_match": "full" if tail_span[0] >= 0 else "none",
        "source": 0,
    }


def article(split, ent, head, gender, spouse):
    """Four rows of one article; ``spouse`` is a two-word name."""
    h0, h1 = head.split()
    s0, s1 = spouse.split()
    pos = "his" if gender == "male" else "her"
    subj = "He" if gender == "male" else "She"
    return [
        row(split, ent, 0, head, spouse, "spouse", gender,
            f"{head} married {spouse} in 1950 , and {pos} wife was happy .", (0, 2), (3, 5)),
        row(split, ent, 1, head, "politician", "hypernym", gender,
            f"{h1} , the son of Bob {h1} , was a politician from Georgia .", (0, 1), (10, 11)),
        row(split, ent, 2, head, "Georgia", "birthPlace", gender,
            f"{subj} was born in Georgia , where {pos} father met {s0} .", (-1, -1), (4, 5)),
        row(split, ent, 3, head, "", "NA", gender,
            f"In 1960 {h0} {h1} told {pos} friend Alice Brown about it .", (2, 4), (-1, -1)),
    ]


def tiny_dsdict() -> DatasetDict:
    feats = sentence_features()
    splits = {
        "train": article("train", "e1", "John Smith", "male", "Mary Jones")
        + article("train", "e2", "Jane Doe", "female", "Paul Roe"),
        "validation": article("validation", "e3", "Peter Brown", "male", "Anna White"),
        "male_test": article("male_test", "e4", "Carl Green", "male", "Lucy Black"),
        "female_test": article("female_test", "e5", "Emma Stone", "female", "Frank Gray"),
    }
    return DatasetDict({k: Dataset.from_list(v, features=feats) for k, v in splits.items()})


def planted_vectors(seed: int = 0, dim: int = 24, bias: float = 0.6):
    """KeyedVectors with a planted gender direction (returned too).

    Definitional/equalize pairs differ along ``g``; professions lean along ``g`` by ``bias`` with
    random signs; other words are random.
    """
    from gensim.models import KeyedVectors

    from relext.debias import wordlists
    from relext.debias.embedding_bias import WEAT_TESTS

    rng = np.random.default_rng(seed)
    g = rng.normal(size=dim)
    g /= np.linalg.norm(g)
    vecs: dict[str, np.ndarray] = {}

    def rand():
        v = rng.normal(size=dim)
        v -= (v @ g) * g
        return v / np.linalg.norm(v)

    pairs = list(wordlists.definitional_pairs()) + [(b, a) for a, b in wordlists.equalize_pairs()]
    for f, m in pairs:
        for a, b in ((f, m), (f.lower(), m.lower())):
            if a in vecs or b in vecs:
                continue
            base = rand()
            vecs[a] = base + 0.8 * g
            vecs[b] = base - 0.8 * g
    for w in list(wordlists.professions())[:80]:
        if w not in vecs:
            vecs[w] = rand() + bias * rng.choice([-1.0, 1.0]) * g
    for sets in WEAT_TESTS.values():
        for w in sum(sets.values(), []):
            if w not in vecs and w.lower() not in vecs:
                vecs[w] = rand()
    for i in range(50):
        vecs[f"filler{i}"] = rand() + 0.3 * rng.normal() * g
    kv = KeyedVectors(vector_size=dim)
    kv.add_vectors(list(vecs), np.asarray(list(vecs.values()), dtype=np.float32))
    return kv, g


def scrambled_labels(ds: DatasetDict, splits, seed: int = 0) -> DatasetDict:
    """``ds`` with every gold relation of ``splits`` changed to another class (the label-scramble
    check of "no information from labels at test time")."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = {}
    for split, d in ds.items():
        if split in splits:
            k = len(d.features["relation"].names)
            new = [int((r + 1 + rng.integers(0, k - 1)) % k) for r in d["relation"]]  # every label changes
            d = d.remove_columns("relation").add_column("relation", new).cast(d.features)
        out[split] = d
    return DatasetDict(out)
