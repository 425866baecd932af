"""Name anonymization (Zhao et al. 2018, as in Gaut et al. 2020): person names become E1, E2, ...

**Label-blind.** The procedure is the same in every split and never reads a row's gold
``relation``: which spans are person names is decided from the text (NER), from the given entity
pair (head and tail strings and their located spans) and from a list of known person names built
from every split's head entities and from the *training* split's spouse tails only. Scrambling the
relation labels of a split leaves its anonymized text unchanged (``tests/relext``).

In every split, each article (rows sharing an ``entity_id``) gets its own numbering:

* ``E1`` is the head (the article's subject); then the row tails judged to be persons (below), in
  row order; then every other PERSON mention the NER finds, in order of first appearance.
* A tail (a name in one article) is a **person** when its name (read as below) is one of the
  known person names, or when in at least half of the article's rows that locate it (and at least
  one) its located span overlaps a PERSON mention of the NER. It is then a person in every row
  holding it, otherwise in none, so that the sentences of one (head, tail) pair keep one tail and
  stay one bag; two tails that read alike ("Guelph", "Guelph, Ontario") get labels of their own, so
  two pairs never become one bag. A tail that is not a person has its span **protected**: never replaced (a place
  named like a person, a date, an occupation stay; the half rule keeps a country the NER once
  takes for a first name a place). (Version 1 decided this per row: where the NER found the name
  in some of a pair's sentences only, one pair became two bags; ``Anonymize.version`` is 2, and
  runs record it.)
* An NER mention that overlaps the located head span is the head (a full birth name such as
  "Princess Dorothea Maria Henriette" around the head mention "Dorothea"), one that overlaps a
  located person tail is that person. Any other mention refers to a person already numbered when
  its name words (title and particle words such as "Sir", "of", "Jr." ignored, case ignored) are a
  subset of that person's name words ("Smith" and "John Smith" both refer to the head "John
  Smith"); otherwise it is a new person.
* In each sentence these spans are replaced: the head span and a person tail's span (when they
  hold one of the person's name words; a span the benchmark put on a territory such as "Gotha"
  is counted as ``head_span_untrusted`` and left alone), every occurrence
  of a known person's full name or of one of its name words (capitalised, two letters or more),
  and every PERSON mention found by the NER. Overlapping spans merge into one, labelled by the
  strongest evidence (head span, tail span, a known full name, an NER mention, a known name
  word, in that order: "John Doe" found by the NER in John Smith's article is a new person even
  though "John" is one of the head's name words); adjacent spans of the same person merge.
* Each replaced span becomes one token, so token spans shift: ``head_span``/``tail_span`` are
  recomputed and point at the label token; ``head`` becomes ``E1``, a spouse tail its label, and
  any other tail whose whole span was replaced its label; ``text`` becomes the new tokens joined
  by spaces. Ids, match kinds and labels are unchanged.
* Names are read without a parenthetical, a comma suffix, or the territory after "of"
  ("Princess Dorothea of Saxe-Coburg and Gotha" -> "Princess Dorothea"); a mention overlapping a
  protected tail keeps only its part outside the tail ("Princess" as hypernym tail stays).

NER backends (``ner=``): ``"auto"`` (default: an installed English spaCy pipeline, see
:mod:`relext.debias.spacy_pipeline`; when none is installed, the gazetteer with a warning),
``"spacy"`` / ``"spacy:<package>"`` (error when not installed), ``"gazetteer"`` (the known person
names: every split's heads and the training split's spouse tails, matched as full token sequences). ``describe()`` records
the backend, its model and version, and counts of what was replaced.
"""
from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Sequence

from relext.debias.base import Memo, check_dataset_dict, package_version

