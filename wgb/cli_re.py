"""`wgb re ...`: relation extraction training, evaluation and fairness (package `relext`)."""
from __future__ import annotations

import click

from wgb import cli_re_debias, cli_re_eval, cli_re_train


@click.group(name="re")
def re_group() -> None:
    """Train and evaluate relation extractors; measure their gender gaps."""


cli_re_train.register(re_group)
cli_re_eval.register(re_group)
cli_re_debias.register(re_group)
