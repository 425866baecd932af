"""The reports that a benchmark folder's ``report.json`` carries about its rows, counted one row
at a time while the folder is written (:func:`wikigenderbias.export.write_benchmark_stream`):
located mentions per relation, gender and split, and match kinds (:class:`SpanReport`); entities
and sentences per split and gender, the numbers of the dataset card (:class:`CountsReport`).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS

__all__ = ["SpanReport", "CountsReport", "span_report", "counts_report"]


class SpanReport:
    """Counts of located mentions per relation and gender (and per split), and match kinds;
    ``add(split, row)`` one sentence row at a time, ``result()`` the report."""

    def __init__(self) -> None:
        self.per_rel_gender: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(self._empty))
        self.per_split: dict[str, dict[str, int]] = defaultdict(self._empty)
        self.kinds: dict[str, Counter] = {"head": Counter(), "tail": Counter()}

    @staticmethod
    def _empty() -> dict[str, int]:
        return {"rows": 0, "head_located": 0, "tail_located": 0, "both_located": 0}

    def add(self, split: str, r: dict[str, Any]) -> None:
        for bucket in (self.per_rel_gender[r["relation"]][r["gender"]], self.per_split[split]):
            bucket["rows"] += 1
            h = r["head_match"] != "none"
            t = r["tail_match"] != "none"
            bucket["head_located"] += h
            bucket["tail_located"] += t
            bucket["both_located"] += h and t
        self.kinds["head"][r["head_match"]] += 1
        self.kinds["tail"][f'{r["relation"]}:{r["tail_match"]}'] += 1

    def result(self) -> dict[str, Any]:
        def with_rates(b: dict[str, int]) -> dict[str, float | int]:
            out: dict[str, float | int] = dict(b)
            for key in ("head_located", "tail_located", "both_located"):
                out[key.replace("located", "rate")] = round(b[key] / b["rows"], 4) if b["rows"] else 0.0
            return out

        total = self._empty()
        for b in self.per_split.values():
            for k in total:
                total[k] += b[k]
        per_rel_gender = self.per_rel_gender
        return {
            "total": with_rates(total),
            "per_relation_gender": {
                rel: {g: with_rates(per_rel_gender[rel][g]) for g in GENDERS if g in per_rel_gender[rel]}
                for rel in RELATIONS if rel in per_rel_gender
            },
            "per_split": {s: with_rates(self.per_split[s]) for s in SPLITS if s in self.per_split},
            "match_kinds": {side: dict(sorted(c.items())) for side, c in self.kinds.items()},
        }


def span_report(rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Counts of located mentions per relation and gender (and per split), and match kinds."""
    acc = SpanReport()
    for split, rows in rows_by_split.items():
        for r in rows:
            acc.add(split, r)
    return acc.result()


class CountsReport:
    """Entities and sentences per split and gender (the numbers of the dataset card), counted
    one entity (``add_entity``) and one sentence row (``add``) at a time."""

    def __init__(self) -> None:
        self.entities: Counter = Counter()
        self.genders: dict[str, Counter] = {s: Counter() for s in SPLITS}
        self.relations: dict[str, Counter] = {s: Counter() for s in SPLITS}

    def add_entity(self, split: str, e: dict[str, Any]) -> None:
        self.entities[split] += 1
        self.genders[split][e["gender"].lower()] += 1

    def add(self, split: str, row: dict[str, Any]) -> None:
        self.relations[split][row["relation"]] += 1

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for split in SPLITS:
            g, rel = self.genders[split], self.relations[split]
            out[split] = {
                "entities": self.entities[split],
                "entities_by_gender": {k: g.get(k, 0) for k in GENDERS},
                "sentences": sum(rel.values()),
                "sentences_by_relation": {k: rel.get(k, 0) for k in RELATIONS},
            }
        return out


def counts_report(entities_by_split: dict[str, list[dict[str, Any]]],
                  rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Entities and sentences per split and gender (the numbers of the dataset card)."""
    acc = CountsReport()
    for split in SPLITS:
        for e in entities_by_split[split]:
            acc.add_entity(split, e)
        for r in rows_by_split[split]:
            acc.add(split, r)
    return acc.result()
