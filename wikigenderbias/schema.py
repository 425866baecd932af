"""The canonical form of a WikiGenderBias benchmark: relations, genders, splits and features.

Every benchmark folder written by this package (the embedded release or a `wgb data build`)
has the same layout and the same `datasets.Features`, so every downstream stage reads one form.

Folder layout::

    <folder>/README.md                                   dataset card with YAML ``configs:`` and
                                                         ``dataset_info`` (with the data's fingerprint)
    <folder>/data/sentences/<split>-00000-of-00001.parquet
    <folder>/data/entities/<split>-00000-of-00001.parquet
    <folder>/report.json                                 how the folder was built (counts, spans,
                                                         fingerprint: size and sha256 of each data file)

The fingerprint in the card's YAML keys the ``datasets`` cache on the data, not on the folder's
name (:mod:`wikigenderbias.card`).

Token spans are ``[start, end)`` token offsets into ``tokens``; ``[-1, -1]`` marks a mention
that could not be located (counted in ``report.json``, never guessed).
"""
from __future__ import annotations

from datasets import ClassLabel, Features, List, Value

#: File name of one split of one configuration, under ``data/<config>/`` of a benchmark folder.
PARQUET_NAME = "{split}-00000-of-00001.parquet"

#: Relation classes; NA is class 0 (OpenNRE's convention).
RELATIONS: tuple[str, ...] = ("NA", "spouse", "hypernym", "birthDate", "birthPlace")
#: The four positive relations, in the order the paper reports them.
POSITIVE_RELATIONS: tuple[str, ...] = RELATIONS[1:]
#: Gender of the head entity (the article's subject), as recorded by DBpedia.
GENDERS: tuple[str, ...] = ("female", "male")
#: Split names of every benchmark folder.
SPLITS: tuple[str, ...] = ("train", "validation", "male_test", "female_test")
#: Where an example's label comes from.
SOURCES: tuple[str, ...] = ("distant", "annotated")
#: Configurations of a benchmark folder; the first is the default.
CONFIGS: tuple[str, ...] = ("sentences", "entities")

#: Which rule located a mention (recorded per row in ``head_match`` / ``tail_match``).
MATCH_KINDS: tuple[str, ...] = (
    "full",        # the whole name / label, token for token
    "full_fold",   # the whole name, ignoring case and accents
    "no_paren",    # the label without its parenthetical disambiguation
    "comma_part",  # one comma component of a place ("Piqua, Kansas" -> "Kansas")
    "name_part",   # a contiguous part of a multi-word name or label
    "inflected",   # a token that starts with a one-word label ("Publisher" -> "publishers")
    "date",        # a full date in one of the formats of running text
    "date_partial",  # day and month, or month and year
    "year",        # the year of a date only
    "none",        # not located: span is [-1, -1]
)

SPAN = List(Value("int32"), length=2)


def sentence_features() -> Features:
    """Features of the ``sentences`` configuration: one row per (head, relation, sentence)."""
    return Features(
        {
            "id": Value("string"),            # stable row id, e.g. "train-00042-spouse-001"
            "entity_id": Value("string"),     # stable id of the head entity (its article)
            "sentence_id": Value("string"),   # same sentence text of the same head -> same id
            "head": Value("string"),
            "tail": Value("string"),
            "relation": ClassLabel(names=list(RELATIONS)),
            "gender": ClassLabel(names=list(GENDERS)),
            "text": Value("string"),          # the sentence as released
            "tokens": List(Value("string")),
            "head_span": SPAN,
            "tail_span": SPAN,
            "head_match": Value("string"),    # one of MATCH_KINDS
            "tail_match": Value("string"),
            "source": ClassLabel(names=list(SOURCES)),
        }
    )


def entity_features() -> Features:
    """Features of the ``entities`` configuration: one row per head entity, lossless."""
    return Features(
        {
            "entity_id": Value("string"),
            "entity": Value("string"),
            "gender": ClassLabel(names=list(GENDERS)),
            "relations": List(
                {
                    "relation": Value("string"),
                    "tail": Value("string"),
                    "sentences": List(Value("string")),
                    # the release's (unreliable) character offsets, kept verbatim
                    "positions": List({"head": List(Value("int32")), "tail": List(Value("int32"))}),
                }
            ),
        }
    )


def features_for(config: str) -> Features:
    if config == "sentences":
        return sentence_features()
    if config == "entities":
        return entity_features()
    raise ValueError(f"unknown configuration {config!r}; expected one of {CONFIGS}")


def relation_id(name: str) -> int:
    try:
        return RELATIONS.index(name)
    except ValueError:
        raise ValueError(f"unknown relation {name!r}; expected one of {RELATIONS}") from None


def gender_id(name: str) -> int:
    key = name.strip().lower()
    if key not in GENDERS:
        raise ValueError(f"unknown gender {name!r}; expected one of {GENDERS}")
    return GENDERS.index(key)
