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

All model parameters are ``nn.Embedding(sparse=True)`` tables and every update of the entity
table is row-sparse (:mod:`kge.optim`): ``optimizer`` adam (default; lazy Adam with the semantics
of :class:`torch.optim.SparseAdam`), adagrad or sgd on the batch's unique rows gathered into one
dense block; the small per-relation tables (relations, TransH normals) get dense gradients and the
dense optimizer of the same name. Models with an entity constraint (TransE: unit sphere, TransH:
unit ball) project the updated rows. One batch (negatives, gradients in closed form or by
autograd, updates) is :mod:`kge.train_step`.

``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``) puts the model, the optimizer state and the
triples on that device; negatives are drawn on the CPU from the seeded generator either way, so a
CUDA run follows a CPU run of the same seed up to float rounding. Asking for CUDA where there is
none is a one-line error before any work.

Named presets of the fields (:data:`PROFILES`, e.g. ``openke`` for the protocol of OpenKE as in
Bourli 2021) are :mod:`kge.train_profiles`. The run dir (checkpoint, result, the checks that
refuse another config or graph) is :mod:`kge.checkpoint`.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from wgbcore.atomicio import atomic_write_json, atomic_write_text
from wgbcore.config import check_fields
from wgbcore.progress import progress as progress_bar
from wgbcore.provenance import package_version
from wgbcore.seeding import seed_everything

from kge.checkpoint import (CHECKPOINT, DONE, RESULT, CheckpointError, ConfigMismatchError, check_same_graph,
                            check_same_run, load_checkpoint, read_result, restore_checkpoint, save_checkpoint)
from kge.embeddings import save_model
from kge.evaluate import evaluate
from kge.graph import KnowledgeGraph
from kge.losses import LOSSES
from kge.models import MODELS, KGEModel, get_model
from kge.optim import ROW_OPTIMIZERS, DenseAdam, RowAdam, make_optimizer, make_row_optimizer  # noqa: F401
from kge.sampling import SAMPLERS, get_sampler
from kge.train_range import RangeStep
from kge.train_step import BatchStep

__all__ = ["TrainConfig", "TrainResult", "train", "seed_everything", "make_optimizer", "ConfigMismatchError",
           "CheckpointError", "load_checkpoint"]


