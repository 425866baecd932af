"""Gender values beyond two (issue #41 part 4): every value kept and counted, a Wikidata P21 file,
a non-binary person surviving a build of a small dump."""
from __future__ import annotations

import json

import pytest

from wikigenderbias.build import OTHER_GENDERS_FILE, build
from wikigenderbias.dbpedia import read_facts
from wikigenderbias.genders import gender_class, read_wikidata_genders

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_wgb_test_build", Path(__file__).with_name("test_build.py"))
_tb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tb)   # the small dumps of test_build.py (its fixture and page builders)
D, G, H, O, R, config, dump, page = _tb.D, _tb.G, _tb.H, _tb.O, _tb.R, _tb.config, _tb.dump, _tb.page
dumps = _tb.dumps

ALEX_NT = f"""<{R}Alex_Kim> <{G}> "non-binary"@en .
<{R}Alex_Kim> <{O}spouse> <{R}Jo_Kim> .
<{R}Alex_Kim> <{O}birthPlace> <{R}Seoul> .
<{R}Alex_Kim> <{O}birthDate> "1990-05-06"{D} .
<{R}Alex_Kim> <{H}> <{R}Singer> .
"""
ALEX = "'''Alex Kim''' (born 6 May 1990) was a [[singer]].\nAlex Kim was born in [[Seoul]].\nAlex Kim married [[Jo Kim]]."


def test_gender_classes_of_dbpedia_literals_and_wikidata_values():
    assert [gender_class(v) for v in ("female", "Male", "non-binary", "Genderqueer", "two-spirit", "", None)] == [
        "female", "male", "non-binary", "non-binary", "other", "unknown", "unknown"]
    assert [gender_class(q) for q in ("Q6581097", "Q6581072", "Q48270", "Q1052281", "Q2449503", "Q999999999",
                                      "http://www.wikidata.org/entity/Q48270")] == [
        "male", "female", "non-binary", "female", "male", "other", "non-binary"]


def test_wikidata_file_reads_titles_and_iris_and_errors_name_file_and_line(tmp_path):
    f = tmp_path / "p21.tsv"
    f.write_text("# person\tP21\nSam_Roe\tQ1052281\nhttp://dbpedia.org/resource/Tom_Poe\tQ48270\n\n")
    assert read_wikidata_genders(f) == {"Sam Roe": ("female", "Q1052281"), "Tom Poe": ("non-binary", "Q48270")}
    f.write_text("Sam_Roe\tQ6581097\nTom Poe Q48270\n")
    with pytest.raises(ValueError, match=r"p21\.tsv:2: expected two tab-separated fields"):
        read_wikidata_genders(f)
    f.write_text("Sam_Roe\tQ6581097\nSam Roe\tQ6581072\n")
    with pytest.raises(ValueError, match=r"p21\.tsv:2: 'Sam Roe' has the value 'Q6581072' here and 'Q6581097' on line 1"):
        read_wikidata_genders(f)
    with pytest.raises(FileNotFoundError, match="nothing.tsv"):
        read_wikidata_genders(tmp_path / "nothing.tsv")


def test_reader_keeps_every_value_with_its_raw_form(tmp_path):
    nt = tmp_path / "g.nt"
    nt.write_text(f'<{R}A> <{G}> "Non-Binary"@en .\n<{R}B> <{G}> "female"@en .\n<{R}C> <{G}> "intersex"@en .\n')
    kept = read_facts([nt], require=(), genders=None, gender_map=gender_class)
    assert {t: (p.gender, p.gender_raw) for t, p in kept.persons.items()} == {
        "A": ("non-binary", "Non-Binary"), "B": ("female", "female"), "C": ("other", "intersex")}
    binary = read_facts([nt], require=())      # the old default still filters, and counts what it skipped
    assert set(binary.persons) == {"B"} and binary.issues.counts["gender_other_value"] == 2


@pytest.fixture
def dumps_nb(dumps):
    db, wiki, tmp = dumps
    (db / "genders_extra.nt").write_text(ALEX_NT)
    (wiki / "enwiki-pages-articles4.xml-p31p40").write_text(dump(page("Alex Kim", ALEX, 31)))
    return db, wiki, tmp


