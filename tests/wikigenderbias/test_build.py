"""End to end: DBpedia N-Triples (.bz2) + Wikipedia XML parts -> benchmark folder."""
import bz2
import json

import pytest
from click.testing import CliRunner

from wikigenderbias.build import BuildConfig, build, build_entities
from wikigenderbias.dbpedia import DumpError
from wikigenderbias.distant import DistantConfig
from wikigenderbias.split import SplitConfig

R = "http://dbpedia.org/resource/"
O = "http://dbpedia.org/ontology/"
G = "http://xmlns.com/foaf/0.1/gender"
H = "http://purl.org/linguistics/gold/hypernym"
D = "^^<http://www.w3.org/2001/XMLSchema#date>"

GENDERS_NT = f"""<{R}Ada_Lovelace> <{G}> "female"@en .
<{R}Jos\\u00E9_Mart\\u00ED> <{G}> "male"@en .
<{R}Marie_Curie> <{G}> "female"@en .
<{R}Sam_Roe> <{G}> "male"@en .
<{R}Tom_Poe> <{G}> "male"@en .
<{R}Lena_Roe> <{G}> "female"@en .
"""
FACTS_NT = f"""<{R}Ada_Lovelace> <{O}spouse> <{R}William_King,_1st_Earl_of_Lovelace> .
<{R}Ada_Lovelace> <{O}birthPlace> <{R}London> .
<{R}Ada_Lovelace> <{O}birthDate> "1815-12-10"{D} .
<{R}Ada_Lovelace> <{H}> <{R}Mathematician> .
<{R}Ada_Lovelace> <{O}parent> <{R}Lord_Byron> .
<{R}Ada_Lovelace> <{O}deathDate> "1852-11-27"{D} .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}spouse> <{R}Carmen_Zayas_Baz%C3%A1n> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}birthPlace> <{R}Havana> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}birthDate> "1853-01-28"{D} .
<{R}Jos\\u00E9_Mart\\u00ED> <{H}> <{R}Poet> .
<{R}Jos\\u00E9_Mart\\u00ED> <{O}almaMater> <{R}University_of_Zaragoza> .
<{R}Marie_Curie> <{O}spouse> <{R}Pierre_Curie> .
<{R}Marie_Curie> <{O}birthPlace> <{R}Warsaw> .
<{R}Marie_Curie> <{O}birthDate> "1867-11-07"{D} .
<{R}Marie_Curie> <{H}> <{R}Physicist> .
<{R}Sam_Roe> <{O}spouse> <{R}Ann_Roe> .
<{R}Sam_Roe> <{O}birthPlace> <{R}Leeds> .
<{R}Sam_Roe> <{O}birthDate> "1900-01-01"{D} .
<{R}Sam_Roe> <{H}> <{R}Baker> .
<{R}Sam_Roe> <{O}spouse> this line is broken .
<{R}Tom_Poe> <{O}spouse> <{R}Ann_Poe> .
<{R}Tom_Poe> <{O}birthPlace> <{R}York> .
<{R}Tom_Poe> <{O}birthDate> "1901-02-03"{D} .
<{R}Tom_Poe> <{H}> <{R}Baker> .
<{R}Lena_Roe> <{O}spouse> <{R}Max_Roe> .
<{R}Lena_Roe> <{O}birthPlace> <{R}Bath> .
<{R}Lena_Roe> <{O}birthDate> "1902-03-04"{D} .
<{R}Lena_Roe> <{H}> <{R}Painter> .
<{R}William_King,_1st_Earl_of_Lovelace> <{O}wikiPageRedirects> <{R}William_King-Noel,_1st_Earl_of_Lovelace> .
"""

