"""The bottom layer of the toolkit: plumbing every package may import, and which imports none of them.

- :mod:`wgbcore.registry`: :class:`~wgbcore.registry.Registry`, one way to name components
  (models, measures, losses, samplers, encoders, selectors, debiasers) and build them by name.
- :mod:`wgbcore.atomicio`: atomic writes (text, bytes, JSON, JSON lines, parquet, torch state,
  figures) and the JSON-lines reader.
- :mod:`wgbcore.config`: config files (YAML, JSON) and ``KEY=VALUE`` overrides, type-checked
  against a dataclass.
- :mod:`wgbcore.provenance`: the package version and the provenance record of a result.
- :mod:`wgbcore.seeding`: :func:`~wgbcore.seeding.seed_everything`.

Only the standard library is imported at module level; numpy, torch, pyarrow and PyYAML are
imported by the functions that need them.
"""
