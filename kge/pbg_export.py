"""Writing a PyTorch-BigGraph job folder from a :class:`~kge.pbg_source.TripleSource`, partition by
partition, without holding the edge list.

Job folder (``kge.pbg_worker`` reads it; nothing in it is pickled)::

    job.json                 PBG config dict, seed, the graph's identity (names hash, split counts,
                             ids hash) and the bucket layout
    partition.npy            int32 [E]: the partition of every entity (seeded, balanced); an
                             entity's offset in its partition = its rank among the partition's ids
    entities/entity_count_all_<p>.txt   PBG's entity counts
    edges/bucket_<l>_<r>.npy int32 [3, n]: lhs offset, rhs offset, relation of the bucket's edges
                             (file order); exactly 12 bytes an edge
    edges/layout.json        edges per bucket, bytes, the graph fingerprint; written last: the
                             marker of a finished export

The export makes two passes over the graph files (one when the ids are not known up front, plus
one to assign them): :meth:`TripleSource.scan` checks and counts (and counts the edges of each
bucket), then every chunk is sorted by bucket and appended to the bucket files at their cursors
with ``os.pwrite``. Memory: O(entities) (partition table, offsets, names) plus one chunk.

**Layout sized for the graph.** PBG's own HDF5 importer appends through 50 MiB blocks, so every
non-empty bucket costs at least 3 x 50 MiB whatever its size (:func:`pbg_hdf5_bytes`; FB13's
figures at 1, 2 and 4 partitions are in ``benchmarks/results/kge_pbg_scaling.json``). Here a bucket file holds exactly its edges,
and the worker reads them through a PBG edge-storage plugin; PBG's training chunks are sized so one
chunk of a bucket (loaded as int64 tensors) stays under ``max_edges_per_chunk`` edges.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Callable

import numpy as np

from wgbcore.atomicio import atomic_write_json, atomic_write_text, replace_dir

from kge.pbg_source import CHUNK_ROWS, TripleSource

BUCKET_DTYPE = np.dtype("<i4")
PBG_BLOCK_BYTES = 50 * 2 ** 20  # torchbiggraph.graph_storages.BufferedDataset.BUFFER_SIZE * 8
__all__ = ["assign_partitions", "partition_offsets", "bucket_path", "export_job", "pbg_hdf5_bytes", "read_layout",
           "job_identity", "suggest_partitions"]


def assign_partitions(num_entities: int, num_partitions: int, seed: int = 0) -> np.ndarray:
    """Seeded balanced assignment: ``int32 [E]`` partition of every entity (sizes differ by <= 1)."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be >= 1, got {num_partitions}")
    rng = np.random.default_rng(seed)
    part = np.empty(num_entities, dtype=np.int32)
    part[rng.permutation(num_entities)] = np.arange(num_entities) % num_partitions
    return part


def partition_offsets(part: np.ndarray, num_partitions: int) -> np.ndarray:
    """``int64 [E]``: each entity's offset in its partition (the partition's ids in ascending order)."""
    off = np.empty(len(part), dtype=np.int64)
    for p in range(num_partitions):
        idx = np.flatnonzero(part == p)
        off[idx] = np.arange(len(idx))
    return off


def bucket_path(edges_dir: Path, lhs: int, rhs: int) -> Path:
    return Path(edges_dir) / f"bucket_{lhs}_{rhs}.npy"


def pbg_hdf5_bytes(bucket_edges: np.ndarray) -> int:
    """Disk PBG's own HDF5 edge files take for these bucket sizes (3 int64 datasets, each allocated
    in 50 MiB chunks): the cost this layout avoids."""
    per_block = PBG_BLOCK_BYTES // 8
    blocks = [math.ceil(n / per_block) for n in np.asarray(bucket_edges).ravel() if n > 0]
    return int(3 * PBG_BLOCK_BYTES * sum(blocks))


