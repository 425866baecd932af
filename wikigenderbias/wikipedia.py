"""Streaming reader of Wikipedia dumps and a wikitext -> plain text converter.

Inputs (the format is detected from the first non-blank line, compression from the name):

* ``pages-articles`` XML dumps, ``.xml`` or ``.bz2`` (one file, or the multistream part files;
  Python's bz2 reads the concatenated streams);
* WikiExtractor output: JSON lines (``--json``: ``{"id", "title", "text"}``) or its default
  ``<doc id=... title=...>`` ... ``</doc>`` format; the text is already plain.

The XML is split into pages line by line (the dumper writes ``<page>`` and ``</page>`` on lines
of their own) and each page is parsed on its own, so a malformed page is counted and reported with
``file:line`` and reading goes on; pages whose title is not wanted are skipped before any parsing.
Redirects and pages outside the article namespace (0) are skipped and counted.

:func:`clean_wikitext` drops comments, references, templates (a few inline ones such as
``{{lang|..}}`` and ``{{birth date|..}}`` keep their text), tables, files, categories,
interlanguage links and list/heading lines, keeps link anchors, and returns paragraphs;
:func:`split_sentences` and :func:`tokenize` turn them into space-tokenized sentences like the
released benchmark's.
"""
from __future__ import annotations

import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from wikigenderbias.dbpedia import DumpError, Issues, open_lines, title_key

__all__ = [
    "Page", "iter_pages", "detect_format", "clean_wikitext", "split_sentences", "tokenize",
    "article_sentences",
]

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


@dataclass(frozen=True)
class Page:
    """One article: its title, page id, where it starts, and its text."""

    title: str
    page_id: str
    text: str
    plain: bool      # True when ``text`` is already plain text (WikiExtractor input)
    where: str       # "file:line" of the page's first line


# --------------------------------------------------------------------------- reading dumps
def detect_format(path: str | os.PathLike) -> str:
    """``"xml"``, ``"jsonl"`` or ``"doc"`` (WikiExtractor) from the first non-blank line."""
    for raw in open_lines(path):
        s = raw.lstrip()
        if not s:
            continue
        if s.startswith(b"<mediawiki") or s.startswith(b"<?xml") or s.startswith(b"<page") \
                or s.startswith(b"<siteinfo"):
            return "xml"
        if s.startswith(b"{"):
            return "jsonl"
        if s.startswith(b"<doc"):
            return "doc"
        raise DumpError(f"{os.fspath(path)}:1: not a Wikipedia XML dump or WikiExtractor output "
                        f"(starts with {s[:40]!r})")
    raise DumpError(f"{os.fspath(path)} is empty")


_TITLE_LINE = re.compile(rb"<title>(.*?)</title>")
_DOC_START = re.compile(r'<doc\b[^>]*?\bid="([^"]*)"[^>]*?\btitle="([^"]*)"[^>]*>')


def iter_pages(
    path: str | os.PathLike,
    *,
    want: Callable[[str], bool] | None = None,
    issues: Issues | None = None,
    stats: dict[str, int] | None = None,
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Page]:
    """Articles of one dump file, in order. ``want(title)`` (if given) filters pages before they
    are parsed. Skipped and bad pages are counted in ``stats`` / ``issues``. ``byte_range``:
    only the bz2 streams in these bytes of a multistream dump (:mod:`wikigenderbias.multistream`)."""
    p = os.fspath(path)
    issues = issues if issues is not None else Issues()
    stats = stats if stats is not None else {}
    for k in ("pages", "articles", "redirects", "other_namespace", "not_wanted", "bad_pages"):
        stats.setdefault(k, 0)
    fmt = "xml" if byte_range is not None else detect_format(p)
    if fmt == "xml":
        yield from _iter_xml(p, want, issues, stats, byte_range)
    elif fmt == "jsonl":
        yield from _iter_jsonl(p, want, issues, stats)
    else:
        yield from _iter_doc(p, want, issues, stats)