_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def resolve_device(name: str) -> torch.device:
    """The torch device of a config's ``device``; CUDA where there is none is a one-line error."""
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            why = "this torch has no CUDA support" if torch.version.cuda is None else "no CUDA device is visible"
            raise ValueError(f"TrainConfig.device: {name!r} asked for but CUDA is not available ({why}, torch "
                             f"{torch.__version__}); use device 'cpu' (--device cpu)")
        index = int(name.split(":")[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"TrainConfig.device: {name!r} asked for but only {torch.cuda.device_count()} "
                             f"CUDA device(s) are visible")
    return torch.device(name)


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
class EmbeddingConfig:
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
    optimizer: str = "adam"  # a name of kge.optim.ROW_OPTIMIZERS: adam | adagrad | sgd
    device: str = "cpu"  # cpu | cuda | cuda:<index>
    # "sampled": `negatives` from `sampler` per positive; "range": softmax over every tail the relation
    # has in training plus `negatives` uniform extras per batch (kge.train_range; tail side only)
    tail_candidates: str = "sampled"

    def __post_init__(self) -> None:
        MODELS.canonical(self.model)  # unknown names -> clear ValueError now
        LOSSES.canonical(self.loss)
        SAMPLERS.canonical(self.sampler)
        ROW_OPTIMIZERS.canonical(self.optimizer)
        if not isinstance(self.device, str) or not _DEVICE.fullmatch(self.device):
            raise ValueError(f"TrainConfig.device must be 'cpu', 'cuda' or 'cuda:<index>', got {self.device!r}")
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
        if self.tail_candidates not in ("sampled", "range"):
            raise ValueError(f"TrainConfig.tail_candidates must be 'sampled' or 'range', got {self.tail_candidates!r}")
        if self.tail_candidates == "range" and (LOSSES.canonical(self.loss) != "softmax" or self.regularization):
            raise ValueError("TrainConfig.tail_candidates='range' trains with loss 'softmax' (the cross-entropy of "
                             f"the tail among the range) and no regularization; got loss {self.loss!r}, "
                             f"regularization {self.regularization}")
        if self.tail_candidates == "range" and not hasattr(MODELS.get(self.model), "score_vectors_t"):
            raise ValueError(f"TrainConfig.tail_candidates='range': model '{MODELS.canonical(self.model)}' has no "
                             "score_vectors_t (transe, transh, distmult and complex have)")
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
    def from_dict(cls, d: dict, *, source: str = "") -> "EmbeddingConfig":
        """Fields by name; unknown names and values of the wrong type are errors naming the field
        (and ``source``, e.g. the config file)."""
        return cls(**check_fields(cls, d, source=source))


#: The embeddings' config and trainer have names of their own (relext trains extractors with
#: :class:`relext.training.train.ExtractorConfig`); ``TrainConfig`` / ``train`` stay as aliases.
TrainConfig = EmbeddingConfig


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


def train_embeddings(graph: KnowledgeGraph, config: "EmbeddingConfig | None" = None, out_dir: str | os.PathLike | None = None,
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
    resolve_device(config.device)  # before the output dir is touched
    created = out is not None and (overwrite or not out.exists())
    try:
        return _train(graph, config, out, overwrite, progress, on_epoch_end)
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise


def _finished_run(graph: KnowledgeGraph, config: TrainConfig, out: Path, overwrite: bool) -> TrainResult | None:
    """Make ``out`` ready: emptied with ``overwrite``, created if missing. A finished run there of the
    same config, graph and number of epochs is returned; with more epochs asked for it is reopened
    (its checkpoint continues); another config or graph is refused."""
    if overwrite and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    if (out / DONE).exists() and (out / RESULT).exists():
        saved = read_result(out / RESULT)
        check_same_run(saved["config"], config, out)
        check_same_graph(saved.get("graph"), graph, out)
        if saved["config"]["epochs"] == config.epochs:
            from kge.embeddings import load_model
            res = TrainResult(**{k: v for k, v in saved.items() if k != "model"})
            res.model = load_model(out, graph)
            return res
        (out / DONE).unlink()  # more epochs asked for: continue from the checkpoint
    return None


def _train(graph: KnowledgeGraph, config: TrainConfig, out: Path | None, overwrite: bool, progress: bool | None,
           on_epoch_end: Callable[[int, dict], None] | None) -> TrainResult:
    if out is not None:
        finished = _finished_run(graph, config, out, overwrite)
        if finished is not None:
            return finished
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    run = _Run(graph, config, out)
    run.epochs(progress, on_epoch_end)
    return run.finish(progress)


class _Run:
    """One training run: the model, its optimizers and sampler, and the state a checkpoint keeps
    (epoch, history, best model so far, training time), restored from ``out``'s checkpoint if any.

    :meth:`epochs` trains (one :meth:`_epoch`, then :meth:`_validate` and a checkpoint, per epoch);
    :meth:`finish` evaluates and writes the embedding dir."""

    def __init__(self, graph: KnowledgeGraph, config: TrainConfig, out: Path | None) -> None:
        self.graph, self.config, self.out = graph, config, out
        self.gen = seed_everything(config.seed)
        self.device = resolve_device(config.device)
        model = get_model(config.model, graph.num_entities, graph.num_relations, config.dim, **config.model_kwargs)
        model.to(self.device)
        # the small per-relation tables get dense gradients while training (a dense [R, d] gradient
        # beats densifying a sparse one with B rows); the entity table is updated row-sparse
        for m in model.modules():
            if isinstance(m, nn.Embedding) and m is not model.entity:
                m.sparse = False
        self.model = model
        self.row_opt = make_row_optimizer(config.optimizer, model.entity.weight.data, config.lr)
        self.opts = make_optimizer(model, config.lr, exclude=(model.entity.weight,), kind=config.optimizer)
        sampler = get_sampler(config.sampler, graph.num_entities, graph.num_relations, graph.train).to(self.device)
        if config.tail_candidates == "range":
            self.step = RangeStep(model, self.row_opt, self.opts, graph.train, extras=config.negatives,
                                  device=self.device)
        else:
            self.step = BatchStep(model, self.row_opt, self.opts, sampler, loss=config.loss, margin=config.margin,
                                  negatives=config.negatives, regularization=config.regularization)
        self.train_t = torch.from_numpy(graph.train).to(self.device)
        self.n = len(self.train_t)

        self.fingerprint = graph.fingerprint()
        self.start_epoch, self.history = 0, []
        self.best = {"mrr": None, "epoch": None, "state": None, "bad": 0}
        self.train_seconds = 0.0
        self.ckpt_path = out / CHECKPOINT if out is not None else None
        if self.ckpt_path is not None and self.ckpt_path.exists():
            ck = load_checkpoint(self.ckpt_path)
            check_same_run(ck["config"], config, out)
            check_same_graph(ck.get("graph"), graph, out)
            self.start_epoch, self.history, self.best, self.train_seconds = restore_checkpoint(
                self.ckpt_path, ck, model_name=config.model, graph_name=graph.name, model=model,
                optimizers=self.opts, row_optimizer=self.row_opt, generator=self.gen)
        self.resumed_from = self.start_epoch
        self.stopped_early = self.best.get("stopped", False)

    def epochs(self, progress: bool | None, on_epoch_end: Callable[[int, dict], None] | None) -> None:
        """Train from the first epoch not done to ``config.epochs`` (or an early stop)."""
        config = self.config
        # a bar on a terminal, a plain line every 30 s elsewhere (a 6-minute run never silent); --quiet: nothing
        bar = progress_bar(range(self.start_epoch, config.epochs), desc=f"{config.model} {self.graph.name}",
                           unit="epoch", initial=self.start_epoch, total=config.epochs,
                           enabled=False if progress is False else None)
        self.model.train()
        for epoch in bar:
            if self.stopped_early:
                break
            record = self._epoch(epoch)
            if config.eval_every and (epoch + 1) % config.eval_every == 0 and len(self.graph.valid):
                self._validate(epoch, record)
            self.history.append(record)
            if config.max_train_seconds and self.train_seconds >= config.max_train_seconds \
                    and epoch + 1 < config.epochs:
                self._stop("time_budget")
            bar.set_postfix(loss=f"{record['loss']:.4f}", **({"val_mrr": f"{record['valid']['mrr']:.3f}"}
                                                             if "valid" in record else {}))
            if self.ckpt_path is not None and ((epoch + 1) % config.checkpoint_every == 0
                                               or epoch + 1 == config.epochs or self.stopped_early):
                save_checkpoint(self.ckpt_path, config=config.to_dict(), graph=self.fingerprint, epoch=epoch + 1,
                                model=self.model, optimizers=self.opts, row_optimizer=self.row_opt,
                                generator=self.gen, history=self.history, best=self.best,
                                train_seconds=self.train_seconds)
            if on_epoch_end is not None:
                on_epoch_end(epoch + 1, record)
        bar.close()
        for m in self.model.modules():
            if isinstance(m, nn.Embedding):
                m.sparse = True

    def _epoch(self, epoch: int) -> dict:
        """One pass over the shuffled training triples; returns the epoch's history record."""
        config, n = self.config, self.n
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=self.gen).to(self.device)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for i in range(0, n, config.batch_size):
            total += self.step(self.train_t[perm[i:i + config.batch_size]], self.gen)
        self.row_opt.sync()
        total = float(total)
        if not math.isfinite(total):  # before its checkpoint: the last one stays a good state
            raise ValueError(f"training {config.model} on graph {self.graph.name!r} diverged in epoch {epoch + 1} "
                             f"(loss {total / n}); lower the learning rate (lr={config.lr})")
        secs = time.perf_counter() - t0
        self.train_seconds += secs
        return {"epoch": epoch + 1, "loss": total / n, "seconds": secs, "triples_per_second": n / secs}

    def _validate(self, epoch: int, record: dict) -> None:
        """Validation MRR into ``record``; keeps the best model so far and stops after ``patience``
        validations without improvement."""
        config, best = self.config, self.best
        m = evaluate(self.model, self.graph, "valid", batch_size=config.eval_batch_size,
                     max_triples=config.valid_max_triples, seed=config.seed, progress=False)
        record["valid"] = {k: getattr(m, k) for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")}
        record["valid_seconds"] = m.seconds
        if best["mrr"] is None or m.mrr > best["mrr"]:
            best.update(mrr=m.mrr, epoch=epoch + 1, bad=0,
                        state={k: v.clone() for k, v in self.model.state_dict().items()})
        else:
            best["bad"] += 1
            if config.patience and best["bad"] >= config.patience:
                self._stop("early_stopping")

    def _stop(self, reason: str) -> None:
        self.stopped_early = self.best["stopped"] = True
        self.best["reason"] = reason

    def finish(self, progress: bool | None) -> TrainResult:
        """The best model (or the last), its test metrics and the result; written to ``out`` if given."""
        config, graph, model, out, best, history = self.config, self.graph, self.model, self.out, self.best, self.history
        if best["state"] is not None:
            model.load_state_dict(best["state"])
        model.eval()
        epochs_run = history[-1]["epoch"] if history else 0
        trained = sum(r["seconds"] for r in history)
        result = TrainResult(
            config=config.to_dict(), graph=self.fingerprint, epochs_run=epochs_run, best_epoch=best["epoch"],
            best_valid_mrr=best["mrr"], stopped_early=self.stopped_early,
            stop_reason=best.get("reason", "early_stopping") if self.stopped_early else "epochs",
            train_seconds=self.train_seconds, triples_per_second=(self.n * len(history) / trained) if trained else 0.0,
            history=history, resumed_from_epoch=self.resumed_from, version=package_version(),
            out_dir=str(out) if out else None, model=model)
        if config.evaluate_test and len(graph.test):
            result.test = evaluate(model, graph, "test", batch_size=config.eval_batch_size, progress=progress).to_dict()
        model.to("cpu")  # what callers (bias measures, evaluation) expect, whatever the training device
        if out is not None:
            save_model(model, out, graph, extra={"seed": config.seed, "train_config": config.to_dict()})
            atomic_write_json(out / RESULT, result.to_dict(), clean=False)
            if result.test is not None:
                atomic_write_json(out / "metrics.json", result.test, clean=False)
            atomic_write_text(out / DONE, "done\n")
        return result


train = train_embeddings