ADA = """{{Infobox person|name=Ada Lovelace}}
'''Augusta Ada King, Countess of Lovelace''' (10 December 1815 – 27 November 1852) was an English [[mathematician]].&lt;ref&gt;{{cite book|title=Ada}}&lt;/ref&gt;
Lovelace was born in [[London]].

In 1835 Ada married [[William King-Noel, 1st Earl of Lovelace|William King]]. Her father was [[Lord Byron]].
Ada was the only legitimate child of [[Lord Byron]].
{| class=&quot;wikitable&quot;
| Ada || [[London]]
|}
Lovelace died on 27 November 1852.
[[Category:1815 births]]"""
JOSE = """'''José Julián Martí Pérez''' ({{lang-es|José Julián Martí Pérez}}; January 28, 1853 – May 19, 1895) was a Cuban [[poet]].
Martí was born in [[Havana]].&lt;ref&gt;[http://example.org Biography]&lt;/ref&gt;
Martí studied law at the [[University of Zaragoza]].
In 1877 Martí married [[Carmen Zayas Bazán]] in [[Mexico City]]."""
CURIE = """'''Marie Curie''' was a [[Poland|Polish]] [[physicist]].
Curie was born in [[Warsaw]].
Marie married [[Pierre Curie]] in 1895."""

TOM = "'''Tom Poe''' (born 3 February 1901) was a [[baker]]."
LENA = "'''Lena Roe''' was a painter born in [[Bath, Somerset|Bath]]."


def page(title, text, pid, ns=0, redirect=None):
    red = f'\n    <redirect title="{redirect}" />' if redirect else ""
    return f"""  <page>
    <title>{title}</title>
    <ns>{ns}</ns>
    <id>{pid}</id>{red}
    <revision>
      <id>{pid}0</id>
      <text bytes="{len(text)}" xml:space="preserve">{text}</text>
    </revision>
  </page>
"""


def dump(*pages):
    return ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
            "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n" + "".join(pages) + "</mediawiki>\n")


@pytest.fixture
def dumps(tmp_path):
    db = tmp_path / "dbpedia"
    db.mkdir()
    (db / "genders_en.ttl").write_text(GENDERS_NT)
    (db / "mappingbased_objects_en.nt.bz2").write_bytes(bz2.compress(FACTS_NT.encode()))
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "enwiki-pages-articles1.xml-p1p10.bz2").write_bytes(bz2.compress(dump(
        page("Ada Lovelace", ADA, 974), page("Ada King", "#REDIRECT [[Ada Lovelace]]", 975, redirect="Ada Lovelace"),
        page("Talk:Ada Lovelace", "hi", 976, ns=1)).encode()))
    (wiki / "enwiki-pages-articles2.xml-p11p20.bz2").write_bytes(bz2.compress(dump(
        page("José Martí", JOSE, 11), page("London", "'''London''' is a city.", 12)).encode()))
    (wiki / "enwiki-pages-articles3.xml-p21p30").write_text(dump(
        page("Marie Curie", CURIE, 21), page("Tom Poe", TOM, 22), page("Lena Roe", LENA, 23)))
    return db, wiki, tmp_path


def rel(relation, tail, *sentences):
    return {"relation": relation, "tail": tail, "sentences": list(sentences), "positions": []}


