"""Groups as data: one row per person with gender, birth era and birthplace -> country -> region ->
Global North/South, each with how it was derived; cell counts of any two of them.

Every person of the release has exactly one ``birthDate`` and one ``birthPlace`` fact (checked
here: a person with none or several is an error naming the person). The birth year is the last
number of the release's date ("April 30, 1881"); the era is its bin (:class:`EraBins`, default
edges 1850, 1900, 1950: ``<1850``, ``1850-1899``, ``1900-1949``, ``>=1950``). The birthplace goes
through :mod:`wikigenderbias.gazetteer`; a place, a year or a gender that cannot be derived is
``unknown``, never dropped.

Any column of :data:`GROUP_COLUMNS` is a person-level grouping a design layer can take
(``table.frame[["entity_id", name]]``).

>>> t = attribute_table()                     # the embedded release
>>> t.cells("gender", "era")                 # doctest: +SKIP
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from wikigenderbias.gazetteer import LEVELS, NORTH_RULE, NORTH_SOUTH, REGIONS, gazetteer
from wikigenderbias.release import load
from wikigenderbias.schema import GENDERS

__all__ = ["EraBins", "GroupTable", "GENDER_VALUES", "GROUP_COLUMNS", "COLUMNS", "attribute_table",
           "persons_from_entities", "birth_year"]

#: Gender values of the attribute table (the release has the first two only).
GENDER_VALUES: tuple[str, ...] = ("female", "male", "non-binary", "other", "unknown")
#: Columns that are person-level groupings.
GROUP_COLUMNS: tuple[str, ...] = ("gender", "era", "region", "north_south", "subregion", "country")
#: Every column of :attr:`GroupTable.frame`, in order.
COLUMNS: tuple[str, ...] = ("entity_id", "entity", "split", "gender", "gender_raw", "birth_date", "birth_year",
                            "era", "birth_place", "country", "country_name", "subregion", "region", "north_south",
                            "place_level", "place_ambiguous", "place_derivation")
_YEAR = re.compile(r"(-?\d{1,4})\s*(BC|BCE)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class EraBins:
    """Birth-era bins by their edges (years, increasing): ``(1850, 1900, 1950)`` gives ``<1850``,
    ``1850-1899``, ``1900-1949``, ``>=1950``."""

    edges: tuple[int, ...] = (1850, 1900, 1950)

    def __post_init__(self) -> None:
        edges = tuple(int(e) for e in self.edges)
        if not edges:
            raise ValueError("era edges: give at least one year")
        if any(b <= a for a, b in zip(edges, edges[1:])):
            raise ValueError(f"era edges must increase strictly, got {list(edges)}")
        object.__setattr__(self, "edges", edges)

    @classmethod
    def parse(cls, text: str) -> EraBins:
        """``"1850,1900,1950"`` -> bins; a bad value is a one-line error naming it."""
        try:
            return cls(tuple(int(x) for x in text.split(",") if x.strip()))
        except ValueError as err:
            raise ValueError(f"era edges {text!r}: {err}" if "edges" not in str(err) else str(err)) from None

    @property
    def labels(self) -> tuple[str, ...]:
        e = self.edges
        return (f"<{e[0]}", *(f"{a}-{b - 1}" for a, b in zip(e, e[1:])), f">={e[-1]}")

    def label(self, year: int | None) -> str:
        if year is None:
            return "unknown"
        k = sum(year >= e for e in self.edges)
        return self.labels[k]


def birth_year(date: str) -> int | None:
    """The year of a release date ("April 30, 1881" -> 1881; "44 BC" -> -44); None if there is none."""
    m = _YEAR.search(date.strip())
    if m is None:
        return None
    y = int(m.group(1))
    return -y if m.group(2) else y


@dataclass
class GroupTable:
    """The person-level attribute table (:attr:`frame`, columns :data:`COLUMNS`; gender, era,
    region and north_south are ordered categoricals with ``unknown`` last) and its rules."""

    frame: pd.DataFrame
    eras: EraBins
    source: str
    rules: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.frame)

    def cells(self, rows: str, cols: str) -> pd.DataFrame:
        """Persons per (rows x cols) cell, every category shown (zeros too), with totals."""
        for c in (rows, cols):
            if c not in self.frame.columns:
                raise ValueError(f"unknown column {c!r}; expected one of {list(COLUMNS)}")
        t = pd.crosstab(self.frame[rows], self.frame[cols], dropna=False, margins=True, margins_name="total")
        return t

    def unknown_counts(self) -> dict[str, int]:
        """Persons whose gender, era, country, region or north_south is unknown."""
        f = self.frame
        return {"gender": int((f["gender"] == "unknown").sum()), "era": int((f["era"] == "unknown").sum()),
                "country": int(f["country"].isna().sum()), "region": int((f["region"] == "unknown").sum()),
                "north_south": int((f["north_south"] == "unknown").sum())}

    def coverage(self) -> dict:
        """How the birthplaces were resolved: persons and distinct places per gazetteer level,
        ambiguous city names, and the share with a country and with a region."""
        f = self.frame
        places = f.drop_duplicates("birth_place")
        n = len(f)
        return {
            "persons": n, "distinct_places": int(len(places)),
            "persons_by_level": {lv: int((f["place_level"] == lv).sum()) for lv in LEVELS},
            "places_by_level": {lv: int((places["place_level"] == lv).sum()) for lv in LEVELS},
            "ambiguous_places": int((places["place_ambiguous"] > 0).sum()),
            "ambiguous_persons": int((f["place_ambiguous"] > 0).sum()),
            # "Place, Qualifier" with a place name of several countries: chosen by the qualifier, or not
            "qualifier_decided_persons": int(f["place_derivation"].str.startswith("qualifier ").sum()),
            "qualifier_undecided_persons": int(f["place_derivation"].str.contains("did not decide", regex=False).sum()),
            "persons_with_country": int(f["country"].notna().sum()),
            "persons_with_region": int((f["region"] != "unknown").sum()),
            "share_with_country": round(float(f["country"].notna().mean()), 4) if n else None,
            "share_with_region": round(float((f["region"] != "unknown").mean()), 4) if n else None,
        }

    def summary(self) -> dict:
        """Everything `wgb data groups` prints and the card lists, as plain JSON."""

        def table(r: str, c: str) -> dict:
            t = self.cells(r, c)
            return {str(i): {str(k): int(v) for k, v in row.items()} for i, row in t.iterrows()}

        return {"source": self.source, "persons": len(self), "era_edges": list(self.eras.edges),
                "rules": self.rules, "unknown": self.unknown_counts(), "coverage": self.coverage(),
                "cells": {"gender_x_era": table("gender", "era"), "gender_x_region": table("gender", "region"),
                          "gender_x_north_south": table("gender", "north_south")}}


def persons_from_entities(entities: Mapping[str, Iterable[Mapping]]) -> list[dict]:
    """One dict per person (entity_id, entity, split, gender, birth_date, birth_place) from the
    ``entities`` configuration (split -> rows); a person without exactly one birthDate and one
    birthPlace is an error naming the person and the split."""
    out = []
    for split, rows in entities.items():
        for r in rows:
            facts: dict[str, list[str]] = {"birthDate": [], "birthPlace": []}
            for rel in r["relations"]:
                if rel["relation"] in facts:
                    facts[rel["relation"]].append(rel["tail"])
            for k, v in facts.items():
                if len(v) != 1:
                    raise ValueError(f"{split}: person {r['entity_id']!r} ({r['entity']!r}) has {len(v)} {k} facts; "
                                     "expected exactly one")
            g = r["gender"]
            out.append({"entity_id": r["entity_id"], "entity": r["entity"], "split": split,
                        "gender": GENDERS[g] if isinstance(g, int) else str(g), "gender_raw": None,
                        "birth_date": facts["birthDate"][0], "birth_place": facts["birthPlace"][0]})
    return out


def _ordered(values, categories) -> pd.Categorical:
    return pd.Categorical(values, categories=list(categories), ordered=True)


def attribute_table(persons: Iterable[Mapping] | None = None, *, eras: EraBins = EraBins(),
                    dataset: str | None = None) -> GroupTable:
    """The attribute table of ``persons`` (dicts as :func:`persons_from_entities` gives; their
    ``gender`` one of :data:`GENDER_VALUES`, anything else is ``other`` with ``gender_raw`` kept), or
    of the benchmark folder ``dataset`` (default: the embedded release)."""
    source = "given persons"
    if persons is None:
        ds = load("entities", path=dataset)
        persons = persons_from_entities(ds)
        source = dataset or "embedded release"
    gaz = gazetteer()
    rows = []
    for p in persons:
        g = (p.get("gender") or "unknown").strip().lower()
        gender = g if g in GENDER_VALUES else "other"
        raw = p.get("gender_raw") or (None if gender == g else p.get("gender"))
        year = birth_year(p["birth_date"]) if p.get("birth_date") else None
        place = gaz.resolve(p["birth_place"]) if p.get("birth_place") else None
        rows.append({
            "entity_id": p["entity_id"], "entity": p.get("entity"), "split": p.get("split"), "gender": gender,
            "gender_raw": raw, "birth_date": p.get("birth_date"), "birth_year": year, "era": eras.label(year),
            "birth_place": p.get("birth_place"),
            "country": place.country if place else None, "country_name": place.country_name if place else None,
            "subregion": place.subregion if place else None, "region": place.region if place else "unknown",
            "north_south": place.north_south if place else "unknown",
            "place_level": place.level if place else "unknown", "place_ambiguous": place.ambiguous if place else 0,
            "place_derivation": place.derivation if place else "no birthPlace fact"})
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["gender"] = _ordered(frame["gender"], GENDER_VALUES)
    frame["era"] = _ordered(frame["era"], (*eras.labels, "unknown"))
    frame["region"] = _ordered(frame["region"], REGIONS)
    frame["north_south"] = _ordered(frame["north_south"], NORTH_SOUTH)
    frame["birth_year"] = frame["birth_year"].astype("Int64")
    frame["place_ambiguous"] = frame["place_ambiguous"].astype("int64")
    rules = {"gender": "the benchmark's gender label (female / male; a build's other values kept: "
                       "non-binary / other / unknown, raw value in gender_raw)",
             "era": f"birth year (last number of the birthDate fact) in the bins {list(eras.labels)}",
             "country": "birthPlace through the shipped gazetteer (wikigenderbias.gazetteer; rule in place_level, "
                        "how in place_derivation; a city name of several countries: the one its qualifiers choose "
                        "(\"Halifax, West Yorkshire\"), else the most populous namesake, counted in place_ambiguous)",
             "region": "UN M49 region of the country, the Americas split into Northern America and Latin America "
                       "and the Caribbean",
             "north_south": NORTH_RULE}
    return GroupTable(frame, eras, source, rules)
