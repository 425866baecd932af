"""Interoperability with PyKEEN (optional dependency ``pykeen==1.11.*``, imported lazily), both
ways, for every model of :data:`kge.models.MODELS` (TransE, TransH, DistMult, ComplEx, RotatE).

- :func:`to_pykeen` / :func:`from_pykeen` -- a :class:`KnowledgeGraph` as PyKEEN
  ``TriplesFactory`` objects and back (same ids).
- :func:`model_from_pykeen` -- our model holding a trained PyKEEN model's parameters, so our
  evaluator and every bias measure run on PyKEEN-trained embeddings.
- :func:`model_to_pykeen` -- a PyKEEN model holding our model's parameters (scores agree).
- :func:`state_from_pykeen` / :func:`state_to_pykeen` -- the same conversions on plain state
  dicts (no PyKEEN needed): PyKEEN's parameter layout is the one below.
- :func:`export_pykeen` / :func:`import_pykeen` -- folders (``wgb kge pykeen export|import``).

**PyKEEN 1.11's parameter layout** (``model.state_dict()``): entity vectors in
``entity_representations.0._embeddings.weight``, relation parameters in
``relation_representations.<i>._embeddings.weight``; complex vectors of dimension ``d`` are
stored as ``(n, 2d)`` with real and imaginary parts *interleaved* (``view(n, d, 2)``), ours as
``[real | imag]``. Per model:

========  =======================================  =============================================
model     PyKEEN                                   ours
========  =======================================  =============================================
TransE    ent (E, d); rel (R, d); ``p``            ``entity``, ``relation``; ``p_norm``
TransH    rel[0] = hyperplane normal w_r (used     ``normal`` (normalised in the score),
          as is, *not* normalised), rel[1] =       ``relation`` = d_r
          translation d_r (normalised after each
          training step); ``p``
DistMult  ent (E, d); rel (R, d)                   ``entity``, ``relation``
ComplEx   ent, rel complex (E, d), (R, d)          ``[real | imag]`` (E, 2d), (R, 2d)
RotatE    ent complex (E, d); rel complex of unit  ent ``[real | imag]`` (E, 2d); rel = phases
          modulus (R, d); ``p`` = 2                (R, d)
========  =======================================  =============================================

Two PyKEEN settings have no counterpart here and are refused: ``power_norm=True`` (the p-th power
of the distance) and, for RotatE, ``p != 2``. PyKEEN's TransH uses its first relation vector as
the hyperplane normal without normalising it (``h - (w.h) w`` with ``|w| != 1`` is no
projection); our TransH normalises the normal, so a PyKEEN TransH whose normals are not of unit
length is imported only with ``normalize_normals=True``, and then its scores differ (the
exported direction always agrees: we write unit normals).

PyKEEN's ``trained_model.pkl`` is a pickle (loading it can run code), so :func:`import_pykeen`
never loads it: it reads a tensors-only ``state_dict.pt`` with ``pykeen_model.json``
(``torch.load(weights_only=True)``). :func:`export_pykeen` writes both; for a model trained in
PyKEEN, :func:`save_pykeen_tensors` (run where the model lives) writes them.
"""
from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from kge.graph import KnowledgeGraph

__all__ = ["to_pykeen", "from_pykeen", "model_from_pykeen", "model_to_pykeen", "state_from_pykeen",
           "state_to_pykeen", "export_pykeen", "import_pykeen", "require_pykeen", "PYKEEN_CLASSES"]

#: our model name -> PyKEEN class name
PYKEEN_CLASSES: dict[str, str] = {"transe": "TransE", "transh": "TransH", "distmult": "DistMult",
                                  "complex": "ComplEx", "rotate": "RotatE"}
_OURS = {v: k for k, v in PYKEEN_CLASSES.items()}
ENT = "entity_representations.0._embeddings.weight"
REL = "relation_representations.{}._embeddings.weight"
#: files of an exported folder
MODEL_PKL, STATE, META, TRIPLES = "trained_model.pkl", "state_dict.pt", "pykeen_model.json", "training_triples"
FORMAT = "wgb-pykeen/1"
#: |w| of TransH normals / |r| of RotatE relations accepted as 1
UNIT_TOL = 1e-4


