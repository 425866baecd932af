"""Training knowledge graph embeddings: sparse updates, checkpoints, resume, early stopping.

``train(graph, TrainConfig(...), out_dir)`` trains a registered model with negative sampling and
writes an embedding dir (:mod:`kge.embeddings`) plus ``result.json`` and a ``DONE`` marker to
``out_dir``. Every ``checkpoint_every`` epochs the full state (model, optimizer, sampler random
state, history, best model so far, the graph's fingerprint) goes to ``out_dir/checkpoint.pt``
as tensors and plain values only (read back with ``weights_only=True``: a crafted file runs
nothing); rerunning the same call after an interruption continues from it and gives the same
numbers as an uninterrupted run. A run dir of another configuration or another graph (even the
same file with its lines shuffled) is refused.
A finished ``out_dir`` (``DONE``) with the same config is returned without training again.

All model parameters are ``nn.Embedding(sparse=True)`` tables and every update is sparse: the
entity table (the big one) by :class:`RowAdam`, a lazy Adam on the batch's unique rows gathered
into one dense block, with the semantics of :class:`torch.optim.SparseAdam` (moments of rows not
in a batch are not decayed); the small per-relation tables (relations, TransH normals) get dense
gradients during training and plain Adam. Models with an
entity constraint (TransE: unit sphere, TransH: unit ball) project the updated rows.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from wgbcore.atomicio import atomic_torch_save, atomic_write_json, atomic_write_text
from wgbcore.config import check_fields
from wgbcore.provenance import package_version
from wgbcore.seeding import seed_everything

from kge.embeddings import save_model
from kge.evaluate import evaluate
from kge.graph import KnowledgeGraph
from kge.losses import LOSSES, get_loss
from kge.models import MODELS, KGEModel, get_model
from kge.sampling import SAMPLERS, get_sampler

__all__ = ["TrainConfig", "TrainResult", "train", "seed_everything", "make_optimizer", "ConfigMismatchError",
           "CheckpointError", "load_checkpoint"]

CHECKPOINT = "checkpoint.pt"
RESULT = "result.json"
DONE = "DONE"
# fields that may change between an interrupted run and its resumption
_RESUMABLE_CHANGES = {"epochs", "num_threads", "checkpoint_every", "max_train_seconds"}


class ConfigMismatchError(ValueError):
    """out_dir holds a run with a different configuration or of another graph."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or does not fit (garbage, truncated, crafted, other model)."""


_CHECKPOINT_KEYS = ("config", "epoch", "model", "optimizers", "row_optimizer", "generator", "torch_rng", "history",
                    "best", "train_seconds")
_START_OVER = "delete it or rerun with --overwrite (overwrite=True) to start over"


