"""The paper's variant of distant supervision: from person facts and articles to examples.

For a relation r(X, Y) known to DBpedia, every sentence of X's article that mentions Y (and X)
is an example of r. Negative (NA) examples are sentences that mention the tail of an unrelated
relation (parents, deathDate, almaMater) and no tail of a positive relation.

Mentions are found with the surface forms of :mod:`wikigenderbias.spans` (the same rules that
later locate the token spans of the exported benchmark), so a sentence is selected exactly when
its mentions can be located. X is mentioned by its full name, name parts or a title that is a later
comma part of its name ("Prince Chun" of "Zaifeng, Prince Chun"; pronouns optionally, off by
default); Y by the forms of its relation (names, labels without a parenthetical, comma
components of places, inflected one-word labels, full or partial dates), also inside compound
tokens ("Belgrade-based"); a spouse or NA person who shares X's surname by the other parts of
its name. Which match kinds count is configurable (``DistantConfig.tail_kinds``; the year of a
date alone does not count by default, it selects too many unrelated sentences). A mention of Y
inside a mention of X is part of X's name (a hypernym "Emperor" in "Qianlong Emperor"), and a
mention of X inside a mention of Y part of Y's ("Roe" in "John Roe"): neither counts
(:func:`wikigenderbias.spans.usable`). By default every sentence of X's article that mentions Y is
an example (the paper's rule, which the release follows: ``benchmarks/distant_vs_release.py``);
with ``require_head`` (``--require-head``, stricter) a sentence must mention X too.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from functools import lru_cache

from wikigenderbias.dbpedia import PersonFacts
from wikigenderbias.schema import MATCH_KINDS, POSITIVE_RELATIONS
from wikigenderbias.compounds import COMPOUND_SEP, HAS_COMPOUND, PIECE_SPLIT, compound_pieces
from wikigenderbias.spans import Form, find, name_forms, name_word_hypernym, tail_forms, title_forms, tokenize, usable

__all__ = ["DistantConfig", "NA_FACTS", "PRONOUNS", "Matcher", "Sentence", "entity_record"]

#: DBpedia facts whose tails make negative (NA) examples.
NA_FACTS: tuple[str, ...] = ("parent", "deathDate", "almaMater")
PRONOUNS = {"female": ("she", "her", "hers", "herself"), "male": ("he", "him", "his", "himself")}
_INNER_DOT = re.compile(r"\S\.\S")
_EMPTY: frozenset[str] = frozenset()
_UNSET = object()
_DEFAULT_TAIL_KINDS = tuple(k for k in MATCH_KINDS if k not in ("year", "none"))
_DEFAULT_HEAD_KINDS = tuple(k for k in MATCH_KINDS if k != "none")


@dataclass(frozen=True)
class DistantConfig:
    """How examples are selected."""

    relations: tuple[str, ...] = POSITIVE_RELATIONS     # positive relations to extract
    na_facts: tuple[str, ...] = NA_FACTS                # facts whose tails give NA examples
    require_head: bool = False                          # True: the sentence must mention X too (stricter than the paper)
    pronouns: bool = False                              # a gendered pronoun counts as X
    head_kinds: tuple[str, ...] = _DEFAULT_HEAD_KINDS
    tail_kinds: tuple[str, ...] = _DEFAULT_TAIL_KINDS
    min_tokens: int = 3
    max_tokens: int = 0                                 # 0 = no limit

    def __post_init__(self) -> None:
        bad = [r for r in self.relations if r not in POSITIVE_RELATIONS]
        if bad:
            raise ValueError(f"unknown relation(s) {bad}; expected some of {list(POSITIVE_RELATIONS)}")
        bad = [f for f in self.na_facts if f not in NA_FACTS]
        if bad:
            raise ValueError(f"unknown NA fact(s) {bad}; expected some of {list(NA_FACTS)}")
        bad = [k for k in (*self.head_kinds, *self.tail_kinds) if k not in MATCH_KINDS or k == "none"]
        if bad:
            raise ValueError(f"unknown match kind(s) {bad}; expected some of {list(MATCH_KINDS[:-1])}")

    def to_dict(self) -> dict:
        return asdict(self)


def _fold(s: str) -> str:
    """Same result as :func:`wikigenderbias.spans.fold`, with an ASCII fast path."""
    if s.isascii():
        return s.lower()
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).casefold()


class Sentence:
    """One tokenized sentence with its folded forms, computed once and shared by all matchers."""

    __slots__ = ("text", "tokens", "folded", "folded_set", "compound_text", "compound_words", "_folded_tokens",
                 "_pieces", "_folded_pieces")

    def __init__(self, text: str) -> None:
        self.text = text
        # the exporter's tokenization (it differs from split() only for tokens with an inner ".")
        self.tokens = tokenize(text) if _INNER_DOT.search(text) else text.split()
        self.folded = _fold(" ".join(self.tokens))
        words = self.folded.split()
        self.folded_set = set(words)
        # the compound tokens and their words, for forms found inside them
        self.compound_text = (" ".join(t for t in words if len(t) > 1 and not t.isalnum() and HAS_COMPOUND.search(t))
                              if HAS_COMPOUND.search(self.folded) else "")
        self.compound_words = set(PIECE_SPLIT.split(self.compound_text)) if self.compound_text else _EMPTY
        self.folded_set |= self.compound_words
        self._folded_tokens: list[str] | None = None
        self._pieces = self._folded_pieces = _UNSET

    @property
    def folded_tokens(self) -> list[str]:
        if self._folded_tokens is None:
            self._folded_tokens = [_fold(t) for t in self.tokens]
        return self._folded_tokens

    def get_pieces(self):
        """:func:`wikigenderbias.spans.compound_pieces` of the tokens (computed once, when needed)."""
        if self._pieces is _UNSET:
            self._pieces = compound_pieces(self.tokens)
        return self._pieces

    def get_folded_pieces(self):
        if self._folded_pieces is _UNSET:
            self._folded_pieces = compound_pieces(self.folded_tokens)
        return self._folded_pieces


class Matcher:
    """Surface forms of one entity (from :mod:`wikigenderbias.spans`) restricted to some match
    kinds, matched with :func:`spans.find`.

    Two shortcuts keep this fast without changing what matches: a form is tried only if its first
    token (folded) is a token of the folded sentence (or, for forms matching a token prefix or a
    part of a range token, a substring of it); and case/accent-insensitive forms are matched as
    exact forms of their folded tokens against the sentence's folded tokens, folded once per
    sentence instead of once per call (exactly what ``find`` does for a folded form).
    """

    __slots__ = ("exact", "folded", "partial", "keys", "words_exact", "words_folded")

    def __init__(self, forms) -> None:
        exact, folded, partial = [], [], []
        for f in forms:
            # a form is tried when its first token, or the first word of that token (a form found
            # inside a compound token), is a word of the sentence
            keys = (_fold(f.tokens[0]), _fold(_first_piece(f.tokens[0])),
                    frozenset(_fold(w) for w in f.compound or ()))
            if f.folded:
                g = Form(tuple(_fold(t) for t in f.tokens), f.kind, False, f.prefix, f.in_range)
                (partial if f.prefix or f.in_range else folded).append((keys, g, True))
            else:
                (partial if f.prefix or f.in_range else exact).append((keys, f, False))
        self.exact, self.folded, self.partial = tuple(exact), tuple(folded), tuple(partial)
        # the words of the exact and the folded forms, compared with the words of compound tokens
        self.words_exact = frozenset(w for (_, _, ws), _, _ in exact for w in ws)
        self.words_folded = frozenset(w for (_, _, ws), _, _ in folded for w in ws)
        self.keys = frozenset(k for ks, _, _ in (*exact, *folded) for k in ks[:2])

    @classmethod
    def for_tail(cls, tail: str, relation: str, kinds, head: str | None = None) -> Matcher:
        """The matcher of a tail; cached, since places, dates and hypernyms repeat across
        persons (a matcher is immutable, so sharing it is safe). With ``head``, a person tail is
        matched apart from the head's name (:func:`wikigenderbias.spans.tail_forms`)."""
        return _tail_matcher(tail, relation, tuple(kinds), head if relation in _PERSON_TAILS else None)

    @classmethod
    def for_head(cls, head: str, kinds) -> Matcher:
        return cls(f for f in name_forms(head) if f.kind in kinds)

    def spans(self, s: Sentence) -> list[tuple[int, int]]:
        fs = s.folded_set
        if not self.partial and self.keys.isdisjoint(fs):
            return []
        cw, ct = s.compound_words, s.compound_text
        on_tokens = [f for (k, p, _), f, _ in self.exact if k in fs or p in fs]
        on_folded = [f for (k, p, _), f, _ in self.folded if k in fs or p in fs]
        # the compound words are looked at only if one of these forms may be inside a compound
        in_t = bool(cw) and not self.words_exact.isdisjoint(cw)
        in_f = bool(cw) and not self.words_folded.isdisjoint(cw)
        for (k, _, _), f, is_folded in self.partial:
            if k in s.folded:
                (on_folded if is_folded else on_tokens).append(f)
                if k in ct:
                    in_f, in_t = (True, in_t) if is_folded else (in_f, True)
        out: list[tuple[int, int]] = []
        if on_tokens:
            out += [(a, b) for _, a, b, _ in find(s.tokens, tuple(on_tokens), compounds=s.get_pieces if in_t else None)]
        if on_folded:
            out += [(a, b) for _, a, b, _ in
                    find(s.folded_tokens, tuple(on_folded), compounds=s.get_folded_pieces if in_f else None)]
        return out


