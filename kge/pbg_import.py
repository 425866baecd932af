"""A finished PyTorch-BigGraph job -> an embedding dir (:mod:`kge.embeddings` layout), without
building the entity table in memory.

The worker leaves ``JOB/out/entities.npy`` already in our layout (``float32 [E, dim]`` in global
id order; PBG's ``complex_diagonal`` halves are our ``[real | imag]``), so the table is moved
into the embedding dir (or copied by the OS in blocks, across file systems or with
``keep_job``), checked for NaN window by window, and the small relation operators are mapped
(:func:`relations_from_pbg`). ``config.json`` says ``"mmap_entities": true``: :func:`kge.embeddings.
load_model` then maps the table copy-on-write instead of reading it, so the bias measures page
in only the rows they touch.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from wgbcore.atomicio import atomic_open, atomic_write_json, atomic_write_text
from wgbcore.provenance import package_version

__all__ = ["relations_from_pbg", "operator_params", "import_job", "check_table_finite", "model_shape"]



def operator_params(ops: dict[str, np.ndarray], rel: int) -> dict[str, np.ndarray]:
    """The right-hand-side operator parameters of PBG relation ``rel`` from PBG's model state
    dict (keys ``rhs_operators.<rel>.<param>``)."""
    prefix = f"rhs_operators.{rel}."
    found = {k[len(prefix):]: v for k, v in ops.items() if k.startswith(prefix)}
    if not found:
        raise KeyError(f"no rhs operator for relation {rel} in the PBG checkpoint (keys: {sorted(ops)[:8]})")
    return found


def relations_from_pbg(ops: dict[str, np.ndarray], num_relations: int, model: str) -> np.ndarray:
    """Our relation matrix ``[R, d_r]`` from PBG's operators (see :mod:`kge.pbg`)."""
    rel = []
    for r in range(num_relations):
        p = operator_params(ops, r)
        if model == "transe":
            rel.append(-p["translation"])
        elif model == "distmult":
            rel.append(p["diagonal"])
        elif model == "complex":
            rel.append(np.concatenate([p["real"], -p["imag"]]))
        else:  # pragma: no cover - PBGConfig validates
            raise ValueError(model)
    return np.stack(rel).astype(np.float32)


def model_shape(model: str, dim: int) -> dict:
    """Our model's name, dims, hyper-parameters and tensor files for a PBG dimension, from a
    one-entity instance (the real table is never built)."""
    from kge.embeddings import _tensor_files
    from kge.models import get_model

    kw = {"p_norm": 2} if model == "transe" else {}
    m = get_model(model, 1, 1, dim=dim // 2 if model == "complex" else dim, **kw)
    return {"model": m.name, "dim": m.dim, "entity_dim": m.entity_dim, "relation_dim": m.relation_dim,
            "hparams": m.hparams() if hasattr(m, "hparams") else {}, "files": _tensor_files(m)}


def check_table_finite(path: Path) -> None:
    """NaN or infinite values in a ``.npy`` table are an error naming it (read window by window)."""
    from kge.embeddings import check_npy_finite

    try:
        check_npy_finite(path)
    except ValueError as e:
        raise ValueError(f"{e}; PBG's training diverged (lower --lr), nothing is imported") from None


def _place_table(src: Path, dst: Path, move: bool) -> None:
    """``src`` becomes ``dst``: renamed when allowed and on one file system, else copied in blocks."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if move:
        try:
            os.replace(src, dst)
            return
        except OSError:
            pass
    with atomic_open(dst, "wb") as fh, open(src, "rb") as fi:
        shutil.copyfileobj(fi, fh, length=16 * 2 ** 20)
    if move:
        src.unlink()


def import_job(job_dir: str | os.PathLike, out_dir: str | os.PathLike, *, model: str, dim: int,
               entities: list[str] | None, relations: list[str], graph_fingerprint: dict | None,
               graph_name: str, move: bool, extra: dict) -> Path:
    """Write the embedding dir of a finished job (``out/DONE``); ``move`` takes the table out of the job."""
    job, emb = Path(job_dir), Path(out_dir)
    out = job / "out"
    if not (out / "DONE").exists():
        raise FileNotFoundError(f"{out}: no finished PBG run (DONE missing)")
    shape = model_shape(model, dim)
    table = np.load(out / "entities.npy", mmap_mode="r")
    n_ent, width = table.shape
    del table
    if width != shape["entity_dim"]:
        raise ValueError(f"{out / 'entities.npy'}: width {width}, our {model} expects {shape['entity_dim']}")
    if graph_fingerprint and graph_fingerprint["num_entities"] != n_ent:
        raise ValueError(f"{out / 'entities.npy'} has {n_ent} rows but the graph has "
                         f"{graph_fingerprint['num_entities']} entities")
    check_table_finite(out / "entities.npy")
    with np.load(out / "operators.npz") as z:
        ops = {k: z[k] for k in z.files}
    rel = relations_from_pbg(ops, len(relations), model)
    if rel.shape[1] != shape["relation_dim"]:
        raise ValueError(f"PBG relation parameters of width {rel.shape[1]}, our {model} expects "
                         f"{shape['relation_dim']}")
    emb.mkdir(parents=True, exist_ok=True)
    (emb / "config.json").unlink(missing_ok=True)  # the dir is incomplete until config.json is back
    _place_table(out / "entities.npy", emb / "entities.npy", move)
    with atomic_open(emb / "relations.npy", "wb") as fh:
        np.save(fh, rel)
    files = shape["files"]
    shapes = {"entity.weight": [n_ent, shape["entity_dim"]], "relation.weight": list(rel.shape)}
    if set(files) != set(shapes):  # pragma: no cover - PBG models have entity + relation tables only
        raise ValueError(f"our {model} has parameters {sorted(files)}; PBG gives entity and relation tables")
    if entities is not None:
        atomic_write_text(emb / "entities.tsv", "".join(n + "\n" for n in entities))
    atomic_write_text(emb / "relations.tsv", "".join(n + "\n" for n in relations))
    cfg = {"format_version": 1, "model": shape["model"], "num_entities": int(n_ent),
           "num_relations": len(relations), "dim": shape["dim"], "entity_dim": shape["entity_dim"],
           "relation_dim": shape["relation_dim"], "hparams": shape["hparams"],
           "tensors": {k: {"file": files[k], "shape": shapes[k]} for k in files},
           "version": package_version(), "graph": graph_fingerprint, "graph_name": graph_name,
           "mmap_entities": True, **extra}
    atomic_write_json(emb / "config.json", cfg, clean=False)
    return emb
