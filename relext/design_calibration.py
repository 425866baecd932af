"""Deprecated path: moved to :mod:`wgbstats.calibration` (issue #42); works for one release."""
import warnings

warnings.warn("relext.design_calibration moved to wgbstats.calibration; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)

from wgbstats.calibration import *  # noqa: E402,F401,F403
from wgbstats.calibration import _closed_form  # noqa: E402,F401
