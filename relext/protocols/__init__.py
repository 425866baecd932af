"""Which rows a run trains, validates and is tested on: :mod:`~relext.protocols.data` (the test
protocol: the benchmark's own splits, loaded and transformed) and :mod:`~relext.protocols.crossfit`
(person-level cross-fitting: every person dealt into K folds, fold k's view of a dataset)."""
