"""Knowledge graph embedding models (all :class:`~kge.models.base.KGEModel` subclasses) and their
resolver.

Every model keeps its parameters in ``nn.Embedding(sparse=True)`` tables, so training uses
:class:`torch.optim.SparseAdam` and touches only the rows of a batch.
"""
from __future__ import annotations

from kge.models.base import KGEModel
from kge.models.complex import ComplEx
from kge.models.distmult import DistMult
from kge.models.rotate import RotatE
from kge.models.transe import TransE
from kge.models.transh import TransH

MODELS: dict[str, type[KGEModel]] = {
    "transe": TransE,
    "transh": TransH,
    "distmult": DistMult,
    "complex": ComplEx,
    "rotate": RotatE,
}

__all__ = ["KGEModel", "MODELS", "get_model", "model_class", "TransE", "TransH", "DistMult", "ComplEx", "RotatE"]


def model_class(name: str) -> type[KGEModel]:
    key = name.lower().replace("-", "").replace("_", "")
    if key not in MODELS:
        raise ValueError(f"unknown model {name!r}; expected one of {sorted(MODELS)}")
    return MODELS[key]


def get_model(name: str, num_entities: int, num_relations: int, dim: int = 100, **kwargs) -> KGEModel:
    """Build a registered model: ``get_model("transe", 75043, 13, dim=100, p_norm=1)``."""
    return model_class(name)(num_entities, num_relations, dim, **kwargs)
