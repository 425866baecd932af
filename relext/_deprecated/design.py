"""Deprecated path of the study-design layer, which moved to :mod:`wgbstats.design` (issue #42);
it works for one release. Relation extraction's counts (the benchmark's relations as labels) are
:class:`relext.evaluation.study_counts.StudyCounts`, re-exported here as ``StudyCounts``."""
from wgbstats.design import *  # noqa: F401,F403
from wgbstats.verdicts import _interval  # noqa: F401
from wgbstats.metrics import micro_f1_from_counts, prf_from_counts  # noqa: F401
from relext.evaluation.study_counts import StudyCounts  # noqa: F401
from wikigenderbias.schema import RELATIONS  # noqa: F401
