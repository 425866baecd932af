"""`wgb data build`: WikiGenderBias from DBpedia + Wikipedia dumps by distant supervision.

Pass 1 streams the DBpedia files into an index of person facts (:func:`dbpedia.read_facts`);
memory is bounded by that index, not by the size of the dump. Pass 2 streams the Wikipedia dump
parts, in parallel over parts (``workers`` processes, or the same per-part function on a Dask
cluster with ``executor="dask"``, whose workers each receive the person index once); every
article of an indexed person becomes an entity record (:func:`distant.entity_record`) with its
mentions located (:func:`export.locate_record`), so the writer searches nothing. A part is a dump
file or, for one ``pages-articles-multistream.xml.bz2`` with its index beside it, a byte range of
it cut at stream offsets (:func:`parts.plan_parts`): the ranges give the records of reading the
whole file.

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
reuses the finished parts (the report's rates then count only the parts read in this run, and
``timings.resumed`` says so); the cache is removed once the benchmark is written, and what a
killed run left (temporary folders beside ``out``, temporary files in the cache) is removed when
the next build of the same ``out`` starts.

Bad lines and pages are counted and reported (file:line of the first few), never fatal; a missing,
unreadable or truncated input raises :class:`dbpedia.DumpError` naming it.
"""
from __future__ import annotations

import functools
import gc
import json
import os
import shutil
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from wgbcore.provenance import package_version

from wikigenderbias.dbpedia import DumpError, FactIndex, Issues, PersonFacts, progress_disabled, read_facts
from wikigenderbias.distant import DistantConfig
from wikigenderbias.executors import process_part, run_dask, run_pool
from wikigenderbias.genders import BINARY, GENDER_CLASSES, gender_class, read_wikidata_genders
from wikigenderbias.export import remove_stale_temp, without_located
from wikigenderbias.multistream import is_index
from wikigenderbias.parts import (PartResult, PartSpec, PartSummary, cache_dir, load_part, merged_records, part_key,
                                  fewer_collections, plan_parts, records_file, remove_stale_files, save_part)
from wikigenderbias.schema import GENDERS, POSITIVE_RELATIONS, RELATIONS, SPLITS
from wikigenderbias.split import SplitConfig, split_entities
from wikigenderbias.wikipedia import detect_format

__all__ = ["BuildConfig", "BuildResult", "PartResult", "PartSummary", "EXECUTORS", "build", "build_entities",
           "process_part", "expand_inputs"]

EXECUTORS = ("processes", "dask")
#: Entity records of the persons whose gender is neither female nor male (kept, outside the splits).
OTHER_GENDERS_FILE = "other_genders.jsonl"


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
    wikidata_genders: str | None = None  # a Wikidata P21 file (wikigenderbias.genders): person <TAB> value

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


