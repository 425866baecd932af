"""Splitting entity records by head entity: seeded, stratified by gender, test split by gender.

No head entity appears in two splits (the paper's setup); the test heads are divided into
``male_test`` and ``female_test``. By default the test split holds as many female as male heads
(``balance_test``), as the released benchmark does (268 female / 255 male test heads), while
train and validation keep the gender ratio of the data.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from wikigenderbias.schema import GENDERS, SPLITS

__all__ = ["SplitConfig", "split_entities"]


@dataclass(frozen=True)
class SplitConfig:
    """Split sizes as fractions of the head entities (values >= 1 are absolute head counts)."""

    train: float = 0.8
    validation: float = 0.1
    test: float = 0.1
    seed: int = 0
    balance_test: bool = True

    def __post_init__(self) -> None:
        for name in ("train", "validation", "test"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"split size {name}={v} must be >= 0")
        fracs = [v for v in (self.train, self.validation, self.test) if v < 1]
        if len(fracs) == 3 and sum(fracs) > 1 + 1e-9:
            raise ValueError(f"split fractions sum to {sum(fracs):.3f} > 1")

    def to_dict(self) -> dict:
        return asdict(self)


def _count(size: float, n: int) -> int:
    return min(n, int(size)) if size >= 1 else int(round(size * n))


def split_entities(entities: list[dict], config: SplitConfig = SplitConfig()) -> dict[str, list[dict]]:
    """``{"train", "validation", "male_test", "female_test"} -> entity records``, each sorted by
    ``entity_id``. The same entities and seed give the same split, whatever their input order."""
    by_gender: dict[str, list[dict]] = {g: [] for g in GENDERS}
    seen: set[str] = set()
    for e in entities:
        if e["entity_id"] in seen:
            raise ValueError(f"head entity {e['entity_id']!r} occurs twice; heads must be unique")
        seen.add(e["entity_id"])
        g = e["gender"]
        if g not in by_gender:
            raise ValueError(f"entity {e['entity_id']!r}: unknown gender {g!r}; expected one of {GENDERS}")
        by_gender[g].append(e)
    n_total = len(entities)
    n_test = _count(config.test, n_total)
    n_val = _count(config.validation, n_total)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    rng = random.Random(config.seed)
    test_quota: dict[str, int] = {}
    if config.balance_test:
        half = n_test // 2
        small, big = sorted(GENDERS, key=lambda g: len(by_gender[g]))  # two names even when as many
        test_quota[small] = min(half, len(by_gender[small]))
        test_quota[big] = min(n_test - test_quota[small], len(by_gender[big]))
    for g in GENDERS:
        group = sorted(by_gender[g], key=lambda e: e["entity_id"])
        rng.shuffle(group)
        share = len(group) / n_total if n_total else 0.0
        k_test = test_quota[g] if config.balance_test else int(round(n_test * share))
        k_val = int(round(n_val * share))
        k_test = min(k_test, len(group))
        k_val = min(k_val, len(group) - k_test)
        test, val, rest = group[:k_test], group[k_test:k_test + k_val], group[k_test + k_val:]
        if config.train < 1 and config.train + config.validation + config.test < 1 - 1e-9:
            rest = rest[: int(round(config.train * len(group)))]
        elif config.train >= 1:
            rest = rest[: int(round(config.train * share))]
        out[f"{g}_test"] = test
        out["validation"] += val
        out["train"] += rest
    for s in out:
        out[s].sort(key=lambda e: e["entity_id"])
    return out
