"""Tiny synthetic benchmarks in the canonical ``sentences`` form, for tests and smoke runs only
(every reported number comes from the real benchmark).

Each relation has its own trigger phrase, so a model can learn it in a few epochs; some rows
have unlocated mentions ([-1, -1]) and some sentences are longer than a small max_length.
"""
from __future__ import annotations

import random

import numpy as np

from datasets import Dataset, DatasetDict

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS, sentence_features

TEMPLATES = {
    "spouse": [["{h}", "married", "{t}", "in", "a", "quiet", "ceremony", "."], ["{h}", "and", "husband", "{t}", "wed", "."]],
    "hypernym": [["{h}", "was", "a", "famous", "{t}", "."], ["{h}", "worked", "as", "a", "{t}", "for", "years", "."]],
    "birthDate": [["{h}", "was", "born", "on", "{t}", "."], ["born", "{t}", ",", "{h}", "grew", "up", "."]],
    "birthPlace": [["{h}", "was", "born", "in", "{t}", "city", "."], ["{h}", "grew", "up", "near", "{t}", "town", "."]],
    "NA": [["{h}", "once", "visited", "{t}", "briefly", "."]],
}
FILLER = "the of and to in a with for on at by from after before during".split()


def _sentence(rng: random.Random, rel: str, head: list[str], tail: list[str], long: bool):
    tpl = rng.choice(TEMPLATES[rel])
    tokens, hs, ts = [], [-1, -1], [-1, -1]
    if long:
        tokens += [rng.choice(FILLER) for _ in range(rng.randint(20, 40))]
    for w in tpl:
        if w == "{h}":
            hs = [len(tokens), len(tokens) + len(head)]
            tokens += head
        elif w == "{t}":
            ts = [len(tokens), len(tokens) + len(tail)]
            tokens += tail
        else:
            tokens.append(w)
        if long and w == "{h}":
            tokens += [rng.choice(FILLER) for _ in range(rng.randint(5, 30))]
    tokens += [rng.choice(FILLER) for _ in range(rng.randint(0, 6))]
    return tokens, hs, ts


def split_rows(name: str, n_entities: int, seed: int, genders: tuple[int, ...] = (0, 1)) -> dict[str, list]:
    rng = random.Random(seed)
    cols = {k: [] for k in sentence_features()}
    for e in range(n_entities):
        head = [f"{name.capitalize()}{e}", "Smith"]
        gender = genders[e % len(genders)]
        for rel in ("hypernym", "spouse", "birthDate", "birthPlace", "NA"):
            if rel == "NA" and e % 3:
                continue
            tail = {"spouse": [f"Partner{e}", "Jones"], "hypernym": [f"job{e % 4}"],
                    "birthDate": ["May", str(e + 1), ",", str(1900 + e)], "birthPlace": [f"Town{e % 5}"],
                    "NA": [f"Place{e}"]}[rel]
            for k in range(rng.randint(1, 3)):
                tokens, hs, ts = _sentence(rng, rel, head, tail, long=rng.random() < 0.2)
                unlocated = rng.random() < 0.1
                if unlocated:
                    hs = [-1, -1]
                sid = f"{name}-{e}-{rel}-{k}"
                cols["id"].append(f"{name}-{e:05d}-{rel}-{k:03d}")
                cols["entity_id"].append(f"{name}-{e}")
                cols["sentence_id"].append(sid)
                cols["head"].append(" ".join(head))
                cols["tail"].append(" ".join(tail))
                cols["relation"].append(RELATIONS.index(rel))
                cols["gender"].append(gender)
                cols["text"].append(" ".join(tokens))
                cols["tokens"].append(tokens)
                cols["head_span"].append(hs)
                cols["tail_span"].append(ts)
                cols["head_match"].append("none" if unlocated else "full")
                cols["tail_match"].append("full")
                cols["source"].append(0)
    return cols


def tiny_dataset(n_train: int = 40, n_eval: int = 8, seed: int = 0) -> DatasetDict:
    feats = sentence_features()
    sizes = {"train": (n_train, (0, 1)), "validation": (n_eval, (0, 1)), "male_test": (n_eval, (1,)),
             "female_test": (n_eval, (0,))}
    return DatasetDict({
        s: Dataset.from_dict(split_rows(s, n, seed + i, g), features=feats)
        for i, (s, (n, g)) in enumerate(sizes.items()) if s in SPLITS
    })


def synthetic_predictions(
    split: str, *, n_entities: int = 20, bags_per_entity: int = 3, accuracy: float = 0.8,
    gender: str | None = None, seed: int = 0, label_seed: int | None = None,
) -> list[dict]:
    """Random prediction rows in the predictions-file format, **for unit tests and scaling
    benchmarks only** (never for reported numbers). ``accuracy`` is the chance that a bag's gold
    class gets the top score; ``label_seed`` draws the gold labels apart from ``seed`` (runs of one
    study share their bags' gold)."""
    rng = np.random.default_rng(seed)
    # label_seed: gold labels of their own (the same bags' gold in several runs), scores from seed
    lrng = rng if label_seed is None else np.random.default_rng(label_seed)
    gender = gender or ("female" if split == "female_test" else "male")
    rows = []
    for e in range(n_entities):
        g = gender if gender != "mixed" else GENDERS[e % 2]
        for k in range(bags_per_entity):
            label = int(lrng.integers(0, len(RELATIONS)))
            s = rng.dirichlet(np.ones(len(RELATIONS)))
            if rng.random() < accuracy:
                s[label] += 1.0 + s.max()
            s = s / s.sum()
            rows.append({
                "bag_id": f"{split}-{e:05d}-{k}", "split": split, "entity_id": f"{split}-e{e:05d}",
                "head": f"Person {split} {e}", "tail": f"Tail {e}-{k}", "gender": g,
                "labels": [label], "scores": [float(x) for x in s],
                "sentence_ids": [f"{split}-{e:05d}-{k}-s0"],
            })
    return rows
