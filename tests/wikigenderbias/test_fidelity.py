"""Fidelity rules of the build (issue #15), each on real-format fixtures: DBpedia N-Triples and a
pages-articles XML dump of ordinary wikitext, read by the build's own readers
(``read_facts`` -> ``iter_pages`` -> ``article_sentences`` -> ``entity_record``)."""
from __future__ import annotations

import json
import logging
from urllib.parse import quote
from xml.sax.saxutils import escape

import pytest
from click.testing import CliRunner

from wikigenderbias.dbpedia import read_facts
from wikigenderbias.distant import DistantConfig, Matcher, Sentence, entity_record
from wikigenderbias.schema import MATCH_KINDS
from wikigenderbias.spans import find, locate, name_forms, name_word_hypernym, tail_forms, tokenize
from wikigenderbias.wikipedia import article_sentences, iter_pages, split_sentences

R, O = "http://dbpedia.org/resource/", "http://dbpedia.org/ontology/"
GENDER, HYPERNYM = "http://xmlns.com/foaf/0.1/gender", "http://purl.org/linguistics/gold/hypernym"
DATE = "^^<http://www.w3.org/2001/XMLSchema#date>"


def iri(title: str) -> str:
    return f"<{R}{quote(title.replace(' ', '_'), safe=',()')}>"


def triples(title: str, gender: str, *, spouse=(), hypernym=(), birthDate=(), birthPlace=(), parent=(),
            deathDate=(), almaMater=()) -> str:
    """N-Triples lines of one person, as the DBpedia genders, mapping-based and LHD files have them."""
    s = iri(title)
    out = [f'{s} <{GENDER}> "{gender}"@en .']
    for pred, vals in (("spouse", spouse), ("birthPlace", birthPlace), ("parent", parent), ("almaMater", almaMater)):
        out += [f"{s} <{O}{pred}> {iri(v)} ." for v in vals]
    out += [f"{s} <{HYPERNYM}> {iri(v)} ." for v in hypernym]
    for pred, vals in (("birthDate", birthDate), ("deathDate", deathDate)):
        out += [f'{s} <{O}{pred}> "{v}"{DATE} .' for v in vals]
    return "\n".join(out) + "\n"


def page(title: str, wikitext: str, pid: int) -> str:
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{pid}</id>\n    <revision>\n"
            f"      <id>{pid}0</id>\n      <text bytes=\"{len(wikitext)}\" xml:space=\"preserve\">{escape(wikitext)}"
            "</text>\n    </revision>\n  </page>\n")


def dumps(tmp_path, people: list[tuple[str, str, str]]) -> tuple[str, str]:
    """(N-Triples file, XML dump) of ``people``: (title, N-Triples lines, wikitext)."""
    nt, xml = tmp_path / "dbpedia.nt", tmp_path / "enwiki-pages-articles.xml"
    nt.write_text("".join(t for _, t, _ in people), encoding="utf-8")
    xml.write_text('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
                   "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n"
                   + "".join(page(t, w, i + 1) for i, (t, _, w) in enumerate(people)) + "</mediawiki>\n",
                   encoding="utf-8")
    return str(nt), str(xml)


def records(tmp_path, people, config: DistantConfig = DistantConfig(require_head=True), stats=None) -> dict[str, dict]:
    """Entity records of ``people`` through the build's readers and rules (by default the stricter
    ``--require-head`` rule, whose head forms these tests are about)."""
    nt, xml = dumps(tmp_path, people)
    index = read_facts([nt], progress=False)
    out = {}
    for p in iter_pages(xml):
        rec = entity_record(p.title, index.persons[p.title], article_sentences(p), config, stats=stats)
        if rec is not None:
            out[p.title] = {(r["relation"], r["tail"]): r["sentences"] for r in rec["relations"]}
    return out


REQUIRED = dict(hypernym=["Politician"], birthDate=["1900-01-01"], birthPlace=["Nowhere"])


