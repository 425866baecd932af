"""The per-unit counts of a study (:class:`StudyCounts`), read from run directories.

A unit is whatever a study judges one by one and resamples (a person, an article; the code calls
them entities); a class is one of R outcome classes, class 0 the negative one (``labels`` names
them: a relation extractor's relations). A run directory's ``entity_counts.npz`` holds ``entity_ids``, ``gender`` (E,) and ``counts_<rule>``
(E, R, 3); a cross-fitted run (issue #26) adds ``fold`` (E,) int -- the fold whose model predicted
the person -- and ``population`` (E,) str: ``"test"`` for the annotated test persons,
``"distant"`` for the persons of the distantly supervised train/validation splits. Files without
them are one test-set evaluation: no folds, every person of population ``"test"``.

Under cross-fitting one (variant, seed) is K fold runs, each predicting its own persons: their
entities are concatenated and ordered by entity id, so every (variant, seed) of a study aligns.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from wgbstats.metrics import UNIT_COUNTS, read_unit_counts

#: The populations a cross-fitted study reports side by side (never pooled silently).
POPULATIONS = ("test", "distant")

RunDirs = str | Path | Sequence[str | Path]


@dataclass
class StudyCounts:
    """Per-unit counts of a study: ``counts[variant][seed]`` is (E, R, 3) over the shared
    ``entity_ids`` (the units, with their ``gender``: "male" / "female"; optionally each unit's
    ``fold`` (int) and ``population`` ("test" / "distant"; default: all "test")); ``labels`` names
    the R classes (class 0 the negative one; None: "0" .. "R-1"), the suffix of every base
    metric's name (:func:`wgbstats.design.base_metrics`). A package above binds its own labels and
    file reader in a subclass (``relext.evaluation.study_counts.StudyCounts``: the benchmark's relations)."""

    entity_ids: np.ndarray
    gender: np.ndarray
    counts: dict[str, dict[int, np.ndarray]]
    fold: np.ndarray | None = None
    population: np.ndarray | None = None
    labels: tuple[str, ...] | None = None

    #: the file of a run's per-unit counts, and how it is read (a subclass may read it its own way)
    COUNTS_FILE = UNIT_COUNTS

    @staticmethod
    def read_counts(path: str | Path) -> dict[str, np.ndarray]:
        return read_unit_counts(path)

    @property
    def unit_ids(self) -> np.ndarray:
        """The units (``entity_ids`` under their generic name)."""
        return self.entity_ids

    def __post_init__(self) -> None:
        self.entity_ids = np.asarray(self.entity_ids, dtype=str)
        self.gender = np.asarray(self.gender, dtype=str)
        e = len(self.entity_ids)
        if len(self.gender) != e:
            raise ValueError(f"{len(self.gender)} genders for {e} entities")
        bad = sorted(set(self.gender.tolist()) - {"male", "female"})
        if bad:
            raise ValueError(f"gender must be 'male' or 'female', got {bad[:3]}")
        for g in ("male", "female"):
            if not np.any(self.gender == g):
                raise ValueError(f"no test entity of gender {g!r}")
        if self.fold is not None:
            fold = np.asarray(self.fold)
            if fold.shape != (e,):
                raise ValueError(f"fold: shape {fold.shape}, expected ({e},)")
            if fold.size and not np.issubdtype(fold.dtype, np.integer):
                raise ValueError(f"fold: expected integers, got dtype {fold.dtype}")
            self.fold = fold.astype(np.int64)
        if self.population is None:
            self.population = np.full(e, "test")
        self.population = np.asarray(self.population, dtype=str)
        if self.population.shape != (e,):
            raise ValueError(f"population: shape {self.population.shape}, expected ({e},)")
        bad = sorted(set(self.population.tolist()) - set(POPULATIONS))
        if bad:
            raise ValueError(f"population: unknown value(s) {bad[:3]}; expected one of {list(POPULATIONS)}")
        for v, by_seed in self.counts.items():
            for s, c in by_seed.items():
                if c.ndim != 3 or c.shape[0] != e or c.shape[2] != 3:
                    raise ValueError(f"{v} seed {s}: counts of shape {c.shape}, expected ({e}, R, 3)")
        if self.labels is not None:
            self.labels = tuple(str(x) for x in self.labels)
            for v, by_seed in self.counts.items():
                for s, c in by_seed.items():
                    if c.shape[1] != len(self.labels):
                        raise ValueError(f"{v} seed {s}: counts of {c.shape[1]} classes, {len(self.labels)} labels")

    def class_labels(self) -> tuple[str, ...]:
        """The names of the R classes (``labels``, or "0" .. "R-1")."""
        if self.labels is not None:
            return self.labels
        r = next((c.shape[1] for by in self.counts.values() for c in by.values()), 0)
        return tuple(str(j) for j in range(r))

    def seeds(self, variant: str) -> list[int]:
        if variant not in self.counts:
            raise KeyError(f"no runs of variant {variant!r}; have {sorted(self.counts)}")
        return sorted(self.counts[variant])

    def common_seeds(self, variants: Sequence[str]) -> list[int]:
        common = set(self.seeds(variants[0]))
        for v in variants[1:]:
            common &= set(self.seeds(v))
        return sorted(common)

    def populations(self) -> list[str]:
        """The populations present, in :data:`POPULATIONS` order."""
        have = set(self.population.tolist())
        return [p for p in POPULATIONS if p in have]

    def subset(self, population: str) -> "StudyCounts":
        """The persons of one ``population`` ("test" or "distant"), their folds kept."""
        if population not in POPULATIONS:
            raise ValueError(f"unknown population {population!r}; expected one of {list(POPULATIONS)}")
        keep = self.population == population
        if not keep.any():
            raise ValueError(f"no person of population {population!r}; have {self.populations()}")
        return self.take(keep)

    def take(self, keep: np.ndarray) -> "StudyCounts":
        """The persons where the boolean mask ``keep`` is true (both genders must remain)."""
        keep = np.asarray(keep, dtype=bool)
        return type(self)(self.entity_ids[keep], self.gender[keep],
                          {v: {s: c[keep] for s, c in by.items()} for v, by in self.counts.items()},
                          fold=None if self.fold is None else self.fold[keep],
                          population=self.population[keep], labels=self.labels)

    @classmethod
    def from_runs(cls, runs: Mapping[tuple[str, int], RunDirs], *, rule: str = "argmax",
                  labels: Sequence[str] | None = None) -> "StudyCounts":
        """Read ``entity_counts.npz`` (:attr:`COUNTS_FILE`, with :meth:`read_counts`) of each run (keys: (variant, seed)). A value is one run
        directory, or a list/tuple of run directories -- the K fold runs of that variant and seed,
        whose persons must not overlap. Every (variant, seed) must cover the same persons with the
        same genders, folds and populations (an error names the run that does not)."""
        ref: dict[str, np.ndarray] | None = None
        ref_name = ""
        counts: dict[str, dict[int, np.ndarray]] = {}
        for (variant, seed), dirs in runs.items():
            got = _read_group(dirs, rule, cls.COUNTS_FILE, cls.read_counts)
            if ref is None:
                ref, ref_name = got, str(got["_path"])
            else:
                for k in ("entity_ids", "gender", "fold", "population"):
                    a, b = ref.get(k), got.get(k)
                    if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
                        what = ("persons" if k == "entity_ids" else k)
                        raise ValueError(f"{got['_path']}: the run was evaluated on other test entities "
                                         f"than the study's first run {ref_name} (their {what} differ); a "
                                         "design needs one shared set of persons")
            counts.setdefault(variant, {})[int(seed)] = got["counts"]
        if ref is None:
            raise ValueError("no runs with entity counts")
        kw = {} if labels is None else {"labels": tuple(labels)}
        return cls(ref["entity_ids"], ref["gender"], counts, fold=ref.get("fold"), population=ref["population"], **kw)


def _read_group(dirs: RunDirs, rule: str, name: str = UNIT_COUNTS, read=read_unit_counts) -> dict:
    """One (variant, seed): a run directory or the fold runs' directories, concatenated and ordered
    by entity id (a single run keeps its own order); ``read`` reads one counts file ``name``."""
    group = isinstance(dirs, (list, tuple))
    paths = [Path(d) / name for d in (dirs if group else [dirs])]
    if not paths:
        raise ValueError("a (variant, seed) with an empty list of fold runs")
    parts, key = [], f"counts_{rule}"
    for path in paths:
        z = read(path)
        for need in ("entity_ids", "gender", key):
            if need not in z:
                what = f"no counts for the decision rule {rule!r}" if need == key else f"no {need!r} array"
                raise ValueError(f"{path}: {what}")
        e = len(z["entity_ids"])
        if ("fold" in z) != ("population" in z):
            raise ValueError(f"{path}: 'fold' and 'population' come together; the file has only one")
        for k in ("gender", "fold", "population"):
            if k in z and z[k].shape != (e,):
                raise ValueError(f"{path}: {k!r} of shape {z[k].shape}, expected ({e},)")
        if z[key].ndim != 3 or z[key].shape[0] != e:
            raise ValueError(f"{path}: {key!r} of shape {z[key].shape}, expected ({e}, R, 3)")
        parts.append((path, z))
    seen: dict[str, Path] = {}
    for path, z in parts:
        for i in z["entity_ids"].tolist():
            if i in seen:
                raise ValueError(f"{path}: person {i!r} is also predicted by the fold run {seen[i].parent}; "
                                 "the folds of one variant and seed must be person-disjoint")
            seen[i] = path
    has_fold = ["fold" in z for _, z in parts]
    if any(has_fold) and not all(has_fold):
        bad = next(p for (p, _), h in zip(parts, has_fold) if not h)
        raise ValueError(f"{bad}: no fold/population arrays, while other fold runs of this variant and seed have them")
    ids = np.concatenate([z["entity_ids"].astype(str) for _, z in parts])
    order = np.argsort(ids, kind="stable") if group else np.arange(len(ids))
    out = {"_path": str(paths[0].parent) if not group else ", ".join(str(p.parent) for p in paths),
           "entity_ids": ids[order],
           "gender": np.concatenate([z["gender"].astype(str) for _, z in parts])[order],
           "counts": np.concatenate([z[key] for _, z in parts]).astype(np.int64)[order]}
    if all(has_fold):
        out["fold"] = np.concatenate([z["fold"] for _, z in parts]).astype(np.int64)[order]
        out["population"] = np.concatenate([z["population"].astype(str) for _, z in parts])[order]
    else:
        out["population"] = np.full(len(ids), "test")
    return out
