"""DBpedia reader: N-Triples parsing, escapes, IRIs -> titles, the person index, bad lines."""
import bz2

import pytest

from wikigenderbias.dbpedia import (
    DumpError, Literal, NTriplesError, PersonFacts, format_date, iri_to_title, parse_line,
    read_facts, title_key, unescape,
)

R = "http://dbpedia.org/resource/"
O = "http://dbpedia.org/ontology/"
DATE = "^^<http://www.w3.org/2001/XMLSchema#date>"

NT = f"""# DBpedia genders + mapping-based + LHD, mixed in one file
<{R}Ada_Lovelace> <http://xmlns.com/foaf/0.1/gender> "female"@en .
<{R}Ada_Lovelace> <http://www.w3.org/2000/01/rdf-schema#label> "Ada Lovelace"@en .
<{R}Ada_Lovelace> <{O}spouse> <{R}William_King,_1st_Earl_of_Lovelace> .
<{R}Ada_Lovelace> <{O}birthPlace> <{R}London> .
<{R}Ada_Lovelace> <{O}birthDate> "1815-12-10"{DATE} .
<{R}Ada_Lovelace> <http://purl.org/linguistics/gold/hypernym> <{R}Mathematician> .
<{R}Ada_Lovelace> <{O}parent> <{R}Lord_Byron> .
<{R}Ada_Lovelace> <{O}deathDate> "1852-11-27"{DATE} .

<{R}Jos\\u00E9_Mart\\u00ED> <http://xmlns.com/foaf/0.1/gender> "male"@en .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}spouse> <{R}Carmen_Zayas_Baz%C3%A1n> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}birthPlace> <{R}Havana> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}birthDate> "1853-01-28"{DATE} .
<{R}Jos\\u00E9_Mart\\u00ED> <http://purl.org/linguistics/gold/hypernym> <{R}Poet> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}almaMater> <{R}University_of_Zaragoza> .
<{R}Jane_Doe> <http://xmlns.com/foaf/0.1/gender> "female"@en .
<{R}Jane_Doe> <{O}birthPlace> <{R}Paris> .
<{R}Kim_Roe> <http://xmlns.com/foaf/0.1/gender> "non-binary"@en .
<{R}Ada_Lovelace> <{O}spouse> .
<{R}Ada_Lovelace> <{O}birthDate> "1815-12-10\\q"{DATE} .
<{R}Ada_Lovelace> <{O}birthPlace> "London"@en .
<{R}William_King,_1st_Earl_of_Lovelace> <{O}wikiPageRedirects> <{R}William_King-Noel,_1st_Earl_of_Lovelace> .
<{R}Unused_redirect> <{O}wikiPageRedirects> <{R}London> .
"""


def write(tmp_path, name, text, compress=False):
    p = tmp_path / name
    data = text.encode("utf-8")
    p.write_bytes(bz2.compress(data) if compress else data)
    return p


@pytest.mark.parametrize(
    "raw, expected",
    [
        (r"plain", "plain"),
        (r"say \"hi\"", 'say "hi"'),
        (r"a\tb\nc\\d", "a\tb\nc\\d"),
        (r"Jos\u00E9", "José"),
        (r"smile \U0001F600", "smile \U0001F600"),
        (r"\\u00E9", "\\u00E9"),  # an escaped backslash followed by text, not an escape
    ],
)
def test_unescape(raw, expected):
    assert unescape(raw) == expected


@pytest.mark.parametrize("raw", [r"bad \q", r"short \u00E", "tail \\"])
def test_unescape_rejects_invalid_escapes(raw):
    with pytest.raises(NTriplesError):
        unescape(raw)


def test_parse_line_terms():
    s, p, o = parse_line(f'<{R}A> <{O}p> "x \\"y\\""@en-GB .')
    assert (s, p, o) == (f"{R}A", f"{O}p", Literal('x "y"', "en-gb", None))
    assert parse_line(f'<{R}A> <{O}birthDate> "1815-12-10"{DATE} .')[2] == \
        Literal("1815-12-10", None, "http://www.w3.org/2001/XMLSchema#date")
    assert parse_line(f"<{R}A>\t<{O}p>\t<{R}B>\t.")[2] == f"{R}B"
    # N-Quads: a graph term before the dot
    assert parse_line(f"<{R}A> <{O}p> <{R}B> <http://dbpedia.org/graph> .")[2] == f"{R}B"
    assert parse_line("_:b0 <http://x/p> _:b1 .") == ("_:b0", "http://x/p", "_:b1")
    assert parse_line("   ") is None and parse_line("# comment") is None


@pytest.mark.parametrize("line", [f"<{R}A> <{O}p> .", f"<{R}A> <{O}p> <{R}B>", f'<{R}A> <{O}p> "open .',
                                  f"<{R}A> {O}p <{R}B> ."])
def test_parse_line_malformed(line):
    with pytest.raises(NTriplesError):
        parse_line(line)