# --------------------------------------------------------------------------- title forms
ZAIFENG = ("'''Zaifeng''' ({{zh|載灃}}; 12 February 1883 – 3 February 1951), was a prince of the [[Qing dynasty]].\n"
           "In 1908 Prince Chun married [[Youlan]], a daughter of [[Ronglu]].<ref>{{cite book|title=Qing}}</ref>\n"
           "Youlan was also a friend of Chun's mother.")
SOUTHAMPTON = ("'''Henry Wriothesley, 3rd Earl of Southampton''' (6 October 1573 – 10 November 1624) was an "
               "English [[aristocrat]].\nIn 1598 the Earl of Southampton married [[Elizabeth Vernon]].\n"
               "Elizabeth Vernon later lived in Southampton with friends.")
HONORE = ("'''Honoré II''' (24 December 1597 – 10 January 1662) was Prince of Monaco from 1604 to 1662.\n"
          "The city of Monaco grew.")


def test_a_later_title_part_names_the_head_and_its_territory_never_alone(tmp_path):
    people = [
        ("Zaifeng, Prince Chun", triples("Zaifeng, Prince Chun", "male", spouse=["Youlan"], **REQUIRED), ZAIFENG),
        ("Henry Wriothesley, 3rd Earl of Southampton",
         triples("Henry Wriothesley, 3rd Earl of Southampton", "male", spouse=["Elizabeth Vernon"], **REQUIRED),
         SOUTHAMPTON),
        ("Honoré II, Prince of Monaco",
         triples("Honoré II, Prince of Monaco", "male", spouse=["Nobody"], hypernym=["Politician"],
                 birthDate=["1597-12-24"], birthPlace=["Monaco"]), HONORE.replace("Honoré II'''", "Honoré II, Prince of Monaco'''")),
    ]
    recs = records(tmp_path, people)
    assert recs["Zaifeng, Prince Chun"][("spouse", "Youlan")] == [
        "In 1908 Prince Chun married Youlan , a daughter of Ronglu ."]  # "Chun 's mother" alone is no head mention
    assert recs["Henry Wriothesley, 3rd Earl of Southampton"][("spouse", "Elizabeth Vernon")] == [
        "In 1598 the Earl of Southampton married Elizabeth Vernon ."]  # "in Southampton": the territory alone
    forms = {f.tokens for f in name_forms("Henry Wriothesley, 3rd Earl of Southampton")}
    assert ("Earl", "of", "Southampton") in forms and ("3rd", "Earl", "of", "Southampton") in forms
    assert ("Southampton",) not in forms and ("Prince", "Chun") in {f.tokens for f in name_forms("Zaifeng, Prince Chun")}
    assert ("Jr.",) not in {f.tokens for f in name_forms("Jack Haley, Jr.")}  # a suffix is no title
    # a tail inside the head's title is the tail: "Monaco" in "Prince of Monaco" is a birthPlace mention
    honore = recs["Honoré II, Prince of Monaco"][("birthPlace", "Monaco")]
    assert honore == ["Honoré II , Prince of Monaco ( 24 December 1597 – 10 January 1662 ) was Prince of Monaco "
                      "from 1604 to 1662 ."]
    toks = tokenize("He became Prince of Monaco in 1604 .")
    loc = locate(toks, "Honoré II, Prince of Monaco", "Monaco", "birthPlace")
    assert loc.head_match == "none" and toks[slice(*loc.tail_span)] == ["Monaco"]


# --------------------------------------------------------------------------- compounds
COMPOUNDS = ("'''Milan Petrović''' (born 1 May 1950) is a Serbian [[Actor|actor/philanthropist]] and the "
             "former Governor-General of the province.\n"
             "He is a Belgrade-based Actor/Philanthropist.\n"
             "The Petrović-Njegoš family later moved to the Margraviate of Brandenburg-Schwedt.\n"
             "From 1990 to 1995 Petrović chaired the NASA.Petrović panel in 1990–1995.\n"
             "The Petrović family was born-again in 1950-1951.")


