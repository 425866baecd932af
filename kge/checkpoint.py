"""The run dir of :mod:`kge.train`: its checkpoint, its result file, and the checks that refuse a
run dir of another configuration or another graph.

``checkpoint.pt`` holds tensors and plain values only (model, optimizers, random states, history,
best model so far, the graph's fingerprint) and is read back with ``weights_only=True``
(:func:`load_checkpoint`): a crafted file runs nothing. Failures are one-line errors naming the
file and saying how to start over.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import torch
from torch import nn

from wgbcore.atomicio import atomic_torch_save

from kge.graph import KnowledgeGraph

__all__ = ["CHECKPOINT", "RESULT", "DONE", "ConfigMismatchError", "CheckpointError", "load_checkpoint",
           "save_checkpoint", "restore_checkpoint", "check_same_run", "check_same_graph", "read_result"]

CHECKPOINT = "checkpoint.pt"
RESULT = "result.json"
DONE = "DONE"
# fields that may change between an interrupted run and its resumption
_RESUMABLE_CHANGES = {"epochs", "num_threads", "checkpoint_every", "max_train_seconds", "device"}


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


def save_checkpoint(path: Path, *, config: dict, graph: dict, epoch: int, model: nn.Module, optimizers: list,
                    row_optimizer, generator: torch.Generator, history: list, best: dict,
                    train_seconds: float) -> None:
    """Write the full training state after ``epoch`` epochs (atomically); ``graph`` is the graph's
    :meth:`~kge.graph.KnowledgeGraph.fingerprint`, ``config`` the run's config as a dict."""
    atomic_torch_save(path, {"config": config, "graph": graph, "epoch": epoch,
                             "model": model.state_dict(),
                             "optimizers": [o.state_dict() for o in optimizers],
                             "row_optimizer": row_optimizer.state_dict(), "generator": generator.get_state(),
                             "torch_rng": torch.get_rng_state(), "history": history, "best": best,
                             "train_seconds": train_seconds})


def restore_checkpoint(path: Path, ck: dict, *, model_name: str, graph_name: str, model: nn.Module,
                       optimizers: list, row_optimizer, generator: torch.Generator) -> tuple[int, list, dict, float]:
    """Load the state of checkpoint ``ck`` (read from ``path``) into the model, the optimizers and the
    generator (and torch's global random state); returns ``(epoch, history, best, train_seconds)``.
    A state that does not fit is a :class:`CheckpointError` naming the file."""
    try:
        model.load_state_dict(ck["model"])
        if len(ck["optimizers"]) != len(optimizers):
            raise ValueError(f"{len(ck['optimizers'])} optimizer states for {len(optimizers)} optimizers")
        for o, s in zip(optimizers, ck["optimizers"]):
            o.load_state_dict(s)
        row_optimizer.load_state_dict(ck["row_optimizer"])
        generator.set_state(ck["generator"])
        torch.set_rng_state(ck["torch_rng"])
        return int(ck["epoch"]), list(ck["history"]), dict(ck["best"]), float(ck["train_seconds"])
    except Exception as exc:  # shapes, types or keys that do not fit this model and graph
        raise CheckpointError(f"{path}: does not fit a {model_name} model of graph {graph_name!r} "
                              f"({_first_line(exc)}); {_START_OVER}") from None


_FINGERPRINT_WORDS = {
    "names_sha256": "the entity/relation names or their order differ (entity ids would belong to other entities)",
    "triples_sha256": "the triples or their order differ",
}


def check_same_graph(saved: dict | None, graph: KnowledgeGraph, where: Path) -> None:
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


def check_same_run(saved: dict, config, out_dir: Path) -> None:
    """Refuse a run recorded with another configuration (``saved``: its config as a dict;
    ``config``: the one asked for now). Fields a resumed run may change are not compared; fields
    the saved config lacks (from an older wgb) count as their defaults."""
    now = config.to_dict()
    # a field the saved config lacks (written before the field existed) had its default value
    defaults = {f.name: f.default for f in dataclasses.fields(config) if f.default is not dataclasses.MISSING}
    saved = {**{k: v for k, v in defaults.items() if k not in saved}, **saved}
    diff = sorted(k for k in set(saved) | set(now) if k not in _RESUMABLE_CHANGES and saved.get(k) != now.get(k))
    if diff:
        details = ", ".join(f"{k}: {saved.get(k)!r} -> {now.get(k)!r}" for k in diff)
        raise ConfigMismatchError(f"{out_dir} holds a run with another configuration ({details}); "
                                  f"use another output dir or --overwrite (overwrite=True) to start over")


def read_result(path: Path) -> dict:
    """The ``result.json`` of a finished run (a one-line error naming the file if unreadable)."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable result file ({_first_line(exc)}); {_START_OVER}") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        raise ValueError(f"{path}: not a kge result file (no 'config'); {_START_OVER}")
    return saved