EXPECTED = {
    "Ada Lovelace": {"entity_id": "Ada Lovelace", "entity": "Ada Lovelace", "gender": "female", "relations": [
        rel("spouse", "William King-Noel, 1st Earl of Lovelace", "In 1835 Ada married William King ."),
        rel("hypernym", "Mathematician", "Augusta Ada King , Countess of Lovelace ( 10 December 1815 – 27 November 1852 ) was an English mathematician ."),
        rel("birthDate", "December 10, 1815", "Augusta Ada King , Countess of Lovelace ( 10 December 1815 – 27 November 1852 ) was an English mathematician ."),
        rel("birthPlace", "London", "Lovelace was born in London ."),
        rel("NA", "Lord Byron", "Ada was the only legitimate child of Lord Byron ."),
        rel("NA", "November 27, 1852", "Lovelace died on 27 November 1852 ."),
    ]},
    "José Martí": {"entity_id": "José Martí", "entity": "José Martí", "gender": "male", "relations": [
        rel("spouse", "Carmen Zayas Bazán", "In 1877 Martí married Carmen Zayas Bazán in Mexico City ."),
        rel("hypernym", "Poet", "José Julián Martí Pérez ( José Julián Martí Pérez ; January 28 , 1853 – May 19 , 1895 ) was a Cuban poet ."),
        rel("birthDate", "January 28, 1853", "José Julián Martí Pérez ( José Julián Martí Pérez ; January 28 , 1853 – May 19 , 1895 ) was a Cuban poet ."),
        rel("birthPlace", "Havana", "Martí was born in Havana ."),
        rel("NA", "University of Zaragoza", "Martí studied law at the University of Zaragoza ."),
    ]},
    "Marie Curie": {"entity_id": "Marie Curie", "entity": "Marie Curie", "gender": "female", "relations": [
        rel("spouse", "Pierre Curie", "Marie married Pierre Curie in 1895 ."),
        rel("hypernym", "Physicist", "Marie Curie was a Polish physicist ."),
        rel("birthPlace", "Warsaw", "Curie was born in Warsaw ."),
    ]},
    "Tom Poe": {"entity_id": "Tom Poe", "entity": "Tom Poe", "gender": "male", "relations": [
        rel("hypernym", "Baker", "Tom Poe ( born 3 February 1901 ) was a baker ."),
        rel("birthDate", "February 3, 1901", "Tom Poe ( born 3 February 1901 ) was a baker ."),
    ]},
    "Lena Roe": {"entity_id": "Lena Roe", "entity": "Lena Roe", "gender": "female", "relations": [
        rel("hypernym", "Painter", "Lena Roe was a painter born in Bath ."),
        rel("birthPlace", "Bath", "Lena Roe was a painter born in Bath ."),
    ]},
}


def config(db, wiki, out, **kw):
    """EXPECTED was written for the stricter ``--require-head`` rule (not the default since #31)."""
    kw.setdefault("split", SplitConfig(train=0.8, validation=1, test=2, seed=0))
    kw.setdefault("distant", DistantConfig(require_head=True))
    return BuildConfig(dbpedia=[str(db)], wikipedia=[str(wiki)], out=str(out), progress=False, **kw)


@pytest.mark.parametrize("workers", [1, 2])
def test_build_entities_exact(dumps, workers):
    db, wiki, tmp = dumps
    entities, report = build_entities(config(db, wiki, tmp / "out", workers=workers))
    assert {e["entity_id"]: e for e in entities} == EXPECTED
    assert report["persons"] == {"indexed": 6, "with_article": 5, "without_article": 1,
                                 "first_without_article": ["Sam Roe"], "without_examples": 0,
                                 "first_without_examples": [], "with_examples": 5}
    w = report["wikipedia"]
    assert (w["parts"], w["pages"], w["articles"], w["not_wanted"]) == (3, 8, 5, 3)
    bad = report["dbpedia"]["skipped"]["malformed_line"]
    assert bad["count"] == 1 and bad["first"][0].startswith("mappingbased_objects_en.nt.bz2:20: ")
    assert report["dbpedia"]["redirects_used"] == 1
    assert report["distant"]["tails_not_mentioned:birthDate"] == 2  # Marie Curie, Lena Roe


