"""Locating entity mentions in tokenized sentences.

The release's character offsets are unreliable (see the dataset card), so spans are recomputed
from the text. A mention is located by the first rule in ``MATCH_KINDS`` order that finds it:

* names (heads, spouses, NA persons/institutions): the full name, token for token; the same
  ignoring case and accents; without a parenthetical disambiguation; one comma component
  ("Ernst Gunther, Duke of Schleswig-Holstein" -> "Ernst Gunther"), and a later comma component
  that is a title, whole ("Zaifeng, Prince Chun" -> "Prince Chun"; "Henry Wriothesley, 3rd Earl
  of Southampton" -> "Earl of Southampton", never "Southampton" alone); a contiguous part of the
  name made of name words (titles such as "Princess" and particles such as "of" never stand
  alone); a person tail that shares words with the head ("Liu Xia", wife of "Liu Xiaobo") is
  matched by its other name parts, never by the shared words alone (:func:`tail_forms`);
* hypernyms: the label ignoring case, or a token starting with a one-word label ("publishers");
* places: the full label, then comma components ("Piqua, Kansas" -> "Piqua", "Kansas");
* dates ("November 2, 1924"): the formats of running text ("2 November 1924", "November 2 , 1924",
  "2nd November 1924", ISO dates), then day and month or month and year, then the year alone
  (also inside a range token such as "1924–1990").

Compounds: a name, place or label (never a date) is also found inside a token that joins words
with a hyphen, dash, slash or dot ("Brandenburg-Schwedt", "Belgrade-based", "Governor-General",
"Actor/Philanthropist", "Lewis-Briscoe", "NASA.Smith"); the span is the whole token, with the
rule of the form that matched, ranked just after the same rule on whole tokens.

A tail mention inside a head mention is part of the head's name (the hypernym "Emperor" in
"Qianlong Emperor"), and a head mention strictly inside a tail mention is part of the tail's name
(the surname "Roe" in "John Roe", husband of "Jane Roe"): neither counts (:func:`usable`).
When several mentions exist, the head/tail pair with the best rules is chosen, ties broken by
the shortest distance between the two; head and tail never overlap. A mention that no rule finds
gets the span ``[-1, -1]`` and match kind ``"none"``: it is counted, never guessed.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from wikigenderbias.compounds import COMPOUND_SEP, compound_pieces
from wikigenderbias.schema import MATCH_KINDS

NOT_FOUND: tuple[int, int] = (-1, -1)

# a sentence boundary glued by the release's splitter: "Ohio.Ritchie", "1975.Eshoo", after an acronym
# or a Roman numeral ("NASA.Smith", "II.In"), never after initials ("U.S.Army", "J.R.R.Tolkien")
_GLUED = re.compile(r"^(?P<left>.*(?:[a-z0-9\)\]\"'’]|[A-Z]{2,}|(?<![^\W\d_.])[IVX]))\.(?P<right>[A-Z][^\W\d_].*)$")
_DATE_KINDS = frozenset({"date", "date_partial", "year"})

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_MONTH_ABBR = {m[:3]: m for m in MONTHS}
_DATE_LONG = re.compile(r"^\s*(?P<month>[A-Z][a-z]+)\s+(?P<day>\d{1,2}),?\s+(?P<year>\d{1,4})\s*$")
_DATE_DMY = re.compile(r"^\s*(?P<day>\d{1,2})\s+(?P<month>[A-Z][a-z]+)\s+(?P<year>\d{1,4})\s*$")
_DATE_ISO = re.compile(r"^\s*(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\s*$")
_RANGE_SPLIT = re.compile(r"[–—\-/]")

#: Words that never stand alone as a mention of a person's name.
_NAME_STOP = frozenset(
    """of and the de del della der den di da du des la le los las van von zu y e et bin ibn al el
    jr jr. sr sr. ii iii iv v vi vii viii sir lady lord dame king queen prince princess duke duchess
    count countess earl baron baroness emperor empress saint st st. mr mr. mrs mrs. ms ms. dr dr.
    rev rev. general president marquess archduke archduchess grand""".split()
)
#: Words that make a later comma component of a person's name a title ("Zaifeng, Prince Chun").
_TITLE_WORDS = frozenset(
    """king queen prince princess duke duchess archduke archduchess earl count countess baron baroness
    viscount viscountess marquess marchioness margrave margravine landgrave landgravine burgrave elector
    electress emperor empress lord lady tsar tsarina sultan shah khan lama infante infanta regent""".split()
)
_ORDINAL_WORD = re.compile(r"^\d+(?:st|nd|rd|th)$")
_PRIORITY = {kind: i for i, kind in enumerate(MATCH_KINDS)}
# surface forms are cached per process: the exporter locates the same head and tail in every
# sentence of an entity; a small bound keeps memory flat however many entities a build has
FORMS_CACHE = 4096
_ORDINAL = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}


def tokenize(text: str) -> list[str]:
    """Tokens of a released (space-tokenized) sentence.

    The release is already split on spaces; the only change is that tokens glued across a
    sentence boundary by the release's sentence splitter ("Ohio.Ritchie") are split into
    ``["Ohio", ".", "Ritchie"]`` so that both words can be matched.
    """
    out: list[str] = []
    for tok in text.split():
        _split_glued(tok, out)
    return out


def _split_glued(tok: str, out: list[str]) -> None:
    m = _GLUED.match(tok)
    if m is None or (len(m.group("left")) < 2 and m.group("left") not in "IVX"):
        out.append(tok)
        return
    _split_glued(m.group("left"), out)
    out.append(".")
    _split_glued(m.group("right"), out)


def fold(s: str) -> str:
    """Case- and accent-insensitive form of a string."""
    if s.isascii():
        return s.lower()
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).casefold()


@dataclass(frozen=True)
class Form:
    """One surface form of an entity: a token sequence and the rule that produced it."""

    tokens: tuple[str, ...]
    kind: str
    folded: bool = False      # compare case- and accent-insensitively
    prefix: bool = False      # one token that the text's token must start with
    in_range: bool = False    # may also match one component of a range token ("1924–1990")

    def __post_init__(self) -> None:
        # what is compared with the words of compound tokens (None: the form is never looked for
        # inside compounds: dates, forms of fewer than 3 letters)
        pieces = None
        if self.kind not in _DATE_KINDS and sum(map(len, self.tokens)) >= 3:
            needle = tuple(fold(t) for t in self.tokens) if self.folded else self.tokens
            pieces = tuple(w for t in needle for w in (COMPOUND_SEP.split(t) if len(t) > 1 else (t,)) if w)
            if not pieces or (self.prefix and len(pieces) > 1):
                pieces = None
        object.__setattr__(self, "compound", pieces)


@dataclass(frozen=True)
class Located:
    """Where a head/tail pair was found in one sentence."""

    head_span: tuple[int, int]
    tail_span: tuple[int, int]
    head_match: str
    tail_match: str

    @property
    def head_found(self) -> bool:
        return self.head_match != "none"

    @property
    def tail_found(self) -> bool:
        return self.tail_match != "none"


def _strip_paren(s: str) -> str:
    return re.sub(r"\s*\([^)]*\)\s*", " ", s).strip()


def _is_name_word(tok: str) -> bool:
    return len(tok) >= 2 and tok[0].isupper() and tok.casefold() not in _NAME_STOP and tok not in {",", "."}


def _dedupe(forms: list[Form]) -> list[Form]:
    seen: set[tuple] = set()
    out = []
    for f in forms:
        key = (f.tokens if not f.folded else tuple(fold(t) for t in f.tokens), f.folded, f.prefix, f.in_range)
        if f.tokens and key not in seen:
            seen.add(key)
            out.append(f)
    return out


@functools.lru_cache(maxsize=FORMS_CACHE)
def name_forms(name: str, person: bool = True) -> tuple[Form, ...]:
    """Surface forms of a person (or, with ``person=False``, a place or institution), best first.

    For a person, parts of the name come only from the personal name: the first comma component
    and the words before a territorial "of" ("Alfonso IV d'Este, Duke of Modena" -> "Alfonso",
    "d'Este", never "Modena"; "Princess Dorothea of Saxe-Coburg" -> "Princess Dorothea",
    "Dorothea", never "Gotha"), so that a mention of the territory is not taken for the person.
    For a place every comma component counts ("Piqua, Kansas" -> "Piqua", "Kansas").
    """
    forms: list[Form] = []
    full = tuple(tokenize(name.replace(",", " , ")))
    forms.append(Form(full, "full"))
    forms.append(Form(full, "full_fold", folded=True))
    bare = _strip_paren(name)
    if bare != name:
        forms.append(Form(tuple(tokenize(bare.replace(",", " , "))), "no_paren", folded=True))
    parts = [p.strip() for p in bare.split(",") if p.strip()]
    if len(parts) > 1:
        for p in parts[:1] if person else parts:
            forms.append(Form(tuple(tokenize(p)), "comma_part", folded=True))
        if person:
            forms += title_forms(name)
    words = [t for t in tokenize(parts[0] if person and parts else bare) if t != ","]
    if person and "of" in words[1:]:
        words = words[:words.index("of", 1)]
    # contiguous runs of words, longest first, that end with a name word
    n = len(words)
    subs: list[tuple[str, ...]] = []
    for length in range(n, 0, -1):
        for i in range(0, n - length + 1):
            run = tuple(words[i:i + length])
            if run == full:
                continue
            # a run may start with a title ("Princess Dorothea") but not with a particle ("of ...")
            start_ok = _is_name_word(run[0]) or (length > 1 and run[0][:1].isupper())
            if start_ok and _is_name_word(run[-1]):
                subs.append(run)
    # among single words prefer the last (family) name, then the others in order
    singles = [s for s in subs if len(s) == 1]
    multi = [s for s in subs if len(s) > 1]
    if singles:
        singles = [singles[-1]] + singles[:-1]
    for run in multi + singles:
        forms.append(Form(run, "name_part"))
    for run in multi + singles:
        forms.append(Form(run, "name_part", folded=True))
    return tuple(_dedupe(forms))


@functools.lru_cache(maxsize=FORMS_CACHE)
def title_forms(name: str) -> tuple[Form, ...]:
    """Forms of the later comma components of a person's name that are titles, whole: "Prince
    Chun", "3rd Earl of Southampton" and "Earl of Southampton", "Holy Roman Emperor" (a suffix such
    as "Jr." is no title; the territory of a title never stands alone). A tail inside such a
    mention ("Monaco" in "Prince of Monaco") is a mention of the tail (:func:`usable`)."""
    forms = []
    for p in [p.strip() for p in _strip_paren(name).split(",")][1:]:
        words = tokenize(p)
        if len(words) < 2 or not any(w.casefold() in _TITLE_WORDS for w in words):
            continue
        forms.append(Form(tuple(words), "comma_part", folded=True))
        while len(words) > 2 and (_ORDINAL_WORD.match(words[0]) or words[0].casefold() == "the"):
            words = words[1:]
        forms.append(Form(tuple(words), "comma_part", folded=True))
    return tuple(forms)


def _words(name: str) -> frozenset[str]:
    """The folded words of a name, without its parenthetical ("Liu Xiaobo" -> {"liu", "xiaobo"})."""
    return frozenset(fold(w) for w in tokenize(_strip_paren(name).replace(",", " ")))


@functools.lru_cache(maxsize=FORMS_CACHE)
def name_forms_apart(name: str, other: str) -> tuple[Form, ...]:
    """The forms of person ``name`` without those made only of words of ``other``'s name: a spouse
    who shares the head's surname is matched by the other parts of the spouse's name ("Liu Xia",
    "Xia" for the wife of "Liu Xiaobo"), never by the shared surname alone, which names the head."""
    shared = _words(name) & _words(other)
    forms = name_forms(name)
    if not shared:
        return forms
    return tuple(f for f in forms if not all(fold(t) in shared or t in {",", "."} for t in f.tokens))


@functools.lru_cache(maxsize=FORMS_CACHE)
def label_forms(label: str) -> tuple[Form, ...]:
    """Surface forms of a common-noun label such as a hypernym ("Actor", "Film director")."""
    full = tuple(tokenize(label))
    forms = [Form(full, "full"), Form(full, "full_fold", folded=True)]
    bare = _strip_paren(label)
    if bare != label:
        forms.append(Form(tuple(tokenize(bare)), "no_paren", folded=True))
    words = tokenize(bare)
    if len(words) == 1 and len(words[0]) >= 3:
        forms.append(Form((words[0],), "inflected", folded=True, prefix=True))
    elif len(words) > 1:
        for w in words:
            if len(w) >= 3 and w.casefold() not in _NAME_STOP:
                forms.append(Form((w,), "name_part", folded=True))
    return tuple(_dedupe(forms))


def parse_date(value: str) -> tuple[int, int, int] | None:
    """(year, month, day) of "November 2, 1924", "2 November 1924" or "1924-11-02"; else None."""
    for rx in (_DATE_LONG, _DATE_DMY):
        m = rx.match(value)
        if m:
            month = _MONTH_ABBR.get(m.group("month")[:3])
            if month is None:
                return None
            return int(m.group("year")), MONTHS.index(month) + 1, int(m.group("day"))
    m = _DATE_ISO.match(value)
    if m:
        return int(m.group("year")), int(m.group("month")), int(m.group("day"))
    return None


@functools.lru_cache(maxsize=FORMS_CACHE)
def date_forms(value: str) -> tuple[Form, ...]:
    """Surface forms of a date, in the formats that occur in running text, best first."""
    parsed = parse_date(value)
    if parsed is None:
        return ()
    year, month, day = parsed
    y, d = str(year), str(day)
    mon = MONTHS[month - 1]
    abbr = mon[:3]
    dth = d + _ORDINAL.get(day, "th")
    forms = []
    for mname in (mon, abbr, abbr + "."):
        forms += [
            Form((d, mname, y), "date"),
            Form((dth, mname, y), "date"),
            Form((d, mname, ",", y), "date"),
            Form((mname, d, ",", y), "date"),
            Form((mname, d, y), "date"),
            Form((mname, dth, ",", y), "date"),
            Form((dth, "of", mname, y), "date"),
        ]
    forms.append(Form((f"{year:04d}-{month:02d}-{day:02d}",), "date"))
    for mname in (mon, abbr):
        forms += [Form((d, mname), "date_partial"), Form((mname, d), "date_partial"),
                  Form((dth, mname), "date_partial"), Form((mname, y), "date_partial")]
    forms.append(Form((y,), "year", in_range=True))
    return tuple(_dedupe(forms))


@functools.lru_cache(maxsize=FORMS_CACHE)
def place_forms(label: str) -> tuple[Form, ...]:
    """Surface forms of a place: the full label, its comma components and name parts, then a
    token starting with a one-word component (demonyms such as "Milanese" for "Milan")."""
    forms = list(name_forms(label, person=False))
    for part in _strip_paren(label).split(","):
        words = tokenize(part)
        if len(words) == 1 and len(words[0]) >= 4:
            forms.append(Form((words[0],), "inflected", prefix=True))
    return tuple(_dedupe(forms))


def tail_forms(tail: str, relation: str, head: str | None = None) -> tuple[Form, ...]:
    """Surface forms of a tail entity of ``relation`` (NA tails are people, places or dates).
    With ``head``, a person tail (spouse, NA person) is matched apart from the head's name
    (:func:`name_forms_apart`)."""
    if relation == "birthDate":
        return date_forms(tail)
    if relation == "hypernym":
        return label_forms(tail)
    if relation == "birthPlace":
        return place_forms(tail)
    if relation == "NA" and parse_date(tail) is not None:
        return date_forms(tail)
    return name_forms_apart(tail, head) if head else name_forms(tail)


def name_word_hypernym(head: str, tail: str, relation: str = "hypernym") -> bool:
    """True for a hypernym that is a word of the head's own name ("Ogilvie" of "Lawrence Ogilvie",
    "Emperor" of "Qianlong Emperor"): noise of the Linked Hypernyms Dataset, whose mentions inside
    the name are the head's (:func:`usable`); counted apart by the build and the fidelity check."""
    return relation == "hypernym" and fold(_strip_paren(tail)) in _words(head)


