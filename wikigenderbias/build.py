"""`wgb data build`: WikiGenderBias from DBpedia + Wikipedia dumps by distant supervision.

Pass 1 streams the DBpedia files into an index of person facts (:func:`dbpedia.read_facts`);
memory is bounded by that index, not by the size of the dump. Pass 2 streams the Wikipedia dump
parts, in parallel over parts (``workers`` processes, or the same per-part function on a Dask
cluster with ``executor="dask"``); every article of an indexed person becomes an entity record
(:func:`distant.entity_record`).

Each finished part goes to the cache folder ``<out>.parts/`` (:mod:`wikigenderbias.parts`: a
records file sorted by ``entity_id`` and a summary written last, both plain JSON), written
atomically by the process that read the part (a worker of the ``processes`` executor, or the main
process for 1 worker and for ``dask``, whose workers may be remote and return the records), so a
worker holds one part's records and the main process only summaries. From the summaries the main
process drops duplicate heads (the first article in part order is kept, later ones are reported as
``duplicate_article``) and splits the heads (:mod:`split`, on ``entity_id`` and gender only). The
writer (:func:`export.write_benchmark_stream`, atomic: temp dir + rename) then reads the record
files merged by ``entity_id`` (:func:`parts.merged_records`, one record per part in memory), so
every split comes out sorted by ``entity_id``. An interrupted build re-run with the same arguments
reuses the finished parts; the cache is removed once the benchmark is written.

Bad lines and pages are counted and reported (file:line of the first few), never fatal; a missing,
unreadable or truncated input raises :class:`dbpedia.DumpError` naming it.
"""
from __future__ import annotations

import functools
import gc
import json
import multiprocessing as mp
import os
import queue as queue_mod
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from wgbcore.provenance import package_version

from wikigenderbias.dbpedia import DumpError, FactIndex, Issues, PersonFacts, progress_disabled, read_facts
from wikigenderbias.distant import DistantConfig, entity_record
from wikigenderbias.parts import (PartResult, PartSummary, cache_dir, load_part, merged_records, part_key,
                                  records_file, save_part)
from wikigenderbias.schema import GENDERS, POSITIVE_RELATIONS, RELATIONS, SPLITS
from wikigenderbias.split import SplitConfig, split_entities
from wikigenderbias.wikipedia import article_sentences, detect_format, iter_pages

__all__ = ["BuildConfig", "BuildResult", "PartResult", "PartSummary", "EXECUTORS", "build", "build_entities",
           "process_part", "expand_inputs"]

EXECUTORS = ("processes", "dask")


@dataclass
class BuildConfig:
    """Everything a build needs; serialisable to JSON (``to_dict`` / ``from_dict``)."""

    dbpedia: list[str]
    wikipedia: list[str]
    out: str
    require: tuple[str, ...] = POSITIVE_RELATIONS
    distant: DistantConfig = field(default_factory=DistantConfig)
    split: SplitConfig = field(default_factory=SplitConfig)
    workers: int = 1                 # 0 = one per CPU
    executor: str = "processes"
    dask_address: str | None = None  # scheduler address; None = a local cluster
    overwrite: bool = False
    resume: bool = True              # reuse finished parts from <out>.parts/
    progress: bool | None = None     # None = bars only on a TTY
    issue_limit: int = 5

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ValueError(f"unknown executor {self.executor!r}; expected one of {list(EXECUTORS)}")
        if self.workers < 0:
            raise ValueError(f"workers must be >= 0, got {self.workers}")
        if isinstance(self.distant, dict):
            self.distant = DistantConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in self.distant.items()})
        if isinstance(self.split, dict):
            self.split = SplitConfig(**self.split)
        self.require = tuple(self.require)
        self.dbpedia = [os.fspath(p) for p in self.dbpedia]
        self.wikipedia = [os.fspath(p) for p in self.wikipedia]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["distant"] = self.distant.to_dict()
        d["split"] = self.split.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> BuildConfig:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown build config field(s) {unknown}; expected some of {sorted(known)}")
        return cls(**d)

    @property
    def n_workers(self) -> int:
        return self.workers or (os.cpu_count() or 1)


@dataclass
class BuildResult:
    """The written folder (None with ``write=False``) and the build report.

    ``entities_by_split`` (split -> entity records sorted by ``entity_id``) is loaded on first
    access, from the written folder (or, with ``write=False``, from the parts cache, which is then
    kept): it holds every record in memory, so for large builds read the folder split by split
    instead; the report's ``counts`` has the numbers."""

    folder: Path | None
    report: dict
    _load: Callable[[], dict[str, list[dict]]] = field(repr=False, compare=False)

    @functools.cached_property
    def entities_by_split(self) -> dict[str, list[dict]]:
        return self._load()


