"""Streaming reader of DBpedia dumps (N-Triples, Turtle-lines or N-Quads; plain, .bz2 or .gz).

Files are recognised by the predicates they contain, not by their names (names differ between
DBpedia releases). The predicates that matter for WikiGenderBias are in :data:`PREDICATES`:

* gender: ``foaf:gender`` literals such as ``"female"@en`` (the DBpedia "genders" dataset);
* ``dbo:spouse``, ``dbo:birthPlace``, ``dbo:parent``, ``dbo:almaMater`` (IRI objects);
* ``dbo:birthDate``, ``dbo:deathDate`` (``xsd:date`` literals);
* hypernym: ``<http://purl.org/linguistics/gold/hypernym>`` (Linked Hypernyms Dataset);
* ``dbo:wikiPageRedirects`` (optional): used to resolve tail IRIs that are redirects.

Every other line is skipped after one whitespace split and one dict lookup, so a full
mapping-based dump streams at the speed of decompression. Lines with a known predicate are parsed
fully; malformed ones are counted and the first few reported with ``file:line`` (never fatal).
A truncated ``.bz2`` or an unreadable file raises :class:`DumpError` naming the file.

Resource IRIs become Wikipedia article titles the way DBpedia builds them: N-Triples escapes and
percent-encoding decoded, underscores turned into spaces, the first letter upper-cased
(:func:`iri_to_title`). Dates become the form of the released benchmark ("April 30, 1881").
"""
from __future__ import annotations

import bz2
import gzip
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

__all__ = [
    "PREDICATES", "FACTS", "IRI_FACTS", "DATE_FACTS", "DumpError", "NTriplesError", "Literal",
    "Issues", "PersonFacts", "FactIndex", "open_lines", "parse_line", "unescape",
    "iri_to_title", "title_key", "format_date", "read_facts",
]

DBO = "http://dbpedia.org/ontology/"
#: Predicate IRI -> the fact it carries.
PREDICATES: dict[str, str] = {
    "http://xmlns.com/foaf/0.1/gender": "gender",
    DBO + "spouse": "spouse",
    DBO + "birthPlace": "birthPlace",
    DBO + "parent": "parent",
    DBO + "almaMater": "almaMater",
    DBO + "birthDate": "birthDate",
    DBO + "deathDate": "deathDate",
    "http://purl.org/linguistics/gold/hypernym": "hypernym",
    DBO + "wikiPageRedirects": "redirect",
}
#: Facts whose objects are resources (IRIs) and facts whose objects are dates.
IRI_FACTS = ("spouse", "birthPlace", "parent", "almaMater", "hypernym")
DATE_FACTS = ("birthDate", "deathDate")
#: Every per-person fact besides gender, in a fixed order.
FACTS = ("spouse", "hypernym", "birthDate", "birthPlace", "parent", "deathDate", "almaMater")

_PRED_KEYS: dict[bytes, str] = {f"<{iri}>".encode(): name for iri, name in PREDICATES.items()}
_RESOURCE = re.compile(r"^https?://(?:([a-z][a-z0-9-]*)\.)?dbpedia\.org/resource/(.+)$")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DATE = re.compile(r"^(-?\d{1,4})-(\d{2})-(\d{2})(?:Z|[+-]\d{2}:\d{2})?$")

_LITERAL = r'"((?:[^"\\]|\\.)*)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<([^<>"{}|^`\\\s]*)>)?'
_IRI = r"<([^<>\"{}|^`\s]*)>"
_LINE = re.compile(
    r"^\s*(?:" + _IRI + r"|(_:\S+))\s+" + _IRI + r"\s+(?:" + _IRI + r"|(_:\S+)|" + _LITERAL + r")"
    r"\s*(?:<[^<>\s]*>\s*|_:\S+\s*)?\.\s*(?:#.*)?$"
)
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class DumpError(RuntimeError):
    """A dump file that cannot be read at all (missing, unreadable, truncated compression)."""


class NTriplesError(ValueError):
    """One malformed line."""


