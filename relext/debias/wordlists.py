"""The word lists the debiasing methods use, shipped gzipped in ``relext/resources``.

* Bolukbasi et al. 2016 (debiaswe, MIT): ``definitional_pairs``, ``equalize_pairs``,
  ``gender_specific`` (the full list) and ``professions`` (word, definitional score, stereotype
  score) -- used by hard debiasing and the direct-bias measure.
* The WikiGenderBias authors (Gaut, Sun et al. 2020): ``swap_pairs`` (56 masculine/feminine word
  pairs for counterfactual data augmentation) and ``first_names`` (male and female first names).

See ``relext/resources/PROVENANCE.md`` for origins, licences and checksums. Every loader is
cached and returns immutable values; a malformed file raises ``ValueError`` naming file and line.
"""
from __future__ import annotations

import functools
import gzip
import json
from importlib import resources

RESOURCE_PACKAGE = "relext.resources"


def _read_text(name: str) -> str:
    """The text of resource ``name`` (stored as ``name + '.gz'``)."""
    ref = resources.files(RESOURCE_PACKAGE).joinpath(name + ".gz")
    with ref.open("rb") as fh, gzip.open(fh, "rt", encoding="utf-8") as g:
        return g.read()


def _read_json(name: str):
    try:
        return json.loads(_read_text(name))
    except json.JSONDecodeError as exc:  # pragma: no cover - shipped files are valid
        raise ValueError(f"{name}: malformed JSON at line {exc.lineno}: {exc.msg}") from None


def _pairs(obj, name: str) -> tuple[tuple[str, str], ...]:
    out = []
    for i, item in enumerate(obj):
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(w, str) for w in item)):
            raise ValueError(f"{name}: item {i} is not a pair of strings: {item!r}")
        out.append((item[0], item[1]))
    return tuple(out)


@functools.cache
def definitional_pairs() -> tuple[tuple[str, str], ...]:
    """The 10 (female, male) definitional pairs of Bolukbasi et al. (order as shipped)."""
    return _pairs(_read_json("definitional_pairs.json"), "definitional_pairs.json")


@functools.cache
def equalize_pairs() -> tuple[tuple[str, str], ...]:
    """The 52 pairs Bolukbasi et al. equalize."""
    return _pairs(_read_json("equalize_pairs.json"), "equalize_pairs.json")


@functools.cache
def gender_specific() -> frozenset[str]:
    """Words that carry gender by definition (never neutralized): debiaswe's full list."""
    words = _read_json("gender_specific_full.json")
    if not all(isinstance(w, str) for w in words):
        raise ValueError("gender_specific_full.json: every item must be a string")
    return frozenset(words)


@functools.cache
def professions() -> tuple[str, ...]:
    """Profession words of debiaswe (multi-word ones joined by ``_``, as shipped)."""
    items = _read_json("professions.json")
    out = []
    for i, item in enumerate(items):
        if not (isinstance(item, list) and item and isinstance(item[0], str)):
            raise ValueError(f"professions.json: item {i} is not [word, score, score]: {item!r}")
        out.append(item[0])
    return tuple(out)


def parse_swap_pairs(text: str, source: str = "gender_swap_pairs.txt") -> tuple[tuple[str, str], ...]:
    """Parse ``masculine<whitespace>feminine`` lines (tabs or runs of spaces; blank lines skipped).

    The authors' file separates most pairs by a tab with stray spaces and a few by spaces only,
    so any run of whitespace separates the two words. Words are lower-cased.
    """
    pairs = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise ValueError(
                f"{source}, line {lineno}: expected 'masculine feminine', got {line.strip()!r}"
            )
        pairs.append((fields[0].lower(), fields[1].lower()))
    if not pairs:
        raise ValueError(f"{source}: no pairs")
    return tuple(pairs)


@functools.cache
def swap_pairs() -> tuple[tuple[str, str], ...]:
    """The WikiGenderBias authors' (masculine, feminine) swap pairs, in file order."""
    return parse_swap_pairs(_read_text("gender_swap_pairs.txt"))


def _names(name: str) -> tuple[str, ...]:
    out = []
    for line in _read_text(name).splitlines():
        word = line.strip()
        if not word:
            continue
        out.append(word)
    return tuple(out)


@functools.cache
def first_names() -> dict[str, tuple[str, ...]]:
    """``{"male": (...), "female": (...)}`` first names as shipped.

    Some names occur in both lists and a few have two words ("Dee Dee"); CDA swaps only
    one-word names that occur in exactly one list.
    """
    return {"male": _names("male_first_names.txt"), "female": _names("female_first_names.txt")}