# --------------------------------------------------------------------------- pass 2, one part
def process_part(path: str, persons: dict[str, PersonFacts], distant: DistantConfig,
                 *, tick: Callable[[int], None] | None = None, issue_limit: int = 5) -> PartResult:
    """Entity records of the persons whose articles are in one dump part (the unit of work of
    both executors). ``tick(n)`` is called with the number of pages read, every 256 pages."""
    t0, c0 = time.perf_counter(), time.process_time()
    # parsing makes millions of short-lived acyclic objects: collect young objects 100x less often
    # (about 10% faster per article; cycles, if any, are still collected within the part)
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], 100_000), *threshold[1:])
    try:
        return _process_part(path, persons, distant, tick=tick, issue_limit=issue_limit, t0=t0, c0=c0)
    finally:
        gc.set_threshold(*threshold)


def _process_part(path: str, persons: dict[str, PersonFacts], distant: DistantConfig, *, tick, issue_limit: int,
                  t0: float, c0: float) -> PartResult:
    issues = Issues(limit=issue_limit)
    stats: dict[str, int] = {}
    dstats: Counter = Counter()
    entities: list[dict] = []
    no_examples: list[str] = []
    last = 0
    for page in iter_pages(path, want=persons.__contains__, issues=issues, stats=stats):
        try:
            sents = article_sentences(page, min_tokens=distant.min_tokens, max_tokens=distant.max_tokens)
            rec = entity_record(page.title, persons[page.title], sents, distant, stats=dstats)
        except Exception as exc:  # one bad article never stops a build
            issues.add("bad_article", page.where, f"{page.title!r}: {exc.__class__.__name__}: {exc}")
            stats["bad_articles"] = stats.get("bad_articles", 0) + 1
            continue
        if rec is None:
            no_examples.append(page.title)
        else:
            rec["source_page"] = page.where
            entities.append(rec)
        if tick is not None and stats["pages"] - last >= 256:
            tick(stats["pages"] - last)
            last = stats["pages"]
    if tick is not None and stats.get("pages", 0) > last:
        tick(stats["pages"] - last)
    return PartResult(path, entities, stats, dict(dstats), issues, time.perf_counter() - t0, no_examples,
                      time.process_time() - c0)


_CTX: dict = {}


def _init_worker(persons, distant, issue_limit, q, cache) -> None:
    _CTX.update(persons=persons, distant=distant, issue_limit=issue_limit, queue=q, cache=cache)


def _worker_part(path: str, key: str) -> PartSummary:
    q = _CTX["queue"]
    res = process_part(path, _CTX["persons"], _CTX["distant"], tick=q.put, issue_limit=_CTX["issue_limit"])
    return save_part(_CTX["cache"], key, res)


def _dask_part(path: str, persons, distant, issue_limit) -> PartResult:
    return process_part(path, persons, distant, issue_limit=issue_limit)


# --------------------------------------------------------------------------- orchestration
def expand_inputs(paths: list[str], what: str) -> list[str]:
    """Files named, or the files inside named folders (sorted); errors name the missing path."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p)
                           if not f.startswith(".") and os.path.isfile(os.path.join(p, f)))
            if not files:
                raise DumpError(f"{what} folder {p} holds no files")
            out += files
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise DumpError(f"{what} input not found: {p}")
    if not out:
        raise DumpError(f"no {what} input given")
    return out


def _run_parts(config: BuildConfig, parts: list[str], persons: dict[str, PersonFacts],
               cache: Path, keys: dict[str, str]) -> list[PartSummary]:
    """The summaries of all parts, in part order; each part's records are in the cache."""
    from tqdm.auto import tqdm

    results: dict[str, PartSummary] = {}
    todo = []
    for p in parts:
        cached = load_part(cache, keys[p]) if config.resume else None
        if cached is not None:
            results[p] = cached
        else:
            todo.append(p)
    disable = progress_disabled(config.progress)
    bar = tqdm(total=None, unit=" pages", unit_scale=True, desc="Wikipedia", disable=disable)
    done_bar = tqdm(total=len(parts), initial=len(results), unit=" parts", desc="parts", disable=disable)

    def finish(res: PartSummary) -> None:
        results[res.path] = res
        done_bar.update(1)
        done_bar.set_postfix(persons=sum(len(r.heads) for r in results.values()))

    if not todo:
        pass
    elif config.executor == "dask":
        try:
            from dask.distributed import Client, as_completed
        except ImportError:
            raise RuntimeError(
                "--executor dask needs dask.distributed, which is not installed: "
                "pip install 'wgb[dask]' (or run with --executor processes)") from None
        client = Client(config.dask_address) if config.dask_address else \
            Client(processes=True, n_workers=config.n_workers, threads_per_worker=1, dashboard_address=None)
        try:
            scattered = client.scatter(persons, broadcast=True)
            futures = client.map(_dask_part, todo, persons=scattered, distant=config.distant,
                                 issue_limit=config.issue_limit, pure=False)
            for _, res in as_completed(futures, with_results=True):
                bar.update(res.stats.get("pages", 0))
                finish(save_part(cache, keys[res.path], res))
        finally:
            client.close()
    elif config.n_workers == 1 or len(todo) == 1:
        for p in todo:
            res = process_part(p, persons, config.distant, tick=bar.update, issue_limit=config.issue_limit)
            finish(save_part(cache, keys[p], res))
    else:
        method = "fork" if sys.platform == "linux" else "spawn"
        ctx = mp.get_context(method)
        q = ctx.Queue()
        with ctx.Pool(min(config.n_workers, len(todo)), initializer=_init_worker,
                      initargs=(persons, config.distant, config.issue_limit, q, cache)) as pool:
            pending = [pool.apply_async(_worker_part, (p, keys[p])) for p in todo]
            while pending:
                try:
                    bar.update(q.get(timeout=0.2))
                except queue_mod.Empty:
                    pass
                still = []
                for a in pending:
                    if a.ready():
                        finish(a.get())  # re-raises a worker's DumpError here
                    else:
                        still.append(a)
                pending = still
            while True:
                try:
                    bar.update(q.get_nowait())
                except queue_mod.Empty:
                    break
    bar.close()
    done_bar.close()
    return [results[p] for p in parts]


