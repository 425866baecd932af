"""Deprecated path: moved to :mod:`wgbstats.reference` (issue #42); works for one release."""
import warnings

warnings.warn("relext.design_reference moved to wgbstats.reference; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)

from wgbstats.reference import *  # noqa: E402,F401,F403
from wgbstats.reference import _nodes  # noqa: E402,F401