@dataclass(frozen=True)
class Literal:
    value: str
    lang: str | None = None
    datatype: str | None = None


@dataclass
class Issues:
    """Counts of skipped items, with the first few locations (``file:line: reason``)."""

    limit: int = 5
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, where: str = "", detail: str = "") -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        ex = self.examples.setdefault(kind, [])
        if len(ex) < self.limit:
            ex.append(f"{where}: {detail}" if where else detail)

    def merge(self, other: Issues) -> None:
        for kind, n in other.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
            ex = self.examples.setdefault(kind, [])
            ex.extend(other.examples.get(kind, [])[: max(0, self.limit - len(ex))])

    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict:
        return {k: {"count": n, "first": self.examples.get(k, [])} for k, n in sorted(self.counts.items())}


def _unescape_match(m: re.Match) -> str:
    s = m.group(1)
    if s[0] in "uU":
        cp = int(s[1:], 16)
        if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            raise NTriplesError(f"invalid code point \\{s}")
        return chr(cp)
    return _SIMPLE[s]


def unescape(s: str) -> str:
    r"""Decode N-Triples escapes (``\uXXXX``, ``\UXXXXXXXX``, ``\"``, ``\\``, ``\n`` ...)."""
    if "\\" not in s:
        return s
    if "\\" in _ESCAPE.sub("", s):  # a backslash that starts no valid escape
        raise NTriplesError(f"invalid escape in {s[:60]!r}")
    return _ESCAPE.sub(_unescape_match, s)


def parse_line(line: str) -> tuple[str, str, str | Literal] | None:
    """``(subject, predicate, object)`` of one N-Triples/N-Quads line; ``None`` for blank lines
    and comments. IRIs are returned unescaped; literals as :class:`Literal`.

    Raises :class:`NTriplesError` for a malformed line.
    """
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    m = _LINE.match(stripped)
    if m is None:
        raise NTriplesError("not a triple: " + (stripped[:80] + ("..." if len(stripped) > 80 else "")))
    s_iri, s_blank, pred, o_iri, o_blank, lit, lang, dtype = m.groups()
    subj = unescape(s_iri) if s_iri is not None else s_blank
    if o_iri is not None:
        obj: str | Literal = unescape(o_iri)
    elif o_blank is not None:
        obj = o_blank
    else:
        obj = Literal(unescape(lit), lang.lower() if lang else None, dtype)
    return subj, unescape(pred), obj


def title_key(title: str) -> str:
    """Normal form of an article title for lookups: spaces, single-spaced, first letter upper."""
    t = " ".join(title.replace("_", " ").split())
    return t[:1].upper() + t[1:]


def iri_to_title(iri: str) -> str | None:
    """Article title of a DBpedia resource IRI (any language edition); ``None`` otherwise.

    >>> iri_to_title("http://dbpedia.org/resource/Ernst_Gunther,_Duke_of_Schleswig-Holstein")
    'Ernst Gunther, Duke of Schleswig-Holstein'
    >>> iri_to_title("http://dbpedia.org/resource/Caf%C3%A9_de_Flore")
    'Café de Flore'
    """
    m = _RESOURCE.match(iri)
    if m is None:
        return None
    local = m.group(2)
    if "%" in local:
        local = unquote(local, errors="strict")
    title = title_key(local)
    return title or None


def format_date(value: str) -> str | None:
    """``"1881-04-30"`` -> ``"April 30, 1881"`` (the form of the release); ``None`` if the value is
    not a full calendar date (years before 1, gYear, partial dates)."""
    m = _DATE.match(value.strip())
    if m is None:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    return f"{_MONTHS[month - 1]} {day}, {year}"


def open_lines(path: str | os.PathLike) -> Iterator[bytes]:
    """Binary lines of a plain, ``.bz2`` or ``.gz`` file; a truncated or unreadable file raises
    :class:`DumpError` naming it."""
    p = os.fspath(path)
    try:
        if p.endswith(".bz2"):
            fh: io.BufferedIOBase = bz2.open(p, "rb")
        elif p.endswith(".gz"):
            fh = gzip.open(p, "rb")
        else:
            fh = open(p, "rb")
    except OSError as exc:
        raise DumpError(f"cannot open {p}: {exc}") from exc
    try:
        with fh:
            yield from fh
    except EOFError as exc:
        raise DumpError(f"{p} is truncated ({exc}); re-download it") from exc
    except OSError as exc:
        raise DumpError(f"cannot read {p}: {exc}") from exc