@dataclass
class _Passes:
    """Passes 1 and 2 done: the report, the kept heads and the parts' record files."""

    report: dict
    heads: list[dict]   # {"entity_id", "gender"} of each kept head (its first article in part order)
    files: list[Path]   # the record files, in part order

    def records(self) -> Iterator[dict]:
        """The kept records, sorted by ``entity_id``, read one at a time from the cache."""
        return merged_records(self.files)


def _passes(config: BuildConfig) -> _Passes:
    t0 = time.perf_counter()
    db_files = expand_inputs(config.dbpedia, "DBpedia")
    parts = expand_inputs(config.wikipedia, "Wikipedia")
    for p in parts:  # fail on a wrong file before the long work starts
        detect_format(p)
    index: FactIndex = read_facts(db_files, require=config.require, progress=config.progress,
                                  issue_limit=config.issue_limit)
    t1 = time.perf_counter()
    if not index.persons:
        raise ValueError(
            f"no person in the DBpedia files has a gender and all of {list(config.require)} "
            f"({index.stats}); check that the gender, mapping-based and hypernym files are given")
    cache = cache_dir(config.out)
    keys = {p: part_key(p, db_files, require=config.require, distant=config.distant) for p in parts}
    gc.freeze()   # the person index lives through pass 2: keep it out of the collector's scans
    try:
        results = _run_parts(config, parts, index.persons, cache, keys)
    finally:
        gc.unfreeze()
    t2 = time.perf_counter()

    issues = Issues(limit=config.issue_limit)
    stats: Counter = Counter()
    dstats: Counter = Counter()
    heads: list[dict] = []
    kept: dict[str, str] = {}  # entity_id -> source page of the kept article
    no_examples: list[str] = []
    for res in results:
        issues.merge(res.issues)
        stats.update(res.stats)
        dstats.update(res.distant)
        no_examples += res.no_examples
        for eid, gender, where in res.heads:
            if eid in kept:
                issues.add("duplicate_article", where, f"{eid!r} already read at {kept[eid]}")
                continue
            kept[eid] = where
            heads.append({"entity_id": eid, "gender": gender})
    found = set(kept) | set(no_examples)
    missing = sorted(t for t in index.persons if t not in found)
    pass2_s = t2 - t1
    part_seconds = sum(r.seconds for r in results)
    part_cpu = sum(r.cpu_seconds for r in results)
    report = {
        "wgb_version": package_version(),
        "config": config.to_dict(),
        "dbpedia": {**index.stats, "files": [os.path.basename(f) for f in db_files],
                    "skipped": index.issues.to_dict()},
        "wikipedia": {**{k: int(v) for k, v in stats.items()}, "parts": len(parts),
                      "files": [os.path.basename(p) for p in parts], "skipped": issues.to_dict()},
        "persons": {
            "indexed": len(index.persons),
            "with_article": len(found),
            "without_article": len(missing),
            "first_without_article": missing[: config.issue_limit],
            "without_examples": len(no_examples),
            "first_without_examples": sorted(no_examples)[: config.issue_limit],
            "with_examples": len(heads),
        },
        "distant": {k: int(v) for k, v in sorted(dstats.items())},
        "timings": {
            "dbpedia_s": round(t1 - t0, 3),
            "wikipedia_s": round(pass2_s, 3),
            "wikipedia_part_wall_s": round(part_seconds, 3),
            "wikipedia_part_cpu_s": round(part_cpu, 3),
            "person_articles_per_s": round(len(found) / pass2_s, 1) if pass2_s > 0 else None,
            "person_articles_per_cpu_s": round(len(found) / part_cpu, 1) if part_cpu > 0 else None,
            "workers": None if config.executor == "dask" and config.dask_address else config.n_workers,
            "executor": config.executor,
        },
    }
    return _Passes(report, heads, [records_file(cache, keys[p]) for p in parts])


