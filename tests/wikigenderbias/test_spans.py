import pytest

from wikigenderbias.schema import MATCH_KINDS
from wikigenderbias.spans import NOT_FOUND, date_forms, locate, name_forms, parse_date, tokenize


def test_tokenize_splits_glued_sentence_boundaries_only():
    assert tokenize("in Ohio.Ritchie married") == ["in", "Ohio", ".", "Ritchie", "married"]
    assert tokenize("in 1975.Eshoo was") == ["in", "1975", ".", "Eshoo", "was"]
    # abbreviations and initials are not sentence boundaries
    assert tokenize("the U.S. Army and J.R.R. Tolkien") == ["the", "U.S.", "Army", "and", "J.R.R.", "Tolkien"]


@pytest.mark.parametrize("text,span,kind", [
    ("born on 2 November 1924 in", (2, 5), "date"),
    ("( November 2 , 1924 – May 21 , 2014 )", (1, 5), "date"),
    ("born 2nd November 1924 .", (1, 4), "date"),
    ("born in November 1924 .", (2, 4), "date_partial"),
    ("( 1924–2014 ) was", (1, 2), "year"),
])
def test_dates_in_running_text(text, span, kind):
    loc = locate(tokenize("Smith " + text), "John Smith", "November 2, 1924", "birthDate")
    assert loc.tail_match == kind
    assert loc.tail_span == (span[0] + 1, span[1] + 1)


def test_parse_date_formats():
    assert parse_date("November 2, 1924") == (1924, 11, 2)
    assert parse_date("2 November 1924") == (1924, 11, 2)
    assert parse_date("1924-11-02") == (1924, 11, 2)
    assert parse_date("Piqua, Kansas") is None
    assert date_forms("not a date") == ()


def test_head_full_name_beats_name_part_and_titles_never_stand_alone():
    toks = tokenize("Princess Dorothea married Ernst Gunther , duke of Schleswig-Holstein .")
    loc = locate(toks, "Princess Dorothea of Saxe-Coburg", "Ernst Gunther, Duke of Schleswig-Holstein", "spouse")
    assert toks[slice(*loc.head_span)] == ["Princess", "Dorothea"]
    assert loc.head_match == "name_part"
    assert loc.tail_match == "full_fold"
    assert toks[slice(*loc.tail_span)] == ["Ernst", "Gunther", ",", "duke", "of", "Schleswig-Holstein"]
    forms = {f.tokens for f in name_forms("Princess Dorothea of Saxe-Coburg")}
    assert ("Princess",) not in forms and ("of",) not in forms


def test_place_comma_component_and_hypernym_inflection():
    toks = tokenize("Keaton was born in Piqua , a town in Kansas .")
    loc = locate(toks, "Buster Keaton", "Piqua, Kansas", "birthPlace")
    assert loc.head_span == (0, 1) and loc.head_match == "name_part"
    assert loc.tail_match == "comma_part" and toks[slice(*loc.tail_span)] in (["Piqua"], ["Kansas"])
    toks = tokenize("Sengstacke united African-American publishers .")
    loc = locate(toks, "John H. Sengstacke", "Publisher", "hypernym")
    assert loc.tail_match == "inflected" and toks[slice(*loc.tail_span)] == ["publishers"]


def test_head_and_tail_never_overlap_and_closest_pair_wins():
    toks = tokenize("Queen Anne was a queen , and Anne became queen again .")
    loc = locate(toks, "Queen Anne", "Queen", "hypernym")
    h, t = loc.head_span, loc.tail_span
    assert h[1] <= t[0] or t[1] <= h[0]
    assert loc.head_match == "full" and toks[slice(*t)] == ["queen"]
    assert t == (4, 5)  # the closest non-overlapping mention


def test_unlocated_mentions_are_reported_not_guessed():
    loc = locate(tokenize("She married him in 1950 ."), "Jane Roe", "John Roe", "spouse")
    assert loc.head_span == NOT_FOUND and loc.head_match == "none"
    assert loc.tail_span == NOT_FOUND and loc.tail_match == "none"
    assert not loc.head_found and not loc.tail_found


def test_every_match_kind_is_documented():
    for name in ("Jane Roe", "Piqua, Kansas", "Actor (film)"):
        for f in name_forms(name):
            assert f.kind in MATCH_KINDS
    for f in date_forms("November 2, 1924"):
        assert f.kind in MATCH_KINDS


def test_territory_of_a_title_is_not_the_person():
    toks = tokenize("He became Duke of Modena and Reggio in 1658 .")
    loc = locate(toks, "Alfonso IV d'Este, Duke of Modena", "Modena", "birthPlace")
    assert loc.head_match == "none" and loc.tail_span == (4, 5)
    forms = {f.tokens for f in name_forms("Princess Dorothea of Saxe-Coburg and Gotha")}
    assert ("Gotha",) not in forms and ("Saxe-Coburg",) not in forms and ("Dorothea",) in forms
    # places keep every comma component
    assert ("Kansas",) in {f.tokens for f in name_forms("Piqua, Kansas", person=False)}
