"""The typed option validators every command shares: one parameter type per kind of value, so
an option given to several commands is refused in the same words by each, while the command
line is parsed (exit code 2), before any folder is written.

- :class:`FiniteFloat` (``FINITE``, ``NONNEG_FLOAT``, ``POS_FLOAT``, ``UNIT``, ``OPEN_UNIT``): a
  float, optionally in a range; ``nan``, ``inf`` and ``-inf`` are refused (``click.FloatRange``
  lets ``nan`` through every bound).
- ``ALPHA`` / ``CONFIDENCE``: a level strictly between 0 and 1.
- ``COUNT`` (whole numbers >= 0) and ``POSITIVE`` (>= 1): ``--top``, ``--min-count``, ``--epochs``.
- ``SEED``: a seed option (``--seed``, ``--fold-seed``, ``--bootstrap-seed``), a whole number in
  0..2**32-1 (numpy's range: ``-1`` was "Seed must be between 0 and 2**32 - 1", naming no option).
- ``RESAMPLES``: bootstrap resamples (``--resamples`` of ``re score``, ``re eval``, ``re grid``,
  ``re debias-grid``), at least 100: a percentile interval of fewer is its extreme draws (one
  resample gave an interval of width 0 that "excluded 0"; ``re score`` already asked for 100).
- :class:`SeedList` (``SEEDS``): ``--seeds`` through :func:`parse_seeds`, which
  names the exact item it refuses (``0,,1``, ``1-``, ``-1``, a seed twice).

``--scheduler`` and the executor's other options are checked by
:class:`wgbcore.executor.ExecutorConfig` (``wgb.cli_executor``); ``--protocol/--folds`` by
:func:`wgb.cli_protocol.resolve_folds`. ``tests/test_cli_validation_round3.py`` walks every
command and fails on a float option that does not use :class:`FiniteFloat`.
"""
from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["FiniteFloat", "FINITE", "NONNEG_FLOAT", "POS_FLOAT", "UNIT", "OPEN_UNIT", "ALPHA", "CONFIDENCE",
           "COUNT", "POSITIVE", "SEED", "RESAMPLES", "SeedList", "SEEDS"]


class FiniteFloat(click.FloatRange):
    """A finite float, optionally within ``[min, max]`` (``min_open``/``max_open``: bounds excluded)."""

    name = "finite float"

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, float) and math.isfinite(value) or value is None:
            return super().convert(value, param, ctx)
        try:
            number = float(value)
        except (TypeError, ValueError):
            return super().convert(value, param, ctx)   # click's own "is not a valid float"
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number{self._range_words()}", param, ctx)
        return super().convert(value, param, ctx)

    def _range_words(self) -> str:
        if self.min is None and self.max is None:
            return ""
        return f" (expected {self._describe_range()})"


FINITE = FiniteFloat()
NONNEG_FLOAT = FiniteFloat(min=0)
POS_FLOAT = FiniteFloat(min=0, min_open=True)
UNIT = FiniteFloat(0, 1)
OPEN_UNIT = FiniteFloat(0, 1, min_open=True, max_open=True)
ALPHA = OPEN_UNIT
CONFIDENCE = OPEN_UNIT
COUNT = click.IntRange(min=0)
POSITIVE = click.IntRange(min=1)
SEED = click.IntRange(0, 2**32 - 1)
RESAMPLES = click.IntRange(min=100)


_SEED_FORMS = "a seed is a whole number >= 0 (7) or a range (0-9)"


def parse_seeds(value: str) -> list[int]:
    """``"0,1,2"``, ``"0-9"`` or a mix (``"0-4,7"``) -> the seeds in the order given. Every
    item must be a whole number >= 0 or a rising range; the one refused is named: an empty item
    (``0,,1``), a half range (``1-``), a negative seed (``-1``), a seed named twice (a typo more
    often than a wish)."""
    out: list[int] = []
    items = [v.strip() for v in str(value).split(",")]
    if items == [""]:
        raise ValueError(f"expected seeds such as 0,1,2 or 0-9, got {value!r}")
    for pos, item in enumerate(items, 1):
        if not item:
            raise ValueError(f"item {pos} of {value!r} is empty ({_SEED_FORMS})")
        lo, sep, hi = item.partition("-")
        if not lo.strip().isdigit() or (sep and not hi.strip().isdigit()):
            what = "a negative seed" if item.startswith("-") else "not a seed"
            raise ValueError(f"{item!r} in {value!r} is {what} ({_SEED_FORMS})")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"empty seed range {item!r} in {value!r}")
        seeds = list(range(first, last + 1))
        again = [k for k in seeds if k in out]
        if again:
            raise ValueError(f"seeds repeat: {again[0]} twice in {value!r}")
        out += seeds
    return out



class SeedList(click.ParamType):
    """``--seeds``: ``0,1,2``, ``0-9`` or ``0-4,7`` -> the list of seeds (see ``parse_seeds``)."""

    name = "seeds"

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, list):
            return value
        try:
            return parse_seeds(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


SEEDS = SeedList()