def build_entities(config: BuildConfig) -> tuple[list[dict], dict]:
    """Passes 1 and 2: all entity records (not yet split; one per head, sorted by ``entity_id``)
    and the build report. Holds every record in memory; :func:`build` streams them instead."""
    run = _passes(config)
    return list(run.records()), run.report


def _split_counts(records: Iterable[tuple[str, dict]]) -> dict:
    genders: dict[str, Counter] = {s: Counter() for s in SPLITS}
    relations: dict[str, Counter] = {s: Counter() for s in SPLITS}
    for s, e in records:
        genders[s][e["gender"]] += 1
        for rel in e["relations"]:
            relations[s][rel["relation"]] += len(rel["sentences"])
    return {s: {"entities": {k: genders[s].get(k, 0) for k in GENDERS},
                "sentences": {k: relations[s].get(k, 0) for k in RELATIONS},
                "sentences_total": sum(relations[s].values())} for s in SPLITS}


def _by_split(records: Iterable[tuple[str, dict]]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for s, e in records:
        out[s].append(e)
    return out


def build(config: BuildConfig, *, write: bool = True) -> BuildResult:
    """Build the benchmark folder ``config.out`` (see the module docstring). With ``write=False``
    nothing is written: passes 1 and 2 and the split run, the report's ``counts`` are read from the
    parts cache, which is kept."""
    t0 = time.perf_counter()
    out = Path(config.out)
    if write and out.exists() and not config.overwrite:
        raise FileExistsError(f"{out} exists; pass overwrite=True (--overwrite) to replace it")
    run = _passes(config)
    report = run.report
    t1 = time.perf_counter()
    split_of = {e["entity_id"]: s for s, es in split_entities(run.heads, config.split).items() for e in es}
    report["timings"]["split_s"] = round(time.perf_counter() - t1, 3)
    report["description"] = (
        f"Built with `wgb data build` (wgb {package_version()}) from the DBpedia files "
        f"{', '.join(report['dbpedia']['files'])} and {report['wikipedia']['parts']} Wikipedia dump "
        f"part(s) by the paper's distant supervision: for each person with a gender and the relations "
        f"{', '.join(config.require)}, every sentence of the person's article that mentions the person and "
        f"the tail of a relation is an example of it; sentences mentioning the tail of "
        f"{', '.join(config.distant.na_facts)} and no positive tail are `NA` examples. "
        f"{report['persons']['with_examples']} of {report['persons']['indexed']} indexed persons have examples. "
        f"Splits by head entity (seed {config.split.seed}, stratified by gender"
        f"{', balanced test sets' if config.split.balance_test else ''})."
    )

    def records() -> Iterator[tuple[str, dict]]:
        for rec in run.records():
            split = split_of.get(rec["entity_id"])
            if split is not None:  # heads left out by an absolute train size have no split
                yield split, rec

    if not write:
        report["counts"] = _split_counts(records())
        report["timings"]["total_s"] = round(time.perf_counter() - t0, 3)
        return BuildResult(None, report, lambda: _by_split(records()))

    from wikigenderbias.export import read_entities, write_benchmark_stream

    t2 = time.perf_counter()
    report["timings"]["total_s"] = round(t2 - t0, 3)  # before writing; write_s is in the result
    sizes = Counter(split_of.values())
    folder = write_benchmark_stream(out, records(), description=report["description"], report=report,
                                    overwrite=config.overwrite, progress=config.progress is not False,
                                    sizes={s: sizes[s] for s in SPLITS})
    report = json.loads((folder / "report.json").read_text())
    report["timings"]["write_s"] = round(time.perf_counter() - t2, 3)
    report["timings"]["total_s"] = round(time.perf_counter() - t0, 3)
    shutil.rmtree(cache_dir(config.out), ignore_errors=True)
    return BuildResult(folder, report, functools.partial(read_entities, folder))
