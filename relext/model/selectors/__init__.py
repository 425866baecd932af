"""Bag selectors and their registry.

A selector turns the sentence representations of a flat batch (``rep`` [n, H], bag id per
sentence ``seg``) into bags: ``pool(...) -> [B, H]`` in training (the classifier follows) and
``predict_proba(...) -> [B, C]`` at test time.
"""
from __future__ import annotations

from typing import Any

from wgbcore.registry import Registry

from relext.model.selectors.attention import AttentionSelector
from relext.model.selectors.average import AverageSelector
from relext.model.selectors.one import OneSelector

SELECTORS: Registry[type] = Registry("selector")
SELECTORS.register("attention", AttentionSelector, aliases=("att",))
SELECTORS.register("average", AverageSelector, aliases=("ave", "avg"))
SELECTORS.register("one", OneSelector, aliases=("max",))
#: alias -> selector name
ALIASES = SELECTORS.aliases


def selector_class(name: str) -> type:
    """The selector class registered as ``name`` (or one of its aliases)."""
    return SELECTORS.get(name)


def get_selector(name: str, **kwargs: Any):
    """Build selector ``name`` (``hidden``: the encoder's out_dim; ``num_classes``)."""
    return SELECTORS.make(name, **kwargs)


__all__ = ["SELECTORS", "get_selector", "selector_class", "AttentionSelector", "AverageSelector", "OneSelector"]
