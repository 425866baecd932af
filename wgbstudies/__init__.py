"""Studies: designed sets of relation-extraction runs and their verdicts, one floor above
:mod:`relext` (whose components never import this package) and below the CLI.

- :mod:`~wgbstudies.grid` (+ :mod:`~wgbstudies.grid_exec`, :mod:`~wgbstudies.grid_report`): the
  encoder x selector x seed grid, under the test protocol or cross-fitted
- :mod:`~wgbstudies.debias`: the debiasing study (arms x seeds x folds)
- :mod:`~wgbstudies.label_noise`, :mod:`~wgbstudies.embedding`: the label-noise and embedding
  studies
- :mod:`~wgbstudies.plan`, :mod:`~wgbstudies.power`, :mod:`~wgbstudies.status`: pre-registered
  plans, their power and MDEs, a study's state
- :mod:`~wgbstudies.claims` (+ :mod:`~wgbstudies.claims_text`), :mod:`~wgbstudies.recheck`,
  :mod:`~wgbstudies.report`: the paper's claims, their verdicts (from :mod:`wgbstats`) and reports
"""
