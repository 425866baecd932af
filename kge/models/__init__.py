"""Knowledge graph embedding models (all :class:`~kge.models.base.KGEModel` subclasses) and their
registry.

A new model is one file with a :class:`~kge.models.base.KGEModel` subclass plus one
``MODELS.register`` line below; the tests parametrized over ``MODELS`` then cover it.

Every model keeps its parameters in ``nn.Embedding(sparse=True)`` tables, so training uses
:class:`torch.optim.SparseAdam` and touches only the rows of a batch.
"""
from __future__ import annotations

from wgbcore.registry import Registry

from kge.models.base import KGEModel
from kge.models.complex import ComplEx
from kge.models.distmult import DistMult
from kge.models.rotate import RotatE
from kge.models.transe import TransE
from kge.models.transh import TransH

MODELS: Registry[type[KGEModel]] = Registry("model")
MODELS.register("transe", TransE)
MODELS.register("transh", TransH)
MODELS.register("distmult", DistMult)
MODELS.register("complex", ComplEx)
MODELS.register("rotate", RotatE)

__all__ = ["KGEModel", "MODELS", "get_model", "model_class", "TransE", "TransH", "DistMult", "ComplEx", "RotatE"]


def model_class(name: str) -> type[KGEModel]:
    """The model class registered as ``name`` (case, ``-`` and ``_`` do not matter)."""
    return MODELS.get(name)


def get_model(name: str, num_entities: int, num_relations: int, dim: int = 100, **kwargs) -> KGEModel:
    """Build a registered model: ``get_model("transe", 75043, 13, dim=100, p_norm=1)``."""
    return MODELS.make(name, num_entities, num_relations, dim, **kwargs)