@dataclass(slots=True)
class PersonFacts:
    """What DBpedia says about one resource (a person, if it has a gender)."""

    gender: str | None = None
    gender_raw: str | None = field(default=None, compare=False)     # the value as its source gives it
    gender_source: str | None = field(default=None, compare=False)  # "dbpedia" or "wikidata"
    spouse: list[str] = field(default_factory=list)
    hypernym: list[str] = field(default_factory=list)
    birthDate: list[str] = field(default_factory=list)
    birthPlace: list[str] = field(default_factory=list)
    parent: list[str] = field(default_factory=list)
    deathDate: list[str] = field(default_factory=list)
    almaMater: list[str] = field(default_factory=list)

    def values(self, fact: str) -> list[str]:
        return getattr(self, fact)

    def has(self, fact: str) -> bool:
        return bool(getattr(self, fact))


@dataclass
class FactIndex:
    """Persons (title -> facts) plus what reading the dumps skipped."""

    persons: dict[str, PersonFacts]
    issues: Issues
    stats: dict[str, int]
    files: list[str]


def _sniff_kinds(path: str, lines: int = 5000) -> set[str]:
    """The fact kinds among the first ``lines`` lines of a DBpedia file (errors surface later,
    when the file is read in full)."""
    kinds: set[str] = set()
    gen = open_lines(path)
    try:
        for k, raw in enumerate(gen):
            if k >= lines:
                break
            parts = raw.split(None, 2)
            if len(parts) >= 2 and parts[1] in _PRED_KEYS:
                kinds.add(_PRED_KEYS[parts[1]])
    except DumpError:
        pass
    finally:
        gen.close()
    return kinds


def progress_disabled(progress: bool | None) -> bool | None:
    """tqdm's ``disable`` for a ``progress`` flag: None = only on a TTY."""
    return None if progress is None else not progress


def _add(values: list[str], value: str) -> None:
    if value not in values:
        values.append(value)


def read_facts(
    paths: Iterable[str | os.PathLike],
    *,
    require: Iterable[str] = ("spouse", "hypernym", "birthDate", "birthPlace"),
    genders: Iterable[str] | None = ("female", "male"),
    progress: bool | None = None,
    issue_limit: int = 5,
    gender_map: Callable[[str], str] | None = None,
    known_genders: Mapping[str, tuple[str, str]] | None = None,
) -> FactIndex:
    """Stream DBpedia files into an index of persons that have a gender in ``genders`` and at
    least one value of every fact in ``require``.

    ``genders=None`` keeps every gender value: ``gender_map`` (default: lower case) maps the raw
    literal to the person's ``gender`` and the literal is kept in ``gender_raw``.
    ``known_genders`` (title -> (gender, raw value), e.g. a Wikidata ``P21`` file) are set before
    the dumps are read: such a person is indexed even without a DBpedia gender, and a different
    DBpedia value is a ``gender_conflict`` (the known value is kept).

    Redirect triples (``dbo:wikiPageRedirects``) are read in a second sweep over only the files
    that hold them, keeping only redirects of tails that are actually used, so memory stays
    bounded by the person index rather than by the 10M redirects of English DBpedia.
    """
    from tqdm.auto import tqdm

    require = tuple(require)
    unknown = [r for r in require if r not in FACTS]
    if unknown:
        raise ValueError(f"unknown required relation(s) {unknown}; expected some of {list(FACTS)}")
    paths = [os.fspath(p) for p in paths]
    for p in paths:
        if not os.path.isfile(p):
            raise DumpError(f"DBpedia file not found: {p}")
    reader = _FactReader(None if genders is None else {g.lower() for g in genders}, Issues(limit=issue_limit),
                         gender_map)
    for title, (cls, raw) in (known_genders or {}).items():
        reader.facts[title] = PersonFacts(gender=cls, gender_raw=raw, gender_source="wikidata")
    redirect_files: list[str] = []
    # Memory: read the files that hold gender triples first (found by sniffing their first
    # lines); after them only resources with a gender are indexed, so the index holds persons,
    # not the millions of resources that LHD gives a hypernym. A gender triple in a later file
    # (not seen by the sniff) switches the filter off from there on, with an issue.
    gender_files = [p for p in paths if "gender" in _sniff_kinds(p)]
    paths_in_order = gender_files + [p for p in paths if p not in gender_files]
    bar = tqdm(total=None, unit=" lines", unit_scale=True, desc="DBpedia", disable=progress_disabled(progress))
    for i, p in enumerate(paths_in_order):
        if gender_files and i == len(gender_files):
            reader.keep_gendered_only()
        if reader.read_file(p, bar):
            redirect_files.append(p)
    bar.close()

    facts, stats, issues = reader.facts, reader.stats, reader.issues
    del reader
    persons = {
        t: pf for t, pf in facts.items()
        if pf.gender is not None and all(pf.has(r) for r in require)
    }
    stats["resources_with_facts"] = len(facts)
    stats["resources_with_gender"] = sum(1 for pf in facts.values() if pf.gender is not None)
    stats["persons"] = len(persons)
    del facts

    if redirect_files:
        _resolve_redirects(persons, redirect_files, issues, stats)
    return FactIndex(persons=persons, issues=issues, stats=stats, files=paths)


