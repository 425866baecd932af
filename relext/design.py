"""Deprecated path of the study-design layer, which moved to :mod:`wgbstats.design` (issue #42);
it works for one release. Relation extraction's counts (the benchmark's relations as labels) are
:class:`relext.study_counts.StudyCounts`, re-exported here as ``StudyCounts``."""
import warnings

warnings.warn("relext.design moved to wgbstats.design (relation extraction's StudyCounts: "
              "relext.study_counts); the old path goes in the next release", DeprecationWarning, stacklevel=2)

from wgbstats.design import *  # noqa: E402,F401,F403
from wgbstats.verdicts import _interval  # noqa: E402,F401
from wgbstats.metrics import micro_f1_from_counts, prf_from_counts  # noqa: E402,F401
from relext.study_counts import StudyCounts  # noqa: E402,F401
from wikigenderbias.schema import RELATIONS  # noqa: E402,F401