def require_pykeen():
    try:
        import pykeen
        import pykeen.triples  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("PyKEEN interoperability needs the optional package pykeen "
                          "(pip install 'wgb[pykeen]' or pip install pykeen==1.11.1)") from e
    return pykeen


# --------------------------------------------------------------------------------------------
# Graphs
# --------------------------------------------------------------------------------------------
def to_pykeen(graph: KnowledgeGraph) -> dict:
    """``{"training", "validation", "testing"}`` PyKEEN ``TriplesFactory`` sharing the graph's ids."""
    require_pykeen()
    from pykeen.triples import TriplesFactory

    out = {}
    for split, key in (("train", "training"), ("valid", "validation"), ("test", "testing")):
        out[key] = TriplesFactory(mapped_triples=torch.from_numpy(graph.split(split)),
                                  entity_to_id=dict(graph.entity_to_id), relation_to_id=dict(graph.relation_to_id))
    return out


def _names(mapping: dict, what: str) -> list[str]:
    names = [None] * len(mapping)
    for n, i in mapping.items():
        if not 0 <= i < len(names) or names[i] is not None:
            raise ValueError(f"PyKEEN {what}_to_id is not a bijection onto 0..{len(names) - 1} (id {i} of {n!r})")
        names[i] = n
    return names


def from_pykeen(training, validation=None, testing=None, name: str = "pykeen") -> KnowledgeGraph:
    """A graph from PyKEEN ``TriplesFactory`` objects (they must share the training's id maps)."""
    entities = _names(training.entity_to_id, "entity")
    relations = _names(training.relation_to_id, "relation")

    def arr(tf):
        if tf is None:
            return None
        if tf.entity_to_id != training.entity_to_id or tf.relation_to_id != training.relation_to_id:
            raise ValueError("validation/testing factories must use the training factory's id maps")
        return np.asarray(tf.mapped_triples.cpu().numpy(), dtype=np.int64)

    return KnowledgeGraph(entities, relations, arr(training), arr(validation), arr(testing), name=name)


# --------------------------------------------------------------------------------------------
# Parameters: plain state dicts (no PyKEEN needed)
# --------------------------------------------------------------------------------------------
def _from_interleaved(w: torch.Tensor) -> torch.Tensor:
    """PyKEEN's complex storage (n, 2d) interleaved -> ours (n, 2d) = [real | imag]."""
    v = w.reshape(w.shape[0], -1, 2)
    return torch.cat([v[..., 0], v[..., 1]], dim=-1)


def _to_interleaved(w: torch.Tensor) -> torch.Tensor:
    d = w.shape[-1] // 2
    return torch.stack([w[:, :d], w[:, d:]], dim=-1).reshape(w.shape[0], 2 * d)


def _get(state: Mapping[str, torch.Tensor], key: str, cls: str) -> torch.Tensor:
    if key not in state:
        raise ValueError(f"PyKEEN {cls} state dict has no {key!r} (keys: {sorted(state)[:6]}...)")
    t = state[key]
    if not isinstance(t, torch.Tensor) or t.ndim != 2:
        raise ValueError(f"PyKEEN {cls} parameter {key!r} is not a 2-d tensor")
    return t.detach().cpu().to(torch.float32)