def _scan(hay: list[str], needle: tuple[str, ...], f: Form) -> Iterable[int]:
    """Start positions of ``needle`` (the form's tokens, folded if the form is) in ``hay``."""
    n, k, first = len(hay), len(needle), needle[0]
    if f.prefix:  # one token that starts with the label, at most 3 more letters ("publishers")
        lf = len(first)
        return [i for i, tok in enumerate(hay)
                if tok == first or (tok.startswith(first) and len(tok) <= lf + 3 and tok[lf:].isalpha())]
    if f.in_range:  # the token, or one part of a range token ("1924–1990")
        return [i for i in range(n - k + 1)
                if (hay[i] == first and (k == 1 or tuple(hay[i:i + k]) == needle))
                or (hay[i] != first and first in hay[i] and first in _RANGE_SPLIT.split(hay[i].strip("()[],;.")))]
    # exact first token: let list.index (C) find the candidates
    out = []
    i, last = -1, n - k
    while True:
        try:
            i = hay.index(first, i + 1, last + 1)
        except ValueError:
            return out
        if k == 1 or tuple(hay[i:i + k]) == needle:
            out.append(i)


_COMPUTE = object()


def find(tokens: list[str], forms: tuple[Form, ...], *, compounds=_COMPUTE) -> list[tuple[float, int, int, str]]:
    """All matches ``(priority, start, end, kind)`` of ``forms`` in ``tokens``; matches inside
    compound tokens (module docstring) rank half a step after the same rule on whole tokens.
    ``compounds``: :func:`compound_pieces` of ``tokens`` (or a function returning it, called
    when needed) when the caller has it already."""
    if not tokens or not forms:
        return []
    folded_tokens: list[str] | None = None
    found: list[tuple[float, int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    for f in forms:
        if f.folded:
            if folded_tokens is None:
                folded_tokens = [fold(t) for t in tokens]
            hay, needle = folded_tokens, tuple(fold(t) for t in f.tokens)
        else:
            hay, needle = tokens, f.tokens
        k = len(needle)
        for i in _scan(hay, needle, f):
            if (i, i + k) not in seen:
                seen.add((i, i + k))
                found.append((_PRIORITY[f.kind], i, i + k, f.kind))
    views: dict[bool, tuple[list[str], list[int], list[bool]] | None] = {}
    for f in forms:
        needle = f.compound
        if needle is None:
            continue
        if f.folded not in views:
            if not f.folded and compounds is not _COMPUTE:
                views[False] = compounds() if callable(compounds) else compounds
            else:
                if f.folded and folded_tokens is None:
                    folded_tokens = [fold(t) for t in tokens]
                views[f.folded] = compound_pieces(folded_tokens if f.folded else tokens)
        view = views[f.folded]
        if view is None:
            continue
        pieces, owner, split = view
        k = len(needle)
        for i in _scan(pieces, needle, f):
            a, b = owner[i], owner[i + k - 1] + 1
            # only spans that reach into a compound: the others were found on whole tokens
            if (a, b) not in seen and any(split[a:b]):
                seen.add((a, b))
                found.append((_PRIORITY[f.kind] + 0.5, a, b, f.kind))
    return found


def _span(m) -> tuple[int, int]:
    return (m[1], m[2]) if len(m) == 4 else m


def usable(heads: list, tails: list, titles: Iterable[tuple[int, int]] = ()) -> tuple[list, list]:
    """The head and tail mentions that count, as ``(start, end)`` spans or :func:`find` matches.
    A tail mention overlapping a head mention counts only if it strictly contains it (the head's
    surname inside the spouse's full name "John Roe"), or if it lies inside a mention of the head
    by a title (``titles``, spans of :func:`title_forms`: "Monaco" in "Prince of Monaco"); such
    head mentions then do not count. Any other tail mention inside a head mention is part of the
    head's name ("Emperor" in "Qianlong Emperor"). Every head mention that counts is apart from
    every tail mention that counts."""
    hs = [_span(h) for h in heads]
    ts = [_span(t) for t in tails]
    if not any(t[0] < h[1] and h[0] < t[1] for t in ts for h in hs):
        return heads, tails  # nothing overlaps: every mention counts
    titles = set(titles)

    def overlap(a, b) -> bool:
        return a[0] < b[1] and b[0] < a[1]

    def inside(a, b) -> bool:  # a strictly inside b
        return b[0] <= a[0] and a[1] <= b[1] and a != b

    def yields(h, t) -> bool:  # head mention h gives way to tail mention t
        return inside(h, t) or (h in titles and inside(t, h))

    keep_t = [not any(overlap(t, h) and not yields(h, t) for h in hs) for t in ts]
    kept = [t for t, k in zip(ts, keep_t) if k]
    return ([h for h, sh in zip(heads, hs) if not any(overlap(sh, t) for t in kept)],
            [t for t, k in zip(tails, keep_t) if k])


def locate(tokens: list[str], head: str, tail: str, relation: str) -> Located:
    """Locate the head and tail of a ``relation`` example in ``tokens``."""
    heads = find(tokens, name_forms(head))
    tails = find(tokens, tail_forms(tail, relation, head)) if tail else []
    if heads and tails:
        titles = [(m[1], m[2]) for m in find(tokens, title_forms(head))] if title_forms(head) else ()
        uheads, utails = usable(heads, tails, titles)
        best = None
        for h in uheads:
            for t in utails:
                dist = t[1] - h[2] if t[1] >= h[2] else h[1] - t[2]
                key = (h[0] + t[0], dist, h[1], t[1])
                if best is None or key < best[0]:
                    best = (key, h, t)
        if best is not None:
            _, h, t = best
            return Located((h[1], h[2]), (t[1], t[2]), h[3], t[3])
        if not utails:
            # every tail is part of a head mention (e.g. hypernym "Princess" only inside the name):
            # keep the better-ranked head and report the tail as not located
            h = min(heads)
            return Located((h[1], h[2]), NOT_FOUND, h[3], "none")
        heads, tails = uheads, utails  # the head is named only inside the tail's name: not located
    h = min(heads) if heads else None
    t = min(tails) if tails else None
    return Located(
        (h[1], h[2]) if h else NOT_FOUND,
        (t[1], t[2]) if t else NOT_FOUND,
        h[3] if h else "none",
        t[3] if t else "none",
    )
