"""The evaluation-protocol options shared by every command that trains or scores many runs:
``--protocol test|crossfit``, ``--folds K``, ``--fold-seed S`` (see :mod:`relext.crossfit`), and
the one parser of ``--seeds`` lists (``0,1,2``, ``0-9``, ``0-4,7``) and of lists whose items may
carry their own seeds (``none,cda,anonymize+cda@0-4``, ``cnn,pcnn,rnn@0-2``)."""
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


def parse_named_seeds(value: str, *, split=None, canonical=None) -> list[tuple[str, list[int] | None]]:
    """``"cnn,pcnn,rnn@0-2,birnn@0,1"`` -> [(name, its own seeds or None), ...]: a comma-separated
    list whose items may carry their own seeds after ``@`` (``split``: how to split at the commas,
    default ``str.split``; ``canonical``: each name's canonical spelling, raising ValueError for an
    unknown one). A name given twice is an error."""
    items = [v.strip() for v in (split(value, ",") if split else value.split(",")) if v.strip()]
    merged: list[str] = []
    for item in items:  # "rnn@0,1" was split at the comma: glue bare seed items back
        if merged and "@" in merged[-1] and item[:1].isdigit():
            merged[-1] += "," + item
        else:
            merged.append(item)
    if not merged:
        raise ValueError("expected a comma-separated list")
    out: list[tuple[str, list[int] | None]] = []
    for item in merged:
        name, sep, seeds = item.partition("@")
        name = canonical(name.strip()) if canonical else name.strip()
        if name in [n for n, _ in out]:
            raise ValueError(f"{name!r} named twice in {value!r}")
        out.append((name, parse_seeds(seeds) if sep else None))
    return out