def state_from_pykeen(class_name: str, state: Mapping[str, torch.Tensor], *, p: int | None = None,
                      power_norm: bool = False, normalize_normals: bool = False):
    """Our model (of :data:`kge.models.MODELS`) from a PyKEEN ``state_dict`` of model class
    ``class_name`` (TransE, TransH, DistMult, ComplEx, RotatE); ``p`` / ``power_norm``: the
    interaction's settings (``model.interaction.p``; PyKEEN's defaults: TransE 1, TransH 2)."""
    from kge.models import get_model

    if class_name not in _OURS:
        raise ValueError(f"no PyKEEN counterpart for model class {class_name!r}; supported: {sorted(_OURS)}")
    if power_norm:
        raise ValueError(f"PyKEEN {class_name} with power_norm=True scores the p-th power of the distance, "
                         "which no model here does; train it with power_norm=False")
    name = _OURS[class_name]
    ent = _get(state, ENT, class_name)
    rel = _get(state, REL.format(0), class_name)
    n_ent, n_rel = ent.shape[0], rel.shape[0]
    kwargs: dict[str, Any] = {}
    params: dict[str, torch.Tensor] = {}
    if name in ("transe", "transh"):
        norm = int(p if p is not None else (1 if name == "transe" else 2))
        if norm not in (1, 2):
            raise ValueError(f"PyKEEN {class_name} with p={norm}: only p = 1 or 2 are supported here")
        kwargs["p_norm"] = norm
    if name in ("transe", "distmult"):
        dim = ent.shape[1]
        params = {"entity.weight": ent, "relation.weight": rel}
    elif name == "transh":
        dim = ent.shape[1]
        w = rel
        d = _get(state, REL.format(1), class_name)
        norms = w.norm(dim=-1)
        off = float((norms - 1).abs().max()) if len(norms) else 0.0
        if off > UNIT_TOL and not normalize_normals:
            raise ValueError(
                f"PyKEEN TransH hyperplane normals (relation_representations.0) are not of unit length "
                f"(|w| from {float(norms.min()):.4g} to {float(norms.max()):.4g}): PyKEEN 1.11 uses them "
                "unnormalised, our TransH (Wang et al. 2014) uses unit normals. Import with "
                "normalize_normals=True (--normalize-normals) to normalise them; scores then differ")
        params = {"entity.weight": ent, "relation.weight": d, "normal.weight": w / norms.clamp_min(1e-12)[:, None]}
    elif name == "complex":
        dim = ent.shape[1] // 2
        params = {"entity.weight": _from_interleaved(ent), "relation.weight": _from_interleaved(rel)}
    else:  # rotate
        if p is not None and int(p) != 2:
            raise ValueError(f"PyKEEN RotatE with p={p}: our RotatE uses the L2 distance (p=2)")
        dim = ent.shape[1] // 2
        r = rel.reshape(n_rel, dim, 2)
        modulus = r.norm(dim=-1)
        off = float((modulus - 1).abs().max()) if modulus.numel() else 0.0
        if off > UNIT_TOL:
            raise ValueError(f"PyKEEN RotatE relation vectors are not of unit modulus (off by up to {off:.3g}); "
                             "PyKEEN restores it after every training step (model.post_parameter_update())")
        params = {"entity.weight": _from_interleaved(ent), "relation.weight": torch.atan2(r[..., 1], r[..., 0])}
    model = get_model(name, n_ent, n_rel, dim, **kwargs)
    own = dict(model.named_parameters())
    with torch.no_grad():
        for key, value in params.items():
            if tuple(own[key].shape) != tuple(value.shape):
                raise ValueError(f"PyKEEN {class_name}: {key} of shape {tuple(value.shape)}, "
                                 f"expected {tuple(own[key].shape)}")
            own[key].copy_(value)
    return model.eval()


def state_to_pykeen(model) -> tuple[str, dict[str, Any], dict[str, torch.Tensor]]:
    """``(class name, PyKEEN constructor kwargs, representation tensors)`` of our model: the
    tensors keyed as in PyKEEN's ``state_dict`` (other keys of PyKEEN's state dict, such as
    regularizer buffers, are not ours to set)."""
    name = model.name
    if name not in PYKEEN_CLASSES:
        raise ValueError(f"model {name!r} has no PyKEEN counterpart; supported: {sorted(PYKEEN_CLASSES)}")
    cls = PYKEEN_CLASSES[name]
    ent = model.entity.weight.detach().cpu().float()
    rel = model.relation.weight.detach().cpu().float()
    kwargs: dict[str, Any] = {"embedding_dim": int(model.dim)}
    if name in ("transe", "transh"):
        kwargs["scoring_fct_norm"] = int(model.p_norm)
    if name in ("transe", "distmult"):
        state = {ENT: ent, REL.format(0): rel}
    elif name == "transh":
        w = model.normal.weight.detach().cpu().float()
        state = {ENT: ent, REL.format(0): w / w.norm(dim=-1, keepdim=True).clamp_min(1e-12), REL.format(1): rel}
    elif name == "complex":
        state = {ENT: _to_interleaved(ent), REL.format(0): _to_interleaved(rel)}
    else:  # rotate: phases -> unit complex numbers
        state = {ENT: _to_interleaved(ent),
                 REL.format(0): torch.stack([torch.cos(rel), torch.sin(rel)], dim=-1).reshape(rel.shape[0], -1)}
    return cls, kwargs, {k: v.contiguous().clone() for k, v in state.items()}


