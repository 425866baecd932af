"""Old import paths of relext's modules, working for one release with a ``DeprecationWarning``
(issue #42: the statistics moved to :mod:`wgbstats`, relext's files into rooms, the studies into
:mod:`wgbstudies`).

``import relext.train`` (or ``relext.encoders.cnn``, ``relext.studies.claims``) gives the very
module that now lives at the new path, not a copy: one registry, one class per name. A finder put
first on ``sys.meta_path`` by ``relext/__init__.py`` maps an old name, or a name under an old
package, to its new one; the warning names both.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old module -> its module now
MOVED = {
    "relext.bags": "relext.model.bags",
    "relext.vocab": "relext.model.vocab",
    "relext.embeddings": "relext.model.embeddings",
    "relext.heap": "relext.model.heap",
    "relext.encoders": "relext.model.encoders",
    "relext.selectors": "relext.model.selectors",
    "relext.data": "relext.protocols.data",
    "relext.crossfit": "relext.protocols.crossfit",
    "relext.config": "relext.training.config",
    "relext.run": "relext.training.run",
    "relext.checkpoint": "relext.training.checkpoint",
    "relext.train": "relext.training.train",
    "relext.predict": "relext.training.predict",
    "relext.metrics": "relext.evaluation.metrics",
    "relext.decisions": "relext.evaluation.decisions",
    "relext.fairness": "relext.evaluation.fairness",
    "relext.study_counts": "relext.evaluation.study_counts",
    "relext.frames": "relext.evaluation.frames",
    "relext.evaluate": "relext.evaluation.evaluate",
    "relext.report": "relext.evaluation.report",
    "relext.plots": "relext.evaluation.plots",
    "relext.prediction_sets": "relext.evaluation.prediction_sets",
    "relext.run_sets": "relext.evaluation.run_sets",
    "relext.score": "relext.evaluation.score",
    "relext.cell_gaps": "relext.evaluation.cell_gaps",
    "relext.grid": "wgbstudies.grid",
    "relext.grid_exec": "wgbstudies.grid_exec",
    "relext.studies": "wgbstudies",
}
#: old paths of the statistics (moved to wgbstats in the same issue): old -> (module, where it went)
STATISTICS = {
    "relext.design": ("relext._deprecated.design", "wgbstats.design"),
    "relext.design_counts": ("relext._deprecated.design_counts", "wgbstats.counts"),
    "relext.design_verdicts": ("relext._deprecated.design_verdicts", "wgbstats.verdicts"),
    "relext.design_reference": ("relext._deprecated.design_reference", "wgbstats.reference"),
    "relext.design_calibration": ("relext._deprecated.design_calibration", "wgbstats.calibration"),
}


def new_name(name: str) -> tuple[str, str] | None:
    """``(module to load, where it went)`` for an old module name, or None for a current one."""
    if name in STATISTICS:
        return STATISTICS[name]
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            new = MOVED[old] + name[len(old):]
            return new, new
    return None


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("relext.") and new_name(fullname) is not None:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        target, went = new_name(name)
        warnings.warn(f"{name} moved to {went}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        # the import system returns what sys.modules holds after exec: the module itself
        sys.modules[name] = importlib.import_module(target)


def install() -> None:
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