def test_tails_and_heads_inside_hyphen_slash_and_dot_compounds(tmp_path):
    people = [("Milan Petrović", triples("Milan Petrović", "male", spouse=["Nobody"], hypernym=["Governor", "Actor"],
                                          birthDate=["1950-05-01"], birthPlace=["Belgrade", "Schwedt"]), COMPOUNDS)]
    rec = records(tmp_path, people)["Milan Petrović"]
    s1 = ("Milan Petrović ( born 1 May 1950 ) is a Serbian actor/philanthropist and the former Governor-General of "
          "the province .")
    assert rec[("hypernym", "Governor")] == [s1]
    assert rec[("hypernym", "Actor")] == [s1]       # the sentence without the head ("He is ...") is no example
    assert rec[("birthPlace", "Schwedt")] == ["The Petrović-Njegoš family later moved to the Margraviate of "
                                              "Brandenburg-Schwedt ."]  # the head inside "Petrović-Njegoš"
    rec = records(tmp_path, people, DistantConfig(require_head=False))["Milan Petrović"]
    assert rec[("birthPlace", "Belgrade")] == ["He is a Belgrade-based Actor/Philanthropist ."]
    # a date never inside a compound ("1950-1951" is no birthDate mention; the full date is)
    assert rec[("birthDate", "May 1, 1950")] == [s1]
    # spans: the whole compound token, ranked after a whole-token match of the same rule
    toks = tokenize("Chaired by NASA.Petrović and Lewis-Briscoe .")
    assert toks[2] == "NASA" and toks[4] == "Petrović"      # glued after an acronym: split
    assert tokenize("the U.S.Army and J.R.R.Tolkien") == ["the", "U.S.Army", "and", "J.R.R.Tolkien"]
    assert find(tokenize("Lewis-Briscoe said"), name_forms("Frederick Lewis")) == [(MATCH_KINDS.index("name_part") + 0.5, 0, 1, "name_part")]
    assert [m[3] for m in find(tokenize("born in 1950-1951 ."), tail_forms("May 1, 1950", "birthDate"))] == ["year"]


# --------------------------------------------------------------------------- spouses sharing the surname
LIU = ("'''Liu Xiaobo''' (28 December 1955 – 13 July 2017) was a Chinese [[Politician|political]] activist.\n"
       "Liu Xiaobo married [[Liu Xia]] in 1996.\n"
       "In 1996, he married Liu Xia, a poet.\n"
       "Liu was released in 1999.")


def test_a_spouse_sharing_the_surname_is_found_by_the_other_name_parts(tmp_path):
    people = [("Liu Xiaobo", triples("Liu Xiaobo", "male", spouse=["Liu Xia"], hypernym=["Politician"],
                                      birthDate=["1955-12-28"], birthPlace=["Changchun"]), LIU)]
    rec = records(tmp_path, people)["Liu Xiaobo"]
    # "Liu was released": the shared surname names the head, not the spouse; "he married Liu Xia": the
    # "Liu" of the spouse's name is not a mention of the head
    assert rec[("spouse", "Liu Xia")] == ["Liu Xiaobo married Liu Xia in 1996 ."]
    rec = records(tmp_path, people, DistantConfig(require_head=True, pronouns=True))["Liu Xiaobo"]
    assert rec[("spouse", "Liu Xia")] == ["Liu Xiaobo married Liu Xia in 1996 .", "In 1996 , he married Liu Xia , a poet ."]
    assert ("Liu",) not in {f.tokens for f in tail_forms("Liu Xia", "spouse", "Liu Xiaobo")}
    assert ("Al", "Fox") in {f.tokens for f in tail_forms("Al Fox", "spouse", "Eve Fox")}  # a particle is no shared word
    # the exporter locates the same: the spouse's full name, and no head where only the spouse is named
    loc = locate(tokenize("In 1996 , he married Liu Xia , a poet ."), "Liu Xiaobo", "Liu Xia", "spouse")
    assert (loc.head_match, loc.tail_span) == ("none", (5, 7))
    loc = locate(tokenize("Liu Xiaobo married Liu Xia in 1996 ."), "Liu Xiaobo", "Liu Xia", "spouse")
    assert (loc.head_span, loc.tail_span) == ((0, 2), (3, 5))