def _iter_xml(p: str, want, issues: Issues, stats: dict, byte_range=None) -> Iterator[Page]:
    name = os.path.basename(p)
    lines = open_lines(p)
    if byte_range is not None:  # pages located as file@start:line (line within the range)
        from wikigenderbias.multistream import range_lines
        lines, name = range_lines(p, *byte_range), f"{name}@{byte_range[0]}"
    buf: list[bytes] | None = None
    skipping = False
    start = 0
    seen_page = False
    for lineno, raw in enumerate(lines, 1):
        if buf is None and not skipping:
            if raw.lstrip().startswith(b"<page>"):
                seen_page = True
                buf, start = [], lineno
            else:
                continue
        if skipping:
            if b"</page>" in raw:
                skipping = False
            continue
        buf.append(raw)
        if want is not None and b"<title>" in raw:
            m = _TITLE_LINE.search(raw)
            if m is not None:
                title = html.unescape(m.group(1).decode("utf-8", "replace"))
                if not want(title_key(title)):
                    stats["pages"] += 1
                    stats["not_wanted"] += 1
                    if b"</page>" not in raw:
                        skipping = True
                    buf = None
                    continue
        if b"</page>" in raw:
            chunk, buf = b"".join(buf), None
            stats["pages"] += 1
            page = _parse_page(chunk, f"{name}:{start}", issues, stats)
            if page is not None and (want is None or want(page.title)):
                stats["articles"] += 1
                yield page
    if buf is not None:
        issues.add("bad_page", f"{name}:{start}", "page not closed before the end of the file")
        stats["bad_pages"] += 1
    if not seen_page:
        issues.add("no_pages", name, "no <page> found")


def _parse_page(chunk: bytes, where: str, issues: Issues, stats: dict) -> Page | None:
    try:
        el = ET.fromstring(chunk)
    except ET.ParseError as exc:
        stats["bad_pages"] += 1
        # ParseError positions are relative to the page; make them relative to the file
        file, _, line = where.rpartition(":")
        row = (exc.position[0] - 1) if getattr(exc, "position", None) else 0
        issues.add("bad_page", f"{file}:{int(line) + row}", f"malformed XML ({exc})")
        return None
    title = el.findtext("title")
    ns = el.findtext("ns")
    pid = el.findtext("id") or ""
    if not title:
        stats["bad_pages"] += 1
        issues.add("bad_page", where, "page without a title")
        return None
    if ns is not None and ns.strip() != "0":
        stats["other_namespace"] += 1
        return None
    if ns is None and ":" in title and title.split(":", 1)[0] in _NAMESPACES:
        stats["other_namespace"] += 1
        return None
    text = el.findtext("revision/text")
    if el.find("redirect") is not None or (text and _REDIRECT.match(text)):
        stats["redirects"] += 1
        return None
    if text is None:
        stats["bad_pages"] += 1
        issues.add("bad_page", where, f"{title!r} has no revision text")
        return None
    return Page(title_key(title), pid.strip(), text, False, where)


_REDIRECT = re.compile(r"\s*#REDIRECT", re.IGNORECASE)
_NAMESPACES = frozenset(
    "User Wikipedia File Image MediaWiki Template Help Category Portal Draft TimedText Module "
    "Talk Special Media Book Education_Program Gadget".split()
)


def _iter_jsonl(p: str, want, issues: Issues, stats: dict) -> Iterator[Page]:
    name = os.path.basename(p)
    for lineno, raw in enumerate(open_lines(p), 1):
        if not raw.strip():
            continue
        stats["pages"] += 1
        try:
            rec = json.loads(raw)
            title, text = rec["title"], rec["text"]
            if not isinstance(title, str) or not isinstance(text, str):
                raise TypeError("title and text must be strings")
        except (ValueError, KeyError, TypeError) as exc:
            stats["bad_pages"] += 1
            issues.add("bad_page", f"{name}:{lineno}", f"bad JSON record ({exc.__class__.__name__}: {exc})")
            continue
        title = title_key(title)
        if want is not None and not want(title):
            stats["not_wanted"] += 1
            continue
        stats["articles"] += 1
        yield Page(title, str(rec.get("id", "")), text, True, f"{name}:{lineno}")


