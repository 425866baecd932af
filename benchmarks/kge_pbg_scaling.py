"""PyTorch-BigGraph scale-out study: every run through the CLI (`wgb kge train --engine pbg`).

Runs (each one a `wgb kge train` process; two at once for the 2-rank loopback runs):

- FB13 (75,043 entities, 316,232 train triples) with 1, 2 and 4 partitions, one machine, plus
  4 partitions on 2 ranks over loopback (``--machines 2 --init tcp://127.0.0.1:PORT``); filtered
  MRR / Hits@10 of each on a seeded 2,000-triple test sample (our evaluator);
- a graph from the project's synthetic generator (``kge.synthetic``, ``--persons`` persons: about
  10x FB13's train triples at the default) with 1, 2 and 4 partitions, plus 4 partitions on 2
  loopback ranks;
- determinism: four more FB13 runs (2 partitions, one seed): two with wgb's seeding and two with
  PBG's seeding as shipped (``"deterministic": false``); each pair compared.

``--resume`` keeps the runs already in the results file and does only the missing parts (e.g.
``--parts determinism --resume``).

Each run records wall time, export / train / import seconds, PBG's start-up vs. steady edges a
second (``kge.pbg_worker``), peak memory (the CLI process's RSS; the PSS of PBG's process tree),
bucket bytes vs. PBG's own HDF5 layout, and the load averages before and after (the machine is
shared). Speed claims are ratios within one run of this script.

    WGB_PBG_PYTHON=/path/to/pbg-venv/bin/python python benchmarks/kge_pbg_scaling.py
    ... --commit        # write benchmarks/results/kge_pbg_scaling.{json,md} (default: WORK/results/)

Then ``python benchmarks/kge_pbg_projection.py`` turns the measured per-edge costs into the
projection for a Wikidata-scale graph.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(graph: str, out: Path, partitions: int, epochs: int, dim: int, python: str, *, extra=(), rank=None,
        machines=1, init=None, job_dir=None) -> list[str]:
    cmd = [sys.executable, "-m", "wgb.cli", "kge", "train", graph, "--engine", "pbg", "--partitions", str(partitions),
           "--epochs", str(epochs), "--dim", str(dim), "--out", str(out), "--pbg-python", python, "--quiet",
           "--overwrite", *extra]
    if machines > 1:
        cmd += ["--machines", str(machines), "--rank", str(rank), "--init", init, "--job-dir", str(job_dir)]
    return cmd


def _summary(stdout: str) -> dict:
    return json.loads(stdout[stdout.index("{"):])


def run_one(label: str, graph: str, work: Path, partitions: int, epochs: int, dim: int, python: str,
            extra=(), machines: int = 1) -> dict:
    out = work / label / "emb"
    shutil.rmtree(work / label, ignore_errors=True)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    if machines == 1:
        r = subprocess.run(cli(graph, out, partitions, epochs, dim, python, extra=extra), capture_output=True,
                           text=True, cwd=REPO)
        if r.returncode != 0:
            raise RuntimeError(f"{label} failed:\n{r.stderr[-3000:]}")
        ranks = [_summary(r.stdout)]
    else:
        init, job = f"tcp://127.0.0.1:{free_port()}", work / label / "job"
        procs = [subprocess.Popen(cli(graph, out, partitions, epochs, dim, python, extra=extra, rank=k,
                                      machines=machines, init=init, job_dir=job),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
                 for k in range(machines)]
        outs = [p.communicate() for p in procs]
        bad = [k for k, p in enumerate(procs) if p.returncode != 0]
        if bad:
            raise RuntimeError(f"{label} rank(s) {bad} failed:\n" + "\n".join(outs[k][1][-3000:] for k in bad))
        ranks = [_summary(o[0]) for o in outs]
        shutil.rmtree(job, ignore_errors=True)
    wall = time.perf_counter() - t0
    rec = {"label": label, "graph": graph, "partitions": partitions, "machines": machines, "epochs": epochs,
           "dim": dim, "wall_seconds": round(wall, 2), "loadavg_before": load0, "loadavg_after": os.getloadavg(),
           "rank0": ranks[0], "other_ranks": ranks[1:], "emb": str(out)}
    print(f"{label}: {wall:.0f} s, load {load0[0]:.1f} -> {rec['loadavg_after'][0]:.1f}", flush=True)
    return rec


def quality(emb: str, graph, sample: int) -> dict:
    from kge.embeddings import load_model
    from kge.evaluate import evaluate

    t0 = time.perf_counter()
    m = evaluate(load_model(emb, graph), graph, "test", max_triples=sample, seed=0, progress=False).to_dict()
    return {k: m[k] for k in ("mrr", "hits_at_1", "hits_at_10", "num_triples") if k in m} | {
        "seconds": round(time.perf_counter() - t0, 1)}


def max_diff(a: str, b: str) -> dict:
    ea, eb = np.load(Path(a) / "entities.npy", mmap_mode="r"), np.load(Path(b) / "entities.npy", mmap_mode="r")
    ra, rb = np.load(Path(a) / "relations.npy"), np.load(Path(b) / "relations.npy")
    d = max(float(np.max(np.abs(ea[s:s + 100000] - eb[s:s + 100000]))) for s in range(0, len(ea), 100000))
    return {"max_abs_entity_diff": d, "max_abs_relation_diff": float(np.max(np.abs(ra - rb))),
            "identical": bool(d == 0.0 and np.array_equal(ra, rb))}


def synthetic_graph(work: Path, persons: int) -> tuple[str, dict]:
    from kge.graph import save_openke
    from kge.synthetic import generate

    folder = work / f"synthetic_{persons}"
    t0 = time.perf_counter()
    if not (folder / "DONE").exists():
        g = generate(n_individuals=persons, seed=0).to_knowledge_graph()
        g.name = folder.name
        save_openke(g, folder)
        (folder / "DONE").write_text("ok\n")
    from kge.pbg_source import open_source

    src = open_source(str(folder))
    counts = src.scan()
    return str(folder), {"entities": src.num_entities, "relations": src.num_relations, "counts": counts,
                         "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=os.environ.get("WGB_PBG_PYTHON"), help="the Python that has torchbiggraph")
    ap.add_argument("--work", default="/tmp/kge_pbg_scaling")
    ap.add_argument("--commit", action="store_true", help="write into benchmarks/results/ (committed figures)")
    ap.add_argument("--parts", default="fb13,synthetic,determinism")
    ap.add_argument("--fb13-epochs", type=int, default=5)
    ap.add_argument("--persons", type=int, default=1_800_000)
    ap.add_argument("--synthetic-epochs", type=int, default=2)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--test-sample", type=int, default=2000)
    ap.add_argument("--render", metavar="JSON", help="only rewrite the .md next to this results .json")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in the results file (same --work) and do only the missing ones")
    args = ap.parse_args()
    if args.render:
        write_results(json.loads(Path(args.render).read_text()), Path(args.render).with_suffix(""))
        return
    if not args.python:
        sys.exit("give --python or $WGB_PBG_PYTHON (an interpreter with torchbiggraph)")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out_base = (RESULTS if args.commit else work / "results") / "kge_pbg_scaling"
    parts = set(args.parts.split(","))
    res: dict = {"benchmark": "kge_pbg_scaling", "command": "python " + " ".join(sys.argv),
                 "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count(),
                 "loadavg_start": os.getloadavg(), "pbg_python": args.python, "dim": args.dim, "runs": []}
    if args.resume and out_base.with_suffix(".json").exists():
        res = json.loads(out_base.with_suffix(".json").read_text())
        res["resumed"] = res.get("resumed", []) + [{"command": "python " + " ".join(sys.argv),
                                                     "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                                                     "loadavg_start": os.getloadavg()}]
    have = {r["label"] for r in res["runs"]}
    from kge.graph import load_fb13

    def save() -> None:  # after every run: a failure later keeps what was measured
        res["loadavg_end"] = os.getloadavg()
        for r in res["runs"]:
            r.setdefault("num_entities", json.loads((Path(r["emb"]) / "config.json").read_text())["num_entities"])
        write_results(res, out_base)

    if "fb13" in parts or "determinism" in parts:
        fb13 = load_fb13()
    if "synthetic" in parts and not {"synthetic_p1", "synthetic_p2", "synthetic_p4", "synthetic_p4_2ranks"} <= have:
        path, info = synthetic_graph(work, args.persons)
        res["synthetic"] = info | {"train_vs_fb13": round(info["counts"]["train"] / 316232, 2),
                                   "entities_vs_fb13": round(info["entities"] / 75043, 2)}
        for p in (1, 2, 4):
            if f"synthetic_p{p}" not in have:
                res["runs"].append(run_one(f"synthetic_p{p}", path, work, p, args.synthetic_epochs, args.dim,
                                           args.python))
                save()
        if "synthetic_p4_2ranks" not in have:
            res["runs"].append(run_one("synthetic_p4_2ranks", path, work, 4, args.synthetic_epochs, args.dim,
                                       args.python, machines=2))
            save()
    if "fb13" in parts:
        for p in (1, 2, 4):
            if f"fb13_p{p}" not in have:
                rec = run_one(f"fb13_p{p}", "fb13", work, p, args.fb13_epochs, args.dim, args.python)
                rec["quality"] = quality(rec["emb"], fb13, args.test_sample)
                res["runs"].append(rec)
                save()
        if "fb13_p4_2ranks" not in have:
            rec = run_one("fb13_p4_2ranks", "fb13", work, 4, args.fb13_epochs, args.dim, args.python, machines=2)
            rec["quality"] = quality(rec["emb"], fb13, args.test_sample)
            res["runs"].append(rec)
            save()
    if "determinism" in parts:
        det: dict = {"epochs": args.fb13_epochs, "partitions": 2, "workers": 1}
        # both seeded runs made here, by this code (the fb13_p2 row may come from an earlier run)
        base = run_one("det_ours_a", "fb13", work, 2, args.fb13_epochs, args.dim, args.python)
        cfg_off = work / "pbg_nondeterministic.json"
        cfg_off.write_text(json.dumps({"deterministic": False}))
        runs = {"ours_a": base}
        runs["ours_b"] = run_one("det_ours_b", "fb13", work, 2, args.fb13_epochs, args.dim, args.python)
        runs["shipped_a"] = run_one("det_shipped_a", "fb13", work, 2, args.fb13_epochs, args.dim, args.python,
                                    extra=("--config", str(cfg_off)))
        runs["shipped_b"] = run_one("det_shipped_b", "fb13", work, 2, args.fb13_epochs, args.dim, args.python,
                                    extra=("--config", str(cfg_off)))
        det["seeded (deterministic=true)"] = max_diff(runs["ours_a"]["emb"], runs["ours_b"]["emb"])
        det["as shipped (deterministic=false)"] = max_diff(runs["shipped_a"]["emb"], runs["shipped_b"]["emb"])
        det["loss_per_epoch"] = {k: r["rank0"]["epoch_loss"] for k, r in runs.items()}
        det["runs"] = {k: {"wall_seconds": r["wall_seconds"], "loadavg_before": r["loadavg_before"]}
                       for k, r in runs.items()}
        res["determinism"] = det
    save()
    print(f"wrote {out_base}.json / .md")


def run_row(r: dict) -> str:
    s0 = r["rank0"]
    sec, mem, t, lay = s0["seconds"], s0["peak_memory_mb"], s0.get("pbg_timing") or {}, s0["layout"]
    q = r.get("quality") or {}
    pss = [mem["training_processes_pss"]] + [o["peak_memory_mb"]["training_processes_pss"] for o in r["other_ranks"]]
    rate = t.get("steady_edges_per_second")
    quality_cells = f"{q['mrr']:.4f} | {q['hits_at_10']:.4f}" if q else "- | -"
    return (f"| {r['label']} | {r['partitions']} | {r['machines']} | {r['epochs']} | {r['wall_seconds']:.0f} | "
            f"{sec.get('export_seconds', 0):.1f} | {sec.get('train_seconds', 0):.0f} | "
            f"{t.get('startup_seconds') or 0:.0f} | {f'{rate:,.0f}' if rate else '-'} | "
            f"{sec.get('import_seconds', 0):.1f} | {mem['main_process_rss']:,.0f} | "
            f"{' + '.join(f'{x:,.0f}' for x in pss)} | {mem['largest_training_process_rss']:,.0f} | "
            f"{lay['bytes'] / 1e6:,.1f} | {lay['pbg_hdf5_bytes'] / 1e6:,.0f} | "
            f"{(s0.get('epoch_loss') or [float('nan')])[-1]:.2f} | {quality_cells} | "
            f"{r['loadavg_before'][0]:.1f} -> {r['loadavg_after'][0]:.1f} |")


def write_results(res: dict, out_base: Path) -> None:
    """``out_base.json`` (everything) and ``out_base.md`` (the tables), atomically."""
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    atomic_write_json(Path(f"{out_base}.json"), res, indent=1)
    md = ["# PyTorch-BigGraph scale-out study (`wgb kge train --engine pbg`)", "",
          f"Command: `{res['command']}` ({res['date']}; {res['cpus']} cores shared with other jobs: load average "
          f"{res['loadavg_start'][0]:.1f} at the start, {res['loadavg_end'][0]:.1f} at the end). Every run is one "
          "`wgb kge train` process (two for 2 ranks over loopback); TransE, dim "
          f"{res['dim']}, 1 Hogwild worker, PBG defaults otherwise (batch 1000, 50 batch + 50 uniform negatives, "
          "Adagrad lr 0.1).", ""]
    for rs in res.get("resumed", []):
        md += [f"Resumed with `{rs['command']}` ({rs['date']}; load average {rs['loadavg_start'][0]:.1f} at its "
               "start): the runs above were kept, the missing ones done.", ""]
    if "synthetic" in res:
        sy = res["synthetic"]
        md += [f"Synthetic graph (`kge.synthetic.generate`, persons with gender and occupation): "
               f"{sy['entities']:,} entities ({sy['entities_vs_fb13']}x FB13), {sy['counts']['train']:,} train triples "
               f"({sy['train_vs_fb13']}x FB13's 316,232).", ""]
    md += ["Columns: wall = the whole command (export + train + import); train = the PBG worker process; start-up = "
           "PBG until its first bucket is trained (pool processes importing torch, first loads; with 1 partition "
           "the first bucket is the whole first epoch); steady = edges a "
           "second over the later buckets; RSS main = peak of the `wgb` process (export, import); PSS training = "
           "peak summed PSS of PBG's process tree (shared-memory embeddings counted once; one figure per rank); "
           "bucket MB = our edge files (12 bytes an edge) vs. PBG HDF5 = what PBG's own importer allocates "
           "(3 x 50 MiB blocks per non-empty bucket); MRR / Hits@10 = filtered, our evaluator, a seeded sample of "
           "FB13's test split.", "",
           "| run | partitions | machines | epochs | wall s | export s | train s | start-up s | steady edges/s | "
           "import s | RSS main MB | PSS training MB | largest proc RSS MB | bucket MB | PBG HDF5 MB | last loss | "
           "MRR | Hits@10 | load before -> after |",
           "|" + "---|" * 19]
    md += [run_row(r) for r in res["runs"]]
    by = {r["label"]: r for r in res["runs"]}
    for g in ("fb13", "synthetic"):
        if f"{g}_p1" in by:
            base = by[f"{g}_p1"]["rank0"]
            lines = []
            for p in (2, 4):
                r = by.get(f"{g}_p{p}")
                if r:
                    s0 = r["rank0"]
                    lines.append(f"{p} partitions: train time x{s0['seconds']['train_seconds'] / base['seconds']['train_seconds']:.2f}, "
                                 f"training PSS x{s0['peak_memory_mb']['training_processes_pss'] / max(1e-9, base['peak_memory_mb']['training_processes_pss']):.2f}")
            md += ["", f"{g}, against 1 partition in the same run: " + "; ".join(lines) + "."]
        two, one = by.get(f"{g}_p4_2ranks"), by.get(f"{g}_p4")
        if two and one:
            md += ["", f"{g}, 2 ranks vs 1 (4 partitions each): entities {two['num_entities']:,} vs "
                       f"{one['num_entities']:,}; wall x{two['wall_seconds'] / one['wall_seconds']:.2f} (both ranks "
                       "share the same 2 cores, so this is the protocol's cost, not a speed-up)"
                   + (f"; Hits@10 {two['quality']['hits_at_10']:.4f} vs {one['quality']['hits_at_10']:.4f}, MRR "
                      f"{two['quality']['mrr']:.4f} vs {one['quality']['mrr']:.4f}" if two.get("quality") else "") + "."]
    det = res.get("determinism")
    if det:
        md += ["", f"## Determinism (FB13, {det['partitions']} partitions, {det['epochs']} epochs, 1 worker, seed 0)", "",
               "| PBG seeding | largest entity difference | largest relation difference | bit-identical |", "|---|---|---|---|"]
        for k in ("as shipped (deterministic=false)", "seeded (deterministic=true)"):
            d = det[k]
            md.append(f"| {k} | {d['max_abs_entity_diff']:.4g} | {d['max_abs_relation_diff']:.4g} | {d['identical']} |")
        md += ["", "As shipped, PBG seeds each Hogwild pool process with its process id and orders the buckets of "
               "every epoch with an unseeded `random.Random()`; `kge.pbg_worker` seeds both from the run's seed."]
    atomic_write_text(Path(f"{out_base}.md"), "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
