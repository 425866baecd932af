"""Scaling benchmark of `wgb data build` (pass 1 DBpedia + pass 2 Wikipedia) on generated dumps.

Generates, into a temporary folder, a DBpedia N-Triples file (genders, mapping-based facts,
hypernyms, redirects and unrelated triples) and a Wikipedia pages-articles XML dump in .bz2 part
files: ``--persons`` person articles of realistic wikitext (infobox, templates, references,
links, tables, files, lists, categories; about 7 KB each) spread over ``--parts`` parts, plus one
part of pages that must be skipped (redirects, talk pages, other articles).

Each configuration runs in a fresh Python process so that its peak memory (ru_maxrss of the main
process and of the largest worker) is its own: 1 and 2 workers, on the full dump and on a dump of
``--small-parts`` parts (same DBpedia index, so only the dump grows). The peer is
mwparserfromhell's ``strip_code`` (the usual wikitext -> text tool) on the same articles, against
our ``clean_wikitext``. Results: benchmarks/results/data_build_speed.{json,md}.

    python benchmarks/data_build_speed.py                 # 100,000 persons, 8 parts
    python benchmarks/data_build_speed.py --persons 2000  # a quick try
"""
from __future__ import annotations

import argparse
import bz2
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
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


def person(rng: random.Random, i: int) -> tuple[str, dict, str]:
    """(title, facts, wikitext) of one generated person."""
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
    out = [
        "{{Short description|" + job + "}}\n{{Use dmy dates|date=May 2020}}\n{{Infobox person\n"
        f"| name = {title}\n| image = {last}.jpg\n| birth_date = {{{{birth date|{y}|{m}|{d}}}}}\n"
        f"| birth_place = [[{place}]]\n| spouse = {{{{marriage|[[{spouse}]]|{y + 25}}}}}\n"
        f"| occupation = {{{{hlist|{job}|{rng.choice(JOBS)}}}}}\n| alma_mater = [[{school}]]\n}}}}\n",
        f"'''{title}''' ({d} {MONTHS[m - 1]} {y} – {dy}) was a [[{name(rng, 1)}ian]] [[{job.lower()}]]"
        f" known for {rng.choice(WORDS)} work.{ref(rng)} {filler(rng, 18)}{ref(rng)}\n\n== Early life ==\n",
        f"{last} was born in [[{place}|{city}]] on {MONTHS[m - 1]} {d}, {y}.{ref(rng)} "
        + (f"{poss} father was [[{parent}]], a {rng.choice(WORDS)} merchant. " if facts["parent"] else "")
        + " ".join(filler(rng, rng.randint(12, 30)) for _ in range(rng.randint(3, 6))) + "\n",
    ]
    if facts["almaMater"]:
        out.append(f"{first} studied law at the [[{school}]] and graduated in {y + 22}.{ref(rng)}\n")
    out.append("\n== Career ==\n" + "\n\n".join(
        " ".join(filler(rng, rng.randint(12, 35)) + (ref(rng) if rng.random() < 0.4 else "")
                 for _ in range(rng.randint(3, 6))) for _ in range(rng.randint(2, 5))) + "\n")
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
    from xml.sax.saxutils import escape, quoteattr
    red = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{pid}</id>\n{red}"
            f"    <revision>\n      <id>{pid * 10}</id>\n      <timestamp>2024-01-01T00:00:00Z</timestamp>\n"
            f"      <text bytes=\"{len(text)}\" xml:space=\"preserve\">{escape(text)}</text>\n"
            f"      <sha1>x</sha1>\n    </revision>\n  </page>\n")


HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n")


def iri(t: str) -> str:
    from urllib.parse import quote
    return R + quote(t.replace(" ", "_"), safe="_,()'-.:")