def _iter_doc(p: str, want, issues: Issues, stats: dict) -> Iterator[Page]:
    name = os.path.basename(p)
    cur: tuple[str, str, int] | None = None
    lines: list[str] = []
    skipping = False
    for lineno, raw in enumerate(open_lines(p), 1):
        line = raw.decode("utf-8", "replace")
        if cur is None and not skipping:
            m = _DOC_START.search(line)
            if m is None:
                continue
            stats["pages"] += 1
            title = title_key(html.unescape(m.group(2)))
            if want is not None and not want(title):
                stats["not_wanted"] += 1
                skipping = True
                continue
            cur, lines = (m.group(1), title, lineno), []
            continue
        if line.strip() == "</doc>":
            if cur is not None:
                pid, title, start = cur
                text = "\n".join(lines)
                # WikiExtractor repeats the title as the first line
                if text.lstrip().startswith(title):
                    text = text.lstrip()[len(title):]
                stats["articles"] += 1
                yield Page(title, pid, text, True, f"{name}:{start}")
            cur, skipping = None, False
            continue
        if cur is not None:
            lines.append(line.rstrip("\n"))
    if cur is not None:
        stats["bad_pages"] += 1
        issues.add("bad_page", f"{name}:{cur[2]}", "<doc> not closed before the end of the file")


# --------------------------------------------------------------------------- wikitext
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF_SELF = re.compile(r"<ref\b[^>]*/\s*>", re.I)
_REF = re.compile(r"<ref\b[^>]*>.*?(?:</ref\s*>|$)", re.I | re.S)
_DROP_TAGS = re.compile(
    r"<(gallery|math|timeline|score|syntaxhighlight|source|imagemap|references|hiero|chem|graph|"
    r"mapframe|table|pre|ce|code|poem)\b[^>]*?(?:/>|>.*?</\1\s*>)", re.I | re.S)
_NOWIKI = re.compile(r"<nowiki\s*>(.*?)</nowiki\s*>", re.I | re.S)
_TEMPLATE = re.compile(r"\{\{(?!\{)([^{}]*)\}\}")
_LINK = re.compile(r"\[\[([^\[\]]*)\]\]([^\W\d_]*)")
_EXTLINK = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*(?:\s+([^\]]*))?\]")
_BARE_URL = re.compile(r"https?://\S+")
_QUOTES = re.compile(r"'{2,}")
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*\b[^<>]*>")
_BR = re.compile(r"<br\s*/?>", re.I)
_MAGIC = re.compile(r"__[A-Z]+__")
_HEADING = re.compile(r"^(=+)\s*(.*?)\s*\1\s*$")
_CLOSING = ",.;:!?)"
_EMPTY_PARENS = re.compile(r"\(\s*[,;:]*\s*\)")
_OPEN_PAREN_PUNCT = re.compile(r"\(\s*[,;:]\s*")
_INTERWIKI = re.compile(r"^:?[a-z]{2,3}(?:-[a-z]{2,8})?:|^:?simple:")
_DROP_NS = ("file:", "image:", "category:", "media:", ":file:", ":image:")
_STOP_SECTIONS = frozenset({
    "references", "notes", "see also", "external links", "further reading", "bibliography",
    "sources", "citations", "footnotes", "works cited", "notes and references",
})
_KEEP_TEMPLATES = {"lang", "nowrap", "nobr", "small", "smaller", "big", "nowrap begin", "transl",
                   "lang-x", "ill", "interlanguage link", "visible anchor", "vanchor", "sic"}
_SYMBOL_TEMPLATES = {"'": "'", "'s": "'s", "nbsp": " ", "ndash": "–", "mdash": "—", "snd": " – ",
                     "spaced ndash": " – ", "dash": " – ", "\\": " / ", "·": " · ", "-": "-",
                     "and": " and "}
_DATE_TEMPLATES = ("birth date", "death date", "birth-date", "death-date", "start date", "end date",
                   "dob", "birth year and age", "death year and age", "birth date and age",
                   "death date and age", "bda", "dda")


def _link_sub(m: re.Match) -> str:
    inner, trail = m.group(1), m.group(2)
    low = inner.lstrip().lower()
    if low.startswith(_DROP_NS) or _INTERWIKI.match(low):
        return trail
    target, sep, anchor = inner.partition("|")
    if sep:
        text = anchor.split("|")[-1] if "|" in anchor else anchor
        if not text.strip():  # pipe trick [[Foo (bar)|]] -> Foo
            text = re.sub(r"\s*\(.*\)\s*$", "", target)
    else:
        text = target.lstrip(":")
    return text + trail