class _FactReader:
    """Pass 1 of :func:`read_facts`: the facts of every resource (title -> :class:`PersonFacts`)
    read from the files in turn, with one handler per kind of predicate (gender, IRI facts, dates).

    After :meth:`keep_gendered_only` only resources with a gender are indexed (``filtering``),
    until a gender triple turns up in a later file."""

    def __init__(self, genders: set[str] | None, issues: Issues,
                 gender_map: Callable[[str], str] | None = None) -> None:
        self.genders = genders
        self.gender_map = gender_map or (lambda v: v.strip().lower())
        self.issues = issues
        self.stats = {"lines": 0, "triples_used": 0, "redirects_used": 0, "triples_skipped_no_gender": 0}
        self.facts: dict[str, PersonFacts] = {}
        self.filtering = False
        self._handlers = {"gender": self._gender, **{k: self._iri_fact for k in IRI_FACTS},
                          **{k: self._date_fact for k in DATE_FACTS}}

    def keep_gendered_only(self) -> None:
        """Drop the resources without a gender and index only resources with one from now on."""
        self.facts = {t: pf for t, pf in self.facts.items() if pf.gender is not None}
        self.filtering = True

    def read_file(self, path: str, bar) -> bool:
        """Index the facts of one file; True if it holds redirect triples (read later)."""
        stats, issues, facts, handlers = self.stats, self.issues, self.facts, self._handlers
        has_redirects = False
        name = os.path.basename(path)
        for lineno, raw in enumerate(open_lines(path), 1):
            stats["lines"] += 1
            if lineno % 65536 == 0:
                bar.update(65536)
            parts = raw.split(None, 2)
            if len(parts) < 3:
                if raw.strip() and not raw.lstrip().startswith(b"#"):
                    issues.add("malformed_line", f"{name}:{lineno}", "fewer than three terms")
                continue
            kind = _PRED_KEYS.get(parts[1])
            if kind is None:
                continue
            if kind == "redirect":
                has_redirects = True
                continue
            try:
                parsed = parse_line(raw.decode("utf-8"))
            except (UnicodeDecodeError, NTriplesError) as exc:
                issues.add("malformed_line", f"{name}:{lineno}", str(exc))
                continue
            if parsed is None:
                continue
            subj, _, obj = parsed
            try:
                title = iri_to_title(subj)
            except UnicodeDecodeError:
                title = None
            if title is None:
                issues.add("subject_not_a_resource", f"{name}:{lineno}", subj[:80])
                continue
            if self.filtering and kind != "gender" and title not in facts:
                stats["triples_skipped_no_gender"] += 1
                continue
            if handlers[kind](kind, title, obj, name, lineno):
                stats["triples_used"] += 1
        return has_redirects

    def _gender(self, kind: str, title: str, obj: str | Literal, name: str, lineno: int) -> bool:
        if self.filtering:
            self.issues.add("gender_after_filtering", f"{name}:{lineno}",
                            "gender triple outside the files sniffed as gender files; facts of "
                            "resources without a gender were skipped before this line")
            self.filtering = False
        if not isinstance(obj, Literal):
            self.issues.add("gender_not_a_literal", f"{name}:{lineno}", str(obj)[:80])
            return False
        g = self.gender_map(obj.value)
        if self.genders is not None and g not in self.genders:
            self.issues.add("gender_other_value", f"{name}:{lineno}", obj.value[:40])
            return False
        pf = self.facts.setdefault(title, PersonFacts())
        if pf.gender is not None and pf.gender != g:
            self.issues.add("gender_conflict", f"{name}:{lineno}", f"{title}: {pf.gender_raw or pf.gender!r} "
                            f"({pf.gender_source or 'dbpedia'}) kept, {obj.value[:40]!r} not")
        if pf.gender is None:
            pf.gender, pf.gender_raw, pf.gender_source = g, obj.value, "dbpedia"
        return True

    def _iri_fact(self, kind: str, title: str, obj: str | Literal, name: str, lineno: int) -> bool:
        if isinstance(obj, Literal) or obj.startswith("_:"):
            shown = obj.value if isinstance(obj, Literal) else obj
            self.issues.add("object_not_a_resource", f"{name}:{lineno}", f"{kind} {shown[:60]}")
            return False
        try:
            tail = iri_to_title(obj)
        except UnicodeDecodeError:
            tail = None
        if tail is None:
            self.issues.add("object_not_a_resource", f"{name}:{lineno}", f"{kind} {obj[:60]}")
            return False
        _add(self.facts.setdefault(title, PersonFacts()).values(kind), tail)
        return True

    def _date_fact(self, kind: str, title: str, obj: str | Literal, name: str, lineno: int) -> bool:
        value = format_date(obj.value) if isinstance(obj, Literal) else None
        if value is None:
            self.issues.add("date_not_parsed", f"{name}:{lineno}", f"{kind} {str(getattr(obj, 'value', obj))[:40]}")
            return False
        _add(self.facts.setdefault(title, PersonFacts()).values(kind), value)
        return True