class _Prefilter:
    """The first-token tests of several matchers at once: a sentence that fails them can match
    none of them (most sentences of an article mention no tail), so their ``spans`` are skipped."""

    __slots__ = ("keys", "partial")

    def __init__(self, matchers) -> None:
        keys: set[str] = set()
        partial: set[str] = set()
        for m in matchers:
            keys |= m.keys
            partial.update(k for (k, _, _), _, _ in m.partial)
        self.keys, self.partial = frozenset(keys), tuple(partial)

    def may_match(self, s: Sentence) -> bool:
        return not self.keys.isdisjoint(s.folded_set) or any(k in s.folded for k in self.partial)


#: Relations whose tails may be persons, matched apart from the head's name.
_PERSON_TAILS = ("spouse", "NA")


def _first_piece(tok: str) -> str:
    return next((w for w in COMPOUND_SEP.split(tok) if w), tok)


@lru_cache(maxsize=1 << 14)   # places, dates, hypernyms repeat; bounded, so memory stays flat
def _tail_matcher(tail: str, relation: str, kinds: tuple[str, ...], head: str | None) -> Matcher:
    return Matcher(f for f in tail_forms(tail, relation, head) if f.kind in kinds)


def _mentioned(tails: list[tuple[int, int]], heads: list[tuple[int, int]],
               titles: list[tuple[int, int]]) -> tuple[bool, bool]:
    """Whether a tail mention counts (:func:`wikigenderbias.spans.usable`: not part of the head's
    name), and whether a head mention apart from it counts too (not part of the tail's name)."""
    heads, tails = usable(heads, tails, titles)
    return bool(tails), bool(tails) and bool(heads)


