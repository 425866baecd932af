"""Person-level groups (wikigenderbias.groups, .gazetteer) and `wgb data groups`."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from wgb.cli import cli
from wikigenderbias.gazetteer import gazetteer
from wikigenderbias.groups import EraBins, attribute_table, birth_year, persons_from_entities


def _person(eid, gender, date, place, **kw):
    return {"entity_id": eid, "entity": eid, "split": "train", "gender": gender, "birth_date": date,
            "birth_place": place, **kw}


def test_era_bins_default_custom_and_errors():
    e = EraBins()
    assert e.labels == ("<1850", "1850-1899", "1900-1949", ">=1950")
    assert [e.label(y) for y in (1849, 1850, 1899, 1900, 1949, 1950, None)] == [
        "<1850", "1850-1899", "1850-1899", "1900-1949", "1900-1949", ">=1950", "unknown"]
    c = EraBins.parse("1800,1900")
    assert c.labels == ("<1800", "1800-1899", ">=1900") and c.label(1799) == "<1800"
    with pytest.raises(ValueError, match="increase"):
        EraBins.parse("1900,1850")
    with pytest.raises(ValueError, match="'19x0'"):
        EraBins.parse("19x0")
    assert birth_year("April 30, 1881") == 1881 and birth_year("44 BC") == -44 and birth_year("unknown") is None


@pytest.mark.parametrize("place, country, region, ns, level", [
    ("Vienna", "AT", "Europe", "North", "city"),
    ("Brooklyn, New York", "US", "Northern America", "North", "context"),
    ("Wales", "GB", "Europe", "North", "curated"),
    ("India", "IN", "Asia", "South", "country"),
    ("Ontario", "CA", "Northern America", "North", "subdivision"),
    ("Lagos State", "NG", "Africa", "South", "stripped"),
    ("Melbourne", "AU", "Oceania", "North", "city"),
    ("Rio de Janeiro", "BR", "Latin America and the Caribbean", "South", "subdivision"),
    ("Austria-Hungary", None, "Europe", "North", "curated"),
    ("Soviet Union", None, "unknown", "unknown", "curated"),
    ("Xyzzy Plugh", None, "unknown", "unknown", "unknown"),
    ("Statesboro, Georgia", "US", "Northern America", "North", "context"),   # the US state, not the country
    ("Batumi, Georgia", "GE", "Asia", "South", "context"),                  # a place only the country has
])
def test_gazetteer_rules(place, country, region, ns, level):
    p = gazetteer().resolve(place)
    assert (p.country, p.region, p.north_south, p.level) == (country, region, ns, level), p


@pytest.mark.parametrize("place, country, how", [
    ("Halifax, West Yorkshire", "GB", "west yorkshire"),        # not Halifax, Nova Scotia (the most populous)
    ("Halifax, Nova Scotia", "CA", "nova scotia"),
    ("Cumberland, Maryland", "US", "qualifier 'maryland'"),     # a US state that is also a county of Liberia
    ("Naples, Florida", "US", "qualifier 'florida'"),           # not Naples, Italy
    ("Hartford, CT", "US", "subdivision code in US"),
    ("Richmond, London", "GB", "qualifier 'london'"),           # not Richmond, Virginia
    ("Scarborough, Toronto", "CA", "its most populous namesake in CA"),
    ("Uplands, Swansea", "GB", "no namesake of 'uplands' there"),  # Dylan Thomas's birthplace
])
def test_qualifiers_choose_among_namesakes(place, country, how):
    p = gazetteer().resolve(place)
    assert (p.country, p.ambiguous) == (country, 0) and how in p.derivation, p


def test_qualifiers_that_do_not_decide_keep_the_most_populous_marked_ambiguous():
    bare, odd = gazetteer().resolve("Halifax"), gazetteer().resolve("Halifax, Xyzzy Plugh")
    assert bare.country == odd.country == "CA" and bare.ambiguous == odd.ambiguous >= 3
    assert "no qualifier" in bare.derivation and "'xyzzy plugh' (not a known name) did not decide" in odd.derivation
    t = attribute_table([_person("a", "female", "May 1, 1901", "Halifax, Xyzzy Plugh"),
                         _person("b", "male", "May 1, 1901", "Halifax, West Yorkshire"),
                         _person("c", "male", "May 1, 1901", "Naples, Florida")])
    cov = t.coverage()
    assert (cov["ambiguous_persons"], cov["qualifier_undecided_persons"], cov["qualifier_decided_persons"]) == (1, 1, 1)
    assert "did not decide" in t.frame.set_index("entity_id").loc["a", "place_derivation"]


def test_ambiguous_city_names_take_the_most_populous_and_are_counted():
    p = gazetteer().resolve("Perth")           # Perth, Western Australia; namesakes in Scotland, Canada...
    assert p.country == "AU" and p.ambiguous >= 2 and "most populous" in p.derivation


def test_unknown_places_years_and_genders_are_counted_never_dropped():
    t = attribute_table([_person("a", "female", "May 1, 1901", "Vienna"),
                         _person("b", "male", "no date", "Xyzzy Plugh"),
                         _person("c", "Nonbinary", "June 3, 1990", "Paris", gender_raw="Nonbinary"),
                         _person("d", "non-binary", "June 3, 1840", "Soviet Union")])
    assert len(t) == 4
    assert t.unknown_counts() == {"gender": 0, "era": 1, "country": 2, "region": 2, "north_south": 2}
    f = t.frame.set_index("entity_id")
    assert f.loc["c", "gender"] == "other" and f.loc["c", "gender_raw"] == "Nonbinary"
    assert f.loc["d", "gender"] == "non-binary" and f.loc["d", "era"] == "<1850"
    cells = t.cells("gender", "region")
    assert cells.loc["male", "unknown"] == 1 and cells.loc["total", "total"] == 4
    assert cells.loc["non-binary", "unknown"] == 1
    cov = t.coverage()
    assert cov["persons_by_level"]["unknown"] == 1 and cov["persons_with_country"] == 2
    assert t.cells("gender", "era").loc["male", "unknown"] == 1


def test_a_person_without_exactly_one_birthplace_is_an_error_naming_them():
    rows = [{"entity_id": "x-1", "entity": "Ann", "gender": 0, "relations": [
        {"relation": "birthDate", "tail": "May 1, 1901"},
        {"relation": "birthPlace", "tail": "Vienna"}, {"relation": "birthPlace", "tail": "Graz"}]}]
    with pytest.raises(ValueError, match=r"validation: person 'x-1' \('Ann'\) has 2 birthPlace facts"):
        persons_from_entities({"validation": rows})


def test_release_known_persons_and_totals():
    t = attribute_table()
    assert len(t) == 5169 and t.frame["entity_id"].is_unique
    f = t.frame.set_index("entity_id")
    dorothea = f.loc["train-00000"]   # Princess Dorothea of Saxe-Coburg and Gotha, April 30, 1881, Vienna
    assert (dorothea["gender"], dorothea["birth_year"], dorothea["era"], dorothea["country"],
            dorothea["region"], dorothea["north_south"]) == ("female", 1881, "1850-1899", "AT", "Europe", "North")
    assert t.unknown_counts()["gender"] == 0 and t.unknown_counts()["era"] == 0
    cells = t.cells("gender", "era")
    assert cells.loc["total", "total"] == 5169
    assert cells.loc["female", "total"] == 1504 and cells.loc["male", "total"] == 3665
    assert t.coverage()["distinct_places"] == 2581
    # known persons born in a place whose name is more populous elsewhere
    for eid, country in (("train-00471", "GB"),          # Ernest Lister, Halifax, West Yorkshire
                         ("male_test-00242", "GB"),      # Dylan Thomas, Uplands, Swansea
                         ("male_test-00112", "GB")):     # John Richardson Wigham, Newington, Edinburgh
        assert f.loc[eid, "country"] == country and f.loc[eid, "region"] == "Europe"


def test_cli_groups_prints_cells_and_writes_table(tmp_path):
    runner = CliRunner()
    r = runner.invoke(cli, ["data", "groups", "--era-edges", "1900", "--out", str(tmp_path / "g")])
    assert r.exit_code == 0, r.output
    assert "gender x era" in r.output and "<1900" in r.output and ">=1900" in r.output
    assert "unknown (counted, not dropped)" in r.output
    summary = json.loads((tmp_path / "g" / "cells.json").read_text())
    assert summary["era_edges"] == [1900] and summary["persons"] == 5169
    assert (tmp_path / "g" / "persons.csv").read_text().count("\n") == 5170
    r = runner.invoke(cli, ["data", "groups", "--era-edges", "1950,1900"])
    assert r.exit_code == 2 and "--era-edges" in r.output and "increase" in r.output