def test_name_word_hypernyms_stay_dropped_inside_the_name_and_are_counted(tmp_path):
    from collections import Counter

    ogilvie = ("'''Lawrence Ogilvie''' (5 July 1898 – 16 April 1980) was a Scottish plant pathologist.\n"
               "Ogilvie was a UK expert on the diseases of vegetables.")
    qianlong = ("The '''Qianlong Emperor''' (25 September 1711 – 7 February 1799) was the sixth emperor of the "
                "[[Qing dynasty]].\nThe Qianlong Emperor was born in [[Beijing]].")
    people = [("Lawrence Ogilvie", triples("Lawrence Ogilvie", "male", spouse=["Nobody"], hypernym=["Ogilvie"],
                                            birthDate=["1898-07-05"], birthPlace=["Scotland"]), ogilvie),
              ("Qianlong Emperor", triples("Qianlong Emperor", "male", spouse=["Nobody"], hypernym=["Emperor"],
                                            birthDate=["1711-09-25"], birthPlace=["Beijing"]), qianlong)]
    stats: Counter = Counter()
    recs = records(tmp_path, people, stats=stats)
    assert name_word_hypernym("Lawrence Ogilvie", "Ogilvie") and not name_word_hypernym("Lawrence Ogilvie", "Botanist")
    assert stats["tails_name_word:hypernym"] == 2
    # a mention inside the head's name is the head's: "Ogilvie" never, "emperor" only outside "Qianlong Emperor"
    assert ("hypernym", "Ogilvie") not in recs["Lawrence Ogilvie"]
    assert recs["Qianlong Emperor"][("hypernym", "Emperor")] == [
        "The Qianlong Emperor ( 25 September 1711 – 7 February 1799 ) was the sixth emperor of the Qing dynasty ."]


# --------------------------------------------------------------------------- sentence splitting
def test_sentences_end_at_citation_markers_quotes_and_glued_boundaries(tmp_path):
    wikitext = ("'''Ann Roe''' (born 2 May 1950) is a pathologist.<ref>{{cite web|url=http://x.org|title=A}}</ref>"
                "Roe was born in [[Leeds]].<ref name=\"b\"/> She said: \"I will stay.\"<ref>B</ref> "
                "Roe married [[Bo Roe]] in 1975.<ref>C</ref><ref>D</ref>{{sfn|Smith|2001|p=3}}Ann Roe worked at the "
                "U.S. Army and in St. Louis with J. R. Smith in 1980.")
    people = [("Ann Roe", triples("Ann Roe", "female", spouse=["Bo Roe"], hypernym=["Pathologist"],
                                   birthDate=["1950-05-02"], birthPlace=["Leeds"]), wikitext)]
    _, xml = dumps(tmp_path, people)
    sents = article_sentences(next(iter_pages(xml)))
    assert sents == [
        "Ann Roe ( born 2 May 1950 ) is a pathologist .",
        "Roe was born in Leeds .",
        "She said : \" I will stay . \"",
        "Roe married Bo Roe in 1975 .",
        "Ann Roe worked at the U.S. Army and in St. Louis with J. R. Smith in 1980 .",
    ]
    # plain text with the citation markers of rendered articles, quotes and [citation needed]
    para = ("He was a pathologist.[1] Ogilvie was a UK expert.[2][3]In 1920 he left. She said \"No.\"[4] "
            "Then she agreed! [citation needed] Later, he moved.Ogilvie died in 1980.")
    assert split_sentences(para) == ["He was a pathologist.[1]", "Ogilvie was a UK expert.[2][3]", "In 1920 he left.",
                                     "She said \"No.\"[4]", "Then she agreed! [citation needed]", "Later, he moved.",
                                     "Ogilvie died in 1980."]


