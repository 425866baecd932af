"""Relation extraction: OpenNRE-style bag-level extractors, their training, evaluation and
fairness metrics, and debiasing. Rooms, in the order the data flows:

- :mod:`relext.model`: the extractor's parts (bags, vocabulary, word vectors, encoders, selectors)
- :mod:`relext.protocols`: which rows a run trains and is tested on (the release's splits; the
  person-level cross-fitting)
- :mod:`relext.training`: a run's config and folder, training, prediction
- :mod:`relext.evaluation`: metrics, gender gaps, a run's evaluation, scoring sets of runs
- :mod:`relext.debias`: debiasing transforms of the data and of word vectors
- :mod:`relext.extract`, :mod:`relext.pretrained`: triples from a trained extractor; the shipped one

Studies over many runs (grids, the debiasing study) are :mod:`wgbstudies`, one floor up. Old
module paths (``relext.train``, ``relext.grid``, ...) work for one release with a warning
(:mod:`relext._moved`).
"""
from relext import _moved

_moved.install()


def __getattr__(name):
    # relext.load_pretrained(name): the packaged extractor, imported only when asked for
    if name == "load_pretrained":
        from relext.pretrained import load

        return load
    raise AttributeError(f"module 'relext' has no attribute {name!r}")
