"""How well and how fairly runs extract: :mod:`~relext.evaluation.metrics` and
:mod:`~relext.evaluation.decisions` (count metrics and decision rules, the benchmark's relations
bound to :mod:`wgbstats`'), :mod:`~relext.evaluation.fairness` (gender gaps, equality of
opportunity), :mod:`~relext.evaluation.evaluate` (one run: ``eval.json`` and per-person counts),
:mod:`~relext.evaluation.study_counts` (a study's counts for :mod:`wgbstats`),
:mod:`~relext.evaluation.prediction_sets`, :mod:`~relext.evaluation.run_sets` and
:mod:`~relext.evaluation.score` (any set of runs' predictions checked and scored with the
design), :mod:`~relext.evaluation.cell_gaps` (gaps per cell of a person-level grouping),
:mod:`~relext.evaluation.report`, :mod:`~relext.evaluation.plots` and
:mod:`~relext.evaluation.frames` (what a user reads)."""
