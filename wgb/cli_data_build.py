"""Commands of `wgb data` that build a benchmark from dumps (filled in by the build issue)."""
from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