def test_a_non_binary_person_survives_the_build(dumps_nb):
    db, wiki, tmp = dumps_nb
    res = build(config(db, wiki, tmp / "out"))
    g = res.report["genders"]
    assert g["indexed"]["non-binary"] == 1 and g["raw_values"]["non-binary"] == {"non-binary": 1}
    assert g["outside_binary_splits"] == 1 and g["outside_binary_splits_by_class"] == {"non-binary": 1}
    rows = [json.loads(x) for x in (tmp / "out" / OTHER_GENDERS_FILE).read_text().splitlines()]
    assert [(r["entity_id"], r["gender"], r["gender_raw"], r["gender_source"]) for r in rows] == [
        ("Alex Kim", "non-binary", "non-binary", "dbpedia")]
    assert any(rel["relation"] == "birthPlace" and rel["tail"] == "Seoul" for rel in rows[0]["relations"])
    in_splits = {e["entity_id"] for es in res.entities_by_split.values() for e in es}
    assert "Alex Kim" not in in_splits and "Ada Lovelace" in in_splits
    card = (tmp / "out" / "README.md").read_text()
    assert "1 persons with examples whose gender is neither female nor male are excluded" in card
    assert "non-binary 1" in card and OTHER_GENDERS_FILE in card


def test_wikidata_genders_override_and_add_persons(dumps_nb):
    db, wiki, tmp = dumps_nb
    f = tmp / "p21.tsv"
    f.write_text("Tom_Poe\tQ2449503\nLena_Roe\tQ1052281\nSam_Roe\tQ48270\n")
    res = build(config(db, wiki, tmp / "out", wikidata_genders=str(f)))
    g = res.report["genders"]
    assert g["sources"]["wikidata"] == 3 and g["wikidata_file"] == "p21.tsv"
    assert g["raw_values"]["male"]["Q2449503"] == 1 and g["raw_values"]["female"]["Q1052281"] == 1
    assert g["indexed"]["non-binary"] == 2 and g["raw_values"]["non-binary"] == {"Q48270": 1, "non-binary": 1}
    assert g["outside_binary_splits_by_class"] == {"non-binary": 1}   # Alex Kim (Sam Roe has no article)
    assert res.report["dbpedia"]["skipped"]["gender_conflict"]["count"] == 1   # Sam Roe: DBpedia says male
    assert "'Q48270' (wikidata) kept" in res.report["dbpedia"]["skipped"]["gender_conflict"]["first"][0]


def test_bad_wikidata_file_fails_before_the_dumps_are_read(dumps):
    db, wiki, tmp = dumps
    f = tmp / "p21.tsv"
    f.write_text("Tom_Poe\n")
    with pytest.raises(ValueError, match=r"p21\.tsv:1: expected two tab-separated fields"):
        build(config(db, wiki, tmp / "out", wikidata_genders=str(f)))


def test_cli_build_with_a_wikidata_file(dumps_nb):
    from click.testing import CliRunner

    from wgb.cli import cli

    db, wiki, tmp = dumps_nb
    f = tmp / "p21.tsv"
    f.write_text("Sam_Roe\tQ48270\n")
    r = CliRunner().invoke(cli, ["data", "build", "--dbpedia", str(db), "--wikipedia", str(wiki), "--out",
                                 str(tmp / "out"), "--validation", "1", "--test", "2", "--require-head",
                                 "--wikidata-genders", str(f), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "non-binary 2" in r.output and f"1 with examples outside the binary splits ({OTHER_GENDERS_FILE})" in r.output
    f.write_text("Sam_Roe Q48270\n")
    r = CliRunner().invoke(cli, ["data", "build", "--dbpedia", str(db), "--wikipedia", str(wiki), "--out",
                                 str(tmp / "out2"), "--wikidata-genders", str(f), "--quiet"])
    assert r.exit_code == 1 and "p21.tsv:1: expected two tab-separated fields" in r.output
