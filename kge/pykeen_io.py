"""Interoperability with PyKEEN (optional dependency, imported lazily).

- :func:`to_pykeen` -- a :class:`KnowledgeGraph` as PyKEEN ``TriplesFactory`` objects (same ids).
- :func:`from_pykeen` -- PyKEEN factories (training, and optionally validation/testing) as a graph.
- :func:`model_from_pykeen` -- copy a trained PyKEEN TransE/DistMult into our model class, so
  our evaluator and every bias measure run on PyKEEN-trained embeddings.
"""
from __future__ import annotations

import numpy as np
import torch

from kge.graph import KnowledgeGraph

__all__ = ["to_pykeen", "from_pykeen", "model_from_pykeen", "require_pykeen"]


def require_pykeen():
    try:
        import pykeen
        import pykeen.triples  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("PyKEEN interoperability needs the optional package pykeen "
                          "(pip install 'wgb[bench]' or pip install pykeen==1.11.1)") from e
    return pykeen


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


def model_from_pykeen(pk_model, p_norm: int | None = None):
    """Our model holding a trained PyKEEN model's parameters (TransE and DistMult)."""
    from kge.models import DistMult, TransE

    cls = type(pk_model).__name__
    ent = pk_model.entity_representations[0](indices=None).detach().cpu()
    rel = pk_model.relation_representations[0](indices=None).detach().cpu()
    if cls == "TransE":
        norm = p_norm or getattr(getattr(pk_model, "interaction", None), "p", 1)
        m = TransE(ent.shape[0], rel.shape[0], ent.shape[1], p_norm=int(norm))
    elif cls == "DistMult":
        m = DistMult(ent.shape[0], rel.shape[0], ent.shape[1])
    else:
        raise ValueError(f"model_from_pykeen supports TransE and DistMult, not {cls}")
    with torch.no_grad():
        m.entity.weight.copy_(ent)
        m.relation.weight.copy_(rel)
    return m.eval()