# --------------------------------------------------------------------------------------------
# PyKEEN model objects
# --------------------------------------------------------------------------------------------
def _interaction_settings(pk_model) -> tuple[int | None, bool]:
    inter = getattr(pk_model, "interaction", None)
    return getattr(inter, "p", None), bool(getattr(inter, "power_norm", False))


def model_from_pykeen(pk_model, p_norm: int | None = None, *, normalize_normals: bool = False):
    """Our model holding a trained PyKEEN model's parameters (TransE, TransH, DistMult, ComplEx,
    RotatE); ``p_norm`` overrides the PyKEEN interaction's norm."""
    cls = type(pk_model).__name__
    p, power = _interaction_settings(pk_model)
    return state_from_pykeen(cls, pk_model.state_dict(), p=p_norm or p, power_norm=power,
                             normalize_normals=normalize_normals)


def model_to_pykeen(model, triples_factory=None, *, random_seed: int = 0):
    """A PyKEEN model (class of :data:`PYKEEN_CLASSES`) holding ``model``'s parameters; its
    ``score_hrt`` equals our ``score_hrt`` (float tolerance). ``triples_factory``: the graph's
    training factory (default: an empty one of the model's size)."""
    require_pykeen()
    import pykeen.models
    from pykeen.triples import CoreTriplesFactory

    cls, kwargs, state = state_to_pykeen(model)
    if triples_factory is None:
        triples_factory = CoreTriplesFactory.create(mapped_triples=torch.zeros((0, 3), dtype=torch.long),
                                                    num_entities=model.num_entities,
                                                    num_relations=model.num_relations)
    if (triples_factory.num_entities, triples_factory.num_relations) != (model.num_entities, model.num_relations):
        raise ValueError(f"the triples factory has {triples_factory.num_entities} entities / "
                         f"{triples_factory.num_relations} relations, the model {model.num_entities} / "
                         f"{model.num_relations}")
    pk = getattr(pykeen.models, cls)(triples_factory=triples_factory, random_seed=random_seed, **kwargs)
    own = pk.state_dict()
    with torch.no_grad():
        for key, value in state.items():
            if key not in own or tuple(own[key].shape) != tuple(value.shape):
                raise ValueError(f"PyKEEN {cls} has no parameter {key!r} of shape {tuple(value.shape)}; "
                                 "a PyKEEN version other than 1.11?")
        pk.load_state_dict({**own, **state})
    return pk.eval()


# --------------------------------------------------------------------------------------------
# Folders
# --------------------------------------------------------------------------------------------
def _write_id_map(path: Path, names: list[str]) -> None:
    """PyKEEN's ``<name>_to_id.tsv.gz``: columns id, label (sorted by id)."""
    lines = ["id\tlabel"] + [f"{i}\t{n}" for i, n in enumerate(names)]
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")


def _read_id_map(path: Path) -> list[str]:
    import pandas as pd

    from wgbcore.fileio import reading

    with reading(path, "PyKEEN id map"):
        df = pd.read_csv(path, sep="\t", keep_default_na=False, dtype={"label": str})
    if not {"id", "label"} <= set(df.columns):
        raise ValueError(f"{path}: expected columns id and label")
    return _names(dict(zip(df["label"], df["id"].astype(int))), path.name.split("_to_id")[0])