def _replace_links(text: str) -> str:
    for _ in range(6):  # nested links occur inside file captions
        new = _LINK.sub(_link_sub, text)
        if new == text:
            break
        text = new
    return text


def _date_text(args: list[str]) -> str:
    nums = [a.strip() for a in args if a.strip() and "=" not in a]
    try:
        y = int(nums[0])
        if len(nums) >= 3:
            m, d = int(nums[1]), int(nums[2])
            if 1 <= m <= 12 and 1 <= d <= 31:
                return f"{_MONTHS[m - 1]} {d}, {y}"
        return str(y)
    except (ValueError, IndexError):
        return ""


def _template_sub(m: re.Match) -> str:
    body = m.group(1)
    name, _, rest = body.partition("|")
    key = name.strip().lower().replace("_", " ")
    if key in _SYMBOL_TEMPLATES:
        return _SYMBOL_TEMPLATES[key]
    if not rest:
        return ""
    args = rest.split("|")
    if key in _DATE_TEMPLATES:
        if "year" in key and "and age" in key:
            return _date_text(args[:1])
        return _date_text(args)
    if key.startswith("lang-") or key in ("lang", "transl"):
        pos = [a for a in args if "=" not in a]
        return pos[-1] if pos else ""
    if key in _KEEP_TEMPLATES:
        pos = [a for a in args if "=" not in a]
        return pos[0] if pos else ""
    if key == "convert":
        return " ".join(a.strip() for a in args[:2])
    if key in ("circa", "c."):
        return "c. " + args[0]
    return ""


def _replace_templates(text: str) -> str:
    while True:
        new = _TEMPLATE.sub(_template_sub, text)
        if new == text:
            return text
        text = new


def clean_wikitext(text: str) -> list[str]:
    """Plain-text paragraphs of an article's wikitext (see the module docstring)."""
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    text = _NOWIKI.sub(lambda m: m.group(1).replace("[", "&#91;").replace("{", "&#123;"), text)
    text = _REF_SELF.sub("", text)
    text = _REF.sub("", text)
    text = _DROP_TAGS.sub("", text)
    text = _replace_links(text)       # first, so that pipes in links do not split template args
    text = _replace_templates(text)
    text = _replace_links(text)       # links that templates produced
    if "[" in text:
        text = _EXTLINK.sub(lambda m: m.group(1) or "", text)
    text = _BR.sub(" ", text)
    text = _TAG.sub("", text)
    if "''" in text:
        text = _QUOTES.sub("", text)
    if "__" in text:
        text = _MAGIC.sub("", text)
    paragraphs: list[str] = []
    cur: list[str] = []
    depth = 0
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("{|"):
            depth += 1
            continue
        if depth:
            if s.startswith("|}"):
                depth -= 1
            continue
        h = _HEADING.match(s)
        if h is not None or not s or s[0] in "*#:;|!{}" or s.startswith("----"):
            if cur:
                paragraphs.append(" ".join(cur))
                cur = []
            if h is not None and h.group(2).strip().lower() in _STOP_SECTIONS:
                break
            continue
        cur.append(s)
    if cur:
        paragraphs.append(" ".join(cur))
    out = []
    for para in paragraphs:
        para = html.unescape(para)
        if "://" in para:
            para = _BARE_URL.sub("", para)
        # whitespace runs -> one space (str.split, C speed; the sentences are re-joined the same
        # way), then no space before closing punctuation
        para = " ".join(para.split())
        if "(" in para:
            para = _EMPTY_PARENS.sub("", para)
            para = _OPEN_PAREN_PUNCT.sub("(", para)
            para = " ".join(para.split())
        for c in _CLOSING:
            if " " + c in para:
                para = para.replace(" " + c, c)
        if para:
            out.append(para)
    return out


