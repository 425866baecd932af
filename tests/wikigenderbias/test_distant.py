"""Distant supervision: which sentences become examples of which relation."""
from collections import Counter

import dataclasses
import pytest

from wikigenderbias.dbpedia import PersonFacts
from wikigenderbias.distant import DistantConfig, entity_record
from wikigenderbias.spans import locate

ADA = PersonFacts(
    gender="female", spouse=["William King-Noel, 1st Earl of Lovelace"], hypernym=["Mathematician"],
    birthDate=["December 10, 1815"], birthPlace=["London"], parent=["Lord Byron"],
    deathDate=["November 27, 1852"],
)
S1 = ("Augusta Ada King , Countess of Lovelace ( née Byron ; 10 December 1815 – 27 November 1852 ) "
      "was an English mathematician and writer .")
S2 = "Lovelace was born in London on 10 December 1815 ."
S3 = "In 1835 Ada married William King ."
S4 = "Her father was Lord Byron ."
S5 = "Ada was the only legitimate child of Lord Byron ."
S6 = "Lovelace died on 27 November 1852 ."
S7 = "Lovelace 's daughter was born in 1815 ."     # the year alone is not a birthDate mention
S8 = "Lady Lovelace was a Lovelace ."     # surname only: the head's own name (the spouse's is "Earl of Lovelace")
SENTENCES = [S1, S2, S3, S4, S5, S6, S7, S8]
STRICT = DistantConfig(require_head=True)   # --require-head: the sentence must name Ada too


def rel(relation, tail, *sentences):
    return {"relation": relation, "tail": tail, "sentences": list(sentences), "positions": []}


def test_entity_record_exact():
    stats = Counter()
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, STRICT, stats=stats)
    assert rec == {
        "entity_id": "Ada Lovelace", "entity": "Ada Lovelace", "gender": "female",
        "relations": [
            rel("spouse", "William King-Noel, 1st Earl of Lovelace", S3),
            rel("hypernym", "Mathematician", S1),
            rel("birthDate", "December 10, 1815", S1, S2),
            rel("birthPlace", "London", S2),
            rel("NA", "Lord Byron", S5),
            rel("NA", "November 27, 1852", S6),
        ],
    }
    assert stats["sentences"] == 8 and stats["examples:birthDate"] == 2 and stats["examples:NA"] == 2
    assert stats["tails:spouse"] == 1 and stats["tails_not_mentioned:spouse"] == 0


def test_every_selected_sentence_is_located_by_the_exporter():
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, STRICT)
    for r in rec["relations"]:
        for s in r["sentences"]:
            loc = locate(s.split(), "Ada Lovelace", r["tail"], r["relation"])
            assert loc.head_found and loc.tail_found, (r["relation"], s)


def test_pronouns_option_counts_gendered_pronouns_as_the_head():
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, DistantConfig(require_head=True, pronouns=True))
    assert rel("NA", "Lord Byron", S4, S5) in rec["relations"]
    male = dataclasses.replace(ADA, gender="male")
    rec = entity_record("Ada Lovelace", male, SENTENCES, DistantConfig(require_head=True, pronouns=True))
    assert rel("NA", "Lord Byron", S5) in rec["relations"]  # "Her" is not his pronoun


def test_head_not_required():
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, DistantConfig(require_head=False))
    assert rel("NA", "Lord Byron", S4, S5) in rec["relations"]
    # the paper's rule is the default (issue #31); the stricter rule drops "Her father was Lord Byron ."
    assert entity_record("Ada Lovelace", ADA, SENTENCES) == rec
    assert rel("NA", "Lord Byron", S5) in entity_record("Ada Lovelace", ADA, SENTENCES, STRICT)["relations"]


def test_year_alone_counts_only_when_asked():
    from wikigenderbias.schema import MATCH_KINDS
    kinds = tuple(k for k in MATCH_KINDS if k != "none")
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, DistantConfig(tail_kinds=kinds))
    assert rel("birthDate", "December 10, 1815", S1, S2, S7) in rec["relations"]


def test_negative_needs_no_positive_tail_and_relations_are_configurable():
    rec = entity_record("Ada Lovelace", ADA, SENTENCES, DistantConfig(relations=("spouse",), na_facts=("deathDate",)))
    # with only spouse positive, S1 mentions the death date and no spouse: it becomes NA
    assert rec["relations"] == [rel("spouse", "William King-Noel, 1st Earl of Lovelace", S3),
                                rel("NA", "November 27, 1852", S1, S6)]


def test_no_positive_example_gives_none():
    stats = Counter()
    assert entity_record("Ada Lovelace", ADA, [S4, S5, S6, S8], stats=stats) is None
    assert stats["tails_not_mentioned:spouse"] == 1


@pytest.mark.parametrize("kwargs, match", [({"relations": ("occupation",)}, "unknown relation"),
                                           ({"na_facts": ("spouse",)}, "unknown NA fact"),
                                           ({"tail_kinds": ("nope",)}, "unknown match kind")])
def test_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DistantConfig(**kwargs)


@pytest.mark.parametrize("entity, relation", [
    ("Ada Lovelace", None), ("José Martí", None), ("William King-Noel, 1st Earl of Lovelace", "spouse"),
    ("Mathematician", "hypernym"), ("December 10, 1815", "birthDate"), ("Piqua, Kansas", "birthPlace"),
    ("Lord Byron", "NA"), ("November 27, 1852", "NA"), ("Saint Helena (island)", "birthPlace"),
])
def test_matcher_finds_exactly_what_spans_find_finds(entity, relation):
    from wikigenderbias.distant import Matcher, Sentence
    from wikigenderbias.schema import MATCH_KINDS
    from wikigenderbias.spans import find, name_forms, tail_forms

    kinds = [k for k in MATCH_KINDS if k != "none"]
    forms = name_forms(entity) if relation is None else tail_forms(entity, relation)
    m = Matcher.for_head(entity, kinds) if relation is None else Matcher.for_tail(entity, relation, kinds)
    texts = SENTENCES + [
        "JOSE MARTI and José Martí met Marti in Piqua , Kansas , near Kansans .",
        "Saint Helena is an island ; mathematicians of Lovelace 's era ( 1815–1852 ) , 10 Dec. 1815 .",
        "Ohio.Ritchie married in 1852 on November 27 , 1852 with Lord Byron 's friend .",
    ]
    for text in texts:
        s = Sentence(text)
        expected = {(a, b) for _, a, b, _ in find(s.tokens, forms)}
        assert set(m.spans(s)) == expected, text
