"""Wikipedia reader: XML pages (plain and .bz2), WikiExtractor input, wikitext cleaning,
sentence splitting and tokenization, bad pages."""
import bz2
import json

import pytest

from wikigenderbias.dbpedia import DumpError, Issues
from wikigenderbias.wikipedia import (
    article_sentences, clean_wikitext, detect_format, iter_pages, split_sentences, tokenize,
)

ADA = """{{Infobox person
| name = Ada Lovelace
| spouse = [[William King-Noel, 1st Earl of Lovelace|William King]]
}}
'''Augusta Ada King, Countess of Lovelace''' (n&amp;eacute;e '''Byron'''; 10 December 1815 – 27 November 1852) was an English [[mathematician]] and writer.&lt;ref&gt;{{cite book|title=Ada|url=http://x.org}}&lt;/ref&gt;
Lovelace was born in [[London]] on 10 December 1815.&lt;ref name=&quot;b&quot;/&gt;

In 1835 Ada married [[William King-Noel, 1st Earl of Lovelace|William King]]. Her father was [[Lord Byron]].
Ada was the only legitimate child of [[Lord Byron|Lord&amp;nbsp;Byron]].&lt;!-- hidden note --&gt;
{| class=&quot;wikitable&quot;
|-
| Ada Lovelace || [[London]]
|}
[[File:Ada Lovelace portrait.jpg|thumb|Ada Lovelace in [[London]]]]
Lovelace died on 27 November 1852.
== References ==
{{reflist}}
[[Category:1815 births]]
[[de:Ada Lovelace]]"""

XML = f"""<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <namespaces>
      <namespace key="0" case="first-letter" />
    </namespaces>
  </siteinfo>
  <page>
    <title>Ada Lovelace</title>
    <ns>0</ns>
    <id>974</id>
    <revision>
      <id>1</id>
      <text bytes="1000" xml:space="preserve">{ADA}</text>
    </revision>
  </page>
  <page>
    <title>Ada King</title>
    <ns>0</ns>
    <id>975</id>
    <redirect title="Ada Lovelace" />
    <revision>
      <id>2</id>
      <text bytes="25" xml:space="preserve">#REDIRECT [[Ada Lovelace]]</text>
    </revision>
  </page>
  <page>
    <title>Talk:Ada Lovelace</title>
    <ns>1</ns>
    <id>976</id>
    <revision>
      <id>3</id>
      <text bytes="5" xml:space="preserve">Hello</text>
    </revision>
  </page>
  <page>
    <title>Broken & page</title>
    <ns>0</ns>
    <id>977</id>
    <revision>
      <text xml:space="preserve">x</text>
    </revision>
  </page>
  <page>
    <title>London</title>
    <ns>0</ns>
    <id>978</id>
    <revision>
      <id>4</id>
      <text bytes="40" xml:space="preserve">'''London''' is the capital of [[England]].</text>
    </revision>
  </page>
</mediawiki>
"""

ADA_SENTENCES = [
    "Augusta Ada King , Countess of Lovelace ( née Byron ; 10 December 1815 – 27 November 1852 ) "
    "was an English mathematician and writer .",
    "Lovelace was born in London on 10 December 1815 .",
    "In 1835 Ada married William King .",
    "Her father was Lord Byron .",
    "Ada was the only legitimate child of Lord Byron .",
    "Lovelace died on 27 November 1852 .",
]


def write(path, text, compress=False):
    data = text.encode("utf-8")
    path.write_bytes(bz2.compress(data) if compress else data)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_iter_pages_skips_redirects_namespaces_and_bad_pages(tmp_path, compress):
    p = write(tmp_path / ("dump.xml.bz2" if compress else "dump.xml"), XML, compress)
    issues, stats = Issues(), {}
    pages = list(iter_pages(p, issues=issues, stats=stats))
    assert [pg.title for pg in pages] == ["Ada Lovelace", "London"]
    assert pages[0].page_id == "974" and pages[0].where == f"{p.name}:8"
    assert stats == {"pages": 5, "articles": 2, "redirects": 1, "other_namespace": 1,
                     "not_wanted": 0, "bad_pages": 1}
    first = issues.examples["bad_page"][0]
    assert first.startswith(f"{p.name}:55: malformed XML")  # the line of the stray "&"


def test_iter_pages_filters_titles_before_parsing(tmp_path):
    p = write(tmp_path / "dump.xml", XML)
    stats = {}
    pages = list(iter_pages(p, want={"Ada Lovelace"}.__contains__, stats=stats))
    assert [pg.title for pg in pages] == ["Ada Lovelace"]
    assert stats["not_wanted"] == 4 and stats["bad_pages"] == 0


