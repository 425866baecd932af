"""Command-line choices read from a component registry (:class:`wgbcore.registry.Registry`).

``RegistryChoice("kge.models:MODELS")`` lists the registered names in ``--help`` and accepts any
spelling the registry accepts (case, ``-``/``_``, aliases), passing on the canonical name. The
registry's module is imported only when the choices are first needed, so ``wgb --help`` does not
import torch.
"""
from __future__ import annotations

import importlib
from typing import Any

import click


class RegistryChoice(click.Choice):
    def __init__(self, where: str) -> None:  # noqa: D107 - "module:ATTRIBUTE" of a Registry
        self.where = where
        self.case_sensitive = True
        self._choices: tuple[str, ...] | None = None

    def registry(self) -> Any:
        module, _, attr = self.where.partition(":")
        return getattr(importlib.import_module(module), attr)

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        if self._choices is None:
            self._choices = tuple(self.registry().names())
        return self._choices

    @choices.setter
    def choices(self, value) -> None:
        self._choices = tuple(value)

    def convert(self, value: Any, param, ctx) -> Any:
        registry = self.registry()
        name = registry.find(value)
        if name is None:
            self.fail(registry.unknown_message(value), param, ctx)
        return name