def test_build_writes_a_loadable_benchmark_and_resumes(dumps):
    import datasets

    db, wiki, tmp = dumps
    out = tmp / "bench"
    res = build(config(db, wiki, out))
    assert res.folder == out and not (tmp / "bench.parts").exists()
    split_heads = {s: sorted(e["entity_id"] for e in es) for s, es in res.entities_by_split.items()}
    assert {s: len(v) for s, v in split_heads.items()} == {"train": 2, "validation": 1, "male_test": 1, "female_test": 1}
    assert sorted(sum(split_heads.values(), [])) == sorted(EXPECTED)
    assert all(EXPECTED[h]["gender"] == "male" for h in split_heads["male_test"])
    ds = datasets.load_dataset(str(out), "sentences")
    assert set(ds) == {"train", "validation", "male_test", "female_test"}
    total = sum(len(r["sentences"]) for e in EXPECTED.values() for r in e["relations"])
    assert sum(len(ds[s]) for s in ds) == total
    rows = [r for s in ds for r in ds[s].to_list()]
    names = ds["train"].features["relation"].names
    spouse = [r for r in rows if names[r["relation"]] == "spouse" and r["head"] == "José Martí"][0]
    assert spouse["tokens"][spouse["tail_span"][0]:spouse["tail_span"][1]] == ["Carmen", "Zayas", "Bazán"]
    assert all(r["head_match"] != "none" and r["tail_match"] != "none" for r in rows)
    report = json.loads((out / "report.json").read_text())
    assert report["persons"]["with_examples"] == 5 and report["counts"]["male_test"]["entities"] == 1

    with pytest.raises(FileExistsError, match="exists"):
        build(config(db, wiki, out))
    # an interrupted run leaves finished parts in <out>.parts; a re-run reuses them
    out2 = tmp / "bench2"
    build_entities(config(db, wiki, out2))
    cached = sorted((tmp / "bench2.parts").glob("*.summary.json"))
    assert len(cached) == 3
    again = build(config(db, wiki, out2))
    assert again.report["wikipedia"]["parts"] == 3 and not (tmp / "bench2.parts").exists()
    assert {e["entity_id"] for es in again.entities_by_split.values() for e in es} == set(EXPECTED)


def test_interrupted_build_resumes_from_finished_parts(dumps, monkeypatch):
    import wikigenderbias.build as b

    db, wiki, tmp = dumps
    real = b.process_part
    calls = []
    resumed = False

    class Killed(Exception):
        pass

    def interrupted(path, *a, **k):
        calls.append(path)
        if len(calls) == 2 and not resumed:
            raise Killed
        return real(path, *a, **k)

    monkeypatch.setattr(b, "process_part", interrupted)
    with pytest.raises(Killed):
        build(config(db, wiki, tmp / "out"))
    assert not (tmp / "out").exists() and len(list((tmp / "out.parts").glob("*.summary.json"))) == 1
    calls.clear()
    resumed = True
    res = build(config(db, wiki, tmp / "out"))
    assert len(calls) == 2 and calls[0].endswith("articles2.xml-p11p20.bz2")  # part 1 came from the cache
    assert {e["entity_id"] for es in res.entities_by_split.values() for e in es} == set(EXPECTED)


def test_truncated_part_is_a_clear_error(dumps):
    db, wiki, tmp = dumps
    p = wiki / "enwiki-pages-articles2.xml-p11p20.bz2"
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 20])
    with pytest.raises(DumpError, match="enwiki-pages-articles2.xml-p11p20.bz2 is truncated"):
        build_entities(config(db, wiki, tmp / "out", workers=2))
    assert not (tmp / "out").exists()


