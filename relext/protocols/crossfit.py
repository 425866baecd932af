"""Person-level cross-fitting: every person of the benchmark held out once, predicted by a model
that never saw them (the *crossfit* protocol; the *test* protocol is the release's own split).

**Folds.** All persons of the release (train, validation and both test splits; 5,169 in the
embedded release) are dealt into ``K`` person-disjoint folds, deterministically from
``fold_seed``, stratified by gender and by the split the person comes from (so the 523
annotated test persons spread evenly over the folds). A person's *population* is ``"test"`` when
they come from ``male_test`` / ``female_test`` (sentences checked by crowd workers in the paper)
and ``"distant"`` otherwise (distant supervision only); reports keep the two apart.

**Fold k's view** of the dataset (:func:`fold_view`) is an ordinary benchmark ``DatasetDict``:

- ``train``: the persons of the other folds, less a person-disjoint validation slice;
- ``validation``: that slice (``val_fraction`` of the other folds' persons, stratified like the
  folds), used for model selection and early stopping only;
- ``male_test`` / ``female_test``: every person of fold k, by gender, whatever split they came
  from.

Everything downstream (debiasing transforms, Word2Vec, training, prediction, evaluation) runs on
the view as it runs on the release: a transform that changes only the training splits (CDA,
duplicate) changes only the fold's training part; one that reads test text (anonymization) reads
the held-out persons' text and given entities, never their labels (tested by scrambling them).

A run is a fold run when its config sets ``folds`` and ``fold`` (:class:`relext.training.train.ExtractorConfig`);
``entity_counts.npz`` of a fold run carries each held-out person's ``fold`` and ``population``,
and the design layer joins the K fold runs of one seed into one prediction of every person.

**The whole plan first.** Every command that runs fold runs (``re train``, ``re grid``,
``re debias-grid``, ``wgb run`` under ``--protocol crossfit``) checks every fold of the plan with
:func:`check_plan` (through :func:`check_fold_plans`) before it writes a folder or queues a run: a
plan with fewer women or men than folds, or a fold without training or validation persons, is one
line naming ``folds`` and the count, never a fold trained in full before the next one fails.
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from wikigenderbias.schema import SPLITS

PROTOCOLS = ("test", "crossfit")
DEFAULT_FOLDS = 5
TEST_SPLITS = ("male_test", "female_test")
POPULATIONS = ("test", "distant")


@dataclass(frozen=True)
class FoldSpec:
    """How persons are dealt into folds."""

    folds: int = DEFAULT_FOLDS
    fold_seed: int = 0
    val_fraction: float = 0.1

    def __post_init__(self) -> None:
        if not isinstance(self.folds, int) or self.folds < 2:
            raise ValueError(f"folds must be an integer >= 2, got {self.folds!r}")
        if not 0 < self.val_fraction < 0.5:
            raise ValueError(f"fold validation fraction must be in (0, 0.5), got {self.val_fraction!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Persons:
    """Every person of a dataset: ``entity_id``, ``gender`` ("male"/"female"), ``split`` (where the
    person's rows are), ``population`` ("test"/"distant"), sorted by entity id."""

    entity_id: np.ndarray
    gender: np.ndarray
    split: np.ndarray
    population: np.ndarray

    def __len__(self) -> int:
        return len(self.entity_id)


def _gender_names(ds) -> list[str]:
    feat = ds.features["gender"]
    return list(getattr(feat, "names", ["female", "male"]))


def persons(dataset) -> Persons:
    """The persons of the four splits of ``dataset``; a person in two splits is an error."""
    where = _person_splits(dataset, SPLITS, "cross-fitting needs each person in one split")
    ids = np.array(sorted(where), dtype=str)
    gender = np.array([where[e][0] for e in ids], dtype=str)
    split = np.array([where[e][1] for e in ids], dtype=str)
    population = np.where(np.isin(split, TEST_SPLITS), "test", "distant").astype(str)
    return Persons(ids, gender, split, population)


_UNSEEN_CHECKED: set[tuple] = set()


def check_test_persons_unseen(dataset) -> None:
    """Under the test protocol: no person of ``male_test``/``female_test`` is also a person of
    ``train`` or ``validation`` (a judged person the model trained on), by the check that
    cross-fitting makes of every split (:func:`persons`); a ``ValueError`` naming the person and
    both splits. Once per dataset in a process."""
    key = _dataset_key(dataset)
    if key in _UNSEEN_CHECKED:
        return
    _person_splits(dataset, SPLITS, "under the test protocol a test person must not be a training person",
                   allow_empty=True)     # e.g. `re extract --text`: sentences without persons
    _UNSEEN_CHECKED.add(key)


def _person_splits(dataset, splits, why: str, *, allow_empty: bool = False) -> dict[str, tuple[str, str]]:
    """entity id -> (gender, split) over ``splits`` of ``dataset``; a person with two genders, or
    in two splits (``why`` says why that matters), is a ``ValueError`` naming them."""
    where: dict[str, tuple[str, str]] = {}
    for split in splits:
        if split not in dataset:
            continue
        ds = dataset[split]
        names = _gender_names(ds)
        for eid, g in zip(ds["entity_id"], ds["gender"]):
            gname = names[g] if isinstance(g, (int, np.integer)) else str(g)
            prev = where.get(eid)
            if prev is None:
                where[eid] = (gname, split)
            elif prev[0] != gname:
                raise ValueError(f"person {eid!r} has two genders ({prev[0]}, {gname}) in split {split!r}")
            elif prev[1] != split:
                raise ValueError(f"person {eid!r} is in two splits ({prev[1]}, {split}); {why}")
    if not where and not allow_empty:
        raise ValueError("the dataset has no persons")
    return where


def _strata(p: Persons) -> list[np.ndarray]:
    """Index arrays of the (gender, source split) strata, in a fixed order."""
    out = []
    for g in ("female", "male"):
        for s in SPLITS:
            idx = np.flatnonzero((p.gender == g) & (p.split == s))
            if idx.size:
                out.append(idx)
    return out


def assign_folds(p: Persons, spec: FoldSpec) -> np.ndarray:
    """(P,) fold of every person: within each (gender, split) stratum the persons (by entity id)
    are shuffled with ``fold_seed`` and dealt round-robin, each stratum starting where the last one
    stopped, so folds differ in size by at most one person overall and per stratum."""
    fold = np.full(len(p), -1, dtype=np.int64)
    start = 0
    for i, idx in enumerate(_strata(p)):
        rng = np.random.default_rng([spec.fold_seed, 17, i])
        order = idx[rng.permutation(idx.size)]
        fold[order] = (start + np.arange(order.size)) % spec.folds
        start = (start + order.size) % spec.folds
    return fold


def validation_mask(p: Persons, fold: np.ndarray, k: int, spec: FoldSpec) -> np.ndarray:
    """(P,) True for the persons of fold ``k``'s validation slice: ``val_fraction`` of each
    stratum's persons outside fold k (at least one where the stratum has two or more)."""
    mask = np.zeros(len(p), dtype=bool)
    for i, idx in enumerate(_strata(p)):
        pool = idx[fold[idx] != k]
        if pool.size < 2:
            continue
        rng = np.random.default_rng([spec.fold_seed, 29, k, i])
        n = max(1, int(round(spec.val_fraction * pool.size)))
        mask[pool[rng.permutation(pool.size)[:n]]] = True
    return mask


@dataclass
class FoldPlan:
    """The folds of one dataset under one :class:`FoldSpec`."""

    spec: FoldSpec
    persons: Persons
    fold: np.ndarray

    @classmethod
    def of(cls, dataset, spec: FoldSpec) -> "FoldPlan":
        p = persons(dataset)
        if len(p) < spec.folds:
            raise ValueError(f"{len(p)} persons cannot fill {spec.folds} folds")
        return cls(spec, p, assign_folds(p, spec))

    def role(self, k: int) -> np.ndarray:
        """(P,) "test" | "validation" | "train" of every person in fold ``k``'s view."""
        self._check(k)
        role = np.full(len(self.persons), "train", dtype=object)
        role[validation_mask(self.persons, self.fold, k, self.spec)] = "validation"
        role[self.fold == k] = "test"
        return role.astype(str)

    def _check(self, k: int) -> None:
        if not isinstance(k, (int, np.integer)) or not 0 <= k < self.spec.folds:
            raise ValueError(f"fold must be in 0..{self.spec.folds - 1}, got {k!r}")

    def summary(self) -> dict[str, Any]:
        """Persons per fold by gender and population (for reports)."""
        out = []
        for k in range(self.spec.folds):
            m = self.fold == k
            out.append({"fold": k, "persons": int(m.sum()),
                        **{f"{g}_{pop}": int((m & (self.persons.gender == g) & (self.persons.population == pop)).sum())
                           for g in ("male", "female") for pop in POPULATIONS}})
        return {"spec": self.spec.to_dict(), "persons": len(self.persons), "folds": out,
                "fingerprint": self.fingerprint()}

    def fingerprint(self) -> str:
        """sha256 of the (entity id, fold) assignment: two plans with the same fingerprint hold
        out the same persons in the same folds."""
        h = hashlib.sha256()
        for e, f in zip(self.persons.entity_id.tolist(), self.fold.tolist()):
            h.update(f"{e}\t{f}\n".encode())
        h.update(f"val={self.spec.val_fraction}".encode())
        return h.hexdigest()

    def annotations(self, entity_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``fold`` (E,) int16 and ``population`` (E,) str of the given persons (an unknown person
        is an error naming it)."""
        ids = np.asarray(entity_ids, dtype=str)
        pos = np.searchsorted(self.persons.entity_id, ids)
        pos = np.clip(pos, 0, len(self.persons) - 1)
        bad = self.persons.entity_id[pos] != ids
        if bad.any():
            raise ValueError(f"person {ids[bad][0]!r} is not in the cross-fitting plan's dataset")
        return {"fold": self.fold[pos].astype(np.int16), "population": self.persons.population[pos].astype(str)}


_PLANS: dict[tuple, FoldPlan] = {}
_VIEWS: dict[tuple, Any] = {}


def _dataset_key(dataset) -> tuple:
    """A cheap identity of a DatasetDict for the in-process memo (the datasets' fingerprints)."""
    return tuple((s, getattr(dataset[s], "_fingerprint", id(dataset[s])), len(dataset[s]))
                 for s in SPLITS if s in dataset)


def plan_for(dataset, spec: FoldSpec) -> FoldPlan:
    key = (_dataset_key(dataset), spec)
    if key not in _PLANS:
        _PLANS[key] = FoldPlan.of(dataset, spec)
    return _PLANS[key]


def fold_view(dataset, k: int, spec: FoldSpec):
    """Fold ``k``'s view of ``dataset`` (module docstring): a DatasetDict with the four splits."""
    from datasets import DatasetDict, concatenate_datasets

    plan = plan_for(dataset, spec)
    plan._check(k)
    key = (_dataset_key(dataset), spec, int(k))
    if key in _VIEWS:
        return _VIEWS[key]
    role = dict(zip(plan.persons.entity_id.tolist(), plan.role(k).tolist()))
    parts: dict[str, list] = {"train": [], "validation": [], "male_test": [], "female_test": []}
    for split in SPLITS:
        if split not in dataset:
            continue
        ds = dataset[split]
        names = _gender_names(ds)
        r = np.array([role[e] for e in ds["entity_id"]], dtype=object)
        g = np.array([names[x] if isinstance(x, (int, np.integer)) else str(x) for x in ds["gender"]], dtype=object)
        for target, mask in (("train", r == "train"), ("validation", r == "validation"),
                             ("male_test", (r == "test") & (g == "male")),
                             ("female_test", (r == "test") & (g == "female"))):
            idx = np.flatnonzero(mask)
            if idx.size:
                parts[target].append(ds.select(idx.tolist()))
    out = {}
    for target, pieces in parts.items():
        if not pieces:
            raise ValueError(f"fold {k}: no rows for split {target!r}")
        out[target] = pieces[0] if len(pieces) == 1 else concatenate_datasets(pieces)
    view = DatasetDict(out)
    _VIEWS.clear()           # keep one view in memory: a process trains one fold at a time
    _VIEWS[key] = view
    return view


# --------------------------------------------------------------------------------------------
# Configs and run directories
# --------------------------------------------------------------------------------------------
#: ExtractorConfig fields of the protocol (absent from a test-protocol run's identity).
CONFIG_FIELDS = ("folds", "fold", "fold_seed", "fold_val_fraction")


def spec_of(config: Mapping[str, Any] | Any) -> FoldSpec | None:
    """The fold spec of a run config (an ExtractorConfig or its JSON), None for the test protocol."""
    get = config.get if isinstance(config, Mapping) else (lambda k, d=None: getattr(config, k, d))
    if get("folds") is None:
        return None
    return FoldSpec(folds=int(get("folds")), fold_seed=int(get("fold_seed", 0) or 0),
                    val_fraction=float(get("fold_val_fraction", 0.1) or 0.1))


def check_config(config) -> None:
    """``folds`` and ``fold`` are set together, and ``fold`` is in range."""
    folds, fold = getattr(config, "folds", None), getattr(config, "fold", None)
    if (folds is None) != (fold is None):
        raise ValueError("cross-fitting needs both 'folds' and 'fold' (or neither: the test protocol)")
    if folds is not None:
        spec_of(config)
        if not isinstance(fold, int) or not 0 <= fold < folds:
            raise ValueError(f"fold must be in 0..{folds - 1}, got {fold!r}")


def view_for(config, dataset):
    """The dataset a run trains and predicts on: ``dataset`` itself (test protocol) or the run's
    fold view (crossfit)."""
    spec = spec_of(config)
    if spec is None:
        check_test_persons_unseen(dataset)
        return dataset
    fold = config["fold"] if isinstance(config, Mapping) else config.fold
    return fold_view(dataset, int(fold), spec)


def entity_annotations(config: Mapping[str, Any], entity_ids: Sequence[str], dataset=None) -> dict[str, np.ndarray]:
    """``fold`` and ``population`` arrays for a fold run's per-entity counts ({} for the test
    protocol). ``dataset``: the run's *original* dataset (default: its ``dataset`` path or the
    embedded release)."""
    spec = spec_of(config)
    if spec is None:
        return {}
    if dataset is None:
        from relext.protocols.data import load_dataset_dict

        dataset = load_dataset_dict(config.get("dataset"))
    plan = plan_for(dataset, spec)
    ann = plan.annotations(entity_ids)
    k = int(config["fold"])
    wrong = ann["fold"] != k
    if wrong.any():
        raise ValueError(f"fold run {k}: person {np.asarray(entity_ids)[wrong][0]!r} belongs to fold "
                         f"{int(ann['fold'][wrong][0])}; the predictions are not this fold's")
    return ann


def fold_suffix(fold: int | None) -> str:
    return "" if fold is None else f"-fold{fold}"


def parse_protocol(protocol: str, folds: int | None) -> int | None:
    """The number of folds a CLI's ``--protocol/--folds`` asks for (None: test protocol)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {list(PROTOCOLS)}")
    if protocol == "test":
        if folds not in (None, DEFAULT_FOLDS):
            raise ValueError("--folds applies to --protocol crossfit only")
        return None
    folds = DEFAULT_FOLDS if folds is None else int(folds)
    FoldSpec(folds=folds)
    return folds


# --------------------------------------------------------------------------------------------
# The whole plan, checked before any work
# --------------------------------------------------------------------------------------------
_NOUNS = {"female": ("woman", "women"), "male": ("man", "men")}
_CHECKED: set[tuple] = set()
_LOADERS_CHECKED: list[tuple] = []     # (loader, spec): kept alive, so identity is never reused
_PATHS_CHECKED: set[tuple] = set()     # (benchmark path, spec) checked in this process


def check_plan(dataset, spec: FoldSpec) -> FoldPlan:
    """The fold plan of ``dataset`` under ``spec``, or a one-line ``ValueError`` naming the field
    and value when any fold of it could not train or be judged: fewer women (or men) than folds
    (some fold's ``female_test``/``male_test`` would be empty; persons are dealt round-robin within
    each gender, so ``folds <= women`` and ``folds <= men`` is exactly what fills them), or a fold
    with no training or validation person. Every command that runs fold runs calls it (through
    :func:`check_fold_plans`) before any run folder is written or any run queued."""
    key = (_dataset_key(dataset), spec)
    if key in _CHECKED:
        return plan_for(dataset, spec)
    p = persons(dataset)
    k_ = spec.folds
    for g in ("female", "male"):
        n = int((p.gender == g).sum())
        if n < k_:
            one, many = _NOUNS[g]
            raise ValueError(f"folds={k_}: the benchmark has {n} {one if n == 1 else many} of {len(p)} persons; "
                             f"every fold's {g}_test needs at least one, so folds must be <= {n}")
    plan = plan_for(dataset, spec)
    for k in range(k_):
        role = plan.role(k)
        for need in ("train", "validation"):
            if not (role == need).any():
                raise ValueError(f"folds={k_}: fold {k} would have no {need} person ({len(p)} persons in all); "
                                 "use fewer folds or a larger benchmark")
    _CHECKED.add(key)
    return plan


def check_fold_plans(configs, data=None) -> None:
    """:func:`check_plan` for every distinct (dataset, fold spec) of ``configs`` (run configs, as
    objects or JSON; test-protocol ones are skipped). ``data``: the DatasetDict the runs train on,
    or a function returning it (a worker's loader), or None: each config's ``dataset`` path (None:
    the embedded release)."""
    seen: dict[tuple, FoldSpec] = {}
    for c in configs:
        spec = spec_of(c)
        if spec is not None:
            path = c.get("dataset") if isinstance(c, Mapping) else getattr(c, "dataset", None)
            seen.setdefault((None if data is not None else path, spec), spec)
    loaded: dict = {}
    for (path, _), spec in seen.items():
        if callable(data) and any(d is data and s == spec for d, s in _LOADERS_CHECKED):
            continue   # this loader's data passed already (a study checks, then its grid): not loaded twice
        if (data is None and (path, spec) in _PATHS_CHECKED):
            continue
        if path not in loaded:
            if data is None:
                from relext.protocols.data import load_dataset_dict

                loaded[path] = load_dataset_dict(path)
            else:
                loaded[path] = data() if callable(data) else data
        check_plan(loaded[path], spec)
        if callable(data):
            _LOADERS_CHECKED.append((data, spec))
        elif data is None:
            _PATHS_CHECKED.add((path, spec))