# --------------------------------------------------------------------------- Matcher == spans.find
@pytest.mark.parametrize("entity, relation", [
    ("Frederick Lewis", None), ("Milan Petrović", None), ("Zaifeng, Prince Chun", None), ("Governor", "hypernym"),
    ("Actor", "hypernym"), ("Belgrade", "birthPlace"), ("Brandenburg-Schwedt", "birthPlace"), ("Romania", "birthPlace"),
    ("Al-Muhtadee Billah", None), ("May 1, 1950", "birthDate"), ("Liu Xia", "spouse"),
])
def test_matcher_finds_exactly_what_spans_find_finds_in_compounds(entity, relation):
    kinds = [k for k in MATCH_KINDS if k != "none"]
    forms = name_forms(entity) if relation is None else tail_forms(entity, relation)
    m = Matcher.for_head(entity, kinds) if relation is None else Matcher.for_tail(entity, relation, kinds)
    for text in ["Lewis-Briscoe , a Belgrade-based Actor/Philanthropist and Governor-General , was Romanian-born .",
                 "Brandenburg-Schwedt and Schwedt ; NASA.Lewis met Besar.Al-Muhtadee Billah in 1950-1951 .",
                 "Petrović-Njegoš , PETROVIĆ and petrović / Prince Chun-Hua and Prince Chun , Liu Xia-Wen .",
                 "governor-general ; actors/writers ; May 1 , 1950 – 1951 ; 1950–1951 ; .Easter and Romania—Moldova ."]:
        s = Sentence(text)
        assert set(m.spans(s)) == {(a, b) for _, a, b, _ in find(s.tokens, forms)}, text


