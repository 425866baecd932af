"""Pass 2 of `wgb data build`: one dump part read into entity records, and the executors that
read many parts at once.

:func:`process_part` is the unit of work (a dump file, or a byte range of a multistream dump):
every article of an indexed person becomes an entity record (:func:`distant.entity_record`) whose
mentions are located at once (:func:`export.locate_record`, while the surface forms of the person
and the tails are still in the caches), so that the writer searches nothing.

:func:`run_pool` runs parts in local processes (forked on Linux: the person index is shared
copy-on-write; each worker writes its part's records to the cache and returns the summary).
:func:`run_dask` runs them on a Dask cluster (a local one, or ``address``): the person index is
scattered as one object and broadcast, so that each Dask worker receives it once (a dict given
to ``scatter`` would become one future per person), and the records come back to the main
process, which writes them to the cache.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import queue as queue_mod
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from wikigenderbias.dbpedia import Issues, PersonFacts
from wikigenderbias.distant import DistantConfig, entity_record
from wikigenderbias.export import locate_record
from wikigenderbias.parts import PartResult, PartSpec, PartSummary, fewer_collections, save_part
from wikigenderbias.wikipedia import article_sentences, iter_pages

__all__ = ["process_part", "run_pool", "run_dask"]


def process_part(path: str, persons: dict[str, PersonFacts], distant: DistantConfig,
                 *, byte_range: tuple[int, int] | None = None, tick: Callable[[int], None] | None = None,
                 issue_limit: int = 5) -> PartResult:
    """Entity records of the persons whose articles are in one dump part (the unit of work of
    both executors): the file ``path``, or its bytes ``byte_range`` (a multistream dump).
    ``tick(n)`` is called with the number of pages read, every 256 pages."""
    t0, c0 = time.perf_counter(), time.process_time()
    # parsing makes millions of short-lived acyclic objects (about 10% faster per article)
    with fewer_collections():
        return _process_part(PartSpec(path, byte_range), persons, distant, tick=tick, issue_limit=issue_limit,
                             t0=t0, c0=c0)


def _process_part(spec: PartSpec, persons: dict[str, PersonFacts], distant: DistantConfig, *, tick,
                  issue_limit: int, t0: float, c0: float) -> PartResult:
    issues = Issues(limit=issue_limit)
    stats: dict[str, int] = {}
    dstats: Counter = Counter()
    entities: list[dict] = []
    no_examples: list[str] = []
    last = 0
    for page in iter_pages(spec.path, want=persons.__contains__, issues=issues, stats=stats,
                           byte_range=spec.byte_range):
        try:
            sents = article_sentences(page, min_tokens=distant.min_tokens, max_tokens=distant.max_tokens)
            rec = entity_record(page.title, persons[page.title], sents, distant, stats=dstats)
            if rec is not None:  # the writer's spans, found here while the forms are cached
                locate_record(rec)
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
    return PartResult(spec.label, entities, stats, dict(dstats), issues, time.perf_counter() - t0, no_examples,
                      time.process_time() - c0)


_CTX: dict = {}


def _init_worker(persons, distant, issue_limit, q, cache) -> None:
    _CTX.update(persons=persons, distant=distant, issue_limit=issue_limit, queue=q, cache=cache)


def _worker_part(spec: PartSpec, key: str) -> PartSummary:
    q = _CTX["queue"]
    with fewer_collections():  # until the part's records are written and dropped
        res = process_part(spec.path, _CTX["persons"], _CTX["distant"], byte_range=spec.byte_range, tick=q.put,
                           issue_limit=_CTX["issue_limit"])
        summary = save_part(_CTX["cache"], key, res)
        del res
    return summary


def _dask_part(spec: PartSpec, persons: dict[str, PersonFacts], distant, issue_limit) -> PartResult:
    return process_part(spec.path, persons, distant, byte_range=spec.byte_range, issue_limit=issue_limit)


def run_pool(todo: list[PartSpec], persons: dict[str, PersonFacts], distant: DistantConfig, *, workers: int,
             issue_limit: int, cache: Path, keys: dict[str, str], tick: Callable[[int], None],
             on_done: Callable[[PartSummary], None]) -> None:
    """Read the parts ``todo`` in ``workers`` local processes; each writes its part to ``cache``
    and ``on_done(summary)`` is called in this process, in the order parts finish."""
    method = "fork" if sys.platform == "linux" else "spawn"
    ctx = mp.get_context(method)
    q = ctx.Queue()
    with ctx.Pool(min(workers, len(todo)), initializer=_init_worker,
                  initargs=(persons, distant, issue_limit, q, cache)) as pool:
        pending = [pool.apply_async(_worker_part, (spec, keys[spec.label])) for spec in todo]
        while pending:
            try:
                tick(q.get(timeout=0.2))
            except queue_mod.Empty:
                pass
            still = []
            for a in pending:
                if a.ready():
                    on_done(a.get())  # re-raises a worker's DumpError here
                else:
                    still.append(a)
            pending = still
        while True:
            try:
                tick(q.get_nowait())
            except queue_mod.Empty:
                break


def run_dask(todo: list[PartSpec], persons: dict[str, PersonFacts], distant: DistantConfig, *, workers: int,
             address: str | None, issue_limit: int, save: Callable[[PartResult], PartSummary],
             tick: Callable[[int], None], on_done: Callable[[PartSummary], None]) -> None:
    """Read the parts ``todo`` on a Dask cluster (``address``, or a local cluster of ``workers``
    processes); each part's records come back here, ``save(result)`` writes them and
    ``on_done(summary)`` is called, in the order parts finish."""
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise RuntimeError(
            "--executor dask needs dask.distributed, which is not installed: "
            "pip install 'wgb[dask]' (or run with --executor processes)") from None
    client = Client(address) if address else \
        Client(processes=True, n_workers=workers, threads_per_worker=1, dashboard_address=None,
               silence_logs=logging.ERROR)  # no "worker still alive, killing" notes at shutdown
    try:
        # a list of one item: ONE future holding the whole index, copied to every worker once
        [shared] = client.scatter([persons], broadcast=True, hash=False)
        futures = [client.submit(_dask_part, spec, shared, distant, issue_limit, pure=False) for spec in todo]
        for _, res in as_completed(futures, with_results=True):
            tick(res.stats.get("pages", 0))
            on_done(save(res))
    finally:
        client.close()
