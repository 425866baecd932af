"""Deprecated path: moved to :mod:`wgbstats.calibration` (issue #42); works for one release."""
from wgbstats.calibration import *  # noqa: F401,F403
from wgbstats.calibration import _closed_form  # noqa: F401
