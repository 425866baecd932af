"""Counterfactual data augmentation (CDA, gender swapping; Zhao et al. 2018, as in Gaut et al. 2020).

Every training sentence gets a counterfactual copy in which masculine words are
replaced by their feminine counterparts and vice versa, and the head's gender is flipped; the
model is trained on the union of original and swapped sentences. Test sets are never touched.

Swapping rules (all token for token, so token spans never move):

* Word pairs: the WikiGenderBias authors' 57 (masculine, feminine) pairs, in both directions.
  Case is kept: ``he -> she``, ``He -> She``, ``HE -> SHE``.
* A word listed with several counterparts takes the first pair of the file that lists it
  (``lady -> gentleman``, ``girl -> boy``, ``lord -> lady``, ``guy -> girl``, ``ms -> mr``,
  ``miss -> sir``), with three exceptions:

  - ``her`` is possessive (``his``) or an object (``him``). With ``her_rule="next"`` (default),
    ``her`` becomes ``him`` when the next token is punctuation, the end of the sentence or a
    closed-class word (preposition, conjunction, determiner, auxiliary, pronoun, adverb particle:
    ``OBJECT_FOLLOWERS``), and ``his`` otherwise ("her husband" -> "his husband", "married her in"
    -> "married him in", "with her ." -> "with him ."). With ``her_rule="spacy"`` the tag of an
    English spaCy tagger decides (``PRP$`` -> ``his``, else ``him``), falling back to the rule for
    sentences the tagger was not given. On 2,065 occurrences of "her" in real training sentences
    the rule agrees with en_core_web_sm's tagger on 96.7% (benchmarks/debias_transforms.py).
  - ``his`` before the same kind of closed-class token is the independent possessive ("the book
    is his .") and becomes ``hers``; ``hers`` becomes ``his``.
  - lower-case ``miss`` is almost always the verb and is kept; ``Miss`` is swapped.

* First names (``swap_names=True``): the first name of the article's persons (the head, and the
  tail of ``spouse`` rows) -- the first word of the name that is not a title or particle such as
  "Sir" -- and every listed first name inside the located head span (and spouse tail span: the
  text may say "Thomas Harold Wise" for the head "Tom Wise"; the surname, the last word of the
  name, is never swapped) is replaced by its partner when it is a one-word name in exactly one
  of the two lists: male-only and female-only names are each ordered by
  the SHA-1 of the name and paired rank by rank; the female-only names left over (the female
  list is longer) map one way onto the male name at ``sha1 % n_male``. The same replacement is
  applied to those name tokens anywhere in the sentence.
  Other first names (places such as "Georgia", people not in the row) are left alone.

Swapping twice gives the original back for every word whose mapping is a bijection
(:meth:`CDA.roundtrip_safe`), and for ``his``/``her``/``him``/``hers`` whenever the rule's reading
of the context was the original word (context words are swapped into words of the same class).

The ``head`` and ``tail`` strings are swapped by the same rules as the tokens (names for the head
and a spouse tail; words for every tail: a hypernym tail "Princess" becomes "Prince" as its
mention in the sentence does), so they keep naming what the spans point at.

Swapped rows get ids ``<id>~cda``, ``<entity_id>~cda`` and ``<sentence_id>~cda``, text equal to the
swapped tokens joined by spaces, and the other gender.
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from relext.debias import wordlists
from relext.debias.base import Memo, check_dataset_dict, package_version

SUFFIX = "~cda"
#: Split names augmented by default: the training split only, so that model selection reads the
#: same un-augmented validation split in every variant; test splits are never augmented.
DEFAULT_SPLITS: tuple[str, ...] = ("train",)
TEST_SPLITS: frozenset[str] = frozenset({"male_test", "female_test", "test"})

#: Closed-class words after which ``her`` is an object ("him") and ``his`` stands alone ("hers").
OBJECT_FOLLOWERS: frozenset[str] = frozenset(
    """about above across after against along among and around as at before behind below beside
    besides between beyond but by despite down during except for from if in inside into like near
    nor of off on onto or out outside over past per since so than that then though through
    throughout till to toward towards under unlike until up upon via when whenever where whereas
    wherever whether which while who whom whose with within without yet
    a an the this these those that another any each every either neither no some such
    is are was were be been being am has have had do does did will would shall should can could
    may might must
    i me you he him she it we us they them myself yourself itself ourselves themselves
    back away again also too not never once twice there here home later afterwards soon""".split()
)

#: Words swapped only when capitalised (their lower-case form is usually another word).
CAPITALISED_ONLY: frozenset[str] = frozenset({"miss"})

_MEMO = Memo()
_PUNCT = set(".,;:!?()[]{}\"'`-–—/…") | {"''", "``", "--", "'s"}


def _is_object_context(next_token: str | None) -> bool:
    if next_token is None:
        return True
    low = next_token.lower()
    if low in OBJECT_FOLLOWERS:
        return True
    return all(ch in _PUNCT for ch in next_token) if next_token else True


def match_case(src: str, dst: str) -> str:
    """``dst`` written in the case pattern of ``src`` (lower, Title or UPPER)."""
    letters = [c for c in src if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return dst.upper()
    if src[:1].isupper():
        return dst[:1].upper() + dst[1:]
    return dst


def _sha(word: str) -> str:
    return hashlib.sha1(word.encode("utf-8")).hexdigest()


def pair_first_names(male: Iterable[str], female: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Deterministic (male -> female, female -> male) first-name maps; see the module docstring."""
    male_set = {n for n in male if len(n.split()) == 1}
    female_set = {n for n in female if len(n.split()) == 1}
    both = male_set & female_set
    m = sorted(male_set - both, key=_sha)
    f = sorted(female_set - both, key=_sha)
    to_female: dict[str, str] = {}
    to_male: dict[str, str] = {}
    k = min(len(m), len(f))
    for a, b in zip(m[:k], f[:k]):
        to_female[a] = b
        to_male[b] = a
    for b in f[k:]:
        to_male[b] = m[int(_sha(b), 16) % len(m)] if m else b
    for a in m[k:]:
        to_female[a] = f[int(_sha(a), 16) % len(f)] if f else a
    return to_female, to_male