def test_dask_missing_is_a_clear_error(dumps, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_dask(name, *a, **k):
        if name.startswith("dask"):
            raise ImportError(name)
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    db, wiki, tmp = dumps
    with pytest.raises(RuntimeError, match=r"pip install 'wgb\[dask\]'"):
        build_entities(config(db, wiki, tmp / "out", executor="dask", resume=False))


@pytest.mark.slow
def test_dask_executor_gives_the_same_records(dumps):
    pytest.importorskip("distributed")
    db, wiki, tmp = dumps
    entities, report = build_entities(config(db, wiki, tmp / "out", executor="dask", workers=2))
    assert {e["entity_id"]: e for e in entities} == EXPECTED
    assert report["timings"]["executor"] == "dask"


def test_config_errors(dumps):
    db, wiki, tmp = dumps
    with pytest.raises(ValueError, match="unknown executor"):
        config(db, wiki, tmp / "o", executor="spark")
    with pytest.raises(ValueError, match="unknown build config field"):
        BuildConfig.from_dict({"dbpedia": [], "wikipedia": [], "out": "x", "colour": 1})
    with pytest.raises(DumpError, match="not found"):
        build_entities(BuildConfig(dbpedia=[str(tmp / "nope.nt")], wikipedia=[str(wiki)], out=str(tmp / "o")))
    with pytest.raises(ValueError, match="no person"):
        build_entities(config(db, wiki, tmp / "o", require=("parent", "almaMater")))


def test_cli_build(dumps):
    from wgb.cli import cli

    db, wiki, tmp = dumps
    out = tmp / "cli-bench"
    r = CliRunner().invoke(cli, ["data", "build", "--dbpedia", str(db / "genders_en.ttl"),
                                 "--dbpedia", str(db / "mappingbased_objects_en.nt.bz2"),
                                 "--wikipedia", str(wiki), "--out", str(out), "--train", "0.8",
                                 "--validation", "1", "--test", "2", "--workers", "2", "--quiet"])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.output and "5 with examples" in r.output
    assert "dbpedia.malformed_line 1" in r.output
    r = CliRunner().invoke(cli, ["data", "build", "--dbpedia", str(db), "--wikipedia", str(wiki),
                                 "--out", str(out), "--quiet"])
    assert r.exit_code != 0 and "exists" in r.output
    cfg = tmp / "build.json"
    cfg.write_text(json.dumps({"dbpedia": [str(db)], "wikipedia": [str(wiki)], "out": str(tmp / "c2"),
                               "split": {"train": 0.8, "validation": 1, "test": 2}}))
    r = CliRunner().invoke(cli, ["data", "build", "--config", str(cfg), "--quiet", "--pronouns"])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp / "c2" / "report.json").read_text())
    assert report["config"]["distant"]["pronouns"] is True
    # under the paper's rule (the default) no sentence needs to name the person, so --pronouns says so
    assert report["config"]["distant"]["require_head"] is False
    assert "--pronouns changes nothing without --require-head" in r.output


# --------------------------------------------------------------------------- streaming build
def load_all(folder):
    import datasets

    out = {}
    for cfg in ("sentences", "entities"):
        ds = datasets.load_dataset(str(folder), cfg)
        out[cfg] = {s: (ds[s].features, ds[s].to_list()) for s in ds}
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_streamed_build_equals_the_in_memory_path(dumps, monkeypatch, workers):
    import wikigenderbias.export as export_mod
    from wikigenderbias.export import write_benchmark
    from wikigenderbias.split import split_entities

    db, wiki, tmp = dumps
    cfg = config(db, wiki, tmp / "mem")
    entities, report = build_entities(cfg)
    write_benchmark(tmp / "mem", split_entities(entities, cfg.split), description="d", report=report, progress=False)
    monkeypatch.setattr(export_mod, "CHUNK_ROWS", {"sentences": 2, "entities": 1})  # many row groups
    res = build(config(db, wiki, tmp / "streamed", workers=workers))
    assert load_all(tmp / "streamed") == load_all(tmp / "mem")
    streamed, mem = (json.loads((tmp / f / "report.json").read_text()) for f in ("streamed", "mem"))
    assert (streamed["counts"], streamed["spans"]) == (mem["counts"], mem["spans"])
    assert streamed["wikipedia"]["skipped"] == mem["wikipedia"]["skipped"]
    # entities_by_split is read back from the folder: the very records that were written
    assert {e["entity_id"]: e for es in res.entities_by_split.values() for e in es} == EXPECTED