def gen_part(args) -> dict:
    """One .bz2 part of persons [start, stop) and their N-Triples (written next to it)."""
    folder, k, start, stop, seed = args
    rng = random.Random(seed * 1_000_003 + k)
    part = Path(folder) / f"enwiki-pages-articles{k + 1}.xml-p{start + 1}p{stop}.bz2"
    nt = Path(folder) / f"facts-{k:03d}.nt"
    nbytes = 0
    with bz2.open(part, "wt", encoding="utf-8", compresslevel=1) as fx, open(nt, "w", encoding="utf-8") as fn:
        fx.write(HEAD)
        for i in range(start, stop):
            title, f, text = person(rng, i)
            nbytes += len(text.encode())
            fx.write(xml_page(title, i + 1, text))
            s = f"<{iri(title)}>"
            fn.write(f'{s} <http://xmlns.com/foaf/0.1/gender> "{f["gender"]}"@en .\n')
            fn.write(f'{s} <http://www.w3.org/2000/01/rdf-schema#label> "{title}"@en .\n')
            fn.write(f"{s} <{O}wikiPageID> \"{i + 1}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n")
            fn.write(f"{s} <{O}spouse> <{iri(f['spouse'])}> .\n")
            fn.write(f"{s} <{O}birthPlace> <{iri(f['birthPlace'])}> .\n")
            fn.write(f"{s} <{O}birthDate> \"{f['birthDate']}\"{DATE} .\n")
            fn.write(f"{s} <http://purl.org/linguistics/gold/hypernym> <{iri(f['hypernym'])}> .\n")
            for key in ("parent", "almaMater"):
                if f[key]:
                    fn.write(f"{s} <{O}{key}> <{iri(f[key])}> .\n")
            if f["deathDate"]:
                fn.write(f"{s} <{O}deathDate> \"{f['deathDate']}\"{DATE} .\n")
            fn.write(f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{O}Person> .\n")
            fn.write(f"<{iri(f['spouse'])}> <http://xmlns.com/foaf/0.1/gender> \"{'male' if f['gender'] == 'female' else 'female'}\"@en .\n")
        fx.write("</mediawiki>\n")
    return {"part": str(part), "nt": str(nt), "persons": stop - start, "wikitext_bytes": nbytes}


def gen_other(folder: Path, n: int, seed: int) -> dict:
    """A part of pages the build must skip: redirects, talk pages and non-person articles."""
    rng = random.Random(seed)
    part = folder / "enwiki-pages-articles99.xml-other.bz2"
    nbytes = 0
    with bz2.open(part, "wt", encoding="utf-8", compresslevel=1) as fx:
        fx.write(HEAD)
        for i in range(n):
            r = rng.random()
            if r < 0.5:
                text = f"#REDIRECT [[{name(rng)}]]\n{{{{R from move}}}}"
                fx.write(xml_page(name(rng), 10**8 + i, text, redirect=name(rng)))
            elif r < 0.6:
                text = " ".join(filler(rng, 20) for _ in range(5))
                fx.write(xml_page("Talk:" + name(rng), 10**8 + i, text, ns=1))
            else:
                text = "\n\n".join(" ".join(filler(rng, 25) for _ in range(5)) for _ in range(6))
                fx.write(xml_page(name(rng, 3), 10**8 + i, text))
            nbytes += len(text.encode())
        fx.write("</mediawiki>\n")
    return {"part": str(part), "pages": n, "wikitext_bytes": nbytes}


def generate(folder: Path, persons: int, parts: int, other: int, seed: int, procs: int) -> dict:
    import multiprocessing as mp
    t0 = time.perf_counter()
    bounds = [(folder, k, persons * k // parts, persons * (k + 1) // parts, seed) for k in range(parts)]
    with mp.get_context("fork").Pool(procs) as pool:
        infos = pool.map(gen_part, bounds)
    other_info = gen_other(folder, other, seed)
    nt = folder / "dbpedia.nt.bz2"
    with bz2.open(nt, "wb", compresslevel=1) as out:
        for info in infos:
            with open(info["nt"], "rb") as fh:
                shutil.copyfileobj(fh, out)
            os.remove(info["nt"])
        rng = random.Random(seed)
        for i in range(persons // 10):  # redirects, some pointing at generated tails
            out.write(f"<{R}Redirect_{i}> <{O}wikiPageRedirects> <{R}Target_{rng.randint(0, 10**6)}> .\n".encode())
    return {"parts": [i["part"] for i in infos], "other_part": other_info["part"], "dbpedia": [str(nt)],
            "persons": persons, "other_pages": other,
            "wikitext_bytes_per_person": sum(i["wikitext_bytes"] for i in infos) / persons,
            "compressed_bytes": sum(os.path.getsize(p) for p in [*(i["part"] for i in infos), other_info["part"]]),
            "dbpedia_bytes": os.path.getsize(nt), "seconds": round(time.perf_counter() - t0, 1)}


def run_one(spec: dict) -> dict:
    """One configuration, in this (fresh) process."""
    from wikigenderbias.build import BuildConfig, build

    cfg = BuildConfig(dbpedia=spec["dbpedia"], wikipedia=spec["parts"], out=spec["out"], workers=spec["workers"],
                      progress=False, resume=False)
    t0 = time.perf_counter()
    # passes 1 and 2 (and the split) without holding the records: the counts come from the report
    # (res.entities_by_split and build_entities would load every record into this process)
    res = build(cfg, write=bool(spec.get("write")))
    report = res.report
    n_entities = report["persons"]["with_examples"]
    wall = time.perf_counter() - t0
    shutil.rmtree(spec["out"] + ".parts", ignore_errors=True)
    shutil.rmtree(spec["out"], ignore_errors=True)
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = report["timings"]
    return {
        "workers": spec["workers"], "parts": len(spec["parts"]), "write": bool(spec.get("write")),
        "person_articles": report["persons"]["with_article"], "entities_with_examples": n_entities,
        "pages": report["wikipedia"]["pages"],
        "dbpedia_s": t["dbpedia_s"], "wikipedia_s": t["wikipedia_s"], "wall_s": round(wall, 2),
        "write_s": t.get("write_s"),
        "person_articles_per_s": round(report["persons"]["with_article"] / t["wikipedia_s"], 1),
        "person_articles_per_s_per_worker": round(report["persons"]["with_article"] / t["wikipedia_s"] / spec["workers"], 1),
        "part_cpu_s": t["wikipedia_part_cpu_s"],
        "person_articles_per_cpu_s": t["person_articles_per_cpu_s"],
        "dbpedia_index_persons": report["persons"]["indexed"],
        "dbpedia_lines": report["dbpedia"]["lines"],
        "peak_rss_main_mb": round(self_kb / 1024, 1), "peak_rss_largest_worker_mb": round(child_kb / 1024, 1),
        "sentences": report["distant"].get("sentences"),
        "examples": {k.split(":")[1]: v for k, v in report["distant"].items() if k.startswith("examples:")},
        "loadavg_after": os.getloadavg(),
    }


def peer(spec: dict) -> dict:
    """Our clean_wikitext vs mwparserfromhell.strip_code on the same articles (text only)."""
    from wikigenderbias.wikipedia import clean_wikitext, iter_pages

    texts = []
    for page in iter_pages(spec["part"]):
        texts.append(page.text)
        if len(texts) >= spec["n"]:
            break
    t0 = time.perf_counter()
    for t in texts:
        clean_wikitext(t)
    ours = len(texts) / (time.perf_counter() - t0)
    try:
        import mwparserfromhell
    except ImportError:
        return {"articles": len(texts), "ours_articles_per_s": round(ours, 1), "peer": None}
    t0 = time.perf_counter()
    for t in texts:
        mwparserfromhell.parse(t).strip_code()
    theirs = len(texts) / (time.perf_counter() - t0)
    return {"articles": len(texts), "ours_articles_per_s": round(ours, 1),
            "peer": f"mwparserfromhell {mwparserfromhell.__version__} strip_code",
            "peer_articles_per_s": round(theirs, 1), "ratio_ours_over_peer": round(ours / theirs, 2)}


def sub(kind: str, spec: dict) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", TQDM_DISABLE="1")
    p = subprocess.run([sys.executable, __file__, f"--{kind}", json.dumps(spec)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--persons", type=int, default=100_000)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--small-parts", type=int, default=2)
    ap.add_argument("--other-pages", type=int, default=None, help="skipped pages (default persons/5)")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--write-small", action="store_true", help="also time writing the benchmark (small dump, 1 worker)")
    ap.add_argument("--write", action="store_true",
                    help="time whole builds, writing included, with 1 worker on the small and the full dump "
                         "(peak memory of the writer too)")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the dumps an earlier run generated in --workdir (same --persons/--parts/--seed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--results", default=str(HERE / "results" / "data_build_speed"))
    ap.add_argument("--run-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--peer", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_one:
        print(json.dumps(run_one(json.loads(args.run_one))))
        return
    if args.peer:
        print(json.dumps(peer(json.loads(args.peer))))
        return

    work = Path(args.workdir or tempfile.mkdtemp(prefix="wgb-build-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "data_build_speed",
        "command": "python benchmarks/data_build_speed.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "loadavg_before": os.getloadavg(), "target_person_articles_per_s_per_core": 300, "runs": [],
    }
    other = args.other_pages if args.other_pages is not None else args.persons // 5
    gen_file = work / "generated.json"
    wanted = {"persons": args.persons, "parts": args.parts, "other": other, "seed": args.seed}
    old = json.loads(gen_file.read_text()) if args.reuse and gen_file.is_file() else None
    if old is not None and old.get("wanted") == wanted and all(os.path.exists(p) for p in old["parts"]):
        gen = old
        gen["reused"] = True
    else:
        gen = generate(work, args.persons, args.parts, other, args.seed, procs=2)
        gen["wanted"] = wanted
        gen_file.write_text(json.dumps(gen))
    result["generated"] = gen
    print(f"generated {gen}", flush=True)

    def save() -> None:
        result["loadavg_after"] = os.getloadavg()
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results + ".json").write_text(json.dumps(result, indent=2) + "\n")
        Path(args.results + ".md").write_text(markdown(result))

    # the pages to skip, alone: their cost per page
    skip = sub("run-one", {"dbpedia": gen["dbpedia"], "parts": [gen["other_part"]], "out": str(work / "out-skip"),
                           "workers": 1})
    result["skip_part"] = {"pages": skip["pages"], "wall_s": skip["wikipedia_s"], "cpu_s": skip["part_cpu_s"],
                           "pages_per_cpu_s": round(skip["pages"] / max(skip["part_cpu_s"], 1e-9), 1)}
    save()
    sizes = {"full": gen["parts"] + [gen["other_part"]], "small": gen["parts"][: args.small_parts] + [gen["other_part"]]}
    workers = [int(x) for x in args.workers.split(",") if x]
    for w in workers:
        for size in ("small", "full"):
            r = sub("run-one", {"dbpedia": gen["dbpedia"], "parts": sizes[size], "out": str(work / f"out-{size}-{w}"),
                                "workers": w})
            r["dump"] = size
            result["runs"].append(r)
            print(json.dumps(r), flush=True)
            save()
    for size in (("small", "full") if args.write else ("small",) if args.write_small else ()):
        r = sub("run-one", {"dbpedia": gen["dbpedia"], "parts": sizes[size], "out": str(work / f"out-write-{size}"),
                            "workers": 1, "write": True})
        r["dump"] = size
        result["runs"].append(r)
        print(json.dumps(r), flush=True)
        save()
    result["peer_text_cleaning"] = sub("peer", {"part": gen["parts"][0], "n": 1000})
    print(json.dumps(result["peer_text_cleaning"]), flush=True)

    # projection for English Wikipedia: ~1.5M person articles among ~20M other pages of
    # pages-articles (redirects, other namespaces, other articles), skipped after a title check
    full1 = [r for r in result["runs"] if r["dump"] == "full" and r["workers"] == 1 and not r["write"]]
    if full1:
        per_core = full1[0]["person_articles_per_cpu_s"]
        cpu_s = 1_500_000 / per_core + 20_000_000 / result["skip_part"]["pages_per_cpu_s"]
        db_lines_per_s = full1[0]["dbpedia_lines"] / full1[0]["dbpedia_s"]
        result["projection"] = {
            "person_articles": 1_500_000, "skipped_pages": 20_000_000, "dbpedia_lines": 60_000_000,
            "person_articles_per_cpu_s": per_core,
            "pass2_cpu_hours": round(cpu_s / 3600, 2),
            "pass2_hours_on_16_cores": round(cpu_s / 3600 / 16, 2),
            "pass1_hours": round(60_000_000 / db_lines_per_s / 3600, 2),
            "assumption": "per-page CPU costs as measured here (person articles of the generated kind; skipped "
                          "pages: 50% redirects, 10% talk pages, 40% short articles); ~60M DBpedia lines in the "
                          "files read (genders, mapping-based objects and literals, LHD, redirects); pass 1 is "
                          "one process, pass 2 parallel over the dump parts (enwiki has 27+ parts)",
        }
    save()
    print(markdown(result))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


def markdown(res: dict) -> str:
    g = res["generated"]
    la, lb = res.get("loadavg_after", ()), res["loadavg_before"]
    lines = [
        "# data_build_speed: `wgb data build` on generated dumps", "",
        f"Command: `{res['command']}`", "",
        f"Machine: {res['machine']['cpus']} CPUs, Python {res['machine']['python']}, shared with other jobs: "
        f"load average {tuple(round(x, 2) for x in lb)} before, {tuple(round(x, 2) for x in la)} after. "
        "Wall-clock rates therefore understate the code's speed; the per-CPU-second rates (CPU time of the "
        "processes reading the parts) are the per-core figures.", "",
        f"Generated: {g['persons']:,} person articles ({g['wikitext_bytes_per_person']:.0f} bytes of wikitext each "
        f"on average) in {len(g['parts'])} .bz2 parts + one part of {g['other_pages']:,} pages to skip "
        f"({g['compressed_bytes'] / 1e6:.0f} MB compressed); DBpedia {g['dbpedia_bytes'] / 1e6:.1f} MB .bz2 "
        f"(generated in {g['seconds']} s).", "",
        "| dump | workers | person articles | pass 1 s | pass 2 wall s | articles/s (wall) | articles per CPU-s (per core) | write s | peak RSS main MB | peak RSS largest worker MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["runs"]:
        lines.append(f"| {r['dump']} | {r['workers']} | {r['person_articles']:,} | {r['dbpedia_s']} | {r['wikipedia_s']} | "
                     f"{r['person_articles_per_s']} | {r['person_articles_per_cpu_s']} | {r['write_s'] or '-'} | "
                     f"{r['peak_rss_main_mb']} | {r['peak_rss_largest_worker_mb'] or '-'} |")
    sk = res.get("skip_part")
    if sk:
        lines += ["", f"Pages to skip (redirects, talk pages, other articles): {sk['pages']:,} pages, "
                      f"{sk['pages_per_cpu_s']:,} pages per CPU-second."]
    p = res.get("peer_text_cleaning")
    if p:
        lines += ["", f"Peer, wikitext -> plain text only ({p['articles']} generated articles, same process): ours "
                      f"{p['ours_articles_per_s']} articles/s" + (
                          f", {p['peer']} {p['peer_articles_per_s']} articles/s: ratio {p['ratio_ours_over_peer']}x."
                          if p.get("peer") else " (mwparserfromhell not installed).")]
    pj = res.get("projection")
    if pj:
        lines += ["", f"Projection for English Wikipedia ({pj['person_articles']:,} person articles, "
                      f"~{pj['skipped_pages']:,} other pages): pass 2 {pj['pass2_cpu_hours']} CPU-hours, "
                      f"{pj['pass2_hours_on_16_cores']} h on 16 cores; pass 1 {pj['pass1_hours']} h "
                      f"({pj['assumption']}).", "",
                  f"Target: >= {res['target_person_articles_per_s_per_core']} person articles/s per core; measured "
                  f"{pj['person_articles_per_cpu_s']} per CPU-second (1 worker, full dump, parsing + cleaning + "
                  "matching, decompression included)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
