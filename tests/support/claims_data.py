"""Per-entity counts with known per-relation F1 per gender, for the claims' known-answer tests."""
from __future__ import annotations


def f1_study(rng, f1, *, seeds=6, n=60, noise=0.01, folds=0):
    """A StudyCounts whose per-relation F1 per gender is known: ``f1[variant][relation] = (male,
    female)`` (others 0.9 / 0.9); fp = fn, so precision = recall = F1 = tp / N per entity, plus
    seed x entity noise ``noise``."""
    import numpy as np

    from relext.evaluation.study_counts import StudyCounts
    from wikigenderbias.schema import RELATIONS

    big = 1000
    gender = np.array(["male"] * n + ["female"] * n)
    fold = np.concatenate([np.arange(n) % folds, np.arange(n) % folds]) if folds else None
    counts = {}
    for v, rels in f1.items():
        counts[v] = {}
        for s in range(seeds):
            c = np.zeros((2 * n, len(RELATIONS), 3), dtype=np.int64)
            for j, rel in enumerate(RELATIONS):
                if j == 0:
                    continue
                m, f = rels.get(rel, (0.9, 0.9))
                x = np.where(gender == "male", m, f) + rng.normal(0, noise, size=2 * n)
                tp = np.clip(np.rint(x * big), 0, big).astype(np.int64)
                c[:, j, 0], c[:, j, 1], c[:, j, 2] = tp, big - tp, big - tp
            counts[v][s] = c
    return StudyCounts(np.array([f"e{i:03d}" for i in range(2 * n)]), gender, counts, fold=fold)


BASE = {"spouse": (0.80, 0.74), "birthPlace": (0.70, 0.68), "hypernym": (0.60, 0.60),
        "birthDate": (0.99, 0.985)}
