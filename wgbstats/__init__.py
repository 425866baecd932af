"""wgbstats: the statistics of the house, below ``relext`` and ``kge``, knowing neither.

A study is variants x seeds x units (persons, articles, items), optionally dealt into folds; a gap
is a statistic. ``metrics`` (count-based P/R/F1 over classes) · ``decisions`` (decision rules over
class scores, their metrics and PR curves) · ``counts`` (``StudyCounts``: per-unit counts of a
study) · ``design`` (the two-level seed x unit bootstrap, paired differences, the interaction
counted once) over ``reference`` (the seed reference of every test) and ``verdicts`` (``Estimate``,
Holm / BH, three-state verdicts, intersection-union claims, power at more seeds or units) ·
``power`` (power at an effect, seeds for a target, units' part projected to a population) ·
``ranking`` (per-unit scores over seeds with intervals; rank agreement of two sets of runs with its
interval over seeds x units, and the stability claim) ·
``calibration`` (known-answer simulations of the test). Imports only ``wgbcore`` of ours.
"""
