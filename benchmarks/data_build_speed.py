"""Scaling benchmark of `wgb data build` (pass 1 DBpedia + pass 2 Wikipedia + writing) on generated dumps.

Generates (:func:`wikigenderbias.synthetic.generate`), into a work folder, a DBpedia N-Triples file
(genders, mapping-based facts, hypernyms, redirects and unrelated triples) and a Wikipedia
pages-articles XML dump in .bz2 part files: ``--persons`` person articles of realistic wikitext
(infobox, templates, references, links, tables, files, lists, categories; about 6 KB each) spread
over ``--parts`` parts, plus one part of pages that must be skipped (redirects, talk pages, other
articles).

Each configuration runs in a fresh Python process so that its peak memory (ru_maxrss of the main
process and of the largest worker) is its own. Two modes:

* scaling of pass 2 (default): 1 and 2 workers, on the full dump and on a dump of ``--small-parts``
  parts (same DBpedia index, so only the dump grows); the peer is mwparserfromhell's
  ``strip_code`` (the usual wikitext -> text tool) on the same articles, against our
  ``clean_wikitext``. Results: benchmarks/results/data_build_speed.{json,md}.
* ``--write``: whole builds, writing included, as ``--runs`` says (``layout:workers`` or
  ``layout:dask<workers>``; layout ``parts`` = the part files, ``parts-small`` = the first
  ``--small-parts`` of them (memory: flat if its peak RSS is the full dump's), ``multistream`` =
  the same pages as one ``pages-articles-multistream.xml.bz2`` with its index, generated too;
  every full-dump run must write the same records). Per run: articles/s
  end to end (all person articles / total wall time) against pass 2's articles/s (the peer: the
  same run's reading), their ratio (target >= 0.8), the same ratio in CPU-seconds (robust to other
  jobs on the machine), peak RSS, load averages before and after; and the data fingerprint of the
  written benchmark, equal across runs when they wrote the same records.

    python benchmarks/data_build_speed.py                 # 100,000 persons, 8 parts
    python benchmarks/data_build_speed.py --persons 2000  # a quick try
    python benchmarks/data_build_speed.py --persons 10000 --parts 4 --write \\
        --runs parts-small:1,parts:1,parts:2,multistream:1,multistream:2,multistream:dask2 \\
        --results benchmarks/results/data_build_write
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_RUNS = "parts-small:1,parts:1,parts:2,multistream:1,multistream:2,multistream:dask2"


def run_one(spec: dict) -> dict:
    """One configuration, in this (fresh) process."""
    from wikigenderbias.build import BuildConfig, build

    executor = spec.get("executor", "processes")
    cfg = BuildConfig(dbpedia=spec["dbpedia"], wikipedia=spec["parts"], out=spec["out"], workers=spec["workers"],
                      executor=executor, progress=False, resume=False)
    load_before = os.getloadavg()
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
    articles = report["persons"]["with_article"]
    out = {
        "workers": spec["workers"], "executor": executor, "parts": report["wikipedia"]["parts"],
        "multistream_ranges": report["wikipedia"].get("multistream_ranges", 0), "write": bool(spec.get("write")),
        "person_articles": articles, "entities_with_examples": n_entities,
        "pages": report["wikipedia"]["pages"],
        "plan_s": t.get("plan_s"), "dbpedia_s": t["dbpedia_s"], "wikipedia_s": t["wikipedia_s"], "wall_s": round(wall, 2),
        "write_s": t.get("write_s"), "total_s": t.get("total_s"),
        "person_articles_per_s": round(articles / t["wikipedia_s"], 1),
        "person_articles_per_s_per_worker": round(articles / t["wikipedia_s"] / spec["workers"], 1),
        "part_cpu_s": t["wikipedia_part_cpu_s"],
        "person_articles_per_cpu_s": t["person_articles_per_cpu_s"],
        "dbpedia_cpu_s": t.get("dbpedia_cpu_s"), "write_cpu_s": t.get("write_cpu_s"), "main_cpu_s": t.get("main_cpu_s"),
        "dbpedia_index_persons": report["persons"]["indexed"],
        "dbpedia_lines": report["dbpedia"]["lines"],
        "peak_rss_main_mb": round(self_kb / 1024, 1), "peak_rss_largest_worker_mb": round(child_kb / 1024, 1),
        "sentences": report["distant"].get("sentences"),
        "examples": {k.split(":")[1]: v for k, v in report["distant"].items() if k.startswith("examples:")},
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
    }
    if spec.get("write"):
        e2e = articles / t["total_s"]
        # CPU of the whole build: this process, plus the processes that read the parts when they
        # were not this one (with 1 worker, pass 2 ran here and is in main_cpu_s already)
        other_cpu = t["wikipedia_part_cpu_s"] if (spec["workers"] > 1 or executor == "dask") else 0.0
        total_cpu = t["main_cpu_s"] + other_cpu
        out.update({
            "person_articles_per_s_end_to_end": round(e2e, 1),
            "ratio_end_to_end_over_pass2": round(e2e / out["person_articles_per_s"], 3),
            "ratio_end_to_end_over_pass2_cpu": round(t["wikipedia_part_cpu_s"] / total_cpu, 3),
            "fingerprint_sha256": report["fingerprint"]["sha256"],
        })
    return out


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


def _generated(work: Path, args, multistream: bool) -> dict:
    """The generated dumps in ``work`` (reused with --reuse when they match the arguments)."""
    from wikigenderbias.synthetic import generate

    other = args.other_pages if args.other_pages is not None else args.persons // 5
    gen_file = work / "generated.json"
    wanted = {"persons": args.persons, "parts": args.parts, "other": other, "seed": args.seed,
              "multistream": multistream}
    old = json.loads(gen_file.read_text()) if args.reuse and gen_file.is_file() else None
    if old is not None and old.get("wanted") == wanted and all(os.path.exists(p) for p in old["parts"]):
        old["reused"] = True
        return old
    gen = generate(work, args.persons, args.parts, other, args.seed, procs=2, multistream=multistream)
    gen["wanted"] = wanted
    gen_file.write_text(json.dumps(gen))
    return gen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--persons", type=int, default=100_000)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--small-parts", type=int, default=2)
    ap.add_argument("--other-pages", type=int, default=None, help="skipped pages (default persons/5)")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--write", action="store_true",
                    help="time whole builds, writing included, as --runs says (instead of the pass-2 scaling runs)")
    ap.add_argument("--runs", default=DEFAULT_RUNS,
                    help=f"with --write: layout:workers or layout:dask<workers>, comma-separated [{DEFAULT_RUNS}]")
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
        "benchmark": "data_build_speed" if not args.write else "data_build_write",
        "command": "python benchmarks/data_build_speed.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "loadavg_before": os.getloadavg(), "target_person_articles_per_s_per_core": 300,
        "target_ratio_end_to_end_over_pass2": 0.8, "runs": [],
    }
    runs = [r.split(":") for r in args.runs.split(",") if r] if args.write else []
    layouts = {"parts"} | {layout.split("-")[0] for layout, _ in runs}
    gens = {layout: _generated(work / layout, args, layout == "multistream") for layout in sorted(layouts)}
    gen = result["generated"] = gens["parts"]
    if "multistream" in gens:
        result["generated_multistream"] = gens["multistream"]
    print(f"generated {gens}", flush=True)

    def save() -> None:
        result["loadavg_after"] = os.getloadavg()
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results + ".json").write_text(json.dumps(result, indent=2) + "\n")
        Path(args.results + ".md").write_text(markdown(result))

    def files(layout: str, size: str = "full") -> list[str]:
        layout, _, small = layout.partition("-")
        g = gens[layout]
        if layout == "multistream":
            return g["parts"]
        return (g["parts"][: args.small_parts] if small or size == "small" else g["parts"]) + [g["other_part"]]

    if args.write:
        for layout, how in runs:
            dask = how.startswith("dask")
            w = int(how[4:] if dask else how)
            r = sub("run-one", {"dbpedia": gens[layout.split("-")[0]]["dbpedia"], "parts": files(layout),
                                "out": str(work / f"out-write-{layout}-{how}"), "workers": w, "write": True,
                                "executor": "dask" if dask else "processes"})
            r["dump"], r["layout"] = "small" if layout.endswith("-small") else "full", layout
            result["runs"].append(r)
            print(json.dumps(r), flush=True)
            save()
        prints = {r["fingerprint_sha256"] for r in result["runs"] if not r["layout"].endswith("-small")}
        result["same_records"] = len(prints) == 1
        save()
        print(markdown(result))
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
        return

    # the pages to skip, alone: their cost per page
    skip = sub("run-one", {"dbpedia": gen["dbpedia"], "parts": [gen["other_part"]], "out": str(work / "out-skip"),
                           "workers": 1})
    result["skip_part"] = {"pages": skip["pages"], "wall_s": skip["wikipedia_s"], "cpu_s": skip["part_cpu_s"],
                           "pages_per_cpu_s": round(skip["pages"] / max(skip["part_cpu_s"], 1e-9), 1)}
    save()
    for w in [int(x) for x in args.workers.split(",") if x]:
        for size in ("small", "full"):
            r = sub("run-one", {"dbpedia": gen["dbpedia"], "parts": files("parts", size),
                                "out": str(work / f"out-{size}-{w}"), "workers": w})
            r["dump"], r["layout"] = size, "parts"
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
                          "one process, pass 2 parallel over the dump parts (enwiki has 27+ parts, or one "
                          "multistream file read by byte ranges)",
        }
    save()
    print(markdown(result))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


def _load(x) -> str:
    return str(tuple(round(v, 2) for v in x)) if x else "-"


def markdown(res: dict) -> str:
    g = res["generated"]
    la, lb = res.get("loadavg_after", ()), res["loadavg_before"]
    lines = [
        f"# {res['benchmark']}: `wgb data build` on generated dumps", "",
        f"Command: `{res['command']}`", "",
        f"Machine: {res['machine']['cpus']} CPUs, Python {res['machine']['python']}, shared with other jobs: "
        f"load average {_load(lb)} before, {_load(la)} after (1, 5, 15 min). Wall-clock rates understate the "
        "code's speed when the load exceeds the CPUs; the per-CPU-second figures (CPU time of the processes "
        "that did the work) are the per-core figures.", "",
        f"Generated: {g['persons']:,} person articles ({g['wikitext_bytes_per_person']:.0f} bytes of wikitext each "
        f"on average) in {len(g['parts'])} .bz2 parts + one part of {g['other_pages']:,} pages to skip "
        f"({g['compressed_bytes'] / 1e6:.0f} MB compressed); DBpedia {g['dbpedia_bytes'] / 1e6:.1f} MB .bz2 "
        f"(generated in {g['seconds']} s).",
    ]
    m = res.get("generated_multistream")
    if m:
        lines += ["", f"The same pages as one multistream file with its index ({m['compressed_bytes'] / 1e6:.0f} MB)."]
    if res["benchmark"] == "data_build_write":
        lines += [
            "", "| layout | executor | workers | parts read | person articles | pass 1 s | pass 2 s | write s | total s | "
                "pass 2 articles/s | end-to-end articles/s | ratio (target >= 0.8) | ratio in CPU-s | write CPU-s | "
                "peak RSS main MB | peak RSS largest worker MB | load before | load after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["runs"]:
            lines.append(
                f"| {r['layout']} | {r['executor']} | {r['workers']} | {r['parts']} | {r['person_articles']:,} | "
                f"{r['dbpedia_s']} | {r['wikipedia_s']} | {r['write_s']} | {r['total_s']} | {r['person_articles_per_s']} | "
                f"{r['person_articles_per_s_end_to_end']} | {r['ratio_end_to_end_over_pass2']} | "
                f"{r['ratio_end_to_end_over_pass2_cpu']} | {r['write_cpu_s']} | {r['peak_rss_main_mb']} | "
                f"{r['peak_rss_largest_worker_mb'] or '-'} | {_load(r['loadavg_before'])} | {_load(r['loadavg_after'])} |")
        if "same_records" in res:
            lines += ["", "Same records in every run on the full dump (the written benchmarks' data fingerprints are equal): "
                          f"**{'yes' if res['same_records'] else 'NO'}**."]
        lines += ["", "Ratio = end-to-end articles/s over pass 2's articles/s in the same run (= pass 2 wall time / "
                      "total wall time, pass 1 and writing included); ratio in CPU-s = pass 2 CPU-seconds / all "
                      "CPU-seconds of the build (main process + part workers)."]
        return "\n".join(lines) + "\n"
    lines += [
        "", "| dump | workers | person articles | pass 1 s | pass 2 wall s | articles/s (wall) | articles per CPU-s (per core) | write s | peak RSS main MB | peak RSS largest worker MB |",
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