#: Words that never identify a person on their own (titles, particles, suffixes).
NAME_STOP: frozenset[str] = frozenset(
    """of and the de del della der den di da du des la le los las van von zu y e et bin ibn al el
    jr jr. sr sr. ii iii iv v vi vii viii sir lady lord dame king queen prince princess duke duchess
    count countess earl baron baroness emperor empress saint st st. mr mr. mrs mrs. ms ms. dr dr.
    rev rev. general president marquess archduke archduchess grand""".split()
)
#: The only split whose relation labels may be read (to collect known person names).
LABELLED_SPLIT = "train"
NER_CHOICES = ("auto", "spacy", "gazetteer")
_MEMO = Memo()

_PAREN = re.compile(r"\s*\([^)]*\)")


def clean_name(name: str) -> list[str]:
    """Name tokens without a parenthetical disambiguation, a comma suffix or an ``of`` territory.

    "Princess Dorothea of Saxe-Coburg and Gotha" -> ["Princess", "Dorothea"]: the words after
    "of" name a place, which must not become the person's label elsewhere in the article.
    """
    toks = _PAREN.sub("", name).split(",")[0].split()
    if "of" in toks[1:]:
        toks = toks[:toks.index("of", 1)]
    return toks


def name_words(tokens: Iterable[str]) -> frozenset[str]:
    return frozenset(t.casefold() for t in tokens
                     if t.casefold() not in NAME_STOP and any(c.isalpha() for c in t))


class GazetteerNER:
    """PERSON spans by longest match of known full names (token sequences)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names: set[tuple[str, ...]] = set()
        for n in names:
            toks = tuple(clean_name(n))
            if toks and any(c.isalpha() for c in "".join(toks)):
                self.names.add(toks)
        self.max_len = max((len(t) for t in self.names), default=0)

    def describe(self) -> dict[str, Any]:
        return {"kind": "gazetteer", "source": "every split's heads and the training split's spouse tails",
                "n_names": len(self.names)}

    def annotate(self, token_lists: Sequence[Sequence[str]]) -> list[list[list]]:
        out = []
        for toks in token_lists:
            spans = []
            i, n = 0, len(toks)
            while i < n:
                hit = 0
                for L in range(min(self.max_len, n - i), 0, -1):
                    if tuple(toks[i:i + L]) in self.names:
                        hit = L
                        break
                if hit:
                    spans.append([i, i + hit, "PERSON"])
                    i += hit
                else:
                    i += 1
            out.append(spans)
        return out


@dataclass
class _Person:
    label: str
    tokens: tuple[str, ...]
    words: frozenset[str]


class _Article:
    """The persons of one article and their labels."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.persons: list[_Person] = []

    def add(self, tokens: Sequence[str]) -> _Person:
        p = _Person(f"{self.prefix}{len(self.persons) + 1}", tuple(tokens), name_words(tokens))
        self.persons.append(p)
        return p

    def resolve(self, tokens: Sequence[str]) -> _Person:
        words = name_words(tokens)
        for p in self.persons:
            if tuple(tokens) == p.tokens or (words and words <= p.words):
                return p
        return self.add(tokens)


def _valid(span: Sequence[int], n: int) -> bool:
    return span is not None and len(span) == 2 and 0 <= span[0] < span[1] <= n


def _trusted(span: Sequence[int], tokens: Sequence[str], person: "_Person") -> bool:
    """A located span is used as a mention only when it holds one of the person's name words
    (a span on "Gotha" for "Princess Dorothea of Saxe-Coburg and Gotha" is a territory)."""
    if not _valid(span, len(tokens)):
        return False
    return any(t.casefold() in person.words for t in tokens[span[0]:span[1]]) or not person.words


def _known_name_candidates(known: Sequence["_Person"], toks: Sequence[str]) -> list[tuple[int, int, str, int]]:
    """Every occurrence of a known person's full name (priority 2) or of one of their name words,
    capitalised and two letters or more (priority 4)."""
    out = []
    n = len(toks)
    for p in known:
        L = len(p.tokens)
        for i in range(n - L + 1):
            if L and tuple(toks[i:i + L]) == p.tokens:
                out.append((i, i + L, p.label, 2))
        for i, t in enumerate(toks):
            if len(t) > 1 and t[:1].isupper() and t.casefold() in p.words:
                out.append((i, i + 1, p.label, 4))
    return out