def _head_spans(head: Matcher, pronouns: set[str], s: Sentence) -> list[tuple[int, int]]:
    spans = head.spans(s)
    if pronouns:
        spans += [(i, i + 1) for i, t in enumerate(s.tokens) if t.lower() in pronouns]
    return spans


def entity_record(title: str, facts: PersonFacts, sentences: list[str],
                  config: DistantConfig = DistantConfig(), *, stats: Counter | None = None) -> dict | None:
    """The entity record (``schema.entity_features()`` form) of one person, or ``None`` when no
    sentence of the article is a positive example.

    ``sentences`` are space-tokenized sentences of the person's article.
    ``stats`` (if given) receives counts: sentences, examples per relation, tails never mentioned,
    hypernyms that are a word of the head's name (``tails_name_word:hypernym``), NA tails per fact
    of the persons with examples (``na_tails:<fact>``).
    """
    stats = stats if stats is not None else Counter()
    gender = facts.gender
    head = Matcher.for_head(title, config.head_kinds)
    titled = Matcher(f for f in title_forms(title) if f.kind in config.head_kinds) if title_forms(title) else None
    pronouns = set(PRONOUNS.get(gender or "", ())) if config.pronouns else set()
    positives = [(r, y, Matcher.for_tail(y, r, config.tail_kinds, title))
                 for r in config.relations for y in facts.values(r)]
    negatives = [(f, y, Matcher.for_tail(y, "NA", config.tail_kinds, title))
                 for f in config.na_facts for y in facts.values(f)]
    pos_hits: dict[tuple[str, str], list[str]] = {(r, y): [] for r, y, _ in positives}
    neg_hits: dict[str, list[str]] = {}
    pos_filter, neg_filter = _Prefilter(m for _, _, m in positives), _Prefilter(m for _, _, m in negatives)
    for sent in sentences:
        s = Sentence(sent)
        stats["sentences"] += 1
        head_spans: list[tuple[int, int]] | None = None
        titles: list[tuple[int, int]] = []
        any_positive = False
        for r, y, m in (positives if pos_filter.may_match(s) else ()):
            spans = m.spans(s)
            if not spans:
                continue
            if head_spans is None:
                head_spans = _head_spans(head, pronouns, s)
                titles = titled.spans(s) if titled is not None and head_spans else []
            tail_ok, both_ok = _mentioned(spans, head_spans, titles)
            if tail_ok:
                any_positive = True  # a positive tail is mentioned: never an NA example
                if both_ok or not config.require_head:
                    pos_hits[(r, y)].append(sent)
        if any_positive:
            continue
        for f, y, m in (negatives if neg_filter.may_match(s) else ()):
            spans = m.spans(s)
            if not spans:
                continue
            if head_spans is None:
                head_spans = _head_spans(head, pronouns, s)
                titles = titled.spans(s) if titled is not None and head_spans else []
            tail_ok, both_ok = _mentioned(spans, head_spans, titles)
            if both_ok or (tail_ok and not config.require_head):
                neg_hits.setdefault(y, []).append(sent)
    relations = []
    for r, y, _ in positives:
        sents = _unique(pos_hits[(r, y)])
        stats[f"tails:{r}"] += 1
        if name_word_hypernym(title, y, r):  # LHD noise: its mentions inside the name are the head's
            stats[f"tails_name_word:{r}"] += 1
        if sents:
            relations.append({"relation": r, "tail": y, "sentences": sents, "positions": []})
            stats[f"examples:{r}"] += len(sents)
        else:
            stats[f"tails_not_mentioned:{r}"] += 1
    if not relations:
        return None
    for f in config.na_facts:  # how many NA tails there were to find (0: the build was given no such facts)
        stats[f"na_tails:{f}"] += len(facts.values(f))
    for y, sents in neg_hits.items():
        sents = _unique(sents)
        relations.append({"relation": "NA", "tail": y, "sentences": sents, "positions": []})
        stats["examples:NA"] += len(sents)
    return {"entity_id": title, "entity": title, "gender": gender, "relations": relations}


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
