"""`wgb kge ...`: knowledge graph embeddings and their bias measures (package `kge`)."""
from __future__ import annotations

import click

from wgb import cli_kge_bias, cli_kge_du, cli_kge_pykeen, cli_kge_train


@click.group()
def kge() -> None:
    """Train knowledge graph embeddings and measure their bias."""


cli_kge_train.register(kge)
cli_kge_bias.register(kge)
cli_kge_du.register(kge)
cli_kge_pykeen.register(kge)
