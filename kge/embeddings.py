"""Embedding dirs: a trained model as plain numpy files any tool can read.

Layout::

    config.json      model name, dims, hyper-parameters, seed, package version, graph fingerprint,
                     and the file of every tensor
    entities.npy     entity vectors [num_entities, entity_dim] (complex models: [real | imag])
    relations.npy    relation parameters [num_relations, relation_dim]
    <param>.npy      further per-relation tensors (e.g. TransH's ``normal.npy``)
    entities.tsv     entity names, one per line, line order = id (when the graph was given)
    relations.tsv    relation names

:func:`load_model` rebuilds the :class:`~kge.models.base.KGEModel` and, given the graph, checks
that the shapes (and the names' fingerprint) match it; unreadable arrays and NaN or infinite values
are errors naming the file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch

from wgbcore.atomicio import atomic_open, atomic_write_json, atomic_write_text
from wgbcore.provenance import package_version

from kge.graph import KnowledgeGraph
from kge.models import KGEModel, model_class

FORMAT_VERSION = 1
__all__ = ["save_model", "load_model", "read_config", "load_arrays", "package_version", "EmbeddingShapeError",
           "check_finite", "check_npy_finite"]


class EmbeddingShapeError(ValueError):
    """Embeddings whose shape does not match the graph or their own config."""


def _tensor_files(model: KGEModel) -> dict[str, str]:
    files = {}
    for name, _ in model.named_parameters():
        module = name.rsplit(".", 1)[0]
        files[name] = {"entity": "entities.npy", "relation": "relations.npy"}.get(module, f"{module}.npy")
    return files


def save_model(model: KGEModel, path: str | os.PathLike, graph: KnowledgeGraph | None = None,
               extra: dict | None = None) -> Path:
    """Write ``model`` as an embedding dir (``extra`` goes into config.json, e.g. seed, training config)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    files = _tensor_files(model)
    params = dict(model.named_parameters())
    for pname, fname in files.items():
        with atomic_open(path / fname, "wb") as fh:
            np.save(fh, params[pname].detach().cpu().numpy())
    cfg = {
        "format_version": FORMAT_VERSION,
        "model": model.name,
        "num_entities": model.num_entities,
        "num_relations": model.num_relations,
        "dim": model.dim,
        "entity_dim": model.entity_dim,
        "relation_dim": model.relation_dim,
        "hparams": model.hparams() if hasattr(model, "hparams") else {},
        "tensors": {k: {"file": v, "shape": list(params[k].shape)} for k, v in files.items()},
        "version": package_version(),
        "graph": graph.fingerprint() if graph is not None else None,
        "graph_name": graph.name if graph is not None else None,
    }
    cfg.update(extra or {})
    if graph is not None:
        for fname, names in (("entities.tsv", graph.entities), ("relations.tsv", graph.relations)):
            atomic_write_text(path / fname, "".join(n + "\n" for n in names))
    atomic_write_json(path / "config.json", cfg, clean=False)
    return path


_REQUIRED = {"model": str, "num_entities": int, "num_relations": int, "dim": int}


def read_config(path: str | os.PathLike) -> dict:
    p = Path(path) / "config.json"
    if not p.exists():
        raise FileNotFoundError(f"{path}: not an embedding dir (config.json missing)")
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}:{e.lineno}: malformed JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not UTF-8 text (byte {e.start})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{p}: expected a JSON object, got {type(cfg).__name__}")
    for key, kind in _REQUIRED.items():
        if key not in cfg:
            raise ValueError(f"{p}: field {key!r} missing")
        if not isinstance(cfg[key], kind) or isinstance(cfg[key], bool):
            raise ValueError(f"{p}: field {key!r} must be {kind.__name__}, got {cfg[key]!r}")
    return cfg


def _load_npy(fpath: Path) -> np.ndarray:
    """One ``.npy`` file (no pickled objects); unreadable or truncated files are errors naming it."""
    try:
        return np.load(fpath, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError) as e:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{fpath}: not a readable .npy array ({text[:200]})") from None


def check_finite(model_or_arrays, where: str = "embeddings") -> None:
    """NaN or infinite embedding values are an error (they would be scored as if they were numbers).
    Takes a model (its parameters) or a mapping of name -> array."""
    items = (model_or_arrays.items() if isinstance(model_or_arrays, dict)
             else model_or_arrays.named_parameters())
    for name, a in items:
        a = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        if a.dtype.kind in "fc":
            bad = int(a.size - np.count_nonzero(np.isfinite(a)))
            if bad:
                what = f"{where}: {name}" if name else where
                raise ValueError(f"{what} holds {bad} NaN or infinite value(s) of {a.size}; "
                                 "the training diverged or the file is damaged, so nothing is scored")