@pytest.mark.parametrize(
    "iri, title",
    [
        (f"{R}Ernst_Gunther,_Duke_of_Schleswig-Holstein", "Ernst Gunther, Duke of Schleswig-Holstein"),
        (f"{R}Carmen_Zayas_Baz%C3%A1n", "Carmen Zayas Bazán"),
        (f"{R}Jos\u00e9_Mart\u00ed", "José Martí"),
        (f"{R}AT%26T", "AT&T"),
        (f"{R}Saint_Helena_(island)", "Saint Helena (island)"),
        (f"{R}eBay", "EBay"),  # Wikipedia titles start upper-case
        ("http://fr.dbpedia.org/resource/Victor_Hugo", "Victor Hugo"),
        ("http://www.wikidata.org/entity/Q42", None),
    ],
)
def test_iri_to_title(iri, title):
    assert iri_to_title(iri) == title


def test_title_key_and_dates():
    assert title_key("ada_lovelace ") == "Ada lovelace"
    assert format_date("1815-12-10") == "December 10, 1815"
    assert format_date("1881-04-30+02:00") == "April 30, 1881"
    assert format_date("1881") is None and format_date("-0044-03-15") is None


@pytest.mark.parametrize("compress", [False, True])
def test_read_facts_index(tmp_path, compress):
    p = write(tmp_path, "mixed.nt.bz2" if compress else "mixed.ttl", NT, compress)
    idx = read_facts([p])
    assert sorted(idx.persons) == ["Ada Lovelace", "José Martí"]
    ada = idx.persons["Ada Lovelace"]
    assert ada == PersonFacts(
        gender="female",
        spouse=["William King-Noel, 1st Earl of Lovelace"],  # resolved through the redirect
        hypernym=["Mathematician"], birthDate=["December 10, 1815"], birthPlace=["London"],
        parent=["Lord Byron"], deathDate=["November 27, 1852"], almaMater=[],
    )
    jose = idx.persons["José Martí"]
    assert (jose.gender, jose.spouse, jose.almaMater) == ("male", ["Carmen Zayas Bazán"], ["University of Zaragoza"])
    assert idx.stats["redirects_used"] == 1
    skipped = idx.issues.to_dict()
    assert skipped["malformed_line"]["count"] == 2
    name = p.name
    assert skipped["malformed_line"]["first"][0].startswith(f"{name}:20: ")
    assert skipped["malformed_line"]["first"][1].startswith(f"{name}:21: invalid escape")
    assert skipped["object_not_a_resource"]["first"] == [f"{name}:22: birthPlace London"]
    assert skipped["gender_other_value"]["first"] == [f"{name}:19: non-binary"]
    assert idx.stats["resources_with_gender"] == 3  # Ada, José, Jane (Kim's value is not counted)


def test_read_facts_require_is_configurable(tmp_path):
    p = write(tmp_path, "a.nt", NT)
    idx = read_facts([p], require=("birthPlace",))
    assert sorted(idx.persons) == ["Ada Lovelace", "Jane Doe", "José Martí"]
    with pytest.raises(ValueError, match="unknown required relation"):
        read_facts([p], require=("occupation",))


def test_files_spread_over_several_dumps(tmp_path):
    lines = NT.splitlines(keepends=True)
    a = write(tmp_path, "genders.nt", "".join(l for l in lines if "gender" in l))
    b = write(tmp_path, "objects.nt.bz2", "".join(l for l in lines if "gender" not in l), compress=True)
    idx = read_facts([b, a])
    assert sorted(idx.persons) == ["Ada Lovelace", "José Martí"]


def test_truncated_bz2_and_missing_file_are_clear_errors(tmp_path):
    good = bz2.compress(NT.encode() * 50)
    p = tmp_path / "cut.nt.bz2"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(DumpError, match="cut.nt.bz2 is truncated"):
        read_facts([p])
    with pytest.raises(DumpError, match="not found: .*missing.nt"):
        read_facts([tmp_path / "missing.nt"])


def test_gender_files_are_read_first_and_bound_the_index(tmp_path, monkeypatch):
    """Only resources with a gender are indexed once the gender files are read, whatever the
    order the files are given in; the result equals reading everything."""
    lines = NT.splitlines(keepends=True)
    hyper = "".join(f"<http://dbpedia.org/resource/Thing_{i}> <http://purl.org/linguistics/gold/hypernym> "
                    f"<http://dbpedia.org/resource/Object> .\n" for i in range(50))
    genders = write(tmp_path, "genders.nt", "".join(l for l in lines if "gender" in l))
    objects = write(tmp_path, "objects.nt", hyper + "".join(l for l in lines if "gender" not in l))
    mixed = write(tmp_path, "mixed.nt", hyper + NT)
    a, b = read_facts([objects, genders]), read_facts([mixed])
    assert a.persons == b.persons and sorted(a.persons) == ["Ada Lovelace", "José Martí"]
    assert a.stats["triples_skipped_no_gender"] >= 50          # the Things were never indexed
    assert b.stats["triples_skipped_no_gender"] == 0           # one mixed file: nothing to filter
    # a gender triple the sniff did not see switches the filter off, with an issue
    import wikigenderbias.dbpedia as dbp

    monkeypatch.setattr(dbp, "_sniff_kinds", lambda p, lines=5000: {"gender"} if p.endswith("genders.nt") else set())
    late = write(tmp_path, "late.nt", '<http://dbpedia.org/resource/Thing_1> <http://xmlns.com/foaf/0.1/gender> "male"@en .\n')
    c = read_facts([objects, late, genders])
    assert c.issues.to_dict()["gender_after_filtering"]["count"] == 1
