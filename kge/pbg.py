"""Training on PyTorch-BigGraph (optional extra ``wgb[distributed]``) and importing the result.

PBG (``torchbiggraph==1.0.0``) trains embeddings of graphs that do not fit in memory by splitting
entities into partitions and edges into buckets ``(lhs partition, rhs partition)``; only two
partitions' embeddings are in memory at a time (and buckets can be spread over machines).
This module:

1. :func:`export_pbg` writes a job folder: the PBG config (one partitioned entity type ``all``
   with ``num_partitions`` partitions, one PBG relation per graph relation with the model's
   operator), the training edges and a seeded entity -> (partition, offset) assignment;
2. :func:`run_pbg` runs PBG on it (``kge/pbg_worker.py``) in a subprocess, with the current
   Python or any other one that has PBG (``python=`` or ``$WGB_PBG_PYTHON``) -- PBG 1.0.0 imports
   ``pkg_resources``, removed in setuptools 81, so it often lives in its own virtual environment;
3. :func:`import_pbg` maps PBG's per-partition embeddings and relation operators back onto our
   models, so every bias measure (and evaluation) runs on PBG-trained embeddings.

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
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wgbcore.atomicio import atomic_open, atomic_write_json
from wgbcore.provenance import package_version

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
WORKER = Path(__file__).resolve().with_name("pbg_worker.py")
ENV_PYTHON = "WGB_PBG_PYTHON"


@dataclass
class PBGConfig:
    """What to train on PBG. ``extra`` is passed into PBG's ``ConfigSchema`` unchanged."""

    model: str = "transe"
    dim: int = 100
    num_partitions: int = 2
    epochs: int = 20
    lr: float = 0.1
    loss: str = "ranking"  # PBG loss_fn: ranking | softmax | logistic
    margin: float = 1.0
    batch_size: int = 1000
    num_batch_negs: int = 50
    num_uniform_negs: int = 50
    workers: int = 1  # >1 trains Hogwild in several processes (faster, not bit-reproducible)
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = self.model.lower()
        if m in PBG_MISSING:
            raise ValueError(f"model {self.model!r} cannot be trained on PyTorch-BigGraph: {PBG_MISSING[m]}; "
                             f"PBG supports {sorted(PBG_MODELS)}")
        if m not in PBG_MODELS:
            raise ValueError(f"unknown PBG model {self.model!r}; expected one of {sorted(PBG_MODELS)}")
        self.model = m
        if self.num_partitions < 1:
            raise ValueError(f"num_partitions must be >= 1, got {self.num_partitions}")
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


def _graph_parts(graph: Any) -> tuple[list[str], list[str], np.ndarray]:
    ents = list(getattr(graph, "entities", None) or getattr(graph, "entity_names"))
    rels = list(getattr(graph, "relations", None) or getattr(graph, "relation_names"))
    train = np.asarray(graph.train, dtype=np.int64)
    if train.ndim != 2 or train.shape[1] != 3:
        raise ValueError(f"training triples must have shape [N, 3], got {train.shape}")
    if len(train) == 0:
        raise ValueError("the graph has no training triples")
    return ents, rels, train


def partition_entities(num_entities: int, num_partitions: int, seed: int = 0) -> np.ndarray:
    """Seeded balanced assignment ``[E, 2]``: (partition, offset within the partition)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(num_entities)
    part = np.empty((num_entities, 2), dtype=np.int64)
    part[perm, 0] = np.arange(num_entities) % num_partitions
    for p in range(num_partitions):
        idx = np.flatnonzero(part[:, 0] == p)
        part[idx, 1] = np.arange(len(idx))
    return part


def export_pbg(graph: Any, job_dir: str | os.PathLike, config: PBGConfig) -> Path:
    """Write a PBG job folder for ``graph``'s training triples (see module docstring)."""
    ents, rels, train = _graph_parts(graph)
    job = Path(job_dir)
    job.mkdir(parents=True, exist_ok=True)
    import hashlib
    meta = {"config": config.pbg_dict(rels), "seed": config.seed, "num_entities": len(ents),
            "edges_sha256": hashlib.sha256(np.ascontiguousarray(train).tobytes()).hexdigest()[:16]}
    old = job / "job.json"
    if old.exists() and json.loads(old.read_text()) != meta:
        for stale in ("out", "checkpoint"):  # another config or graph: the old run is stale
            shutil.rmtree(job / stale, ignore_errors=True)
    for name, arr in (("edges.npy", train),
                      ("partition.npy", partition_entities(len(ents), config.num_partitions, config.seed))):
        with atomic_open(job / name, "wb") as fh:
            np.save(fh, arr)
    atomic_write_json(job / "job.json", meta, indent=1, clean=False)
    atomic_write_json(job / "wgb.json", {
        "wgb_config": dataclasses.asdict(config), "entities": len(ents), "relations": rels,
        "graph": getattr(graph, "name", ""), "version": package_version()}, indent=1, clean=False)
    return job


def pbg_available(python: str | None = None) -> bool:
    """Whether PBG can be imported by ``python`` (default: ``$WGB_PBG_PYTHON`` or this one)."""
    exe = python or os.environ.get(ENV_PYTHON)
    if not exe:
        if importlib.util.find_spec("torchbiggraph") is None:
            return False
        exe = sys.executable
    r = subprocess.run([exe, "-W", "ignore", "-c", "import torchbiggraph.train"], capture_output=True)
    return r.returncode == 0