# --------------------------------------------------------------------------- --require-head and the card
def test_cli_require_head_flag_and_the_card_of_a_build(tmp_path, caplog):
    from wgb.cli import cli

    def person(name, gender, spouse, year):
        pro = "she" if gender == "female" else "he"
        return (name, triples(name, gender, spouse=[spouse], hypernym=["Baker"], birthDate=[f"{year}-02-03"],
                              birthPlace=["York"]),
                f"'''{name}''' (born 3 February {year}) was a baker from [[York]].\n"
                f"In {year + 25}, {pro} married [[{spouse}]].")

    people = [person("Ann Roe", "female", "Bo Roe", 1950), person("Sam Poe", "male", "Jo Poe", 1901),
              person("Eve Fox", "female", "Al Fox", 1920), person("Tom Kay", "male", "Sue Kay", 1930),
              person("Kim Lee", "female", "Bo Lee", 1940), person("Max Moe", "male", "Ida Moe", 1910)]
    nt, xml = dumps(tmp_path, people)
    args = ["data", "build", "--dbpedia", nt, "--wikipedia", xml, "--train", "2", "--validation", "2",
            "--test", "2", "--seed", "0", "--quiet"]
    outs = {}
    for flag in ("--require-head", "--no-require-head", "(no rule flag)"):
        outs[flag] = out = tmp_path / flag.strip("-()").replace(" ", "_")
        with caplog.at_level(logging.WARNING, logger="wikigenderbias.card"):
            r = CliRunner().invoke(cli, [*args, *([flag] if flag.startswith("--") else []), "--out", str(out)])
        assert r.exit_code == 0, r.output
        report = json.loads((out / "report.json").read_text())
        assert report["config"]["distant"]["require_head"] is (flag == "--require-head")

    def spouse_rows(out):
        import wikigenderbias

        ds = wikigenderbias.load(path=out)
        return sorted(row["text"] for s in ds for row in ds[s]
                      if ds[s].features["relation"].int2str(row["relation"]) == "spouse")

    # "she married Bo Roe": the "Roe" of the spouse's name is no mention of Ann Roe
    assert spouse_rows(outs["--require-head"]) == []
    assert spouse_rows(outs["--no-require-head"]) == sorted(f"In {y} , {p} married {s} ." for y, p, s in (
        (1975, "she", "Bo Roe"), (1926, "he", "Jo Poe"), (1945, "she", "Al Fox"), (1955, "he", "Sue Kay"),
        (1965, "she", "Bo Lee"), (1935, "he", "Ida Moe")))
    card = (outs["--no-require-head"] / "README.md").read_text()
    # the build's own card: its sizes, ratio, positions as written, rules, sources, what is missing
    assert "released space-separated tokens" not in card and "original character" not in card
    assert "`positions` is an\n  empty list" in card and "about 3:1" not in card
    train = json.loads((outs["--no-require-head"] / "report.json").read_text())["counts"]["train"]["entities_by_gender"]
    ratio = f"{train['male'] / train['female']:.2f}:1 ({train['male']} male and {train['female']} female heads)"
    assert f"male/female ratio of the training split is {ratio}" in card
    assert "need not name the person" in card and "`dbpedia.nt`" in card and "## What is missing" in card
    # the "How it was built" text says the rule the build used, not the default one
    from wikigenderbias.card import card_description

    built = {f: card_description((o / "README.md").read_text()) for f, o in outs.items()}
    assert "article that mentions the tail of a relation is an example" in built["--no-require-head"]
    assert "mentions the person" not in built["--no-require-head"]
    assert "mentions the person by name and the tail of a relation" in built["--require-head"]
    # without a rule flag the build takes the paper's rule (issue #31), and its card says so
    assert spouse_rows(outs["(no rule flag)"]) == spouse_rows(outs["--no-require-head"])
    assert "Selection rule: the paper's (the default)." in built["(no rule flag)"]
    assert "Selection rule: `--require-head`, stricter than the paper's" in built["--require-head"]
    strict_card = (outs["--require-head"] / "README.md").read_text()
    assert "only if it also names the person (`--require-head`, stricter than the paper's rule)" in strict_card
    assert "(the paper's rule: any sentence of the person's article" in card
    assert "## Warnings" in card and "relation class `NA` has no example" in card
    assert any("relation class `NA` has no example" in rec.getMessage() for rec in caplog.records)


def test_card_kind_warnings_and_ratio_come_from_the_report():
    from wikigenderbias.card import _bias, card_kind, card_warnings

    counts = {"train": {"entities_by_gender": {"female": 3, "male": 9}, "sentences_by_relation": {"NA": 0, "spouse": 4}},
              "male_test": {"entities_by_gender": {"male": 1}, "sentences_by_relation": {"NA": 2, "spouse": 1}}}
    assert card_kind({"source": {"kind": "release"}}) == "release" and card_kind({"source": "test"}) == "other"
    assert card_kind({"config": {}, "dbpedia": {}}) == "build"
    warned = card_warnings({"counts": counts})
    assert [w.split(" has")[0] for w in warned] == [f"relation class `{r}`" for r in ("hypernym", "birthDate", "birthPlace")]
    no_na = {s: {**c, "sentences_by_relation": {**c["sentences_by_relation"], "NA": 0}} for s, c in counts.items()}
    assert "no person with examples has any almaMater or parent fact" in card_warnings(
        {"counts": no_na, "distant": {"na_tails:parent": 0, "na_tails:almaMater": 0}})[0]
    assert "3.00:1 (9 male and 3 female heads)" in _bias(counts)
    assert "undefined: 1 male and no female heads" in _bias({"train": {"entities_by_gender": {"male": 1}}})
