"""Commands of `wgb re` (filled in by the issue that lands them)."""
from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