# --------------------------------------------------------------------------- sentences, tokens
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr mt ft lt col gen sgt capt cmdr adm gov sen rep rev prof hon no nos vs "
    "inc ltd co corp bros jan feb mar apr jun jul aug sep sept oct nov dec ca approx vol pp op "
    "fig al u.s e.g i.e b d c fl r".split()
)
# end mark, closing quotes, citation markers ("[1]", "[citation needed]": kept), then space and a capital, digit or
# opening quote, or a capitalized word glued on ("pathologist.Ogilvie", "1990.[3]He"; checked in split_sentences)
_CLOSE, _MARKERS = r"[\"”’')\]]*", r"(?:\s?\[\s?[^\[\]\s][^\[\]]{0,30}\])*"
_SENT_END = re.compile(r"[.!?]" + _CLOSE + _MARKERS
                       + r"(?:\s+(?=[\"“‘'`(\[]{0,2}[A-Z0-9À-ÖØ-Þ])|(?=[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]))")
_TOKEN = re.compile(
    r"(?:[A-Z]\.){2,}"                                   # U.S., J.R.R.
    r"|(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Mt|Ft|Lt|Col|Gen|Sgt|Capt|Rev|Prof|Hon|Sen|Gov)\.(?=\s+[A-Z])"
    r"|[A-Z]\.(?=\s+[A-Z])"                              # initials: John F. Kennedy
    r"|[^\W_]+(?:[-–'’.,&/][^\W_]+)*"                    # words, 1908–1969, O'Neil, 3.5, 1,000
    r"|\S"
)
_CLITIC = re.compile(r"^(.+?)(['’][sS]|[nN]['’]t)$")
_NUM_COMMA = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a plain-text paragraph (rule-based; abbreviations and initials kept)."""
    out: list[str] = []
    start = 0
    for m in _SENT_END.finditer(paragraph):
        i = m.start()
        if not paragraph[m.end() - 1].isspace() and not (i >= 2 and paragraph[i - 2:i].isalnum()):
            continue  # glued ("pathologist.Ogilvie") only after a word of two letters or digits
        # a period before a closing quote ends the sentence even after an abbreviation ('"No." She')
        if paragraph[i] == "." and paragraph[i + 1:i + 2] not in ('"', "”", "’", "'"):
            # the word before the period (what r"(\S+)$" matches, found from the right)
            last = paragraph[start:i].rsplit(None, 1) if i > start and not paragraph[i - 1].isspace() else []
            word = last[-1].lstrip("([\"'“‘").lower() if last else ""
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) \
                    or re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):
                continue
        if paragraph[start:m.end()].strip():
            out.append(paragraph[start:m.end()].strip())
        start = m.end()
    if paragraph[start:].strip():
        out.append(paragraph[start:].strip())
    return out


def tokenize(sentence: str) -> list[str]:
    """Tokens of a plain-text sentence: words (hyphens, en dashes, apostrophes and decimal points
    inside), initials and a few title abbreviations with their period, single punctuation marks.
    A comma inside a word is kept only in numbers ("1,000"): "Piqua,Kansas" -> 3 tokens.
    Possessive 's and n't are split off, as in the released benchmark."""
    out: list[str] = []
    for tok in _TOKEN.findall(sentence):
        m = _CLITIC.match(tok) if ("'" in tok or "’" in tok) else None
        if m is not None:  # Lovelace's -> Lovelace 's ; didn't -> did n't (as in the release)
            tok = m.group(1)
            clitic = m.group(2)
        else:
            clitic = None
        if "," in tok and not _NUM_COMMA.match(tok):
            parts = tok.split(",")
            for i, part in enumerate(parts):
                if i:
                    out.append(",")
                if part:
                    out.append(part)
        else:
            out.append(tok)
        if clitic:
            out.append(clitic)
    return out


def article_sentences(page: Page, *, min_tokens: int = 3, max_tokens: int = 0) -> list[str]:
    """Space-tokenized sentences of one article (``max_tokens`` 0 = no limit)."""
    paragraphs = [p for p in page.text.split("\n") if p.strip()] if page.plain else clean_wikitext(page.text)
    out = []
    for para in paragraphs:
        for sent in split_sentences(" ".join(para.split())):
            toks = tokenize(sent)
            if len(toks) >= min_tokens and (not max_tokens or len(toks) <= max_tokens):
                out.append(" ".join(toks))
    return out
