"""Deprecated path: moved to :mod:`wgbstats.verdicts` (issue #42); works for one release."""
import warnings

warnings.warn("relext.design_verdicts moved to wgbstats.verdicts; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)

from wgbstats.verdicts import *  # noqa: E402,F401,F403
from wgbstats.verdicts import (_interval, _levels, _projected, _reference_args, _smallest)  # noqa: E402,F401