def export_pykeen(model, out: str | os.PathLike, graph: KnowledgeGraph | None = None,
                  names: tuple[list[str], list[str]] | None = None) -> Path:
    """Write ``model`` for PyKEEN into folder ``out``: ``trained_model.pkl`` (the PyKEEN model,
    ``torch.save`` as PyKEEN's pipeline writes it), ``state_dict.pt`` (tensors only) with
    ``pykeen_model.json`` (class, constructor kwargs, sizes) and, given the graph or the names,
    ``training_triples/`` (PyKEEN's ``TriplesFactory.from_path_binary`` layout)."""
    require_pykeen()
    from wgbcore.atomicio import atomic_open, atomic_write_json

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tf = None
    if graph is not None:
        tf = to_pykeen(graph)["training"]
        names = (list(graph.entities), list(graph.relations))
    pk = model_to_pykeen(model, tf)
    cls, kwargs, state = state_to_pykeen(model)
    with atomic_open(out / MODEL_PKL, "wb") as fh:
        torch.save(pk, fh)
    with atomic_open(out / STATE, "wb") as fh:
        torch.save(pk.state_dict(), fh)
    if tf is not None:
        tf.to_path_binary(out / TRIPLES)
    elif names is not None:
        (out / TRIPLES).mkdir(exist_ok=True)
        for fname, ns in (("entity_to_id.tsv.gz", names[0]), ("relation_to_id.tsv.gz", names[1])):
            _write_id_map(out / TRIPLES / fname, ns)
    p, power = _interaction_settings(pk)
    atomic_write_json(out / META, {"format": FORMAT, "class": cls, "kwargs": kwargs, "model": model.name,
                                   "num_entities": model.num_entities, "num_relations": model.num_relations,
                                   "interaction": {"p": p, "power_norm": power}, "state_dict": STATE})
    return out


