"""Deprecated path: moved to :mod:`wgbstats.counts` (issue #42); works for one release.
``StudyCounts`` here is relation extraction's (:class:`relext.study_counts.StudyCounts`)."""
import warnings

warnings.warn("relext.design_counts moved to wgbstats.counts (relation extraction's StudyCounts: "
              "relext.study_counts); the old path goes in the next release", DeprecationWarning, stacklevel=2)

from wgbstats.counts import *  # noqa: E402,F401,F403
from wgbstats.counts import _read_group  # noqa: E402,F401
from relext.study_counts import StudyCounts  # noqa: E402,F401
