"""Typed results shared by every bias measure.

A measure returns one :class:`BiasResult`: its rows (flat records with the fields of
``ROW_FIELDS``, ``{measure, model, sensitive_relation, a, b, target_relation, item, score, count_a,
count_b}``, plus an ``extra`` dict for measure-specific numbers), a ``summary`` dict (aggregates, chosen
thresholds, curves for plots) and the provenance needed to reproduce it (config, seed, version).
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from wgbcore.atomicio import atomic_write_json, clean_json
from wgbcore.provenance import package_version

ROW_FIELDS = ("measure", "model", "sensitive_relation", "a", "b", "target_relation", "item", "score",
              "count_a", "count_b")


@dataclass
class BiasSpec:
    """What to measure: attribute values ``a`` vs ``b`` of ``sensitive_relation`` w.r.t. the tails
    of ``target_relation``. ``b=None`` compares ``a`` with the mean of all other values."""

    sensitive_relation: str
    a: str | None = None
    b: str | None = None
    target_relation: str = "profession"

    def b_label(self) -> str:
        return self.b if self.b is not None else "<rest>"


@dataclass
class BiasRow:
    measure: str
    model: str
    sensitive_relation: str
    a: str | None
    b: str | None
    target_relation: str
    item: str
    score: float
    count_a: int | None = None
    count_b: int | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["score"] = clean_json(d["score"])
        d["extra"] = {k: clean_json(v) for k, v in d["extra"].items()}
        return d


@dataclass
class BiasResult:
    measure: str
    model: str
    spec: BiasSpec
    rows: list[BiasRow]
    summary: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    seed: int = 0
    version: str = field(default_factory=package_version)
    seconds: float = 0.0
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))

    def to_dict(self) -> dict:
        return {
            "measure": self.measure, "model": self.model, "spec": asdict(self.spec),
            "rows": [r.to_dict() for r in self.rows], "summary": clean_json(self.summary),
            "config": clean_json(self.config), "seed": self.seed, "version": self.version,
            "seconds": self.seconds, "created": self.created,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "BiasResult":
        return cls(measure=d["measure"], model=d.get("model", ""), spec=BiasSpec(**d["spec"]),
                   rows=[BiasRow(**r) for r in d.get("rows", [])], summary=d.get("summary", {}),
                   config=d.get("config", {}), seed=d.get("seed", 0),
                   version=d.get("version", ""), seconds=d.get("seconds", 0.0),
                   created=d.get("created", ""))

    def top(self, k: int = 20, *, lowest: bool = False, min_count: int = 0,
            towards: str | None = None) -> list[BiasRow]:
        """The ``k`` rows with the highest (``lowest=True``: lowest) score, keeping items observed
        at least ``min_count`` times in total (``count_a + count_b``; Fisher et al. use 20).
        ``towards="a"``: only rows with score > 0, highest first; ``"b"``: only score < 0, lowest
        first (a signed score is a-side minus b-side)."""
        rows = [r for r in self.rows if r.score is not None and not _isnan(r.score)
                and ((r.count_a or 0) + (r.count_b or 0)) >= min_count]
        if towards is not None:
            if towards not in ("a", "b"):
                raise ValueError(f"towards must be 'a' or 'b', got {towards!r}")
            rows = [r for r in rows if (r.score > 0 if towards == "a" else r.score < 0)]
            lowest = towards == "b"
        rows.sort(key=lambda r: r.score, reverse=not lowest)
        return rows[:k]

    def to_df(self, *, extra: bool = True):
        """The rows as a pandas DataFrame: the columns of ``ROW_FIELDS``, then (``extra=True``)
        one column per key of the rows' ``extra`` dicts (missing values are NaN), plus ``seed``."""
        import pandas as pd

        records = []
        for r in self.rows:
            rec = {k: getattr(r, k) for k in ROW_FIELDS}
            if extra:
                rec.update({k: v for k, v in r.extra.items() if k not in rec})
            records.append(rec)
        df = pd.DataFrame.from_records(records, columns=None if records else list(ROW_FIELDS))
        df["seed"] = self.seed
        return df

    def signed(self) -> bool:
        """Do the item scores take both signs (a-side minus b-side) rather than being distances?"""
        return any(r.score is not None and not _isnan(r.score) and r.score < 0 for r in self.rows if r.item != "*")


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


# -- files ---------------------------------------------------------------------------------------
def results_df(results: Iterable[BiasResult], *, extra: bool = True):
    """The rows of several results (e.g. :func:`load_results`) in one pandas DataFrame."""
    import pandas as pd

    frames = [r.to_df(extra=extra) for r in results]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*ROW_FIELDS, "seed"])


def save_results(results: Iterable[BiasResult], path: str | os.PathLike) -> None:
    """Write a bias report: ``{"version", "results": [...], "rows": [...]}`` where ``rows`` is the
    flat list of row records (``ROW_FIELDS`` + ``extra``) over all results (the same rows, repeated
    for easy loading)."""
    results = list(results)
    doc = {"format": "wgb-kge-bias/1", "version": package_version(),
           "results": [r.to_dict() for r in results],
           "rows": [row.to_dict() for r in results for row in r.rows]}
    atomic_write_json(path, doc, indent=1)


def load_results(path: str | os.PathLike) -> list[BiasResult]:
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from e
    if isinstance(doc, list):  # a bare list of rows
        return _results_from_rows(doc, path)
    if not isinstance(doc, dict) or "results" not in doc:
        raise ValueError(f"{path}: expected a bias report with a 'results' field or a list of rows")
    out = []
    for i, d in enumerate(doc["results"]):
        try:
            out.append(BiasResult.from_dict(d))
        except (KeyError, TypeError) as e:
            raise ValueError(f"{path}: results[{i}] is malformed: {e}") from e
    return out


def _results_from_rows(rows: list, path: Path) -> list[BiasResult]:
    groups: dict[tuple, list[BiasRow]] = {}
    for i, r in enumerate(rows):
        missing = [f for f in ROW_FIELDS if f not in r]
        if missing:
            raise ValueError(f"{path}: row {i} lacks field(s) {missing}")
        key = (r["measure"], r["model"], r["sensitive_relation"], r["a"], r["b"], r["target_relation"])
        groups.setdefault(key, []).append(BiasRow(**{k: r[k] for k in ROW_FIELDS}, extra=r.get("extra", {})))
    return [BiasResult(measure=k[0], model=k[1], spec=BiasSpec(k[2], k[3], k[4], k[5]), rows=v)
            for k, v in groups.items()]
