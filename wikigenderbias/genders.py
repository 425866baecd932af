"""Gender values as their sources give them, mapped to five classes with the raw value kept.

Classes (:data:`GENDER_CLASSES`): ``female``, ``male``, ``non-binary``, ``other``, ``unknown``.
:func:`gender_class` maps a DBpedia ``foaf:gender`` literal ("female", "male", "non-binary", ...)
or a Wikidata ``P21`` value (a QID such as ``Q6581072``, or its English label) to a class; trans
women are ``female`` and trans men ``male`` (the raw value is kept beside the class, so a reader
can regroup). A value this module does not know is ``other``, never dropped. The DBpedia reader
(:mod:`wikigenderbias.dbpedia`) takes the mapping as an argument and imports nothing from here.

A Wikidata file (``wgb data build --wikidata-genders FILE``) is plain text, one person a line,
tab-separated: the person's English Wikipedia title (or DBpedia resource IRI) and the ``P21``
value (a QID, ``http://www.wikidata.org/entity/QID`` or a label); blank lines and lines starting
with ``#`` are skipped. A person with several lines keeps the first value and the conflict is an
error naming both lines. A malformed line is an error naming the file and the line.
"""
from __future__ import annotations

import os
from pathlib import Path

from wikigenderbias.dbpedia import iri_to_title, title_key

__all__ = ["GENDER_CLASSES", "BINARY", "WIKIDATA_P21", "gender_class", "read_wikidata_genders"]

GENDER_CLASSES: tuple[str, ...] = ("female", "male", "non-binary", "other", "unknown")
#: The two classes of the benchmark's splits (the published release has only these).
BINARY: tuple[str, ...] = ("female", "male")
#: Wikidata P21 (sex or gender) values -> class.
WIKIDATA_P21: dict[str, str] = {
    "Q6581072": "female", "Q6581097": "male",
    "Q1052281": "female",      # trans woman
    "Q2449503": "male",        # trans man
    "Q48270": "non-binary",
    "Q12964198": "non-binary",  # genderqueer
    "Q18116794": "non-binary",  # genderfluid
    "Q505371": "non-binary",    # agender
    "Q1097630": "other",        # intersex
}
_LABELS: dict[str, str] = {
    "female": "female", "woman": "female", "f": "female", "trans woman": "female", "transgender female": "female",
    "male": "male", "man": "male", "m": "male", "trans man": "male", "transgender male": "male",
    "non-binary": "non-binary", "nonbinary": "non-binary", "non binary": "non-binary", "genderqueer": "non-binary",
    "genderfluid": "non-binary", "agender": "non-binary", "enby": "non-binary",
    "unknown": "unknown", "": "unknown", "anonymous": "unknown",
}


def gender_class(raw: str | None) -> str:
    """The class of one raw value (a label, a QID or a Wikidata entity IRI); unknown values are
    ``other``, an empty value ``unknown``."""
    if raw is None:
        return "unknown"
    v = raw.strip()
    qid = v.rsplit("/", 1)[-1] if v.startswith("http") else v
    if qid[:1] in "Qq" and qid[1:].isdigit():
        return WIKIDATA_P21.get("Q" + qid[1:], "other")
    return _LABELS.get(" ".join(v.lower().replace("_", " ").split()), "other")


def read_wikidata_genders(path: str | os.PathLike) -> dict[str, tuple[str, str]]:
    """``{title: (class, raw value)}`` of a Wikidata gender file (format in the module docstring);
    errors name the file and line."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"Wikidata gender file not found: {p}")
    out: dict[str, tuple[str, str]] = {}
    where: dict[str, int] = {}
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{p}: not UTF-8 text ({err})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.rstrip("\r").split("\t")
        if len(cells) != 2 or not cells[0].strip() or not cells[1].strip():
            raise ValueError(f"{p}:{lineno}: expected two tab-separated fields (person, P21 value), got {line[:80]!r}")
        person, raw = cells[0].strip(), cells[1].strip()
        title = iri_to_title(person) if person.startswith("http") else title_key(person)
        if not title:
            raise ValueError(f"{p}:{lineno}: {person!r} is neither a title nor a DBpedia resource IRI")
        cls = gender_class(raw)
        if title in out and out[title][1] != raw:
            raise ValueError(f"{p}:{lineno}: {title!r} has the value {raw!r} here and {out[title][1]!r} on line "
                             f"{where[title]}")
        out.setdefault(title, (cls, raw))
        where.setdefault(title, lineno)
    return out