def test_main_process_keeps_summaries_only_and_splits_come_sorted(dumps, monkeypatch):
    import pyarrow.parquet as pq

    import wikigenderbias.build as b

    db, wiki, tmp = dumps
    real_run, real_save = b._run_parts, b.save_part
    returned, saved_here = [], []
    monkeypatch.setattr(b, "_run_parts", lambda *a, **k: (lambda r: returned.extend(r[0]) or r)(real_run(*a, **k)))
    monkeypatch.setattr(b, "save_part", lambda *a: saved_here.append(a[1]) or real_save(*a))
    build(config(db, wiki, tmp / "out", workers=2))
    assert len(returned) == 3
    assert all(isinstance(r, b.PartSummary) and not hasattr(r, "entities") for r in returned)
    assert saved_here == []  # the workers wrote their parts' records (forked: the spy ran in them)
    assert sum(len(r.heads) for r in returned) == 5
    for cfg in ("sentences", "entities"):
        for f in (tmp / "out" / "data" / cfg).glob("*.parquet"):
            ids = pq.read_table(f, columns=["entity_id"]).column("entity_id").to_pylist()
            assert ids and ids == sorted(ids), f


def test_build_without_writing_keeps_the_parts_and_loads_records_lazily(dumps):
    db, wiki, tmp = dumps
    res = build(config(db, wiki, tmp / "out"), write=False)
    assert res.folder is None and not (tmp / "out").exists()
    assert len(list((tmp / "out.parts").glob("*.records.jsonl"))) == 3
    assert "entities_by_split" not in vars(res)  # not loaded yet
    by_split = res.entities_by_split
    assert sum(len(v) for v in by_split.values()) == 5
    assert {e["entity_id"]: e for es in by_split.values() for e in es} == EXPECTED
    assert all([e["entity_id"] for e in es] == sorted(e["entity_id"] for e in es) for es in by_split.values())
    c = res.report["counts"]
    assert sum(sum(v["entities"].values()) for v in c.values()) == 5
    assert c["male_test"]["sentences_total"] == sum(len(r["sentences"]) for e in by_split["male_test"]
                                                     for r in e["relations"])


MARIE_AGAIN = "'''Marie Curie''' was a chemist.\nCurie was born in [[Warsaw]] in 1867."


def test_a_duplicate_article_in_a_later_part_is_reported_and_the_first_kept(dumps):
    db, wiki, tmp = dumps
    (wiki / "enwiki-pages-articles4.xml-p31p40").write_text(dump(page("Marie Curie", MARIE_AGAIN, 31)))
    res = build(config(db, wiki, tmp / "out", workers=2))
    dup = res.report["wikipedia"]["skipped"]["duplicate_article"]
    assert dup["count"] == 1
    assert dup["first"][0].startswith("enwiki-pages-articles4.xml-p31p40:")
    assert dup["first"][0].endswith("'Marie Curie' already read at enwiki-pages-articles3.xml-p21p30:5")
    assert res.report["persons"]["with_examples"] == 5
    assert {e["entity_id"]: e for es in res.entities_by_split.values() for e in es} == EXPECTED
    entities, _ = build_entities(config(db, wiki, tmp / "again"))
    assert [e["entity_id"] for e in entities] == sorted(EXPECTED)


def test_interrupted_write_leaves_no_folder_and_resumes_from_the_parts(dumps, monkeypatch):
    import wikigenderbias.build as b
    import wikigenderbias.export as export_mod

    db, wiki, tmp = dumps
    real = export_mod._write_parquet
    calls = []

    def flaky(rows, cfg, writer):
        calls.append(cfg)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(rows, cfg, writer)

    monkeypatch.setattr(export_mod, "_write_parquet", flaky)
    with pytest.raises(KeyboardInterrupt):
        build(config(db, wiki, tmp / "out"))
    assert not (tmp / "out").exists()
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".")] == []
    parts = tmp / "out.parts"
    assert len(list(parts.glob("*.summary.json"))) == len(list(parts.glob("*.records.jsonl"))) == 3
    monkeypatch.setattr(export_mod, "_write_parquet", real)
    read = []
    monkeypatch.setattr(b, "process_part", lambda path, *a, **k: read.append(path))
    res = build(config(db, wiki, tmp / "out"))
    assert read == [] and not parts.exists()  # every part came from the cache
    assert {e["entity_id"]: e for es in res.entities_by_split.values() for e in es} == EXPECTED