def _outside(cands: list[tuple[int, int, str, int]], protected: Sequence[int]) -> list[tuple[int, int, str, int]]:
    """The parts of the candidate spans outside the protected tail span."""
    ps, pe = protected
    kept = []
    for c in cands:
        if c[1] <= ps or c[0] >= pe:
            kept.append(c)
            continue
        if c[0] < ps:
            kept.append((c[0], ps, c[2], c[3]))
        if pe < c[1]:
            kept.append((pe, c[1], c[2], c[3]))
    return kept


def _merge(cands: list[tuple[int, int, str, int]]) -> list[tuple[int, int, str]]:
    """Merge overlapping candidate spans (lowest priority number wins), then same-label neighbours."""
    cands.sort(key=lambda c: (c[0], c[3], -c[1]))
    groups: list[list] = []
    for s, e, label, prio in cands:
        if groups and s < groups[-1][1]:
            g = groups[-1]
            g[1] = max(g[1], e)
            if prio < g[3]:
                g[2], g[3] = label, prio
        else:
            groups.append([s, e, label, prio])
    merged: list[tuple[int, int, str]] = []
    for s, e, label, _ in groups:
        if merged and merged[-1][1] == s and merged[-1][2] == label:
            merged[-1] = (merged[-1][0], e, label)
        else:
            merged.append((s, e, label))
    return merged


def replace_spans(tokens: Sequence[str], spans: list[tuple[int, int, str]]):
    """New tokens and ``newpos`` (old token index -> new token index)."""
    new_tokens: list[str] = []
    newpos = [0] * len(tokens)
    it = iter(sorted(spans))
    nxt = next(it, None)
    i = 0
    while i < len(tokens):
        if nxt is not None and i == nxt[0]:
            for j in range(nxt[0], nxt[1]):
                newpos[j] = len(new_tokens)
            new_tokens.append(nxt[2])
            i = nxt[1]
            nxt = next(it, None)
        else:
            newpos[i] = len(new_tokens)
            new_tokens.append(tokens[i])
            i += 1
    return new_tokens, newpos


def _map_span(span: Sequence[int], newpos: list[int], n: int) -> list[int]:
    if not _valid(span, n):
        return list(span)
    return [newpos[span[0]], newpos[span[1] - 1] + 1]


def person_names(dsdict) -> set[str]:
    """Known person names: the head entity of every row of every split (given at test time too)
    and the tails of the training split's ``spouse`` rows (training labels only)."""
    names: set[str] = set()
    for split, ds in dsdict.items():
        names.update(h for h in ds["head"] if h.strip())
        if split == LABELLED_SPLIT:
            rel = list(ds.features["relation"].names)
            if "spouse" in rel:
                sp = rel.index("spouse")
                names.update(t for t, r in zip(ds["tail"], ds["relation"]) if r == sp and t.strip())
    return names


def tail_is_person(row: dict, row_ents: Sequence, known_names: frozenset[tuple[str, ...]]) -> bool:
    """Is the row's tail a person? From its text only, never from ``row["relation"]``.

    A tail made only of title and particle words ("Princess", "Sir") is never a person. Otherwise
    it is one when a PERSON mention covers a name word of its located span, or when its name is a
    known person name."""
    words = name_words(clean_name(row["tail"]))
    if not words:
        return False
    n = len(row["tokens"])
    span = row["tail_span"]
    if _valid(span, n):
        name_pos = [i for i in range(span[0], span[1]) if row["tokens"][i].casefold() in words]
        for s, e, label in row_ents:
            if label == "PERSON" and any(s <= i < e for i in name_pos):
                return True
    toks = tuple(clean_name(row["tail"]))
    return toks in known_names


