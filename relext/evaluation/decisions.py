"""Decision rules and the metrics of decisions for relation extraction: the generic rules and
metrics of :mod:`wgbstats.decisions` (moved there, issue #42), with the per-class metrics named by
the benchmark's relations (:func:`per_relation_prf`). Re-exported by :mod:`relext.evaluation.evaluate`, which
applies them to prediction files."""
from __future__ import annotations

from wgbstats.decisions import (THRESHOLD_MODES, _best_cut, argmax_decisions, best_thresholds,  # noqa: F401
                                curve_max_f1, macro_f1, micro_f1, per_class_prf, pr_auc, pr_curve,
                                threshold_decisions)
from wikigenderbias.schema import RELATIONS


def per_relation_prf(y_true, y_pred) -> dict[str, dict[str, float]]:
    """``{relation: {precision, recall, f1, support, predicted}}`` for the positive relations."""
    return per_class_prf(y_true, y_pred, RELATIONS)
