"""Deprecated path: moved to :mod:`wgbstats.reference` (issue #42); works for one release."""
from wgbstats.reference import *  # noqa: F401,F403
from wgbstats.reference import _nodes  # noqa: F401
