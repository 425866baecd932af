"""Bag selectors and their resolver.

A selector turns the sentence representations of a flat batch (``rep`` [n, H], bag id per
sentence ``seg``) into bags: ``pool(...) -> [B, H]`` in training (the classifier follows) and
``predict_proba(...) -> [B, C]`` at test time.
"""
from __future__ import annotations

from typing import Any

from relext.selectors.attention import AttentionSelector
from relext.selectors.average import AverageSelector
from relext.selectors.one import OneSelector

SELECTORS: dict[str, type] = {
    "attention": AttentionSelector,
    "average": AverageSelector,
    "one": OneSelector,
}
ALIASES = {"att": "attention", "ave": "average", "avg": "average", "max": "one"}


def selector_class(name: str) -> type:
    key = ALIASES.get(name, name)
    try:
        return SELECTORS[key]
    except KeyError:
        raise ValueError(f"unknown selector {name!r}; expected one of {sorted(SELECTORS)}") from None


def get_selector(name: str, **kwargs: Any):
    """Build selector ``name`` (``hidden``: the encoder's out_dim; ``num_classes``)."""
    return selector_class(name)(**kwargs)


__all__ = ["SELECTORS", "get_selector", "selector_class", "AttentionSelector", "AverageSelector", "OneSelector"]