def _first_line(exc: BaseException) -> str:
    """The first sentence of the first line of ``exc`` (at most 200 characters)."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    line = text.splitlines()[0]
    return line.split(". ")[0].rstrip(".")[:200]


def load_checkpoint(path: str | os.PathLike) -> dict:
    """A training checkpoint, read with ``torch.load(weights_only=True)``: tensors and plain values
    only, so a crafted file cannot run code. Any failure is a one-line :class:`CheckpointError`
    naming the file."""
    path = Path(path)
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # zip, unpickler and type errors alike: the file is unusable
        raise CheckpointError(f"{path}: not a readable kge checkpoint ({_first_line(exc)}); files holding "
                              f"anything but tensors and plain values are refused, as loading them could run "
                              f"code; {_START_OVER}") from None
    missing = [k for k in _CHECKPOINT_KEYS if not isinstance(ck, dict) or k not in ck]
    if missing or not isinstance(ck["config"], dict):
        raise CheckpointError(f"{path}: not a kge checkpoint (missing {missing or ['config']}); {_START_OVER}")
    return ck


_FINGERPRINT_WORDS = {
    "names_sha256": "the entity/relation names or their order differ (entity ids would belong to other entities)",
    "triples_sha256": "the triples or their order differ",
}


def _check_same_graph(saved: dict | None, graph: KnowledgeGraph, where: Path) -> None:
    """Refuse a run recorded for another graph (``saved``: its :meth:`KnowledgeGraph.fingerprint`;
    keys one side lacks, e.g. from an older wgb, are not compared)."""
    if not isinstance(saved, dict):
        return
    now = graph.fingerprint()
    diff = [k for k in now if k in saved and saved[k] != now[k]]
    if diff:
        details = "; ".join(_FINGERPRINT_WORDS.get(k, f"{k}: {saved[k]!r} -> {now[k]!r}") for k in diff)
        raise ConfigMismatchError(f"{where} holds a run on another graph than {graph.name!r} ({details}); "
                                  f"use another output dir or --overwrite (overwrite=True) to start over")


def _check_number(config, name: str, ok, rule: str, integer: bool = False) -> None:
    """``config.name`` must be a finite number (an int when ``integer``) for which ``ok`` holds."""
    v = getattr(config, name)
    kind = (int,) if integer else (int, float)
    if isinstance(v, bool) or not isinstance(v, kind) or (isinstance(v, float) and not math.isfinite(v)):
        what = "an integer" if integer else "a finite number"
        raise ValueError(f"TrainConfig.{name} must be {what}{' ' + rule if rule else ''}, got {v!r}")
    if not ok(v):
        raise ValueError(f"TrainConfig.{name} must be {rule}, got {v!r}")


@dataclass
class TrainConfig:
    """Everything that defines a training run (serialised into the embedding dir)."""

    model: str = "transe"
    dim: int = 100
    model_kwargs: dict = field(default_factory=dict)  # e.g. {"p_norm": 1} for TransE
    epochs: int = 100
    batch_size: int = 4096
    lr: float = 0.01
    negatives: int = 1
    loss: str = "margin"  # a name of kge.losses.LOSSES: margin | softmax | softplus
    margin: float = 1.0
    sampler: str = "uniform"  # a name of kge.sampling.SAMPLERS: uniform | bernoulli
    regularization: float = 0.0  # L2 weight on the batch's entity/relation vectors
    seed: int = 0
    eval_every: int = 0  # validate every k epochs (0 = never)
    patience: int = 0  # stop after this many validations without improvement (0 = never)
    valid_max_triples: int | None = None  # validate on a seeded subset
    eval_batch_size: int = 128  # distinct queries scored against all entities at once
    evaluate_test: bool = True
    checkpoint_every: int = 1
    num_threads: int | None = None
    max_train_seconds: float | None = None  # stop after the epoch that exceeds this training time

    def __post_init__(self) -> None:
        MODELS.canonical(self.model)  # unknown names -> clear ValueError now
        LOSSES.canonical(self.loss)
        SAMPLERS.canonical(self.sampler)
        # every range is checked here, before train() creates or touches its output dir
        for name in ("dim", "epochs", "batch_size", "negatives", "checkpoint_every", "eval_batch_size"):
            _check_number(self, name, lambda v: v >= 1, ">= 1", integer=True)
        for name in ("eval_every", "patience"):
            _check_number(self, name, lambda v: v >= 0, ">= 0", integer=True)
        _check_number(self, "seed", lambda v: True, "", integer=True)
        _check_number(self, "lr", lambda v: v >= 0, ">= 0")  # 0: an untrained baseline
        for name in ("margin", "regularization"):
            _check_number(self, name, lambda v: v >= 0, ">= 0")
        for name in ("valid_max_triples", "num_threads"):
            if getattr(self, name) is not None:
                _check_number(self, name, lambda v: v >= 1, ">= 1 (or null)", integer=True)
        if self.max_train_seconds is not None:
            _check_number(self, "max_train_seconds", lambda v: v > 0, "> 0 (or null)")
        if not isinstance(self.model_kwargs, dict):
            raise ValueError(f"TrainConfig.model_kwargs must be a mapping, got {self.model_kwargs!r}")
        known = MODELS.options(self.model)
        if known is not None:  # the model's own options; sizes come from the graph and `dim`
            allowed = set(known) - {"num_entities", "num_relations", "dim"}
            unknown = sorted(set(self.model_kwargs) - allowed)
            if unknown:
                raise ValueError(f"TrainConfig.model_kwargs: model '{MODELS.canonical(self.model)}' has no "
                                 f"option(s) {unknown}; its options: {sorted(allowed)}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict, *, source: str = "") -> "TrainConfig":
        """Fields by name; unknown names and values of the wrong type are errors naming the field
        (and ``source``, e.g. the config file)."""
        return cls(**check_fields(cls, d, source=source))


@dataclass
class TrainResult:
    config: dict
    graph: dict
    epochs_run: int
    best_epoch: int | None
    best_valid_mrr: float | None
    stopped_early: bool
    stop_reason: str  # "epochs" | "early_stopping" | "time_budget"
    train_seconds: float
    triples_per_second: float
    history: list = field(default_factory=list)
    test: dict | None = None
    valid: dict | None = None
    resumed_from_epoch: int = 0
    version: str = ""
    out_dir: str | None = None
    model: KGEModel | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = asdict(self)  # model is not a dataclass: asdict deep-copies it, so drop it
        d.pop("model")
        return d


class RowAdam:
    """Lazy Adam on the rows of one embedding table (the semantics of ``torch.optim.SparseAdam``).

    Each row's vector and both Adam moments live side by side in one ``[N, 3, d]`` array, so a
    step is one gather of the batch's unique rows (:meth:`gather`, a dense leaf block whose
    gradient needs no sparse tensors and no coalescing) and one scatter back (:meth:`step`).
    Only those rows' moments are updated; the step count (bias correction) is global, as in
    SparseAdam. An optional ``project`` (e.g. TransE's unit sphere) is applied to updated rows.
    The model's weight is refreshed from the table by :meth:`sync` (done every epoch).
    """

    def __init__(self, weight: torch.Tensor, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        self.weight, self.lr, self.betas, self.eps = weight, lr, betas, eps
        n, d = weight.shape
        self.table = np.zeros((n, 3, d), dtype=np.float32)
        self.table[:, 0] = weight.detach().cpu().numpy()
        self.step_count = 0
        self._mark = np.zeros(n, dtype=bool)
        self._pos = np.zeros(n, dtype=np.int64)

    def gather(self, ids: torch.Tensor):
        """``(leaf [U, d] requiring grad, inverse [len(ids)], handle)`` for the unique rows of ids."""
        ids_np = ids.numpy()
        self._mark[ids_np] = True
        uniq = np.flatnonzero(self._mark)  # sorted unique ids without a sort: O(N) bitmap scan
        self._mark[uniq] = False
        self._pos[uniq] = np.arange(len(uniq))
        inv = torch.from_numpy(self._pos[ids_np])
        block = torch.from_numpy(self.table.take(uniq, axis=0))
        leaf = block[:, 0].requires_grad_()
        return leaf, inv, (uniq, block)

    @torch.no_grad()
    def step(self, handle, grad: torch.Tensor, project=None) -> None:
        uniq, block = handle
        self.step_count += 1
        b1, b2 = self.betas
        w, m, v = block[:, 0], block[:, 1], block[:, 2]
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        bc1 = 1 - b1 ** self.step_count
        bc2 = 1 - b2 ** self.step_count
        denom = (v / bc2).sqrt_().add_(self.eps)
        w.addcdiv_(m, denom, value=-self.lr / bc1)
        if project is not None:
            w.copy_(project(w))
        self.table[uniq] = block.numpy()

    @torch.no_grad()
    def sync(self) -> None:
        """Copy the trained rows into the model's weight."""
        self.weight.copy_(torch.from_numpy(self.table[:, 0]))

    def state_dict(self) -> dict:
        return {"moments": torch.from_numpy(self.table[:, 1:].copy()), "step": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        """Moments from ``state``; vectors from the (already restored) model weight."""
        self.table[:, 0] = self.weight.detach().cpu().numpy()
        self.table[:, 1:] = state["moments"].numpy()
        self.step_count = int(state["step"])


class DenseAdam(torch.optim.Adam):
    """Adam for the small tables (relations, TransH normals): sparse gradients are densified
    first (a dense step over ~R rows costs nothing and avoids SparseAdam's coalescing)."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.grad.is_sparse:
                    p.grad = p.grad.to_dense()
        return super().step(closure)


def make_optimizer(model: nn.Module, lr: float, exclude: tuple = ()) -> list[torch.optim.Optimizer]:
    """Adam (densifying sparse gradients) for every parameter but ``exclude`` (the entity table,
    handled by :class:`RowAdam`)."""
    skip = {id(p) for p in exclude}
    params = [p for p in model.parameters() if id(p) not in skip]
    return [DenseAdam(params, lr=lr)] if params else []


def _check_same_run(saved: dict, config: TrainConfig, out_dir: Path) -> None:
    now = config.to_dict()
    diff = sorted(k for k in set(saved) | set(now) if k not in _RESUMABLE_CHANGES and saved.get(k) != now.get(k))
    if diff:
        details = ", ".join(f"{k}: {saved.get(k)!r} -> {now.get(k)!r}" for k in diff)
        raise ConfigMismatchError(f"{out_dir} holds a run with another configuration ({details}); "
                                  f"use another output dir or --overwrite (overwrite=True) to start over")


def _batch_loss(model: KGEModel, batch: torch.Tensor, neg_h: torch.Tensor, neg_t: torch.Tensor, loss_fn,
                config: TrainConfig, row_opt: RowAdam):
    """Loss of one batch. The batch's unique entity rows are one dense leaf ``[U, d]`` gathered by
    :class:`RowAdam`; returns ``(loss, leaf, handle)``."""
    b, k = neg_h.shape
    h, r, t = batch[:, 0], batch[:, 1], batch[:, 2]
    ids = torch.cat([h, t, neg_h.reshape(-1), neg_t.reshape(-1)])
    leaf, inv, handle = row_opt.gather(ids)
    vec = leaf.index_select(0, inv)
    hv, tv, nhv, ntv = torch.split(vec, [b, b, b * k, b * k])
    pos = model.score_emb(hv, r, tv)
    neg = model.score_emb(nhv.view(b, k, -1), r[:, None], ntv.view(b, k, -1))
    loss = loss_fn(pos, neg, config.margin)
    if config.regularization:
        rv = model.relation(r)
        loss = loss + config.regularization * ((hv * hv).sum(-1) + (tv * tv).sum(-1) + (rv * rv).sum(-1)).mean()
    return loss, leaf, handle


def train(graph: KnowledgeGraph, config: TrainConfig | None = None, out_dir: str | os.PathLike | None = None,
          overwrite: bool = False, progress: bool | None = None,
          on_epoch_end: Callable[[int, dict], None] | None = None) -> TrainResult:
    """Train ``config.model`` on ``graph.train``; write the embedding dir to ``out_dir`` (optional).

    ``on_epoch_end(epoch, record)`` is called after each epoch (after its checkpoint). A run dir
    of another configuration or another graph (names, triples or their order: see
    :meth:`KnowledgeGraph.fingerprint`) is refused; a failure before anything was written leaves
    no new empty dir behind.
    """
    config = config or TrainConfig()
    out = Path(out_dir) if out_dir is not None else None
    if len(graph.train) == 0:
        raise ValueError(f"graph {graph.name!r} has no training triples")
    created = out is not None and (overwrite or not out.exists())
    try:
        return _train(graph, config, out, overwrite, progress, on_epoch_end)
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise


def _read_result(path: Path) -> dict:
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable result file ({_first_line(exc)}); {_START_OVER}") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        raise ValueError(f"{path}: not a kge result file (no 'config'); {_START_OVER}")
    return saved


def _train(graph: KnowledgeGraph, config: TrainConfig, out: Path | None, overwrite: bool, progress: bool | None,
           on_epoch_end: Callable[[int, dict], None] | None) -> TrainResult:
    if out is not None:
        if overwrite and out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True, exist_ok=True)
        if (out / DONE).exists() and (out / RESULT).exists():
            saved = _read_result(out / RESULT)
            _check_same_run(saved["config"], config, out)
            _check_same_graph(saved.get("graph"), graph, out)
            if saved["config"]["epochs"] == config.epochs:
                from kge.embeddings import load_model
                res = TrainResult(**{k: v for k, v in saved.items() if k != "model"})
                res.model = load_model(out, graph)
                return res
            (out / DONE).unlink()  # more epochs asked for: continue from the checkpoint
    if config.num_threads:
        torch.set_num_threads(config.num_threads)

    gen = seed_everything(config.seed)
    model = get_model(config.model, graph.num_entities, graph.num_relations, config.dim, **config.model_kwargs)
    # the small per-relation tables get dense gradients while training (a dense [R, d] gradient
    # beats densifying a sparse one with B rows); the entity table is updated row-sparse by RowAdam
    for m in model.modules():
        if isinstance(m, nn.Embedding) and m is not model.entity:
            m.sparse = False
    row_opt = RowAdam(model.entity.weight.data, config.lr)
    opts = make_optimizer(model, config.lr, exclude=(model.entity.weight,))
    sampler = get_sampler(config.sampler, graph.num_entities, graph.num_relations, graph.train)
    loss_fn = get_loss(config.loss)
    project = getattr(model, "project_entities", None)
    train_t = torch.from_numpy(graph.train)
    n = len(train_t)

    fingerprint = graph.fingerprint()
    start_epoch, history = 0, []
    best = {"mrr": None, "epoch": None, "state": None, "bad": 0}
    train_seconds = 0.0
    ckpt_path = out / CHECKPOINT if out is not None else None
    if ckpt_path is not None and ckpt_path.exists():
        ck = load_checkpoint(ckpt_path)
        _check_same_run(ck["config"], config, out)
        _check_same_graph(ck.get("graph"), graph, out)
        try:
            model.load_state_dict(ck["model"])
            if len(ck["optimizers"]) != len(opts):
                raise ValueError(f"{len(ck['optimizers'])} optimizer states for {len(opts)} optimizers")
            for o, s in zip(opts, ck["optimizers"]):
                o.load_state_dict(s)
            row_opt.load_state_dict(ck["row_optimizer"])
            gen.set_state(ck["generator"])
            torch.set_rng_state(ck["torch_rng"])
            start_epoch, history, best = int(ck["epoch"]), list(ck["history"]), dict(ck["best"])
            train_seconds = float(ck["train_seconds"])
        except Exception as exc:  # shapes, types or keys that do not fit this model and graph
            raise CheckpointError(f"{ckpt_path}: does not fit a {config.model} model of graph {graph.name!r} "
                                  f"({_first_line(exc)}); {_START_OVER}") from None
    resumed_from = start_epoch

    def checkpoint(epoch: int) -> None:
        atomic_torch_save(ckpt_path, {"config": config.to_dict(), "graph": fingerprint, "epoch": epoch,
                                      "model": model.state_dict(),
                                      "optimizers": [o.state_dict() for o in opts],
                                      "row_optimizer": row_opt.state_dict(), "generator": gen.get_state(),
                                      "torch_rng": torch.get_rng_state(), "history": history, "best": best,
                                      "train_seconds": train_seconds})

    stopped_early = best.get("stopped", False)
    bar = tqdm(range(start_epoch, config.epochs), desc=f"{config.model} {graph.name}", unit="epoch",
               initial=start_epoch, total=config.epochs, disable=None if progress is None else not progress)
    model.train()
    for epoch in bar:
        if stopped_early:
            break
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for i in range(0, n, config.batch_size):
            batch = train_t[perm[i:i + config.batch_size]]
            neg_h, neg_t = sampler.sample(batch, config.negatives, gen)
            loss, leaf, handle = _batch_loss(model, batch, neg_h, neg_t, loss_fn, config, row_opt)
            for o in opts:
                o.zero_grad(set_to_none=True)
            loss.backward()
            for o in opts:
                o.step()
            row_opt.step(handle, leaf.grad, project)
            total += loss.item() * len(batch)
        row_opt.sync()
        if not math.isfinite(total):  # before its checkpoint: the last one stays a good state
            raise ValueError(f"training {config.model} on graph {graph.name!r} diverged in epoch {epoch + 1} "
                             f"(loss {total / n}); lower the learning rate (lr={config.lr})")
        secs = time.perf_counter() - t0
        train_seconds += secs
        record = {"epoch": epoch + 1, "loss": total / n, "seconds": secs, "triples_per_second": n / secs}
        if config.eval_every and (epoch + 1) % config.eval_every == 0 and len(graph.valid):
            m = evaluate(model, graph, "valid", batch_size=config.eval_batch_size,
                         max_triples=config.valid_max_triples, seed=config.seed, progress=False)
            record["valid"] = {k: getattr(m, k) for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")}
            record["valid_seconds"] = m.seconds
            if best["mrr"] is None or m.mrr > best["mrr"]:
                best.update(mrr=m.mrr, epoch=epoch + 1, bad=0,
                            state={k: v.clone() for k, v in model.state_dict().items()})
            else:
                best["bad"] += 1
                if config.patience and best["bad"] >= config.patience:
                    stopped_early = best["stopped"] = True
                    best["reason"] = "early_stopping"
        history.append(record)
        if config.max_train_seconds and train_seconds >= config.max_train_seconds and epoch + 1 < config.epochs:
            stopped_early = best["stopped"] = True
            best["reason"] = "time_budget"
        bar.set_postfix(loss=f"{record['loss']:.4f}", **({"val_mrr": f"{record['valid']['mrr']:.3f}"}
                                                         if "valid" in record else {}))
        if ckpt_path is not None and ((epoch + 1) % config.checkpoint_every == 0 or epoch + 1 == config.epochs
                                      or stopped_early):
            checkpoint(epoch + 1)
        if on_epoch_end is not None:
            on_epoch_end(epoch + 1, record)
    bar.close()
    for m in model.modules():
        if isinstance(m, nn.Embedding):
            m.sparse = True

    if best["state"] is not None:
        model.load_state_dict(best["state"])
    model.eval()
    epochs_run = history[-1]["epoch"] if history else 0
    trained = sum(r["seconds"] for r in history)
    result = TrainResult(
        config=config.to_dict(), graph=fingerprint, epochs_run=epochs_run, best_epoch=best["epoch"],
        best_valid_mrr=best["mrr"], stopped_early=stopped_early,
        stop_reason=best.get("reason", "early_stopping") if stopped_early else "epochs", train_seconds=train_seconds,
        triples_per_second=(n * len(history) / trained) if trained else 0.0, history=history,
        resumed_from_epoch=resumed_from, version=package_version(), out_dir=str(out) if out else None, model=model)
    if config.evaluate_test and len(graph.test):
        result.test = evaluate(model, graph, "test", batch_size=config.eval_batch_size, progress=progress).to_dict()
    if out is not None:
        save_model(model, out, graph, extra={"seed": config.seed, "train_config": config.to_dict()})
        atomic_write_json(out / RESULT, result.to_dict(), clean=False)
        if result.test is not None:
            atomic_write_json(out / "metrics.json", result.test, clean=False)
        atomic_write_text(out / DONE, "done\n")
    return result
