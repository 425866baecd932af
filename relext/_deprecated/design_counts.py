"""Deprecated path: moved to :mod:`wgbstats.counts` (issue #42); works for one release.
``StudyCounts`` here is relation extraction's (:class:`relext.evaluation.study_counts.StudyCounts`)."""
from wgbstats.counts import *  # noqa: F401,F403
from wgbstats.counts import _read_group  # noqa: F401
from relext.evaluation.study_counts import StudyCounts  # noqa: F401
