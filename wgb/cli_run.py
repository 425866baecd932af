"""`wgb run`: the end-to-end main job."""
from __future__ import annotations

import click


@click.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="wgb-output",
              show_default=True, help="Folder for the report and intermediate results.")
@click.pass_context
def run(ctx: click.Context, out_dir: str) -> None:
    """Run the main job on the embedded default data.

    Until the end-to-end pipeline lands (extraction -> knowledge graph -> embedding bias),
    this computes the benchmark statistics of the embedded WikiGenderBias release.
    """
    from wgb.cli_data import stats

    ctx.invoke(stats, out_dir=out_dir)
