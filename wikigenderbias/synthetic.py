"""Generated DBpedia + Wikipedia dumps for tests and benchmarks of `wgb data build`.

:func:`generate` writes, into a folder, a DBpedia N-Triples file (genders, mapping-based facts,
hypernyms, redirects and unrelated triples) and a Wikipedia ``pages-articles`` XML dump of
``persons`` person articles of realistic wikitext (infobox, templates, references, links, tables,
files, lists, categories; about 6 KB each, or about 1 KB with ``short=True``) plus ``other`` pages
the build must skip (redirects, talk pages, other articles). The dump is either ``.bz2`` part
files (one per ``parts``, and one part of the pages to skip) or, with ``multistream=True``, one
``pages-articles-multistream.xml.bz2`` file with its index, as Wikimedia publishes it: a header
stream (``<mediawiki>`` + ``<siteinfo>``), independent bz2 streams of 100 pages, a trailer stream
(``</mediawiki>``), and ``...-multistream-index.txt.bz2`` of ``offset:page_id:title`` lines.
The same ``persons``, ``seed`` (and ``short``) give the same pages in both layouts, in the same
order. Everything is deterministic in the seed.
"""
from __future__ import annotations

import bz2
import os
import random
import shutil
import time
from pathlib import Path
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

__all__ = ["generate", "person", "xml_page", "HEAD", "TAIL", "PAGES_PER_STREAM"]

R = "http://dbpedia.org/resource/"
O = "http://dbpedia.org/ontology/"
DATE = "^^<http://www.w3.org/2001/XMLSchema#date>"
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
SYL = ["an", "bel", "cor", "da", "el", "fin", "gar", "hal", "is", "jo", "ka", "lin", "mar", "nor",
       "ol", "per", "quin", "ros", "sa", "tor", "ul", "ven", "wil", "xa", "yor", "zel", "bri", "cha"]
JOBS = ["Politician", "Actor", "Actress", "Writer", "Painter", "Physicist", "Singer", "Footballer",
        "Journalist", "Lawyer", "Poet", "Engineer", "Architect", "Composer", "Diplomat", "Nurse"]
WORDS = ("the of and in to a was for on as with by he she at from his her that which an were also "
         "after first new two years later during where their into between career work public "
         "school city national university government years company period history early received "
         "award member council family moved returned served published known several worked "
         "including began team season series film album role").split()
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n")
TAIL = "</mediawiki>\n"
#: Pages per bz2 stream of a multistream dump (Wikimedia's value).
PAGES_PER_STREAM = 100


def name(rng: random.Random, parts: int = 2) -> str:
    return " ".join("".join(rng.choice(SYL) for _ in range(rng.randint(2, 3))).capitalize() for _ in range(parts))


