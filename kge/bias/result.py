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


FORMAT = "wgb-kge-bias/1"


def load_results(path: str | os.PathLike) -> list[BiasResult]:
    """The results of a bias report written by :func:`save_results` (or a bare list of rows),
    checked field by field first: the format, each spec (relation names, attribute values) and
    each row (an item name, a finite numeric score or null, whole non-negative counts). A bad
    value is a ``ValueError`` naming the file and the field (``results[0].rows[3].score``)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from e
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if isinstance(doc, list):  # a bare list of rows
        return _results_from_rows(doc, path)
    if not isinstance(doc, dict) or "results" not in doc:
        raise ValueError(f"{path}: expected a bias report with a 'results' field or a list of rows")
    if "format" in doc and doc["format"] != FORMAT:
        raise ValueError(f"{path}: field 'format' is {doc['format']!r}; expected {FORMAT!r}")
    if not isinstance(doc["results"], list):
        raise ValueError(f"{path}: field 'results' must be a list, got {type(doc['results']).__name__}")
    out = []
    for i, d in enumerate(doc["results"]):
        where = f"{path}: results[{i}]"
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be an object")
        for key in ("measure", "spec"):
            if key not in d:
                raise ValueError(f"{where}: field {key!r} missing")
        if not isinstance(d["measure"], str) or not d["measure"]:
            raise ValueError(f"{where}.measure must be a non-empty string, got {d['measure']!r}")
        _check_spec(d["spec"], f"{where}.spec")
        rows = d.get("rows", [])
        if not isinstance(rows, list):
            raise ValueError(f"{where}.rows must be a list")
        for j, r in enumerate(rows):
            _check_row(r, f"{where}.rows[{j}]")
        try:
            out.append(BiasResult.from_dict(d))
        except (KeyError, TypeError) as e:
            raise ValueError(f"{where} is malformed: {e}") from e
    return out


def _check_spec(spec: Any, where: str) -> None:
    if not isinstance(spec, dict):
        raise ValueError(f"{where} must be an object, got {type(spec).__name__}")
    unknown = sorted(set(spec) - {"sensitive_relation", "a", "b", "target_relation"})
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    for key in ("sensitive_relation", "target_relation"):
        if key in spec or key == "sensitive_relation":
            v = spec.get(key)
            if not isinstance(v, str) or not v:
                raise ValueError(f"{where}.{key} must be a non-empty string, got {v!r}")
    for key in ("a", "b"):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            raise ValueError(f"{where}.{key} must be a string or null, got {spec[key]!r}")


def _check_row(r: Any, where: str) -> None:
    if not isinstance(r, dict):
        raise ValueError(f"{where} must be an object")
    if not isinstance(r.get("item"), str):
        raise ValueError(f"{where}.item must be a string, got {r.get('item')!r}")
    s = r.get("score")
    if s is not None:
        if isinstance(s, bool) or not isinstance(s, (int, float)):
            raise ValueError(f"{where}.score (item {r['item']!r}) must be a number or null, got {s!r}")
        if not math.isfinite(s):
            raise ValueError(f"{where}.score (item {r['item']!r}) is {s!r}; a bias file holds null for a "
                             "score that is not defined")
    for key in ("count_a", "count_b"):
        c = r.get(key)
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 0):
            raise ValueError(f"{where}.{key} (item {r['item']!r}) must be a whole number >= 0 or null, got {c!r}")
    if "extra" in r and not isinstance(r["extra"], dict):
        raise ValueError(f"{where}.extra must be an object")


def _results_from_rows(rows: list, path: Path) -> list[BiasResult]:
    groups: dict[tuple, list[BiasRow]] = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise ValueError(f"{path}: row {i} must be an object")
        missing = [f for f in ROW_FIELDS if f not in r]
        if missing:
            raise ValueError(f"{path}: row {i} lacks field(s) {missing}")
        _check_row(r, f"{path}: row {i}")
        _check_spec({k: r[k] for k in ("sensitive_relation", "a", "b", "target_relation")}, f"{path}: row {i}")
        key = (r["measure"], r["model"], r["sensitive_relation"], r["a"], r["b"], r["target_relation"])
        groups.setdefault(key, []).append(BiasRow(**{k: r[k] for k in ROW_FIELDS}, extra=r.get("extra", {})))
    return [BiasResult(measure=k[0], model=k[1], spec=BiasSpec(k[2], k[3], k[4], k[5]), rows=v)
            for k, v in groups.items()]