def pbg_python(python: str | None = None) -> str:
    """The interpreter that runs PBG; a clear error when none can import it."""
    exe = python or os.environ.get(ENV_PYTHON) or sys.executable
    r = subprocess.run([exe, "-W", "ignore", "-c", "import torchbiggraph.train"], capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(
            f"PyTorch-BigGraph cannot be imported by {exe} ({last}). Install the extra "
            f"(pip install 'wgb[distributed]', which pins torchbiggraph==1.0.0 and setuptools<81), or point "
            f"${ENV_PYTHON} / python= at an interpreter that has it.")
    return exe


def run_pbg(job_dir: str | os.PathLike, *, python: str | None = None, log: str | os.PathLike | None = None,
            timeout: float | None = None) -> Path:
    """Run PBG on an exported job folder; returns ``job_dir/out`` (``entities.npy``,
    ``operators.npz``, ``DONE``). A finished job (``out/DONE``) is not run again; an interrupted
    one resumes from PBG's last checkpoint (``job_dir/checkpoint``, written every epoch)."""
    job = Path(job_dir)
    out = job / "out"
    if (out / "DONE").exists():
        return out
    for stale in ("entities", "edges", "out"):  # rewritten identically; checkpoint/ is kept: PBG resumes from it
        shutil.rmtree(job / stale, ignore_errors=True)
    exe = pbg_python(python)
    log_path = Path(log) if log else job / "pbg.log"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    with open(log_path, "w") as f:
        r = subprocess.run([exe, str(WORKER), str(job)], stdout=f, stderr=subprocess.STDOUT, env=env,
                           timeout=timeout)
    if r.returncode != 0 or not (out / "DONE").exists():
        tail = "".join(log_path.read_text(errors="replace").splitlines(True)[-20:])
        raise RuntimeError(f"PBG training failed (exit {r.returncode}); see {log_path}:\n{tail}")
    return out


def _operator_params(ops: dict[str, np.ndarray], rel: int) -> dict[str, np.ndarray]:
    """The right-hand-side operator parameters of PBG relation ``rel`` from PBG's model state
    dict (keys ``rhs_operators.<rel>.<param>``)."""
    prefix = f"rhs_operators.{rel}."
    found = {k[len(prefix):]: v for k, v in ops.items() if k.startswith(prefix)}
    if not found:
        raise KeyError(f"no rhs operator for relation {rel} in the PBG checkpoint (keys: {sorted(ops)[:8]})")
    return found


def pbg_to_ours(entities: np.ndarray, ops: dict[str, np.ndarray], num_relations: int, model: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """Map PBG's entity embeddings and operators to our ``(entities, relations)`` matrices."""
    rel = []
    for r in range(num_relations):
        p = _operator_params(ops, r)
        if model == "transe":
            rel.append(-p["translation"])
        elif model == "distmult":
            rel.append(p["diagonal"])
        elif model == "complex":
            rel.append(np.concatenate([p["real"], -p["imag"]]))
        else:  # pragma: no cover - PBGConfig validates
            raise ValueError(model)
    return np.asarray(entities, dtype=np.float32), np.stack(rel).astype(np.float32)


@dataclass
class PBGResult:
    model: Any  # our KGEModel holding the PBG-trained parameters
    entities: np.ndarray
    relations: np.ndarray
    config: PBGConfig
    seconds: float
    embedding_dir: Path | None = None
    version: str = field(default_factory=package_version)


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
        model.entity.weight.copy_(torch.from_numpy(ents))
        model.relation.weight.copy_(torch.from_numpy(rels))
    return model


def import_pbg(job_dir: str | os.PathLike, graph: Any, config: PBGConfig,
               out_dir: str | os.PathLike | None = None, seconds: float = 0.0) -> PBGResult:
    """Read a finished PBG job back as one of our models (and, with ``out_dir``, an embedding dir)."""
    job = Path(job_dir)
    out = job / "out"
    if not (out / "DONE").exists():
        raise FileNotFoundError(f"{out}: no finished PBG run (DONE missing); run run_pbg first")
    ents, rels, _ = _graph_parts(graph)
    emb = np.load(out / "entities.npy")
    if emb.shape[0] != len(ents):
        raise ValueError(f"{out / 'entities.npy'} has {emb.shape[0]} rows but the graph has {len(ents)} entities")
    with np.load(out / "operators.npz") as z:
        ops = {k: z[k] for k in z.files}
    e, r = pbg_to_ours(emb, ops, len(rels), config.model)
    model = _build_model(config, e, r)
    emb_dir = None
    if out_dir is not None:
        from kge.embeddings import save_model

        emb_dir = Path(save_model(model, out_dir, graph if hasattr(graph, "fingerprint") else None, extra={
            "trainer": "pytorch-biggraph", "torchbiggraph": "1.0.0", "seed": config.seed,
            "pbg_config": dataclasses.asdict(config), "seconds": seconds}))
    return PBGResult(model, e, r, config, seconds, emb_dir)


def train_pbg(graph: Any, config: PBGConfig | None = None, out_dir: str | os.PathLike | None = None, *,
              job_dir: str | os.PathLike | None = None, python: str | None = None) -> PBGResult:
    """Export, train on PBG (partitioned) and import: the whole round trip.

    ``job_dir`` keeps PBG's files (default: ``out_dir/pbg_job`` or a temporary folder)."""
    import tempfile

    config = config or PBGConfig()
    tmp = None
    if job_dir is None:
        if out_dir is not None:
            job_dir = Path(out_dir) / "pbg_job"
        else:
            tmp = tempfile.TemporaryDirectory(prefix="wgb-pbg-")
            job_dir = tmp.name
    try:
        t0 = time.perf_counter()
        export_pbg(graph, job_dir, config)
        run_pbg(job_dir, python=python)
        secs = time.perf_counter() - t0
        return import_pbg(job_dir, graph, config, out_dir, seconds=secs)
    finally:
        if tmp is not None:
            tmp.cleanup()