@dataclass
class Anonymize:
    """Replace person names by E1, E2, ... per article in every split (module docstring)."""

    #: 2: a tail's personhood is decided per article and tail, not per row (module docstring).
    version: ClassVar[int] = 2
    ner: str = "auto"
    cache_dir: str | None = None
    batch_size: int = 256
    prefix: str = "E"
    progress: bool = True
    name: str = field(default="anonymize", init=False)

    def __post_init__(self) -> None:
        kind = self.ner.split(":", 1)[0]
        if kind not in NER_CHOICES:
            raise ValueError(f"unknown NER {self.ner!r}; expected one of {list(NER_CHOICES)} "
                             "or 'spacy:<package>'")
        self._ner_info: dict[str, Any] | None = None
        self._stats: dict[str, Any] = {}

    # ----------------------------------------------------------------- NER
    def _backend(self, person_names: Iterable[str]):
        from relext.debias import spacy_pipeline

        kind, _, pkg = self.ner.partition(":")
        if kind == "gazetteer":
            return GazetteerNER(person_names)
        if kind == "spacy" or spacy_pipeline.installed_models():
            return spacy_pipeline.SpacyAnnotator(task="ner", model=pkg or None, cache_dir=self.cache_dir,
                                                 batch_size=self.batch_size, progress=self.progress)
        warnings.warn(
            "anonymize: no English spaCy pipeline is installed, so PERSON mentions are found with "
            "a gazetteer of known person names (every split's heads, the training split's spouse tails) only; other "
            "people named in the sentences stay. Install one with `pip install 'wgb[ner]'`.",
            UserWarning, stacklevel=3,
        )
        return GazetteerNER(person_names)

    # ----------------------------------------------------------------- rows
    def anonymize_article(self, rows: list[dict], ents: list[list], counts: Counter,
                          known_names: frozenset[tuple[str, ...]] = frozenset()) -> list[dict]:
        """Anonymized copies of the rows of one article (``ents``: NER spans per row).

        Reads each row's text, head, tail and their spans, never its relation (module docstring);
        ``known_names``: person names as token tuples (see :func:`person_names`).
        """
        art = _Article(self.prefix)
        head = art.add(clean_name(rows[0]["head"]) or [rows[0]["head"]])
        # a tail is a person in every row of the article or in none (one pair, one bag): when at
        # least half of the rows that locate it say so (a known name says so in every row)
        # (keyed by the tail as given: two tails read alike, "Guelph" and "Guelph, Ontario", stay two)
        votes: dict[str, list[int]] = {}
        for row, row_ents in zip(rows, ents):
            v = votes.setdefault(row["tail"], [0, 0])
            v[0] += tail_is_person(row, row_ents, known_names)
            v[1] += _valid(row["tail_span"], len(row["tokens"]))
        person_of_tail = {t: None for t, (yes, located) in votes.items() if yes and 2 * yes >= located}
        person_of_row: dict[int, _Person] = {}
        for k, row in enumerate(rows):
            t = row["tail"]
            if t in person_of_tail:
                if person_of_tail[t] is None:
                    person_of_tail[t] = art.add(clean_name(t) or t.split())
                person_of_row[k] = person_of_tail[t]
        known = list(art.persons)
        out = []
        for k, (row, row_ents) in enumerate(zip(rows, ents)):
            toks = list(row["tokens"])
            n = len(toks)
            protected = row["tail_span"] if k not in person_of_row and _valid(row["tail_span"], n) else None
            counts["tails_person"] += k in person_of_row
            counts["tails_protected"] += protected is not None
            cands: list[tuple[int, int, str, int]] = []
            hs = row["head_span"] if _trusted(row["head_span"], toks, head) else None
            ts = (row["tail_span"] if k in person_of_row and _trusted(row["tail_span"], toks, person_of_row[k])
                  else None)
            counts["head_span_untrusted"] += hs is None and _valid(row["head_span"], n)
            if hs is not None:
                cands.append((hs[0], hs[1], head.label, 0))
            if ts is not None:
                cands.append((ts[0], ts[1], person_of_row[k].label, 1))
            cands += _known_name_candidates(known, toks)
            for s, e, label in row_ents:
                if label == "PERSON" and 0 <= s < e <= n:
                    if hs is not None and s < hs[1] and hs[0] < e:
                        who = head  # the mention contains the located head
                    elif ts is not None and s < ts[1] and ts[0] < e:
                        who = person_of_row[k]
                    else:
                        who = art.resolve(toks[s:e])
                    cands.append((s, e, who.label, 3))
            if protected is not None:
                cands = _outside(cands, protected)
            for c in cands:
                counts[("head_span", "tail_span", "known_name", "ner_person", "known_name_word")[c[3]]] += 1
            spans = _merge(cands)
            new_tokens, newpos = replace_spans(toks, spans)
            new = dict(row)
            new["tokens"] = new_tokens
            new["text"] = " ".join(new_tokens)
            new["head_span"] = _map_span(row["head_span"], newpos, n)
            new["tail_span"] = _map_span(row["tail_span"], newpos, n)
            new["head"] = head.label
            if k in person_of_row:  # any other tail's span is protected, so it keeps its name
                new["tail"] = person_of_row[k].label
            counts["rows"] += 1
            counts["rows_changed"] += new_tokens != toks
            counts["spans_replaced"] += len(spans)
            out.append(new)
        counts["articles"] += 1
        counts["persons"] += len(art.persons)
        return out

    def transform_dataset(self, dsdict, *, seed: int = 0):
        from datasets import Dataset, DatasetDict

        check_dataset_dict(dsdict, who="anonymize")
        from relext.debias import spacy_pipeline

        memo_key = Memo.key(dsdict, "anonymize", self.ner, self.prefix, tuple(spacy_pipeline.installed_models()))
        hit = _MEMO.get(memo_key)
        if hit is not None:
            out, self._ner_info, self._stats = hit
            return out
        split_rows = {split: ds.to_list() for split, ds in dsdict.items()}
        names = person_names(dsdict)
        known_names = frozenset(t for t in (tuple(clean_name(n)) for n in names) if t)
        backend = self._backend(sorted(names))
        self._ner_info = backend.describe()
        all_tokens = [r["tokens"] for rows in split_rows.values() for r in rows]
        all_ents = backend.annotate(all_tokens)
        if hasattr(backend, "stats"):
            self._ner_info = {**self._ner_info, "run": dict(backend.stats)}
        out = {}
        stats: dict[str, Any] = {}
        pos = 0
        for split, rows in split_rows.items():
            ents = all_ents[pos:pos + len(rows)]
            pos += len(rows)
            order: dict[str, list[int]] = {}
            for i, r in enumerate(rows):
                order.setdefault(r["entity_id"], []).append(i)
            counts: Counter = Counter()
            new_rows: list[dict | None] = [None] * len(rows)
            for idx in order.values():
                done = self.anonymize_article([rows[i] for i in idx], [ents[i] for i in idx], counts,
                                              known_names)
                for i, r in zip(idx, done):
                    new_rows[i] = r
            out[split] = Dataset.from_list(new_rows, features=dsdict[split].features)
            stats[split] = dict(counts)
        self._stats = stats
        result = DatasetDict(out)
        _MEMO.put(memo_key, (result, self._ner_info, stats))
        return result

    def transform_vectors(self, kv, *, seed: int = 0):
        return kv

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "version": self.version, "ner": self.ner, "prefix": self.prefix,
                             "label_blind": True,
                             "person_tails": "the tail is a known person name (heads of every split, spouse tails of "
                                             "train only), or its span overlaps an NER PERSON mention in at "
                                             "least half of the article's rows locating it; then in every row",
                             "wgb_version": package_version()}
        if self._ner_info is not None:
            d["ner_backend"] = self._ner_info
        if self._stats:
            d["stats"] = self._stats
        return d
