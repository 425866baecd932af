"""Training on PyTorch-BigGraph (optional extra ``wgb[distributed]``): the scale-out engine of
``wgb kge train --engine pbg``.

PBG (``torchbiggraph==1.0.0``) trains embeddings of graphs that do not fit in memory by splitting
entities into partitions and edges into buckets ``(lhs partition, rhs partition)``; only two
partitions' embeddings are in memory at a time, and buckets can be trained on several machines
at once. :func:`train_pbg` is the whole round trip, every step bounded in memory by O(entities)
plus one chunk or partition, never the edge list:

1. export (:mod:`kge.pbg_source`, :mod:`kge.pbg_export`): the graph files are read in chunks
   and the edges written bucket by bucket into a job folder (12 bytes an edge);
2. train (:mod:`kge.pbg_run` runs ``kge/pbg_worker.py`` in the interpreter that has PBG,
   ``$WGB_PBG_PYTHON``): one machine, or rank ``R`` of ``M`` machines in PBG's distributed mode
   (``init="tcp://HOST:PORT"``, the job folder on a file system every machine mounts);
   an interrupted run resumes from PBG's checkpoint, a finished kept job trains on when asked
   for more epochs;
3. import (:mod:`kge.pbg_import`): the table (already in global id order) is moved into an
   embedding dir that :func:`kge.embeddings.load_model` maps from disk, so every bias measure
   and ``wgb kge eval`` run on it unchanged.

The job folder is removed after a successful import unless ``keep_job`` (then the run can be
extended later). Determinism: see :mod:`kge.pbg_worker` (one worker on one machine is
bit-reproducible; several workers or machines are not).

Model mapping (PBG scores an edge ``(u, r, v)`` as ``comparator(u, op_r(v))`` when relations are
not dynamic):

=========== ===================================== ==============================================
our model   PBG operator / comparator             our parameters from PBG's
=========== ===================================== ==============================================
transe      ``translation`` / ``l2``              ``r = -t_r``: ``-||u - (v + t_r)|| = -||u + r - v||``
distmult    ``diagonal`` / ``dot``                ``r = d_r``: ``<u, d_r * v>``
complex     ``complex_diagonal`` / ``dot``        ``r = conj(c_r)``: ``Re<u, c_r v> = Re(u conj(c_r) conj(v))``
=========== ===================================== ==============================================

PBG lacks **TransH** (no per-relation hyperplane projection), **RotatE** (``complex_diagonal``
does not constrain ``|r| = 1`` and uses a dot product, not a distance) and the L1 norm of TransE
(its comparators are ``dot``, ``cos``, ``l2``, ``squared_l2``); its ``linear`` / ``affine``
operators (RESCAL-like) have no counterpart among our models.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from wgbcore.provenance import package_version

from kge.pbg_export import assign_partitions, export_job, partition_offsets
from kge.pbg_import import import_job, relations_from_pbg
from kge.pbg_run import (ENV_PYTHON, WORKER, epochs_done, pbg_available, pbg_python, run_worker, self_peak_rss,
                         wait_for_export)
from kge.pbg_source import open_source

__all__ = ["PBG_MODELS", "PBG_MISSING", "PBGConfig", "PBGResult", "train_pbg", "pbg_available", "pbg_python",
           "partition_entities", "pbg_to_ours", "WORKER", "ENV_PYTHON", "check_distributed"]

#: our model name -> (PBG operator, PBG comparator)
PBG_MODELS: dict[str, tuple[str, str]] = {
    "transe": ("translation", "l2"),
    "distmult": ("diagonal", "dot"),
    "complex": ("complex_diagonal", "dot"),
}
#: models PBG cannot train, and why
PBG_MISSING: dict[str, str] = {
    "transh": "PBG has no per-relation hyperplane projection operator",
    "rotate": "PBG's complex_diagonal operator is unconstrained (|r| != 1) and scored by a dot product, "
              "not RotatE's distance",
}
TRAINER = "pytorch-biggraph"


@dataclass
class PBGConfig:
    """What to train on PBG. ``extra`` is passed into PBG's ``ConfigSchema`` unchanged."""

    model: str = "transe"
    dim: int = 100
    num_partitions: int = 1
    epochs: int = 20
    lr: float = 0.1
    loss: str = "ranking"  # PBG loss_fn: ranking | softmax | logistic
    margin: float = 1.0
    batch_size: int = 1000
    num_batch_negs: int = 50
    num_uniform_negs: int = 50
    workers: int = 1  # >1 trains Hogwild in several processes (faster, not bit-reproducible)
    seed: int = 0
    max_edges_per_chunk: int = 5_000_000  # one training chunk of a bucket (32 bytes an edge in PBG)
    deterministic: bool = True  # seed PBG's pool processes and bucket order (kge.pbg_worker)
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = self.model.lower()
        if m in PBG_MISSING:
            raise ValueError(f"model {self.model!r} cannot be trained on PyTorch-BigGraph: {PBG_MISSING[m]}; "
                             f"PBG supports {sorted(PBG_MODELS)}")
        if m not in PBG_MODELS:
            raise ValueError(f"unknown PBG model {self.model!r}; expected one of {sorted(PBG_MODELS)}")
        self.model = m
        for name in ("num_partitions", "epochs", "dim", "batch_size", "workers", "max_edges_per_chunk"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
        if self.loss not in ("ranking", "softmax", "logistic"):
            raise ValueError(f"unknown PBG loss {self.loss!r}; expected ranking, softmax or logistic")
        if m == "complex" and self.dim % 2:
            raise ValueError(f"complex needs an even PBG dimension (real + imaginary halves), got {self.dim}")
        if self.num_batch_negs and self.batch_size % self.num_batch_negs:
            raise ValueError(f"batch_size ({self.batch_size}) must be a multiple of num_batch_negs "
                             f"({self.num_batch_negs}) (a PBG requirement)")

    def pbg_dict(self, relations: list[str]) -> dict:
        op, comp = PBG_MODELS[self.model]
        cfg = {
            "entities": {"all": {"num_partitions": self.num_partitions}},
            "relations": [{"name": f"r{i}", "lhs": "all", "rhs": "all", "operator": op}
                          for i, _ in enumerate(relations)],
            "dynamic_relations": False,
            "dimension": self.dim,
            "global_emb": False,
            "comparator": comp,
            "loss_fn": self.loss,
            "margin": self.margin,
            "lr": self.lr,
            "num_epochs": self.epochs,
            "batch_size": self.batch_size,
            "num_batch_negs": self.num_batch_negs,
            "num_uniform_negs": self.num_uniform_negs,
            "workers": self.workers,
            "eval_fraction": 0.0,
            # placeholders; the worker points them into the job folder
            "entity_path": "entities", "edge_paths": ["edges"], "checkpoint_path": "checkpoint",
        }
        cfg.update(self.extra)
        return cfg


@dataclass
class PBGResult:
    model: Any  # our KGEModel holding the PBG-trained parameters (None on ranks > 0)
    entities: np.ndarray | None
    relations: np.ndarray | None
    config: PBGConfig
    seconds: float
    embedding_dir: Path | None = None
    report: dict = field(default_factory=dict)  # times, peak memory, layout, losses
    version: str = field(default_factory=package_version)


def partition_entities(num_entities: int, num_partitions: int, seed: int = 0) -> np.ndarray:
    """Seeded balanced assignment ``[E, 2]``: (partition, offset within the partition)."""
    part = assign_partitions(num_entities, num_partitions, seed)
    return np.stack([part.astype(np.int64), partition_offsets(part, num_partitions)], axis=1)


def pbg_to_ours(entities: np.ndarray, ops: dict[str, np.ndarray], num_relations: int, model: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """Map PBG's entity embeddings and operators to our ``(entities, relations)`` matrices."""
    return np.asarray(entities, dtype=np.float32), relations_from_pbg(ops, num_relations, model)


def _build_model(config: PBGConfig, ents: np.ndarray, rels: np.ndarray):
    import torch

    from kge.models import get_model

    kw = {"p_norm": 2} if config.model == "transe" else {}
    dim = config.dim // 2 if config.model == "complex" else config.dim
    model = get_model(config.model, len(ents), len(rels), dim=dim, **kw)
    with torch.no_grad():
        if tuple(model.entity.weight.shape) != ents.shape or tuple(model.relation.weight.shape) != rels.shape:
            raise ValueError(f"PBG embeddings {ents.shape}/{rels.shape} do not fit our {config.model} "
                             f"{tuple(model.entity.weight.shape)}/{tuple(model.relation.weight.shape)}")
        model.entity.weight.copy_(torch.from_numpy(np.ascontiguousarray(ents)))
        model.relation.weight.copy_(torch.from_numpy(rels))
    return model


_INIT = re.compile(r"^(tcp://[^:/]+:\d+|file:///.+)$")


def check_distributed(config: PBGConfig, machines: int, rank: int, init: str | None) -> None:
    """Errors before any work for an impossible distributed set-up."""
    if machines < 1 or not 0 <= rank < machines:
        raise ValueError(f"--rank must lie in [0, {machines}) for --machines {machines}, got {rank}")
    if machines > 1:
        if not init or not _INIT.match(init):
            raise ValueError(f"--machines {machines} needs --init tcp://HOST:PORT (rank 0's address, the same "
                             f"on every machine) or file:///shared/path; got {init!r}")
        if config.num_partitions < 2 * machines:
            raise ValueError(f"{machines} machines need at least {2 * machines} partitions (PBG trains buckets of "
                             f"disjoint partitions at once), got --partitions {config.num_partitions}")


def _emb_identity(emb_dir: Path) -> dict | None:
    p = emb_dir / "config.json"
    if not p.exists():
        return None
    try:
        cfg = json.loads(p.read_text())
    except (json.JSONDecodeError, OSError):
        return None
    return cfg if cfg.get("trainer") == TRAINER else {"trainer": cfg.get("trainer", "ours")}


def _check_job_matches(job: dict, pbg_cfg: dict, seed: int) -> None:
    theirs = {k: v for k, v in job["config"].items()}
    mine = dict(pbg_cfg)
    if theirs != mine or int(job.get("seed", 0)) != int(seed):
        diff = sorted(k for k in set(theirs) | set(mine) if theirs.get(k) != mine.get(k))
        raise ValueError(f"rank 0's job differs from this rank's options in {diff or ['seed']}; give every "
                         "machine the same command except --rank")


def train_pbg(graph: Any = None, config: PBGConfig | None = None, out_dir: str | os.PathLike | None = None, *,
              job_dir: str | os.PathLike | None = None, python: str | None = None, keep_job: bool = False,
              machines: int = 1, rank: int = 0, init: str | None = None, overwrite: bool = False,
              timeout: float | None = None, wait_timeout: float = 3600.0, min_score: float | None = None,
              log: Callable[[str], None] = lambda m: None, progress: bool = False) -> PBGResult:
    """Export, train on PBG (partitioned, optionally on several machines) and import.

    ``graph``: an in-memory graph, a path as ``wgb kge train`` takes it, or None for FB13.
    ``out_dir``: the embedding dir to write (None: the model only, through a temporary folder).
    ``job_dir``: PBG's working folder (default ``out_dir/pbg_job``; with ``machines > 1`` it must
    be one folder every machine sees). Rank 0 exports, trains and imports; other ranks wait for
    its export, train, and return a result without embeddings.
    """
    config = config or PBGConfig()
    check_distributed(config, machines, rank, init)
    exe = pbg_python(python)
    tmp = None
    if job_dir is None:
        if out_dir is not None and machines == 1:
            job_dir = Path(out_dir) / "pbg_job"
        elif machines > 1:
            raise ValueError("several machines need an explicit job folder on a shared file system (--job-dir)")
        else:
            tmp = tempfile.mkdtemp(prefix="wgb-pbg-")
            job_dir = Path(tmp) / "job"
    job = Path(job_dir)
    report: dict = {"machines": machines, "rank": rank, "loadavg_before": list(os.getloadavg())}
    try:
        if rank > 0:
            return _train_other_rank(graph, config, job, exe, machines, rank, init, timeout, wait_timeout, log,
                                     report)
        return _train_rank0(graph, config, out_dir, job, exe, keep_job or False, machines, init, overwrite,
                            timeout, min_score, log, progress, report, tmp)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _train_other_rank(graph, config, job, exe, machines, rank, init, timeout, wait_timeout, log, report):
    if graph is not None and not isinstance(graph, (str, os.PathLike)):
        rels = list(getattr(graph, "relations", None) or graph.relation_names)
    else:
        rels = None  # the relations are rank 0's business: compare everything else
    t0 = time.perf_counter()

    def check(meta: dict) -> None:
        mine = config.pbg_dict(rels if rels is not None else [r["name"] for r in meta["config"]["relations"]])
        if rels is None:
            mine["relations"] = meta["config"]["relations"]
        _check_job_matches(meta, mine, config.seed)

    wait_for_export(job, check, wait_timeout, log)
    log(f"rank {rank}: training with rank 0 ({init})")
    run = run_worker(job, python=exe, rank=rank, machines=machines, init=init, timeout=timeout, log=log)
    report.update(train_seconds=run["seconds"], train_memory=run["memory"], worker=run["worker"],
                  loadavg_after=list(os.getloadavg()))
    return PBGResult(None, None, None, config, time.perf_counter() - t0, None, report)


def _train_rank0(graph, config, out_dir, job, exe, keep_job, machines, init, overwrite, timeout, min_score, log,
                 progress, report, tmp):
    t0 = time.perf_counter()
    emb = Path(out_dir) if out_dir is not None else None
    if overwrite:
        shutil.rmtree(job, ignore_errors=True)
        if emb is not None and (emb / "config.json").exists():  # an embedding dir: start it over too
            shutil.rmtree(emb)
    prev_emb = _emb_identity(emb) if emb is not None else None
    if prev_emb is not None and prev_emb.get("trainer") != TRAINER and not overwrite:
        raise ValueError(f"{emb} holds embeddings of another trainer ({prev_emb.get('trainer')}); "
                         "use another --out or --overwrite")
    source = open_source(graph, min_score=min_score)
    pbg_cfg = config.pbg_dict(source.relations or [])  # relations of first-appearance TSV: after the scan
    state: dict = {}

    def done_already(ident: dict) -> bool:
        state["ident"] = ident
        return (prev_emb is not None and not overwrite and prev_emb.get("pbg_identity") == ident
                and prev_emb.get("pbg_config", {}).get("epochs") == config.epochs)

    def cfg_for(relations: list[str]) -> dict:
        return config.pbg_dict(relations)

    layout = export_job(source, job, pbg_cfg, seed=config.seed, max_edges_per_chunk=config.max_edges_per_chunk,
                        log=log, skip_if=done_already, config_for=cfg_for,
                        extra_meta={"deterministic": config.deterministic})
    report["export_seconds"] = time.perf_counter() - t0
    report["export_peak_rss_bytes"] = self_peak_rss()
    if layout is None:  # this embedding dir already holds this run
        log(f"{emb}: already trained ({config.epochs} epochs on this graph); nothing to do")
        res = PBGResult(None, None, None, config, 0.0, emb, {**report, "skipped": True})
        return res
    done = epochs_done(job)
    if done > config.epochs:
        raise ValueError(f"{job}: its checkpoint already holds {done} epochs, more than --epochs {config.epochs}; "
                         "ask for more epochs, or --overwrite to start over")
    out = job / "out"
    finished = out / "DONE"
    if finished.exists() and json.loads((out / "stats.json").read_text()).get("epochs") != config.epochs:
        shutil.rmtree(out)  # a finished run asked for more epochs: train on from its checkpoint
    if done:
        log(f"{job}: resuming from its checkpoint after {done} epoch(s)")
    t1 = time.perf_counter()
    if not finished.exists():
        run = run_worker(job, python=exe, rank=0, machines=machines, init=init, timeout=timeout, log=log,
                         progress=progress)
        report.update(train_seconds=run["seconds"], train_memory=run["memory"], worker=run["worker"])
    else:
        report.update(train_seconds=0.0, worker=json.loads((out / "stats.json").read_text()))
    report["resumed_from_epoch"] = done
    t2 = time.perf_counter()
    rels = source.relations or []
    extra = {"trainer": TRAINER, "torchbiggraph": "1.0.0", "seed": config.seed,
             "pbg_config": dataclasses.asdict(config), "pbg_identity": state.get("ident"), "machines": machines,
             "layout": {k: layout[k] for k in ("num_partitions", "num_edges", "num_edge_chunks", "bytes",
                                                "pbg_hdf5_bytes", "partition_sizes")}}
    if emb is not None:
        import_job(job, emb, model=config.model, dim=config.dim, entities=source.entities, relations=rels,
                   graph_fingerprint=layout["graph"], graph_name=source.name, move=not keep_job,
                   extra={**extra, "seconds": round(t2 - t0, 3)})
        report["import_seconds"] = time.perf_counter() - t2
        from kge.embeddings import load_model

        model = load_model(emb)
        ents = model.entity.weight.detach().numpy()
    else:
        ents = np.load(out / "entities.npy")
        with np.load(out / "operators.npz") as z:
            ops = {k: z[k] for k in z.files}
        e, r = pbg_to_ours(ents, ops, len(rels), config.model)
        model = _build_model(config, e, r)
        report["import_seconds"] = time.perf_counter() - t2
    rel = model.relation.weight.detach().numpy()
    report["peak_rss_main_bytes"] = self_peak_rss()
    report["loadavg_after"] = list(os.getloadavg())
    report["layout"] = extra["layout"]
    report["kept_job"] = bool(keep_job)
    if not keep_job and tmp is None:
        shutil.rmtree(job, ignore_errors=True)
    return PBGResult(model, ents, rel, config, time.perf_counter() - t0, emb, report)

