"""The evaluation-protocol options shared by every command that trains or scores many runs:
``--protocol test|crossfit``, ``--folds K``, ``--fold-seed S`` (see :mod:`relext.protocols.crossfit`), and
the one parser of ``--seeds`` lists (``0,1,2``, ``0-9``, ``0-4,7``) (:func:`wgb.cli_types.parse_seeds`) and of lists whose items may
carry their own seeds (``none,cda,anonymize+cda@0-4``, ``cnn,pcnn,rnn@0-2``)."""
from __future__ import annotations

import click

from wgb.cli_types import SEED, parse_seeds  # noqa: F401  (parse_seeds: importable from here too)


def protocol_options(f):
    """Add ``--protocol``, ``--folds`` and ``--fold-seed``; the command receives ``folds`` (None for
    the test protocol, K for crossfit) and ``fold_seed``."""
    f = click.option("--fold-seed", type=SEED, default=0, show_default=True,
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
    """K for crossfit, None for the test protocol; ``--folds`` given with the test protocol is
    refused whatever its value (it would be ignored), and so is ``--fold-seed`` given on the command
    line. Every command with ``--protocol/--folds`` (``re train``, ``re grid``, ``re debias-grid``,
    ``wgb run``) goes through here."""
    from relext.protocols.crossfit import parse_protocol

    if protocol == "test" and folds is not None:
        raise click.BadParameter(f"--folds {folds} applies to --protocol crossfit only (the test protocol "
                                 "judges the release's own test persons)", param_hint="--protocol/--folds")
    ctx = click.get_current_context(silent=True)
    source = ctx.get_parameter_source("fold_seed") if ctx is not None else None
    if protocol == "test" and source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
        raise click.BadParameter(f"--fold-seed {ctx.params.get('fold_seed')} applies to --protocol crossfit only "
                                 "(the test protocol deals no folds)", param_hint="--protocol/--fold-seed")
    try:
        return parse_protocol(protocol, folds)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--protocol/--folds") from None


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
