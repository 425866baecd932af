"""Deprecated path: moved to :mod:`wgbstats.verdicts` (issue #42); works for one release."""
from wgbstats.verdicts import *  # noqa: F401,F403
from wgbstats.verdicts import (_interval, _levels, _projected, _reference_args, _smallest)  # noqa: F401