def _resolve_redirects(persons: dict[str, PersonFacts], redirect_files: list[str], issues: Issues,
                       stats: dict[str, int]) -> None:
    """Pass 2 of :func:`read_facts`: replace the IRI-fact tails of ``persons`` that are redirects
    by their targets, keeping only the redirects of tails that are used."""
    needed = {t for pf in persons.values() for fct in IRI_FACTS for t in pf.values(fct)}
    redirects: dict[str, str] = {}
    for p in redirect_files:
        name = os.path.basename(p)
        for lineno, raw in enumerate(open_lines(p), 1):
            parts = raw.split(None, 2)
            if len(parts) < 3 or _PRED_KEYS.get(parts[1]) != "redirect":
                continue
            try:
                parsed = parse_line(raw.decode("utf-8"))
                src = iri_to_title(parsed[0]) if parsed else None
                dst = iri_to_title(parsed[2]) if parsed and isinstance(parsed[2], str) else None
            except (UnicodeDecodeError, NTriplesError) as exc:
                issues.add("malformed_line", f"{name}:{lineno}", str(exc))
                continue
            if src in needed and dst:
                redirects[src] = dst
    for pf in persons.values():
        for fct in IRI_FACTS:
            vals = pf.values(fct)
            resolved: list[str] = []
            for v in vals:
                target = redirects.get(v, v)
                if target != v:
                    stats["redirects_used"] += 1
                _add(resolved, target)
            vals[:] = resolved
