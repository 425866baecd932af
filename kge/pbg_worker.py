"""Runs PyTorch-BigGraph on a job folder written by :func:`kge.pbg_export.export_job`.

Standalone on purpose: it imports only numpy, torch and torchbiggraph (never ``kge``), so it can
run in any Python that has PBG, e.g. a separate virtual environment with ``setuptools<81`` when
the main one has a newer setuptools (PBG 1.0.0 imports ``pkg_resources``)::

    python kge/pbg_worker.py JOB_DIR [--rank R --machines M --init tcp://HOST:PORT]

Reads ``JOB_DIR/job.json`` (the PBG config dict, ``seed``, ``deterministic``), the entity counts
in ``JOB_DIR/entities/`` and the bucket files ``JOB_DIR/edges/bucket_<l>_<r>.npy`` (``int32 [3, n]``:
lhs offset, rhs offset, relation) through an edge-storage plugin (scheme ``wgbnpy://``), so no HDF5
copy of the edges is made. Trains (resuming from ``JOB_DIR/checkpoint``; with ``--machines M > 1``
as rank ``R`` of PBG's distributed mode, all ranks sharing ``JOB_DIR``), then rank 0 writes
``JOB_DIR/out/entities.npy`` (``float32 [E, dim]`` in global id order, filled partition by
partition through small memory-mapped windows), ``operators.npz`` (each relation's operator
parameters), ``stats.json`` (PBG's loss per epoch, times) and ``DONE``.

**Determinism.** PBG seeds each Hogwild worker process with its process id
(``torchbiggraph.util._pool_init``: ``torch.manual_seed(os.getpid())``) and orders buckets with an
unseeded ``random.Random()`` every epoch, so two runs of one config differ. With
``"deterministic": true`` (the default) this worker re-seeds each pool process from the seed and
its pool index, and gives the bucket scheduler ``random.Random("<seed>:<iteration>")``: one worker
on one machine is then bit-reproducible. Still not reproducible: several workers (Hogwild updates
race), several machines (the lock server hands out buckets in arrival order), and a resumed run
against an uninterrupted one (the torch generator's state is not checkpointed).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path

WINDOW_BYTES = 64 * 2 ** 20  # rows of out/entities.npy mapped at a time when writing
SCHEME = "wgbnpy"


def _seed_pool_process(seed: int) -> None:
    """Runs in each PBG pool process after PBG seeded it with its pid: seed from the pool index."""
    import multiprocessing

    import torch

    ident = multiprocessing.current_process()._identity
    torch.manual_seed(int(seed) * 1009 + (ident[-1] if ident else 0))


class _SeededRandomModule:
    """Stands in for ``random`` inside ``torchbiggraph.bucket_scheduling``: ``Random()`` is seeded
    by the seed and the iteration (the count of passes, starting at the checkpoint's version)."""

    def __init__(self, seed: int, start: int) -> None:
        self.seed, self.n = seed, start

    def Random(self, *args):  # noqa: N802 - the name PBG calls
        if args:
            return random.Random(*args)
        r = random.Random(f"{self.seed}:{self.n}")
        self.n += 1
        return r

    def __getattr__(self, name):
        return getattr(random, name)


def _allow_pbg_types() -> None:
    """PBG's RPC (distributed mode) sends its own types through ``torch.save``/``torch.load``,
    which loads ``weights_only`` since torch 2.6: allow exactly those classes (every process)."""
    import torch
    from torchbiggraph.bucket_scheduling import BucketStats
    from torchbiggraph.stats import Stats
    from torchbiggraph.types import Bucket, Side

    torch.serialization.add_safe_globals([Bucket, BucketStats, Side, Stats])


def _register_storage() -> None:
    import numpy as np
    import torch
    from torchbiggraph.edgelist import EdgeList
    from torchbiggraph.entitylist import EntityList
    from torchbiggraph.graph_storages import EDGE_STORAGES, AbstractEdgeStorage

    if SCHEME in EDGE_STORAGES.registry:
        return

    class BucketFileStorage(AbstractEdgeStorage):
        """PBG edge storage over ``bucket_<l>_<r>.npy`` (``int32 [3, n]``), read chunk by chunk."""

        def __init__(self, url: str) -> None:
            self.path = Path(url[len(SCHEME) + 3:] if url.startswith(SCHEME + "://") else url)

        def prepare(self) -> None:
            pass

        def _file(self, lhs_p: int, rhs_p: int) -> Path:
            return self.path / f"bucket_{lhs_p}_{rhs_p}.npy"

        def _header(self, lhs_p: int, rhs_p: int):
            with open(self._file(lhs_p, rhs_p), "rb") as f:
                version = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(f)
                return shape[1], dtype, f.tell()

        def has_edges(self, lhs_p: int, rhs_p: int) -> bool:
            return self._file(lhs_p, rhs_p).is_file()

        def get_number_of_edges(self, lhs_p: int, rhs_p: int) -> int:
            return int(self._header(lhs_p, rhs_p)[0])

        def load_chunk_of_edges(self, lhs_p: int, rhs_p: int, chunk_idx: int = 0, num_chunks: int = 1):
            n, dtype, off = self._header(lhs_p, rhs_p)
            begin, end = int(chunk_idx * n / num_chunks), int((chunk_idx + 1) * n / num_chunks)
            cols = []
            with open(self._file(lhs_p, rhs_p), "rb") as f:
                for row in range(3):
                    f.seek(off + (row * n + begin) * dtype.itemsize)
                    a = np.fromfile(f, dtype=dtype, count=end - begin)
                    cols.append(torch.from_numpy(a.astype(np.int64)))
            return EdgeList(EntityList.from_tensor(cols[0]), EntityList.from_tensor(cols[1]), cols[2])

        def save_edges_by_appending(self, lhs_p: int, rhs_p: int):
            raise NotImplementedError("bucket files are written by kge.pbg_export")

    EDGE_STORAGES.register(SCHEME, BucketFileStorage)


def write_output(job_dir: Path, cm, part, nparts: int, dim: int) -> None:
    """``out/entities.npy`` in global id order, one partition at a time through row windows."""
    import numpy as np

    out = job_dir / "out"
    out.mkdir(exist_ok=True)
    tmp = out / ".entities.npy.tmp"
    E = len(part)
    with open(tmp, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (E, dim)})
        off = f.tell()
        f.truncate(off + E * dim * 4)
    window = max(1, WINDOW_BYTES // (dim * 4))
    for p in range(nparts):
        emb, _ = cm.read("all", p)
        emb = emb.numpy()
        idx = np.flatnonzero(part == p)  # ascending = offset order
        if len(idx) != len(emb):
            raise RuntimeError(f"partition {p}: {len(emb)} embeddings in the checkpoint, {len(idx)} entities")
        for a in range(0, E, window):
            lo, hi = np.searchsorted(idx, [a, a + window])
            if lo == hi:
                continue
            mm = np.memmap(tmp, dtype="<f4", mode="r+", offset=off + a * dim * 4, shape=(min(window, E - a), dim))
            mm[idx[lo:hi] - a] = emb[lo:hi]
            mm.flush()
            del mm
        del emb
    os.replace(tmp, out / "entities.npy")


def _epoch_losses(cm) -> list[float]:
    by_epoch: dict[int, list[tuple[float, int]]] = {}
    for s in cm.maybe_read_stats():
        st = s.get("stats", {})
        by_epoch.setdefault(int(s.get("epoch_idx", 0)), []).append(
            (float(st.get("metrics", {}).get("loss", st.get("loss", float("nan")))), int(st.get("count", 0))))
    out = []
    for e in sorted(by_epoch):
        tot = sum(c for _, c in by_epoch[e])
        out.append(sum(v * c for v, c in by_epoch[e]) / tot if tot else float("nan"))
    return out


def _timing(marks: list[tuple[float, int]], total: float) -> dict:
    """Start-up (to the end of the first bucket) vs. steady training: edges a second over the
    buckets after the first (PBG's pool start-up and the first load fall into the first)."""
    out = {"buckets_trained": len(marks), "edges_trained": sum(n for _, n in marks),
           "startup_seconds": round(marks[0][0], 3) if marks else None}
    if len(marks) > 1:
        steady_s = marks[-1][0] - marks[0][0]
        steady_edges = sum(n for _, n in marks[1:])
        out.update(steady_seconds=round(steady_s, 3), steady_edges=steady_edges,
                   steady_edges_per_second=round(steady_edges / steady_s, 1) if steady_s > 0 else None)
    out["after_last_bucket_seconds"] = round(total - marks[-1][0], 3) if marks else None
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job_dir")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--machines", type=int, default=1)
    ap.add_argument("--init", default=None, help="torch.distributed init method, e.g. tcp://HOST:PORT")
    args = ap.parse_args(argv)
    import numpy as np
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources deprecation
        import torchbiggraph.bucket_scheduling as bucket_scheduling
        from torchbiggraph.checkpoint_manager import CheckpointManager
        from torchbiggraph.config import parse_config
        from torchbiggraph.train import train_and_report_stats
        from torchbiggraph.util import SubprocessInitializer, setup_logging

    job_dir = Path(args.job_dir).resolve()
    job = json.loads((job_dir / "job.json").read_text())
    seed = int(job.get("seed", 0))
    deterministic = bool(job.get("deterministic", True))
    cfg = dict(job["config"])
    cfg["entity_path"] = str(job_dir / "entities")
    cfg["edge_paths"] = [f"{SCHEME}://{job_dir / 'edges'}"]
    cfg["checkpoint_path"] = str(job_dir / "checkpoint")
    layout = json.loads((job_dir / "edges" / "layout.json").read_text())
    cfg.setdefault("num_edge_chunks", int(layout["num_edge_chunks"]))  # sized by the export for max_edges_per_chunk
    if args.machines > 1:
        if not args.init:
            raise SystemExit("--machines > 1 needs --init (e.g. tcp://HOST:PORT)")
        cfg["num_machines"] = args.machines
        cfg["distributed_init_method"] = args.init
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    _register_storage()
    config = parse_config(cfg)
    (entity_type,) = config.entities.keys()
    nparts = config.entities[entity_type].num_partitions
    setup_logging(config.verbose)
    subprocess_init = SubprocessInitializer()
    subprocess_init.register(setup_logging, config.verbose)
    subprocess_init.register(_allow_pbg_types)
    _allow_pbg_types()
    vfile = job_dir / "checkpoint" / "checkpoint_version.txt"
    start = int(vfile.read_text().strip()) if vfile.exists() else 0
    start_index = start * nparts * nparts  # bucket stats indices of the checkpointed iterations
    if deterministic:
        subprocess_init.register(_seed_pool_process, seed)
        bucket_scheduling.random = _SeededRandomModule(seed, start)
    t0 = time.perf_counter()
    marks = []  # (seconds since start, edges) of each bucket this rank trained in this session
    for index, _, stats, _ in train_and_report_stats(config, rank=args.rank, subprocess_init=subprocess_init):
        if index >= start_index:  # rank 0 first replays the stats of checkpointed epochs
            marks.append((time.perf_counter() - t0, int(stats.count)))
    train_s = time.perf_counter() - t0
    timing = _timing(marks, train_s)
    if args.rank != 0:
        print("wgb-timing " + json.dumps(timing), flush=True)
    if args.rank != 0:
        return
    t0 = time.perf_counter()
    part = np.load(job_dir / "partition.npy", mmap_mode="r")
    cm = CheckpointManager(config.checkpoint_path)
    write_output(job_dir, cm, np.asarray(part), nparts, config.dimension)
    state, _ = cm.read_model()
    ops = {k: v.detach().cpu().numpy() for k, v in (state or {}).items()}
    losses = _epoch_losses(cm)
    cm.close()
    out = job_dir / "out"
    # temp name + rename (no wgbcore here): an interrupted worker leaves no half-written file
    stats = {"train_seconds": round(train_s, 3), "write_seconds": round(time.perf_counter() - t0, 3), **timing,
             "epoch_loss": losses, "epochs": config.num_epochs, "machines": args.machines,
             "deterministic": deterministic}
    for name, write in (("operators.npz", lambda fh: np.savez(fh, **ops)),
                        ("stats.json", lambda fh: fh.write(json.dumps(stats, indent=1).encode())),
                        ("DONE", lambda fh: fh.write(b"ok\n"))):
        tmp = out / f".{name}.tmp"
        with open(tmp, "wb") as fh:
            write(fh)
        os.replace(tmp, out / name)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main()
