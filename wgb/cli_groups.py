"""The ``--groups`` options of the commands that score many runs (``re grid``, ``re debias-grid``,
``re score``, ``run``): the gender gap per cell of a person-level grouping (:mod:`relext.evaluation.cell_gaps`;
``wgb run``: :mod:`wgb.pipeline.groups`), checked before any work."""
from __future__ import annotations

import click


def group_options(f):
    """--groups, --era-edges, --min-cell."""
    f = click.option("--min-cell", type=click.IntRange(min=2), default=30, show_default=True,
                     help="With --groups: fewest persons of each gender in a cell for a verdict.")(f)
    f = click.option("--era-edges", default="1850,1900,1950", show_default=True,
                     help="With --groups ...era: birth-era bin edges (years, increasing).")(f)
    return click.option("--groups", default=None, metavar="gender,COLUMN[,COLUMN]",
                        help="Also the gender gap per cell of gender,era | gender,region | gender,north_south for every "
                        "variant of the finished runs, into OUT/groups/ (exploratory: not in the plan).")(f)


def resolve_groups(groups: str | None, era_edges: str, min_cell: int) -> dict | None:
    """The options as keyword arguments of :func:`relext.evaluation.cell_gaps.study_groups` (None without --groups)."""
    if groups is None:
        return None
    from relext.evaluation.cell_gaps import parse_groups
    from wikigenderbias.groups import EraBins

    try:
        columns = parse_groups(groups)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--groups") from None
    try:
        eras = EraBins.parse(era_edges)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--era-edges") from None
    return {"columns": columns, "eras": eras, "min_per_gender": min_cell}


def write_groups(runs, out, opts: dict | None, **kwargs) -> None:
    """Write the per-cell reports of ``runs`` into ``out/groups`` and say where."""
    if not opts or not runs:
        return
    from relext.evaluation.cell_gaps import study_groups

    try:
        paths = study_groups(runs, out / "groups", **opts, **kwargs)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"groups: wrote {len(paths)} files to {out / 'groups'}", err=True)
