"""A run: :mod:`~relext.training.config` (``ExtractorConfig``, the run's identity),
:mod:`~relext.training.run` (its folder), :mod:`~relext.training.checkpoint` (exact resume),
:mod:`~relext.training.train` and :mod:`~relext.training.predict` (prediction files)."""