def load_arrays(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(entities [E, d], relations [R, d_r], config)`` without building a model."""
    path = Path(path)
    cfg = read_config(path)
    return _load_npy(path / "entities.npy"), _load_npy(path / "relations.npy"), cfg


def _check_graph(cfg: dict, graph: KnowledgeGraph, path: Path) -> None:
    if cfg["num_entities"] != graph.num_entities or cfg["num_relations"] != graph.num_relations:
        raise EmbeddingShapeError(
            f"{path}: embeddings are for {cfg['num_entities']} entities / {cfg['num_relations']} relations but "
            f"graph {graph.name!r} has {graph.num_entities} / {graph.num_relations}")
    fp = cfg.get("graph") or {}
    if not isinstance(fp, dict) or not isinstance(fp.get("names_sha256"), str):
        raise EmbeddingShapeError(
            f"{path}/config.json: no graph fingerprint ('graph': {{'names_sha256': ...}}), so nothing says its ids "
            f"line up with graph {graph.name!r}; embeddings written by `wgb kge train` or an import with the "
            "id maps carry one (train or import them again)")
    if fp["names_sha256"] != graph.fingerprint()["names_sha256"]:
        raise EmbeddingShapeError(
            f"{path}: embeddings were trained on a graph with other entity/relation names "
            f"({cfg.get('graph_name')!r}, names hash {fp['names_sha256']}) than graph {graph.name!r} "
            f"(names hash {graph.fingerprint()['names_sha256']}); ids would not line up")


def load_model(path: str | os.PathLike, graph: KnowledgeGraph | None = None, mmap: bool | None = None) -> KGEModel:
    """Rebuild the model saved in an embedding dir; with ``graph``, check it matches.

    ``mmap``: map the entity table from disk copy-on-write (``np.load(mmap_mode="c")``) instead of
    reading it, so only the rows a measure touches are paged in (writes stay private to the
    process); default: what the dir's ``config.json`` asks (``"mmap_entities": true``, written
    by the PyTorch-BigGraph import for tables that may not fit in memory)."""
    path = Path(path)
    cfg = read_config(path)
    if graph is not None:
        _check_graph(cfg, graph, path)
    if mmap if mmap is not None else bool(cfg.get("mmap_entities")):
        return _load_mapped(path, cfg)
    model = model_class(cfg["model"])(cfg["num_entities"], cfg["num_relations"], cfg["dim"], **cfg.get("hparams", {}))
    params = dict(model.named_parameters())
    tensors = cfg.get("tensors") or {n: {"file": f} for n, f in _tensor_files(model).items()}
    with torch.no_grad():
        for pname, p in params.items():
            if pname not in tensors:
                raise EmbeddingShapeError(f"{path}/config.json: no tensor listed for parameter {pname!r}")
            fpath = path / tensors[pname]["file"]
            if not fpath.exists():
                raise FileNotFoundError(f"{fpath}: missing (listed in {path}/config.json)")
            arr = _load_npy(fpath)
            check_finite({"": arr}, str(fpath))
            if tuple(arr.shape) != tuple(p.shape):
                raise EmbeddingShapeError(f"{fpath}: shape {tuple(arr.shape)} but model {cfg['model']} with "
                                          f"config {path}/config.json expects {tuple(p.shape)}")
            if arr.dtype.kind not in "fiu":
                raise EmbeddingShapeError(f"{fpath}: expected a numeric array, got dtype {arr.dtype}")
            p.copy_(torch.from_numpy(arr))
    model.eval()
    return model


def _load_mapped(path: Path, cfg: dict) -> KGEModel:
    """:func:`load_model` with the entity table memory-mapped: the model is built on the meta
    device (no table allocated), then every parameter is set from its file."""
    with torch.device("meta"):
        model = model_class(cfg["model"])(cfg["num_entities"], cfg["num_relations"], cfg["dim"],
                                          **cfg.get("hparams", {}))
    tensors = cfg.get("tensors") or {n: {"file": f} for n, f in _tensor_files(model).items()}
    for pname, p in list(model.named_parameters()):
        if pname not in tensors:
            raise EmbeddingShapeError(f"{path}/config.json: no tensor listed for parameter {pname!r}")
        fpath = path / tensors[pname]["file"]
        if not fpath.exists():
            raise FileNotFoundError(f"{fpath}: missing (listed in {path}/config.json)")
        try:
            arr = np.load(fpath, mmap_mode="c", allow_pickle=False) if pname == "entity.weight" else _load_npy(fpath)
        except (ValueError, OSError) as e:
            raise ValueError(f"{fpath}: not a readable .npy array ({str(e)[:200]})") from None
        if tuple(arr.shape) != tuple(p.shape):
            raise EmbeddingShapeError(f"{fpath}: shape {tuple(arr.shape)} but model {cfg['model']} with "
                                      f"config {path}/config.json expects {tuple(p.shape)}")
        if arr.dtype.kind not in "f":
            raise EmbeddingShapeError(f"{fpath}: expected a float array, got dtype {arr.dtype}")
        if pname == "entity.weight":
            check_npy_finite(fpath)
        else:
            check_finite({"": arr}, str(fpath))
        module, attr = pname.rsplit(".", 1)
        setattr(model.get_submodule(module), attr,
                torch.nn.Parameter(torch.from_numpy(arr), requires_grad=p.requires_grad))
    model.eval()
    return model


def check_npy_finite(fpath: str | os.PathLike, window_bytes: int = 64 << 20) -> None:
    """NaN or infinite values in a float ``.npy`` file are an error naming it. Read window by
    window with plain reads (not through a memory map), so a big table never becomes resident."""
    fpath = Path(fpath)
    with open(fpath, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(f)  # element order does not matter for finiteness
        total = int(np.prod(shape)) if shape else 1
        step = max(1, window_bytes // dtype.itemsize)
        done = 0
        while done < total:
            block = np.fromfile(f, dtype=dtype, count=min(step, total - done))
            if len(block) == 0:
                raise ValueError(f"{fpath}: truncated ({done} of {total} values)")
            check_finite({"": block}, str(fpath))
            done += len(block)