# --------------------------------------------------------------------------- orchestration
def expand_inputs(paths: list[str], what: str) -> list[str]:
    """Files named, or the files inside named folders (sorted); errors name the missing path.
    For Wikipedia, multistream index files in a folder are not inputs (they are found beside
    their dump), and one named directly is an error."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p)
                           if not f.startswith(".") and os.path.isfile(os.path.join(p, f))
                           and not (what == "Wikipedia" and is_index(f)))
            if not files:
                raise DumpError(f"{what} folder {p} holds no files")
            out += files
        elif os.path.isfile(p):
            if what == "Wikipedia" and is_index(p):
                raise DumpError(f"{p} is a multistream index, not a dump: give the dump file (its index is "
                                "found beside it by name)")
            out.append(p)
        else:
            raise DumpError(f"{what} input not found: {p}")
    if not out:
        raise DumpError(f"no {what} input given")
    return out


def _run_parts(config: BuildConfig, parts: list[PartSpec], persons: dict[str, PersonFacts],
               cache: Path, keys: dict[str, str]) -> tuple[list[PartSummary], set[str]]:
    """The summaries of all parts, in part order (each part's records are in the cache), and the
    labels of the parts read in this run (the others came from the cache)."""
    from tqdm.auto import tqdm

    results: dict[str, PartSummary] = {}
    todo = []
    for spec in parts:
        cached = load_part(cache, keys[spec.label]) if config.resume else None
        if cached is not None:
            results[spec.label] = cached
        else:
            todo.append(spec)
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
        run_dask(todo, persons, config.distant, workers=config.n_workers, address=config.dask_address,
                 issue_limit=config.issue_limit, save=lambda res: save_part(cache, keys[res.path], res),
                 tick=bar.update, on_done=finish)
    elif config.n_workers == 1 or len(todo) == 1:
        for spec in todo:
            with fewer_collections():  # until the part's records are written and dropped
                res = process_part(spec.path, persons, config.distant, byte_range=spec.byte_range, tick=bar.update,
                                   issue_limit=config.issue_limit)
                summary = save_part(cache, keys[spec.label], res)
                del res
            finish(summary)
    else:
        run_pool(todo, persons, config.distant, workers=config.n_workers, issue_limit=config.issue_limit,
                 cache=cache, keys=keys, tick=bar.update, on_done=finish)
    bar.close()
    done_bar.close()
    return [results[spec.label] for spec in parts], {spec.label for spec in todo}


@dataclass
class _Passes:
    """Passes 1 and 2 done: the report, the kept heads and the parts' record files."""

    report: dict
    heads: list[dict]   # {"entity_id", "gender"} of each kept head (its first article in part order)
    genders: dict[str, tuple[str, str | None, str | None]]  # entity_id -> (class, raw value, source)
    files: list[Path]   # the record files, in part order

    def records(self) -> Iterator[dict]:
        """The kept records, sorted by ``entity_id``, read one at a time from the cache (with
        the writer's ``located`` entries)."""
        return merged_records(self.files)


def _rate(n: int, seconds: float) -> float | None:
    return round(n / seconds, 1) if n and seconds > 0 else None


def _timings(config: BuildConfig, results: list[PartSummary], read: set[str], t0: float, t1: float,
             t2: float, dbpedia_cpu: float) -> dict:
    """Timings of this run: rates over the parts read in this run only (a resumed run's cached
    parts took no time now). ``*_s`` are wall-clock seconds, ``*_cpu_s`` CPU seconds (of this
    process for pass 1 and the writer, of the processes that read the parts for pass 2); ``plan_s``
    (checking the inputs, cutting multistream dumps at their index) comes before pass 1."""
    fresh = [r for r in results if r.path in read]
    articles = sum(r.stats.get("articles", 0) for r in fresh)
    part_cpu = sum(r.cpu_seconds for r in fresh)
    return {
        "dbpedia_s": round(t1 - t0, 3),
        "dbpedia_cpu_s": round(dbpedia_cpu, 3),
        "wikipedia_s": round(t2 - t1, 3),
        "parts_read": len(fresh),
        "parts_from_cache": len(results) - len(fresh),
        "resumed": len(fresh) < len(results),
        "person_articles_read": articles,
        "wikipedia_part_wall_s": round(sum(r.seconds for r in fresh), 3),
        "wikipedia_part_cpu_s": round(part_cpu, 3),
        "person_articles_per_s": _rate(articles, t2 - t1),
        "person_articles_per_cpu_s": _rate(articles, part_cpu),
        "workers": None if config.executor == "dask" and config.dask_address else config.n_workers,
        "executor": config.executor,
    }


def _passes(config: BuildConfig) -> _Passes:
    t0 = time.perf_counter()
    db_files = expand_inputs(config.dbpedia, "DBpedia")
    files = expand_inputs(config.wikipedia, "Wikipedia")
    for p in files:  # fail on a wrong file before the long work starts
        detect_format(p)
    parts, warned = plan_parts(files, config.n_workers)  # reads the index of a multistream dump
    for w in warned:
        warnings.warn(w, stacklevel=3)
    known = read_wikidata_genders(config.wikidata_genders) if config.wikidata_genders else None
    t_plan, c_plan = time.perf_counter(), time.process_time()
    index: FactIndex = read_facts(db_files, require=config.require, progress=config.progress,
                                  issue_limit=config.issue_limit, genders=None, gender_map=gender_class,
                                  known_genders=known)
    t1, dbpedia_cpu = time.perf_counter(), time.process_time() - c_plan
    if not index.persons:
        raise ValueError(
            f"no person in the DBpedia files has a gender and all of {list(config.require)} "
            f"({index.stats}); check that the gender, mapping-based and hypernym files are given")
    cache = cache_dir(config.out)
    remove_stale_files(cache)
    keys = {s.label: part_key(s, db_files, require=config.require, distant=config.distant) for s in parts}
    gc.freeze()   # the person index lives through pass 2: keep it out of the collector's scans
    try:
        results, read = _run_parts(config, parts, index.persons, cache, keys)
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
            pf = index.persons.get(eid)   # this run's value (a cached part may predate a Wikidata file)
            heads.append({"entity_id": eid, "gender": pf.gender if pf is not None else gender})
    found = set(kept) | set(no_examples)
    missing = sorted(t for t in index.persons if t not in found)
    report = {
        "wgb_version": package_version(),
        "config": config.to_dict(),
        "dbpedia": {**index.stats, "files": [os.path.basename(f) for f in db_files],
                    "skipped": index.issues.to_dict()},
        "wikipedia": {**{k: int(v) for k, v in stats.items()}, "parts": len(parts),
                      "files": [os.path.basename(p) for p in files],
                      "multistream_ranges": sum(s.byte_range is not None for s in parts),
                      "skipped": issues.to_dict()},
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
        "genders": _gender_report(index.persons, heads, config.wikidata_genders),
        "timings": {"plan_s": round(t_plan - t0, 3), **_timings(config, results, read, t_plan, t1, t2, dbpedia_cpu)},
        "warnings": warned,
    }
    genders = {h["entity_id"]: (h["gender"], index.persons[h["entity_id"]].gender_raw,
                                index.persons[h["entity_id"]].gender_source)
               for h in heads if h["entity_id"] in index.persons}
    return _Passes(report, heads, genders, [records_file(cache, keys[s.label]) for s in parts])


def _gender_report(persons: dict[str, PersonFacts], heads: list[dict], wikidata: str | None) -> dict:
    """Every gender value kept: indexed persons and persons with examples per class, raw values
    per class, sources; persons outside the binary splits (their records: other_genders.jsonl)."""
    raw: dict[str, Counter] = {c: Counter() for c in GENDER_CLASSES}
    for pf in persons.values():
        raw.setdefault(pf.gender or "unknown", Counter())[pf.gender_raw or ""] += 1
    with_examples = Counter(h["gender"] for h in heads)
    outside = {c: n for c, n in with_examples.items() if c not in BINARY}
    return {"classes": list(GENDER_CLASSES),
            "indexed": {c: sum(raw[c].values()) for c in raw},
            "with_examples": {c: with_examples.get(c, 0) for c in raw},
            "raw_values": {c: dict(sorted(v.items())) for c, v in raw.items() if v},
            "sources": dict(Counter(pf.gender_source or "dbpedia" for pf in persons.values())),
            "wikidata_file": os.path.basename(wikidata) if wikidata else None,
            "outside_binary_splits": sum(outside.values()),
            "outside_binary_splits_by_class": outside,
            "outside_binary_splits_file": OTHER_GENDERS_FILE if outside else None}


def _other_genders(run: _Passes) -> Iterator[dict]:
    """The records of the heads whose gender is not in the splits' two classes, with the raw value."""
    for rec in run.records():
        cls, raw, source = run.genders.get(rec["entity_id"], (rec["gender"], None, None))
        if cls not in BINARY:
            yield {**without_located(rec), "gender": cls, "gender_raw": raw, "gender_source": source}


def build_entities(config: BuildConfig) -> tuple[list[dict], dict]:
    """Passes 1 and 2: all entity records (not yet split; one per head, sorted by ``entity_id``)
    and the build report. Holds every record in memory; :func:`build` streams them instead."""
    run = _passes(config)
    return [without_located(r) for r in run.records()], run.report


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
        out[s].append(without_located(e))
    return out


def build(config: BuildConfig, *, write: bool = True) -> BuildResult:
    """Build the benchmark folder ``config.out`` (see the module docstring). With ``write=False``
    nothing is written: passes 1 and 2 and the split run, the report's ``counts`` are read from the
    parts cache, which is kept. The report's ``timings.total_s`` is the whole build, writing
    included (``write_s``)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = Path(config.out)
    if write and out.exists() and not config.overwrite:
        raise FileExistsError(f"{out} exists; pass overwrite=True (--overwrite) to replace it")
    if write:
        remove_stale_temp(out)  # what a killed earlier build left beside the folder
    run = _passes(config)
    report = run.report
    t1 = time.perf_counter()
    binary = [h for h in run.heads if h["gender"] in BINARY]  # the splits' gender label has two classes
    split_of = {e["entity_id"]: s for s, es in split_entities(binary, config.split).items() for e in es}
    report["timings"]["split_s"] = round(time.perf_counter() - t1, 3)
    d = config.distant
    names = ("mentions the tail of a relation" if not d.require_head
             else "mentions the person (by name or a pronoun of the person's gender) and the tail of a relation"
             if d.pronouns else "mentions the person by name and the tail of a relation")
    report["description"] = (
        f"Built with `wgb data build` (wgb {package_version()}) from the DBpedia files "
        f"{', '.join(report['dbpedia']['files'])} and {len(report['wikipedia']['files'])} Wikipedia dump "
        f"file(s) by the paper's distant supervision: for each person with a gender and the relations "
        f"{', '.join(config.require)}, every sentence of the person's article that {names} is an example "
        f"of it; sentences mentioning the tail of "
        f"{', '.join(config.distant.na_facts)} and no positive tail are `NA` examples. "
        + ("Selection rule: the paper's (the default). " if not d.require_head else
           "Selection rule: `--require-head`, stricter than the paper's (which takes every sentence that "
           "mentions the tail). ")
        + f"{report['persons']['with_examples']} of {report['persons']['indexed']} indexed persons have examples. "
        f"Splits by head entity (seed {config.split.seed}, stratified by gender"
        f"{', balanced test sets' if config.split.balance_test else ''})."
    )

    def records() -> Iterator[tuple[str, dict]]:
        for rec in run.records():
            split = split_of.get(rec["entity_id"])
            if split is not None:  # heads left out by an absolute train size have no split
                rec["gender"] = run.genders.get(rec["entity_id"], (rec["gender"],))[0]
                yield split, rec

    if not write:
        report["counts"] = _split_counts(records())
        report["timings"]["total_s"] = round(time.perf_counter() - t0, 3)
        return BuildResult(None, report, lambda: _by_split(records()))

    from wikigenderbias.export import read_entities, write_benchmark_stream

    t2, c2 = time.perf_counter(), time.process_time()

    def finish(full: dict) -> None:  # the timings in report.json include the writing
        now, cpu = time.perf_counter(), time.process_time()
        full["timings"]["write_s"] = round(now - t2, 3)
        full["timings"]["write_cpu_s"] = round(cpu - c2, 3)
        full["timings"]["main_cpu_s"] = round(cpu - c0, 3)  # this process, the whole build
        full["timings"]["total_s"] = round(now - t0, 3)
        read = full["timings"]["person_articles_read"]
        # end to end: only when every part was read in this run (a resumed run did part of it before)
        full["timings"]["person_articles_per_s_end_to_end"] = (
            None if full["timings"]["resumed"] else _rate(read, now - t0))

    sizes = Counter(split_of.values())
    folder = write_benchmark_stream(out, records(), description=report["description"], report=report,
                                    overwrite=config.overwrite, progress=config.progress is not False,
                                    sizes={s: sizes[s] for s in SPLITS}, finalize_report=finish)
    if report["genders"]["outside_binary_splits"]:
        from wgbcore.atomicio import atomic_write_jsonl

        atomic_write_jsonl(folder / OTHER_GENDERS_FILE, _other_genders(run))
    report = json.loads((folder / "report.json").read_text())
    shutil.rmtree(cache_dir(config.out), ignore_errors=True)
    return BuildResult(folder, report, functools.partial(read_entities, folder))