def filler(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    k = rng.randrange(n)
    words[k] = f"[[{name(rng, 1)}|{words[k]}]]"
    return " ".join(words).capitalize() + "."


def ref(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return f'<ref name="r{rng.randint(1, 9)}" />'
    return (f"<ref>{{{{cite web |url=https://example.org/{rng.randint(1, 10**6)} |title={name(rng)} "
            f"|publisher={name(rng)} |date={rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(1990, 2020)} "
            f"|access-date={rng.randint(2000, 2023)}-01-01}}}}</ref>")


def person(rng: random.Random, i: int, short: bool = False) -> tuple[str, dict, str]:
    """(title, facts, wikitext) of one generated person (``short``: no filler paragraphs)."""
    first, last = name(rng, 1), name(rng, 1)
    title = f"{first} {last} {i}"
    female = rng.random() < 0.3
    spouse = f"{name(rng, 1)} {name(rng, 1)}"
    place = f"{name(rng, 1)}, {name(rng, 1)}"
    city = place.split(",")[0]
    y, m, d = rng.randint(1800, 1990), rng.randint(1, 12), rng.randint(1, 28)
    job = rng.choice(JOBS)
    parent = f"{name(rng, 1)} {last}"
    school = f"University of {name(rng, 1)}"
    dy = y + rng.randint(30, 90)
    facts = {"gender": "female" if female else "male", "spouse": spouse, "birthPlace": place,
             "birthDate": f"{y:04d}-{m:02d}-{d:02d}", "hypernym": job,
             "parent": parent if rng.random() < 0.6 else None,
             "deathDate": f"{dy:04d}-{m:02d}-{d:02d}" if rng.random() < 0.6 else None,
             "almaMater": school if rng.random() < 0.5 else None}
    pro = "She" if female else "He"
    poss = "Her" if female else "His"
    paragraphs = (lambda lo, hi: 0) if short else rng.randint
    out = [
        "{{Short description|" + job + "}}\n{{Use dmy dates|date=May 2020}}\n{{Infobox person\n"
        f"| name = {title}\n| image = {last}.jpg\n| birth_date = {{{{birth date|{y}|{m}|{d}}}}}\n"
        f"| birth_place = [[{place}]]\n| spouse = {{{{marriage|[[{spouse}]]|{y + 25}}}}}\n"
        f"| occupation = {{{{hlist|{job}|{rng.choice(JOBS)}}}}}\n| alma_mater = [[{school}]]\n}}}}\n",
        f"'''{title}''' ({d} {MONTHS[m - 1]} {y} – {dy}) was a [[{name(rng, 1)}ian]] [[{job.lower()}]]"
        f" known for {rng.choice(WORDS)} work.{ref(rng)} {filler(rng, 18)}{ref(rng)}\n\n== Early life ==\n",
        f"{last} was born in [[{place}|{city}]] on {MONTHS[m - 1]} {d}, {y}.{ref(rng)} "
        + (f"{poss} father was [[{parent}]], a {rng.choice(WORDS)} merchant. " if facts["parent"] else "")
        + " ".join(filler(rng, rng.randint(12, 30)) for _ in range(paragraphs(3, 6))) + "\n",
    ]
    if facts["almaMater"]:
        out.append(f"{first} studied law at the [[{school}]] and graduated in {y + 22}.{ref(rng)}\n")
    out.append("\n== Career ==\n" + "\n\n".join(
        " ".join(filler(rng, rng.randint(12, 35)) + (ref(rng) if rng.random() < 0.4 else "")
                 for _ in range(paragraphs(3, 6))) for _ in range(paragraphs(2, 5))) + "\n")
    if rng.random() < 0.3:
        out.append("{| class=\"wikitable\"\n! Year !! Title !! Role\n" + "".join(
            f"|-\n| {y + k} || ''{name(rng)}'' || {rng.choice(WORDS)}\n" for k in range(rng.randint(3, 10))) + "|}\n")
    out.append(f"[[File:{last} portrait.jpg|thumb|{title} in [[{city}]], {y + 30}]]\n"
               f"\n== Personal life ==\nIn {y + 25}, {last} married [[{spouse}]].{ref(rng)} "
               f"{pro} worked as a {job.lower()} for {rng.randint(5, 40)} years. {filler(rng, 20)}\n")
    if facts["deathDate"]:
        out.append(f"{last} died in [[{name(rng, 1)}]] on {d} {MONTHS[m - 1]} {dy}.{ref(rng)}\n")
    out.append("\n== Works ==\n" + "".join(f"* ''{name(rng)}'' ({y + k})\n" for k in range(rng.randint(2, 8))))
    out.append("\n== References ==\n{{reflist}}\n\n== External links ==\n* [https://example.org Official site]\n"
               f"{{{{Authority control}}}}\n\n[[Category:{y} births]]\n[[Category:{job}s]]\n[[de:{title}]]\n")
    return title, facts, "".join(out)


def xml_page(title: str, pid: int, text: str, ns: int = 0, redirect: str | None = None) -> str:
    red = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{pid}</id>\n{red}"
            f"    <revision>\n      <id>{pid * 10}</id>\n      <timestamp>2024-01-01T00:00:00Z</timestamp>\n"
            f"      <text bytes=\"{len(text)}\" xml:space=\"preserve\">{escape(text)}</text>\n"
            f"      <sha1>x</sha1>\n    </revision>\n  </page>\n")


def iri(t: str) -> str:
    return R + quote(t.replace(" ", "_"), safe="_,()'-.:")


def _triples(title: str, i: int, f: dict) -> str:
    s = f"<{iri(title)}>"
    out = [f'{s} <http://xmlns.com/foaf/0.1/gender> "{f["gender"]}"@en .\n',
           f'{s} <http://www.w3.org/2000/01/rdf-schema#label> "{title}"@en .\n',
           f"{s} <{O}wikiPageID> \"{i + 1}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
           f"{s} <{O}spouse> <{iri(f['spouse'])}> .\n",
           f"{s} <{O}birthPlace> <{iri(f['birthPlace'])}> .\n",
           f"{s} <{O}birthDate> \"{f['birthDate']}\"{DATE} .\n",
           f"{s} <http://purl.org/linguistics/gold/hypernym> <{iri(f['hypernym'])}> .\n"]
    for key in ("parent", "almaMater"):
        if f[key]:
            out.append(f"{s} <{O}{key}> <{iri(f[key])}> .\n")
    if f["deathDate"]:
        out.append(f"{s} <{O}deathDate> \"{f['deathDate']}\"{DATE} .\n")
    out.append(f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{O}Person> .\n")
    other = "male" if f["gender"] == "female" else "female"
    out.append(f"<{iri(f['spouse'])}> <http://xmlns.com/foaf/0.1/gender> \"{other}\"@en .\n")
    return "".join(out)


class _Streams:
    """Pages written as independent bz2 streams of :data:`PAGES_PER_STREAM` pages, with the
    index lines (``offset:page_id:title``, offsets relative to this file)."""

    def __init__(self, path: Path) -> None:
        self.fh = open(path, "wb")
        self.pages: list[str] = []
        self.meta: list[tuple[int, str]] = []
        self.index: list[str] = []

    def add(self, pid: int, title: str, page: str) -> None:
        self.pages.append(page)
        self.meta.append((pid, title))
        if len(self.pages) == PAGES_PER_STREAM:
            self.flush()

    def flush(self) -> None:
        if not self.pages:
            return
        offset = self.fh.tell()
        self.fh.write(bz2.compress("".join(self.pages).encode("utf-8"), 1))
        self.index += [f"{offset}:{pid}:{title}\n" for pid, title in self.meta]
        self.pages, self.meta = [], []

    def close(self) -> list[str]:
        self.flush()
        self.fh.close()
        return self.index


def gen_part(args) -> dict:
    """Persons [start, stop) as one .bz2 part (or, ``multistream``, a run of bz2 streams and
    their index lines) and their N-Triples (written next to it)."""
    folder, k, start, stop, seed, short, multistream = args
    rng = random.Random(seed * 1_000_003 + k)
    part = Path(folder) / (f"segment-{k:03d}.bz2" if multistream else
                           f"enwiki-pages-articles{k + 1}.xml-p{start + 1}p{stop}.bz2")
    nt = Path(folder) / f"facts-{k:03d}.nt"
    nbytes = 0
    streams = _Streams(part) if multistream else None
    fx = None if multistream else bz2.open(part, "wt", encoding="utf-8", compresslevel=1)
    with open(nt, "w", encoding="utf-8") as fn:
        if fx is not None:
            fx.write(HEAD)
        for i in range(start, stop):
            title, f, text = person(rng, i, short)
            nbytes += len(text.encode())
            if streams is not None:
                streams.add(i + 1, title, xml_page(title, i + 1, text))
            else:
                fx.write(xml_page(title, i + 1, text))
            fn.write(_triples(title, i, f))
        if fx is not None:
            fx.write(TAIL)
            fx.close()
    index = streams.close() if streams is not None else None
    return {"part": str(part), "nt": str(nt), "persons": stop - start, "wikitext_bytes": nbytes, "index": index}


def _other_pages(n: int, seed: int):
    rng = random.Random(seed)
    for i in range(n):
        r = rng.random()
        if r < 0.5:
            text = f"#REDIRECT [[{name(rng)}]]\n{{{{R from move}}}}"
            title = name(rng)
            yield 10**8 + i, title, text, xml_page(title, 10**8 + i, text, redirect=name(rng))
        elif r < 0.6:
            text = " ".join(filler(rng, 20) for _ in range(5))
            title = "Talk:" + name(rng)
            yield 10**8 + i, title, text, xml_page(title, 10**8 + i, text, ns=1)
        else:
            text = "\n\n".join(" ".join(filler(rng, 25) for _ in range(5)) for _ in range(6))
            title = name(rng, 3)
            yield 10**8 + i, title, text, xml_page(title, 10**8 + i, text)


def gen_other(folder: Path, n: int, seed: int, multistream: bool = False) -> dict:
    """The pages the build must skip: redirects, talk pages and non-person articles."""
    part = folder / ("segment-other.bz2" if multistream else "enwiki-pages-articles99.xml-other.bz2")
    nbytes = 0
    if multistream:
        streams = _Streams(part)
        for pid, title, text, page in _other_pages(n, seed):
            streams.add(pid, title, page)
            nbytes += len(text.encode())
        return {"part": str(part), "pages": n, "wikitext_bytes": nbytes, "index": streams.close()}
    with bz2.open(part, "wt", encoding="utf-8", compresslevel=1) as fx:
        fx.write(HEAD)
        for _, _, text, page in _other_pages(n, seed):
            fx.write(page)
            nbytes += len(text.encode())
        fx.write(TAIL)
    return {"part": str(part), "pages": n, "wikitext_bytes": nbytes, "index": None}


def _assemble_multistream(folder: Path, segments: list[dict]) -> tuple[str, str]:
    """One multistream file (header stream, the segments' streams, trailer stream) and its index."""
    path = folder / "enwiki-synthetic-pages-articles-multistream.xml.bz2"
    index_path = folder / "enwiki-synthetic-pages-articles-multistream-index.txt.bz2"
    with open(path, "wb") as out, bz2.open(index_path, "wt", encoding="utf-8", compresslevel=1) as idx:
        out.write(bz2.compress(HEAD.encode(), 1))
        for seg in segments:
            base = out.tell()
            with open(seg["part"], "rb") as fh:
                shutil.copyfileobj(fh, out)
            os.remove(seg["part"])
            for line in seg["index"]:
                offset, rest = line.split(":", 1)
                idx.write(f"{int(offset) + base}:{rest}")
        out.write(bz2.compress(TAIL.encode(), 1))
    return str(path), str(index_path)


def generate(folder: str | os.PathLike, persons: int, parts: int = 1, other: int = 0, seed: int = 0,
             procs: int = 1, *, short: bool = False, multistream: bool = False) -> dict:
    """Write the dumps into ``folder`` (see the module docstring): the Wikipedia files into
    ``folder/wikipedia/``, the DBpedia file into ``folder/dbpedia/``; returns what was written:
    ``parts`` (the Wikipedia files: the person parts, or the one multistream file), ``other_part``
    (the part of pages to skip; None with ``multistream``, whose file holds them), ``index`` (the
    multistream index or None), ``dbpedia`` (one N-Triples .bz2) and sizes."""
    import multiprocessing as mp

    wiki_dir, db_dir = Path(folder) / "wikipedia", Path(folder) / "dbpedia"
    wiki_dir.mkdir(parents=True, exist_ok=True)
    db_dir.mkdir(parents=True, exist_ok=True)
    folder = wiki_dir
    t0 = time.perf_counter()
    bounds = [(folder, k, persons * k // parts, persons * (k + 1) // parts, seed, short, multistream)
              for k in range(parts)]
    if procs > 1 and parts > 1:
        with mp.get_context("fork").Pool(min(procs, parts)) as pool:
            infos = pool.map(gen_part, bounds)
    else:
        infos = [gen_part(b) for b in bounds]
    other_info = gen_other(folder, other, seed, multistream)
    nt = db_dir / "dbpedia.nt.bz2"
    with bz2.open(nt, "wb", compresslevel=1) as out:
        for info in infos:
            with open(info["nt"], "rb") as fh:
                shutil.copyfileobj(fh, out)
            os.remove(info["nt"])
        rng = random.Random(seed)
        for i in range(persons // 10):  # redirects, some pointing at generated tails
            out.write(f"<{R}Redirect_{i}> <{O}wikiPageRedirects> <{R}Target_{rng.randint(0, 10**6)}> .\n".encode())
    if multistream:
        path, index = _assemble_multistream(folder, [*infos, other_info])
        wiki, other_part = [path], None
    else:
        wiki, other_part, index = [i["part"] for i in infos], other_info["part"], None
    files = wiki + ([other_part] if other_part else [])
    return {"parts": wiki, "other_part": other_part, "index": index, "dbpedia": [str(nt)],
            "persons": persons, "other_pages": other, "short": short, "multistream": multistream,
            "wikitext_bytes_per_person": sum(i["wikitext_bytes"] for i in infos) / max(persons, 1),
            "compressed_bytes": sum(os.path.getsize(p) for p in files),
            "dbpedia_bytes": os.path.getsize(nt), "seconds": round(time.perf_counter() - t0, 1)}
