"""WikiGenderBias: the benchmark for gender bias in relation extraction.

>>> import wikigenderbias
>>> ds = wikigenderbias.load()            # the embedded release, config "sentences"
>>> ds["female_test"].features["relation"].names
['NA', 'spouse', 'hypernym', 'birthDate', 'birthPlace']
"""
from wikigenderbias.release import data_dir, load
from wikigenderbias.schema import CONFIGS, GENDERS, POSITIVE_RELATIONS, RELATIONS, SPLITS

__all__ = ["load", "data_dir", "RELATIONS", "POSITIVE_RELATIONS", "GENDERS", "SPLITS", "CONFIGS"]
