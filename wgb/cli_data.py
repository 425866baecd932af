"""`wgb data ...`: the WikiGenderBias benchmark (package `wikigenderbias`)."""
from __future__ import annotations

import click

from wgb import cli_data_build


@click.group()
def data() -> None:
    """Load, describe, export and build the WikiGenderBias benchmark."""


@data.command()
@click.option("--out", "out_dir", default="wgb-output", show_default=True)
def stats(out_dir: str) -> None:
    """Benchmark statistics (placeholder until the foundation lands)."""
    raise click.ClickException("not yet available")


cli_data_build.register(data)