def save_pykeen_tensors(pk_model, out: str | os.PathLike) -> Path:
    """Write a live PyKEEN model as ``state_dict.pt`` (tensors only) + ``pykeen_model.json`` into
    ``out``, the form :func:`import_pykeen` reads. Run it where the model was trained (e.g. on
    ``pipeline(...).model``), instead of handing over PyKEEN's pickled ``trained_model.pkl``."""
    from wgbcore.atomicio import atomic_open, atomic_write_json

    cls = type(pk_model).__name__
    if cls not in _OURS:
        raise ValueError(f"PyKEEN model {cls} has no counterpart here; expected one of {sorted(_OURS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / STATE, "wb") as fh:
        torch.save({k: v.detach().cpu() for k, v in pk_model.state_dict().items()}, fh)
    p, power = _interaction_settings(pk_model)
    atomic_write_json(out / META, {"format": FORMAT, "class": cls, "num_entities": int(pk_model.num_entities),
                                   "num_relations": int(pk_model.num_relations),
                                   "interaction": {"p": p, "power_norm": power}, "state_dict": STATE})
    return out


def _read_meta(path: Path) -> dict:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: malformed JSON ({e.msg})") from None
    if not isinstance(meta, dict) or meta.get("class") not in _OURS:
        raise ValueError(f"{path}: expected {{\"class\": one of {sorted(_OURS)}, ...}}")
    return meta


def import_pykeen(src: str | os.PathLike, out: str | os.PathLike | None = None, *,
                  normalize_normals: bool = False, overwrite: bool = False) -> tuple[Any, list[str] | None, list[str] | None]:
    """Read a PyKEEN model folder (``export_pykeen``'s, or the ``save_to_directory`` of a PyKEEN
    pipeline) as ``(our model, entity names, relation names)``; with ``out``, also write it as an
    embedding dir (:func:`kge.embeddings.save_model`). Names come from ``training_triples/``.

    An ``out`` that already holds files (e.g. a finished ``wgb kge train`` run with its ``DONE``
    and checkpoint) is refused before anything is read; ``overwrite`` empties it first, so no
    marker of the old run survives next to the imported tensors."""
    import pickle
    import shutil

    src = Path(src)
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: not a folder")
    if out is not None and Path(out).is_dir() and any(Path(out).iterdir()):
        if not overwrite:
            held = sorted(p.name for p in Path(out).iterdir())[:5]
            raise FileExistsError(f"{out}: not empty (holds {', '.join(held)}); importing into it would mix the "
                                  "imported tensors with another run's files: choose an empty folder or --overwrite")
        shutil.rmtree(out)
    if (src / META).is_file() and (src / STATE).is_file():
        meta = _read_meta(src / META)
        try:
            state = torch.load(src / STATE, map_location="cpu", weights_only=True)
        except (pickle.UnpicklingError, RuntimeError, EOFError, OSError) as e:
            raise ValueError(f"{src / STATE}: not a tensors-only state dict "
                             f"({str(e).splitlines()[0][:200] if str(e) else type(e).__name__})") from None
        if not isinstance(state, dict):
            raise ValueError(f"{src / STATE}: expected a state dict, got {type(state).__name__}")
        inter = meta.get("interaction") or {}
        model = state_from_pykeen(meta["class"], state, p=inter.get("p"), power_norm=bool(inter.get("power_norm")),
                                  normalize_normals=normalize_normals)
    elif (src / MODEL_PKL).is_file():
        raise ValueError(f"{src / MODEL_PKL} is a pickled PyKEEN model, which is never loaded (unpickling can run "
                         f"code from the file); where the model was trained, write its tensors with "
                         f"kge.pykeen_io.save_pykeen_tensors(model, {str(src)!r}) and import again")
    else:
        raise FileNotFoundError(f"{src}: neither {META} + {STATE} nor {MODEL_PKL}")
    entities = relations = None
    tdir = src / TRIPLES
    if (tdir / "entity_to_id.tsv.gz").is_file() and (tdir / "relation_to_id.tsv.gz").is_file():
        entities = _read_id_map(tdir / "entity_to_id.tsv.gz")
        relations = _read_id_map(tdir / "relation_to_id.tsv.gz")
        if (len(entities), len(relations)) != (model.num_entities, model.num_relations):
            raise ValueError(f"{tdir}: {len(entities)} entities / {len(relations)} relations, the model has "
                             f"{model.num_entities} / {model.num_relations} (inverse triples are not supported)")
    if out is not None:
        from kge.embeddings import check_finite, save_model

        check_finite(model, str(src))
        graph = None
        if entities is not None:
            triples = _read_triples(tdir, len(entities), len(relations))
            graph = KnowledgeGraph(entities, relations, triples, name=src.name)
        save_model(model, out, graph, extra={"imported_from": {"pykeen_folder": str(src),
                                                               "class": PYKEEN_CLASSES[model.name]}})
    return model, entities, relations


def _read_triples(tdir: Path, n_ent: int, n_rel: int) -> np.ndarray:
    path = tdir / "numeric_triples.tsv.gz"
    if not path.is_file():
        return np.zeros((0, 3), dtype=np.int64)
    import pandas as pd

    from wgbcore.fileio import reading

    with reading(path, "PyKEEN triples"):
        a = pd.read_csv(path, sep="\t", dtype=int).to_numpy(dtype=np.int64)
    if a.size and (a[:, [0, 2]].max() >= n_ent or a[:, 1].max() >= n_rel or a.min() < 0):
        raise ValueError(f"{path}: ids out of range of {n_ent} entities / {n_rel} relations")
    return a.reshape(-1, 3)


def max_score_difference(model, pk_model, n: int = 256, seed: int = 0) -> float:
    """Largest |our score - PyKEEN's score| over ``n`` random triples (a round-trip figure)."""
    g = torch.Generator().manual_seed(seed)
    h = torch.randint(model.num_entities, (n,), generator=g)
    r = torch.randint(model.num_relations, (n,), generator=g)
    t = torch.randint(model.num_entities, (n,), generator=g)
    with torch.no_grad():
        ours = model.score_hrt(h, r, t)
        theirs = pk_model.score_hrt(torch.stack([h, r, t], dim=1)).reshape(-1)
    d = (ours - theirs).abs().max()
    return float(d) if math.isfinite(float(d)) else math.inf
