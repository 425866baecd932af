"""The evaluation-protocol options shared by every command that trains or scores many runs:
``--protocol test|crossfit``, ``--folds K``, ``--fold-seed S`` (see :mod:`relext.crossfit`), and
the one parser of ``--seeds`` lists (``0,1,2``, ``0-9``, ``0-4,7``)."""
from __future__ import annotations

import click


def protocol_options(f):
    """Add ``--protocol``, ``--folds`` and ``--fold-seed``; the command receives ``folds`` (None for
    the test protocol, K for crossfit) and ``fold_seed``."""
    f = click.option("--fold-seed", type=int, default=0, show_default=True,
                     help="Seed that deals the persons into folds (crossfit only).")(f)
    f = click.option("--folds", type=click.IntRange(min=2), default=None,
                     help="Number of person-disjoint folds under --protocol crossfit [default: 5].")(f)
    f = click.option("--protocol", type=click.Choice(["test", "crossfit"]), default="test", show_default=True,
                     help="test: train on the release's train split, judge on its 523 annotated test "
                          "persons. crossfit: every person of the benchmark held out once in K folds and "
                          "predicted by a model that never saw them; reports give the test persons and "
                          "the distant-labelled rest side by side.")(f)
    return f


def resolve_folds(protocol: str, folds: int | None) -> int | None:
    """K for crossfit, None for the test protocol (``--folds`` without crossfit is an error)."""
    from relext.crossfit import parse_protocol

    try:
        return parse_protocol(protocol, folds)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--protocol/--folds") from None


def parse_seeds(value: str) -> list[int]:
    """``"0,1,2"``, ``"0-9"`` or a mix (``"0-4,7"``) -> the seeds in the order given; a seed named
    twice is an error (a typo more often than a wish)."""
    out: list[int] = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        lo, sep, hi = item.partition("-")
        try:
            seeds = list(range(int(lo), int(hi) + 1)) if sep and lo else [int(item)]
        except ValueError:
            raise ValueError(f"expected seeds such as 0,1,2 or 0-9, got {value!r}") from None
        if sep and lo and int(hi) < int(lo):
            raise ValueError(f"empty seed range {item!r}")
        again = [k for k in seeds if k in out]
        if again:
            raise ValueError(f"seeds repeat: {again[0]} twice in {value!r}")
        out += seeds
    if not out:
        raise ValueError(f"expected seeds such as 0,1,2 or 0-9, got {value!r}")
    return out


def seeds_option(ctx, param, value):
    """click callback: ``--seeds`` through :func:`parse_seeds` (None stays None)."""
    if value is None:
        return None
    try:
        return parse_seeds(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
