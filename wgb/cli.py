"""The `wgb` console entry point: thin commands only (parse, build a config, call a library).

Errors: every command runs inside one error boundary (:mod:`wgb.errors`): library errors
become one-line messages, exit code 1 (2 for usage errors); ``--debug`` shows the traceback.

Each command group lives in its own module: ``cli_data`` (wikigenderbias), ``cli_re`` (relext),
``cli_kge`` (kge); ``cli_run`` holds the end-to-end main job.
"""
from __future__ import annotations

import click

from wgb import __version__
from wgb.cli_data import data
from wgb.cli_kge import kge
from wgb.cli_re import re_group
from wgb.cli_run import run
from wgb.errors import ErrorBoundaryGroup


@click.group(cls=ErrorBoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wgb")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error (also: WGB_DEBUG=1).")
def cli(debug: bool) -> None:
    """Measure and mitigate gender bias in relation extraction and knowledge graphs.

    Errors are one line naming the file, line or field (exit code 1; 2 for a wrong command line).
    """


cli.add_command(data)
cli.add_command(re_group, name="re")
cli.add_command(kge)
cli.add_command(run)


def main() -> None:  # console_scripts entry point
    cli()


if __name__ == "__main__":  # datasets spawns workers: guard the entry point
    main()
