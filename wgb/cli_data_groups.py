"""`wgb data groups`: the person-level groups of a benchmark (gender, birth era, birthplace region,
Global North/South) and their cell counts (thin: parse options, call :mod:`wikigenderbias.groups`)."""
from __future__ import annotations

from pathlib import Path

import click

from wgb.errors import OutputPath


def _echo_table(title: str, table) -> None:
    click.echo(f"\n{title}")
    click.echo(table.to_string())


@click.command("groups")
@click.option("--dataset", type=click.Path(file_okay=False), default=None,
              help="Benchmark folder (default: the embedded WikiGenderBias release).")
@click.option("--era-edges", default="1850,1900,1950", show_default=True,
              help="Birth-era bin edges (years, increasing): 1850,1900,1950 gives <1850, 1850-1899, 1900-1949, >=1950.")
@click.option("--out", "out_dir", type=OutputPath(directory=True), default=None,
              help="Also write persons.csv (the attribute table) and cells.json to this folder.")
def groups_cmd(dataset: str | None, era_edges: str, out_dir: str | None) -> None:
    """Cell counts of the person-level groups: gender x era, gender x region, gender x north/south, unknowns."""
    from wikigenderbias.groups import EraBins, attribute_table

    try:
        eras = EraBins.parse(era_edges)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--era-edges") from None
    try:
        table = attribute_table(eras=eras, dataset=dataset)
    except (FileNotFoundError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    cov = table.coverage()
    click.echo(f"{len(table)} persons ({table.source}); birthplaces: {cov['distinct_places']} distinct, "
               f"{cov['persons_with_country']} persons with a country ({cov['share_with_country']:.1%}), "
               f"{cov['persons_with_region']} with a region ({cov['share_with_region']:.1%})")
    _echo_table("gender x era", table.cells("gender", "era"))
    _echo_table("gender x region", table.cells("gender", "region"))
    _echo_table("gender x north/south", table.cells("gender", "north_south"))
    unknown = table.unknown_counts()
    click.echo("\nunknown (counted, not dropped): " + ", ".join(f"{k} {v}" for k, v in unknown.items()))
    click.echo("birthplaces by gazetteer rule (persons): "
               + ", ".join(f"{k} {v}" for k, v in cov["persons_by_level"].items() if v))
    if out_dir:
        from wgbcore.atomicio import atomic_write_json, atomic_write_text

        out = Path(out_dir)
        atomic_write_text(out / "persons.csv", table.frame.to_csv(index=False))
        atomic_write_json(out / "cells.json", table.summary())
        click.echo(f"\nwrote {out / 'persons.csv'}, {out / 'cells.json'}")


def register(group: click.Group) -> None:
    """Add this module's command to ``group``."""
    group.add_command(groups_cmd)