def suggest_partitions(num_entities: int, dim: int, memory_bytes: int) -> int:
    """The fewest partitions whose two in-memory partitions (embeddings + Adagrad state, float32)
    fit ``memory_bytes``; 1 when the whole table fits."""
    per_entity = (dim + 1) * 4
    if num_entities * per_entity <= memory_bytes:
        return 1
    p = 2
    while 2 * math.ceil(num_entities / p) * per_entity > memory_bytes:
        p *= 2
    return p


def _new_bucket_file(path: Path, n: int) -> int:
    """An ``int32 [3, n]`` .npy file of the right size (sparse until written); returns the data offset."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": np.lib.format.dtype_to_descr(BUCKET_DTYPE), "fortran_order": False, "shape": (3, int(n))})
        off = f.tell()
        f.truncate(off + 3 * int(n) * BUCKET_DTYPE.itemsize)
    return off


def job_identity(source: TripleSource, pbg_config: dict, seed: int) -> dict:
    """What must match for an existing job folder to be reused (the epochs may grow)."""
    cfg = {k: v for k, v in pbg_config.items() if k != "num_epochs"}
    return {"format": 2, "config": cfg, "seed": int(seed), "num_entities": source.num_entities,
            "num_relations": source.num_relations, "names_sha256": source.names_sha256(),
            "counts": source.counts, "ids_sha256": source.ids_sha256}


def read_layout(job_dir: str | os.PathLike) -> dict | None:
    p = Path(job_dir) / "edges" / "layout.json"
    return json.loads(p.read_text()) if p.exists() else None


def export_job(source: TripleSource, job_dir: str | os.PathLike, pbg_config: dict, *, seed: int,
               max_edges_per_chunk: int, rows: int = CHUNK_ROWS, log: Callable[[str], None] = lambda m: None,
               skip_if: Callable[[dict], bool] | None = None, config_for: Callable[[list[str]], dict] | None = None,
               extra_meta: dict | None = None) -> dict | None:
    """Write (or reuse) the job folder of ``source``; returns the layout (``edges/layout.json``).

    An existing folder of the same graph and config (epochs aside) is reused as it is, checkpoint
    included; one of another graph or config is emptied first (its run is stale). After the scan,
    ``config_for(relations)`` may rebuild the PBG config (relations named by first appearance are
    known only then) and ``skip_if(identity)`` may stop the export (returns None)."""
    job = Path(job_dir)
    job.mkdir(parents=True, exist_ok=True)
    nparts = int(pbg_config["entities"]["all"]["num_partitions"])
    t0 = time.perf_counter()
    part = off = None
    counts = None

    def count_buckets(c: np.ndarray) -> None:
        nonlocal part, counts
        if part is None:
            part = assign_partitions(source.num_entities, nparts, seed)
            counts = np.zeros(nparts * nparts, dtype=np.int64)
        counts += np.bincount(part[c[:, 0]].astype(np.int64) * nparts + part[c[:, 2]], minlength=nparts * nparts)

    log(f"scanning {source.describe}")
    source.scan(on_train=count_buckets, rows=rows)
    scan_s = time.perf_counter() - t0
    if config_for is not None:
        pbg_config = config_for(list(source.relations or []))
    ident = job_identity(source, pbg_config, seed)
    if skip_if is not None and skip_if(ident):
        return None
    meta = {"identity": ident, "config": pbg_config, "seed": int(seed), "num_entities": source.num_entities,
            "num_relations": source.num_relations, **(extra_meta or {})}
    old = job / "job.json"
    layout = read_layout(job)
    if old.exists():
        prev = json.loads(old.read_text())
        if prev.get("identity") == ident and layout is not None:
            log(f"job {job}: export of the same graph and config found, reused")
            atomic_write_json(old, meta, indent=1, clean=False)  # the epochs may have grown
            return layout
        if prev.get("identity") != ident:
            log(f"job {job}: another graph or config; its old run is removed")
            for stale in ("out", "checkpoint", "edges", "entities", "partition.npy", "edges.npy", "wgb.json"):
                p = job / stale
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    if part is None:  # first-appearance ids: partition after the scan, then count in a second pass
        for c in source.chunks("train", rows):
            count_buckets(c)
    off = partition_offsets(part, nparts)
    sizes = np.bincount(part, minlength=nparts)
    t1 = time.perf_counter()
    fp_train = hashlib.sha256()
    fp_train.update(f"train:{source.counts['train']}:".encode())
    tmp = job / "edges.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    data_off = np.array([_new_bucket_file(bucket_path(tmp, b // nparts, b % nparts), n)
                         for b, n in enumerate(counts)], dtype=np.int64)
    cursor = np.zeros(nparts * nparts, dtype=np.int64)
    for c in source.chunks("train", rows):
        fp_train.update(np.ascontiguousarray(c, dtype="<i8").tobytes())
        b = part[c[:, 0]].astype(np.int64) * nparts + part[c[:, 2]]
        order = np.argsort(b, kind="stable")
        per = np.bincount(b, minlength=nparts * nparts)
        starts = np.concatenate([[0], np.cumsum(per)])
        cols = np.stack([off[c[order, 0]], off[c[order, 2]], c[order, 1]]).astype(BUCKET_DTYPE)
        for bk in np.flatnonzero(per):
            s, e, n = starts[bk], starts[bk + 1], counts[bk]
            fd = os.open(bucket_path(tmp, bk // nparts, bk % nparts), os.O_WRONLY)
            try:
                for row in range(3):
                    os.pwrite(fd, np.ascontiguousarray(cols[row, s:e]).tobytes(),
                              int(data_off[bk] + (row * n + cursor[bk]) * BUCKET_DTYPE.itemsize))
            finally:
                os.close(fd)
            cursor[bk] += e - s
    if not np.array_equal(cursor, counts):
        raise RuntimeError(f"{source.describe} changed while it was exported (edges per bucket differ "
                           "between the two passes)")
    fill_s = time.perf_counter() - t1
    fp = _fingerprint(source, fp_train, rows)
    np.save(job / "partition.npy", part)
    ent_dir = job / "entities"
    ent_dir.mkdir(exist_ok=True)
    for p in range(nparts):
        atomic_write_text(ent_dir / f"entity_count_all_{p}.txt", f"{int(sizes[p])}\n")
    max_bucket = int(counts.max())
    layout = {"num_partitions": nparts, "bucket_edges": counts.reshape(nparts, nparts).tolist(),
              "partition_sizes": sizes.tolist(), "num_edges": int(counts.sum()),
              "num_edge_chunks": max(1, math.ceil(max_bucket / max_edges_per_chunk)),
              "bytes": int(sum(os.path.getsize(bucket_path(tmp, b // nparts, b % nparts))
                               for b in range(nparts * nparts))),
              "pbg_hdf5_bytes": pbg_hdf5_bytes(counts), "graph": fp, "streamed": source.streamed,
              "scan_seconds": round(scan_s, 3), "write_seconds": round(fill_s, 3)}
    atomic_write_json(tmp / "layout.json", layout, indent=1, clean=False)
    replace_dir(tmp, job / "edges")
    atomic_write_json(job / "job.json", meta, indent=1, clean=False)
    log(f"exported {layout['num_edges']:,} edges into {nparts}x{nparts} buckets "
        f"({layout['bytes'] / 1e6:.1f} MB; PBG's HDF5 import would take {layout['pbg_hdf5_bytes'] / 1e6:.0f} MB)")
    return layout


def _fingerprint(source: TripleSource, hasher, rows: int) -> dict:
    """:meth:`KnowledgeGraph.fingerprint` of the source. Its triples hash chains the splits;
    ``hasher`` already holds the train part (taken while exporting), so only valid/test are read."""
    for split in ("valid", "test"):
        hasher.update(f"{split}:{source.counts[split]}:".encode())
        for c in source.chunks(split, rows):
            hasher.update(np.ascontiguousarray(c, dtype="<i8").tobytes())
    return {"num_entities": source.num_entities, "num_relations": source.num_relations,
            "num_train": source.counts["train"], "num_valid": source.counts["valid"],
            "num_test": source.counts["test"], "names_sha256": source.names_sha256(),
            "triples_sha256": hasher.hexdigest()[:16]}
