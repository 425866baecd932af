"""Runs PyTorch-BigGraph on a job folder written by :func:`kge.pbg.export_pbg`.

Standalone on purpose: it imports only numpy, torch, h5py and torchbiggraph (never ``kge``), so it
can run in any Python that has PBG, e.g. a separate virtual environment with ``setuptools<81``
when the main one has a newer setuptools (PBG 1.0.0 imports ``pkg_resources``)::

    python kge/pbg_worker.py JOB_DIR

Reads ``JOB_DIR/job.json`` (the PBG config as a dict + ``seed``), ``JOB_DIR/edges.npy``
(``[N, 3]`` global ids ``head, relation, tail``) and ``JOB_DIR/partition.npy`` (``[E, 2]``:
partition and offset of every entity); writes PBG's partitioned HDF5 edges and entity counts,
trains, then writes ``JOB_DIR/out/entities.npy`` (``[E, dim]`` in global id order),
``JOB_DIR/out/operators.npz`` (each relation's operator parameters) and ``JOB_DIR/out/DONE``.
"""
from __future__ import annotations

import json
import os
import random
import sys
import warnings
from pathlib import Path


def main(job_dir: str) -> None:
    import numpy as np
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources deprecation
        from torchbiggraph.checkpoint_manager import CheckpointManager
        from torchbiggraph.config import parse_config
        from torchbiggraph.edgelist import EdgeList
        from torchbiggraph.entitylist import EntityList
        from torchbiggraph.graph_storages import EDGE_STORAGES, ENTITY_STORAGES
        from torchbiggraph.train import train
        from torchbiggraph.util import SubprocessInitializer, setup_logging

    job_dir = Path(job_dir)
    job = json.loads((job_dir / "job.json").read_text())
    seed = int(job.pop("seed", 0))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    cfg = job["config"]
    cfg["entity_path"] = str(job_dir / "entities")
    cfg["edge_paths"] = [str(job_dir / "edges")]
    cfg["checkpoint_path"] = str(job_dir / "checkpoint")
    config = parse_config(cfg)
    (entity_type,) = config.entities.keys()
    nparts = config.entities[entity_type].num_partitions

    part = np.load(job_dir / "partition.npy")
    edges = np.load(job_dir / "edges.npy")
    ent_store = ENTITY_STORAGES.make_instance(config.entity_path)
    ent_store.prepare()
    for p in range(nparts):
        ent_store.save_count(entity_type, p, int((part[:, 0] == p).sum()))
    edge_store = EDGE_STORAGES.make_instance(config.edge_paths[0])
    edge_store.prepare()
    hp, tp = part[edges[:, 0], 0], part[edges[:, 2], 0]
    for lp in range(nparts):
        for rp in range(nparts):
            sel = (hp == lp) & (tp == rp)
            e = edges[sel]
            edge_store.save_edges(lp, rp, EdgeList(
                EntityList.from_tensor(torch.from_numpy(part[e[:, 0], 1].copy())),
                EntityList.from_tensor(torch.from_numpy(part[e[:, 2], 1].copy())),
                torch.from_numpy(e[:, 1].copy())))

    setup_logging(config.verbose)
    subprocess_init = SubprocessInitializer()
    subprocess_init.register(setup_logging, config.verbose)
    train(config, subprocess_init=subprocess_init)

    cm = CheckpointManager(config.checkpoint_path)
    out = np.zeros((len(part), config.dimension), dtype=np.float32)
    for p in range(nparts):
        emb, _ = cm.read(entity_type, p)
        idx = np.flatnonzero(part[:, 0] == p)
        out[idx] = emb.numpy()[part[idx, 1]]
    state, _ = cm.read_model()
    ops = {k: v.detach().cpu().numpy() for k, v in (state or {}).items()}
    cm.close()
    out_dir = job_dir / "out"
    out_dir.mkdir(exist_ok=True)
    # temp name + rename (this worker may run in another environment, without wgbcore): an
    # interrupted worker leaves no half-written array next to an older DONE
    for name, write in (("entities.npy", lambda fh: np.save(fh, out)),
                        ("operators.npz", lambda fh: np.savez(fh, **ops)),
                        ("DONE", lambda fh: fh.write(b"ok\n"))):
        tmp = out_dir / f".{name}.tmp"
        with open(tmp, "wb") as fh:
            write(fh)
        os.replace(tmp, out_dir / name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    main(sys.argv[1])