def test_article_sentences_exact(tmp_path):
    p = write(tmp_path / "dump.xml", XML)
    ada = next(iter_pages(p))
    assert article_sentences(ada) == ADA_SENTENCES


def test_clean_wikitext_rules():
    text = (
        "{{Use dmy dates}}'''Jo''' ({{lang-fr|Jeanne}}; {{birth date|1900|1|2}}) was a [[poet]]s writer "
        "from [[Paris|the capital]],<ref>x</ref> see [http://x.org the site] and [http://y.org].\n"
        "* a list item\n== Life ==\n: indented\n"
        "[[Image:X.png|thumb|A caption with [[link]]]]She [[Category:Poets]]wrote {{nowrap|two books}}."
    )
    assert clean_wikitext(text) == [
        "Jo (Jeanne; January 2, 1900) was a poets writer from the capital, see the site and.",
        "She wrote two books.",
    ]


def test_split_sentences_keeps_abbreviations_and_initials():
    para = ("Dr. Smith met J. R. R. Tolkien in St. Louis in Jan. 1950. They talked. "
            "He moved to the U.S. in 1951! Was it good? Yes.")
    assert split_sentences(para) == [
        "Dr. Smith met J. R. R. Tolkien in St. Louis in Jan. 1950.", "They talked.",
        "He moved to the U.S. in 1951!", "Was it good?", "Yes."]


def test_tokenize():
    assert tokenize("Ada's son didn't go") == ["Ada", "'s", "son", "did", "n't", "go"]
    assert tokenize("O'Neil (1908–1969) earned $1,000.50 in Piqua,Kansas, U.S.; John F. Kennedy said \"no\".") == [
        "O'Neil", "(", "1908–1969", ")", "earned", "$", "1,000.50", "in", "Piqua", ",", "Kansas", ",",
        "U.S.", ";", "John", "F.", "Kennedy", "said", '"', "no", '"', "."]


def test_wikiextractor_inputs(tmp_path):
    recs = [{"id": "974", "url": "u", "title": "Ada Lovelace", "text": "Ada Lovelace\n\nAda was born in London. She died."},
            {"id": "5", "title": "Other", "text": "x"}]
    p = tmp_path / "wiki_00.json"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n{broken\n")
    issues, stats = Issues(), {}
    pages = list(iter_pages(p, issues=issues, stats=stats))
    assert detect_format(p) == "jsonl" and [pg.title for pg in pages] == ["Ada Lovelace", "Other"]
    # WikiExtractor keeps the title as the first paragraph; it is too short to be a sentence
    assert article_sentences(pages[0]) == ["Ada was born in London .", "She died ."]
    assert issues.examples["bad_page"][0].startswith("wiki_00.json:3: bad JSON record")
    doc = tmp_path / "wiki_01"
    doc.write_text('<doc id="974" url="u" title="Ada Lovelace">\nAda Lovelace\n\nAda was born in London. She died.\n</doc>\n')
    pages = list(iter_pages(doc))
    assert detect_format(doc) == "doc"
    assert article_sentences(pages[0]) == ["Ada was born in London .", "She died ."]


def test_bad_inputs_are_clear_errors(tmp_path):
    p = write(tmp_path / "notes.txt", "hello world\n")
    with pytest.raises(DumpError, match="notes.txt:1: not a Wikipedia XML dump"):
        list(iter_pages(p))
    data = bz2.compress(XML.encode() * 20)
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match="cut.xml.bz2 is truncated"):
        list(iter_pages(cut))
    open_end = write(tmp_path / "open.xml", XML.split("  <page>\n    <title>London")[0] + "  <page>\n    <title>X</title>\n")
    issues = Issues()
    list(iter_pages(open_end, issues=issues))
    assert issues.examples["bad_page"][-1] == "open.xml:62: page not closed before the end of the file"


def test_multistream_bz2(tmp_path):
    """pages-articles-multistream files are concatenated bz2 streams (header, 100 pages each, footer)."""
    head, _, rest = XML.partition("  <page>\n    <title>Ada Lovelace")
    body, _, foot = ("  <page>\n    <title>Ada Lovelace" + rest).rpartition("</mediawiki>")
    p = tmp_path / "enwiki-pages-articles-multistream1.xml-p1p5.bz2"
    p.write_bytes(bz2.compress(head.encode()) + bz2.compress(body.encode()) + bz2.compress(b"</mediawiki>\n"))
    assert [pg.title for pg in iter_pages(p)] == ["Ada Lovelace", "London"]