@dataclass(frozen=True)
class SwapTable:
    """Lower-case word maps in both directions (first listed pair wins)."""

    to_female: dict[str, str]
    to_male: dict[str, str]

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[str, str]]) -> "SwapTable":
        to_female: dict[str, str] = {}
        to_male: dict[str, str] = {}
        for m, f in pairs:
            m, f = m.lower(), f.lower()
            to_female.setdefault(m, f)
            to_male.setdefault(f, m)
        overlap = set(to_female) & set(to_male)
        if overlap:
            raise ValueError(f"swap pairs list words as both masculine and feminine: {sorted(overlap)}")
        return cls(to_female, to_male)


@dataclass
class CDA:
    """Counterfactual data augmentation by gender swapping (see the module docstring)."""

    swap_names: bool = True
    her_rule: str = "next"  # "next" | "spacy"
    splits: tuple[str, ...] = DEFAULT_SPLITS
    spacy_model: str | None = None  # for her_rule="spacy": package name; None = first installed
    cache_dir: str | None = None
    pairs: Sequence[tuple[str, str]] | None = None
    name: str = field(default="cda", init=False)

    def __post_init__(self) -> None:
        if self.her_rule not in ("next", "spacy"):
            raise ValueError(f"unknown her_rule {self.her_rule!r}; expected one of ['next', 'spacy']")
        bad = [s for s in self.splits if s in TEST_SPLITS]
        if bad:
            raise ValueError(f"CDA never augments test splits; remove {bad} from splits")
        self.splits = tuple(self.splits)
        self.table = SwapTable.from_pairs(self.pairs if self.pairs is not None else wordlists.swap_pairs())
        names = wordlists.first_names()
        self.name_to_female, self.name_to_male = pair_first_names(names["male"], names["female"])
        self._stats: dict[str, Any] = {}
        self._tagger_info: dict[str, Any] | None = None

    # ----------------------------------------------------------------- token level
    def swap_word(self, word: str, next_token: str | None = None, tag: str | None = None) -> str:
        """The counterfactual of one token (``next_token``/``tag`` resolve her/his)."""
        low = word.lower()
        if low in CAPITALISED_ONLY and not word[:1].isupper():
            return word
        if low == "her":
            if tag is not None:
                return match_case(word, "his" if tag == "PRP$" else "him")
            return match_case(word, "him" if _is_object_context(next_token) else "his")
        if low == "his":
            if tag is not None:
                return match_case(word, "her" if tag == "PRP$" else "hers")
            return match_case(word, "hers" if _is_object_context(next_token) else "her")
        if low == "hers":
            return match_case(word, "his")
        if low in self.table.to_female:
            return match_case(word, self.table.to_female[low])
        if low in self.table.to_male:
            return match_case(word, self.table.to_male[low])
        return word

    def swap_tokens(self, tokens: Sequence[str], tags: Sequence[str] | None = None,
                    names: dict[str, str] | None = None) -> list[str]:
        """Swap every gendered word (and the tokens in ``names``) of a token list, 1:1."""
        out = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if names and tok in names:
                out.append(names[tok])
                continue
            nxt = tokens[i + 1] if i + 1 < n else None
            out.append(self.swap_word(tok, nxt, tags[i] if tags is not None else None))
        return out

    def roundtrip_safe(self, word: str) -> bool:
        """Whether swapping ``word`` twice gives it back, whatever its context and case."""
        low = word.lower()
        if low in ("her", "his", "him", "hers"):
            return False
        variants = {low, low[:1].upper() + low[1:], low.upper()}
        return all(self.swap_word(self.swap_word(v)) == v for v in variants)

    def name_map(self, *persons: str) -> dict[str, str]:
        """First name -> swapped first name, for the given person names."""
        if not self.swap_names:
            return {}
        from relext.debias.anonymize import NAME_STOP, clean_name

        out: dict[str, str] = {}
        for person in persons:
            first = next((t for t in clean_name(person) if t.casefold() not in NAME_STOP), None)
            if first in self.name_to_female:
                out[first] = self.name_to_female[first]
            elif first in self.name_to_male:
                out[first] = self.name_to_male[first]
        return out

    # ----------------------------------------------------------------- dataset level
    def _tags(self, token_lists: list[list[str]]) -> list[list[str] | None]:
        """POS tags for sentences containing 'her'/'his' when her_rule='spacy' (else None)."""
        if self.her_rule != "spacy":
            return [None] * len(token_lists)
        from relext.debias import spacy_pipeline

        want = [i for i, toks in enumerate(token_lists)
                if any(t.lower() in ("her", "his") for t in toks)]
        tagger = spacy_pipeline.SpacyAnnotator(task="tag", model=self.spacy_model,
                                               cache_dir=self.cache_dir)
        self._tagger_info = tagger.describe()
        tags = tagger.annotate([token_lists[i] for i in want])
        out: list[list[str] | None] = [None] * len(token_lists)
        for i, t in zip(want, tags):
            out[i] = t
        return out

    def swap_rows(self, rows: list[dict], gender_names: Sequence[str], spouse_id: int | None) -> list[dict]:
        """Counterfactual copies of ``rows`` (dicts with the ``sentences`` columns)."""
        tags = self._tags([r["tokens"] for r in rows])
        flip = {i: gender_names.index("male" if g == "female" else "female")
                for i, g in enumerate(gender_names)}
        out = []
        changed = 0
        for row, tg in zip(rows, tags):
            persons = [row["head"]]
            if spouse_id is not None and row["relation"] == spouse_id:
                persons.append(row["tail"])
            names = self.name_map(*persons)
            if self.swap_names:
                from relext.debias.anonymize import clean_name

                spans = [(row["head_span"], row["head"])]
                if len(persons) > 1:
                    spans.append((row["tail_span"], row["tail"]))
                for sp, person in spans:  # first names inside the mentions ("Thomas" for "Tom Wise")
                    words = clean_name(person)
                    surname = words[-1] if len(words) > 1 else None
                    if sp and 0 <= sp[0] < sp[1] <= len(row["tokens"]):
                        for tok in row["tokens"][sp[0]:sp[1]]:
                            if tok == surname:
                                continue
                            if tok in self.name_to_female:
                                names.setdefault(tok, self.name_to_female[tok])
                            elif tok in self.name_to_male:
                                names.setdefault(tok, self.name_to_male[tok])
            tokens = self.swap_tokens(row["tokens"], tg, names)
            changed += tokens != list(row["tokens"])
            new = dict(row)
            new["id"] = row["id"] + SUFFIX
            new["entity_id"] = row["entity_id"] + SUFFIX
            new["sentence_id"] = row["sentence_id"] + SUFFIX
            new["tokens"] = tokens
            new["text"] = " ".join(tokens)
            new["head"] = " ".join(self.swap_tokens(row["head"].split(), names=names))
            tail_names = names if spouse_id is not None and row["relation"] == spouse_id else None
            new["tail"] = " ".join(self.swap_tokens(row["tail"].split(), names=tail_names))
            new["gender"] = flip[row["gender"]]
            out.append(new)
        self._last_changed = changed
        return out

    def transform_dataset(self, dsdict, *, seed: int = 0):
        """Train/validation become original + swapped rows; other splits are returned as they are."""
        from datasets import Dataset, DatasetDict, concatenate_datasets

        check_dataset_dict(dsdict, who="cda")
        memo_key = None
        if self.pairs is None and self.her_rule == "next":
            memo_key = Memo.key(dsdict, "cda", self.swap_names, self.splits)
        hit = _MEMO.get(memo_key)
        if hit is not None:
            out, self._stats = hit
            return out
        missing = [s for s in self.splits if s not in dsdict]
        if missing:
            warnings.warn(f"cda: split(s) {missing} not in the dataset; augmenting "
                          f"{[s for s in self.splits if s in dsdict]}", stacklevel=2)
        out = {}
        stats = {}
        for split, ds in dsdict.items():
            if split not in self.splits:
                out[split] = ds
                continue
            feats = ds.features
            gender_names = list(feats["gender"].names)
            rel_names = list(feats["relation"].names)
            spouse_id = rel_names.index("spouse") if "spouse" in rel_names else None
            rows = ds.to_list()
            swapped = self.swap_rows(rows, gender_names, spouse_id)
            ids = set(ds["id"])
            clash = next((r["id"] for r in swapped if r["id"] in ids), None)
            if clash is not None:
                raise ValueError(f"cda: split {split!r} already has a row with id {clash!r}; "
                                 "was the dataset augmented twice?")
            aug = Dataset.from_list(swapped, features=feats)
            out[split] = concatenate_datasets([ds, aug])
            stats[split] = {"original": len(ds), "swapped": len(aug),
                            "swapped_with_changes": self._last_changed}
        self._stats = stats
        result = DatasetDict(out)
        _MEMO.put(memo_key, (result, stats))
        return result

    def transform_vectors(self, kv, *, seed: int = 0):
        return kv

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "pairs": "WikiGenderBias authors' gender_swap_pairs.txt" if self.pairs is None else "custom",
            "n_pairs": len(self.pairs if self.pairs is not None else wordlists.swap_pairs()),
            "swap_names": self.swap_names,
            "n_name_pairs": len(self.name_to_female),
            "her_rule": self.her_rule,
            "splits": list(self.splits),
            "wgb_version": package_version(),
        }
        if self._tagger_info is not None:
            d["tagger"] = self._tagger_info
        if self._stats:
            d["stats"] = self._stats
        return d
