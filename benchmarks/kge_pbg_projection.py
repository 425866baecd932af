"""A projection on paper for a Wikidata-scale graph, from the per-edge and per-entity costs that
``benchmarks/kge_pbg_scaling.py`` measured (nothing here is run on the big graph).

Inputs, all read from the scaling results: PBG's steady training rate (edges a second for one
Hogwild worker, measured on the >= 10x-FB13 synthetic graph, bucket swaps included), the export
rate (streamed graph files -> bucket files), the import time per entity, and a least-squares fit
of peak memory against the entities in memory (training: ``2/P`` of the table; the ``wgb``
process: names and partition tables, O(entities)).

Scenarios: **A** the Wikidata graph Bourli (2021, section 6.1) describes and did not train
(20,982,733 entities, 68,904,773 triples, 594 relations); **B** ten times A, an assumed size to
show the multi-machine regime. Assumptions are stated in the output: a machine of ``--cores``
cores runs that many Hogwild workers at the measured one-worker rate (linear, not measured here;
the 2-rank loopback run only shows the protocol's overhead on shared cores), ``--epochs``
epochs, a per-machine memory budget ``--memory-gb`` for the two partitions in memory.

    python benchmarks/kge_pbg_projection.py --scaling benchmarks/results/kge_pbg_scaling.json [--commit]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
SCENARIOS = {
    "A: Wikidata as in Bourli 2021 (sec. 6.1)": {"entities": 20_982_733, "edges": 68_904_773, "relations": 594,
                                                 "source": "Bourli 2021, MSc thesis, section 6.1 (the full "
                                                           "Wikidata graph the thesis did not train)"},
    "B: 10x A (assumed)": {"entities": 209_827_330, "edges": 689_047_730, "relations": 594,
                           "source": "assumption: ten times scenario A"},
}


def fit_line(x: list[float], y: list[float]) -> tuple[float, float]:
    """Least squares ``y = a + b x``; returns (a, b)."""
    b, a = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(a), float(b)


def measured(sc: dict) -> dict:
    runs = {r["label"]: r for r in sc["runs"]}
    syn = [runs[k] for k in ("synthetic_p1", "synthetic_p2", "synthetic_p4") if k in runs]
    if not syn:
        raise SystemExit("the scaling results hold no synthetic runs (run kge_pbg_scaling.py with its synthetic part)")
    n_ent = sc["synthetic"]["entities"]
    rates = [r["rank0"]["pbg_timing"]["steady_edges_per_second"] for r in syn
             if r["rank0"].get("pbg_timing", {}).get("steady_edges_per_second")]
    one_machine = [r for r in sc["runs"] if r["machines"] == 1 and not r["label"].startswith("det_")]
    # export and import: a fixed cost (start-up, imports) plus a slope: the slope is what scales
    ex_a, ex_b = fit_line([r["rank0"]["layout"]["num_edges"] for r in one_machine],
                          [r["rank0"]["seconds"]["export_seconds"] for r in one_machine])
    im_a, im_b = fit_line([r["num_entities"] for r in one_machine],
                          [r["rank0"]["seconds"]["import_seconds"] for r in one_machine])
    # training memory against entities held in memory (1 partition: all; P: two of P)
    pts = [(n_ent * min(1.0, 2 / r["partitions"]), r["rank0"]["peak_memory_mb"]["training_processes_pss"] * 2 ** 20)
           for r in syn]
    fb = [runs[k] for k in ("fb13_p1", "fb13_p2", "fb13_p4") if k in runs]
    pts += [(75_043 * min(1.0, 2 / r["partitions"]), r["rank0"]["peak_memory_mb"]["training_processes_pss"] * 2 ** 20)
            for r in fb]
    train_base, train_per_ent = fit_line([p[0] for p in pts], [p[1] for p in pts])
    main_pts = [(n_ent, r["rank0"]["peak_memory_mb"]["main_process_rss"] * 2 ** 20) for r in syn]
    main_pts += [(75_043, r["rank0"]["peak_memory_mb"]["main_process_rss"] * 2 ** 20) for r in fb]
    main_base, main_per_ent = fit_line([p[0] for p in main_pts], [p[1] for p in main_pts])
    two = runs.get("synthetic_p4_2ranks")
    return {"steady_edges_per_second_one_worker": float(np.median(rates)), "rates": rates,
            "export_edges_per_second": 1.0 / ex_b if ex_b > 0 else None, "export_fixed_seconds": ex_a,
            "import_seconds_per_entity": im_b, "import_fixed_seconds": im_a,
            "training_memory_fit": {"base_bytes": train_base, "bytes_per_entity_in_memory": train_per_ent,
                                    "points": pts},
            "main_memory_fit": {"base_bytes": main_base, "bytes_per_entity": main_per_ent, "points": main_pts},
            "two_rank_wall_ratio": (two["wall_seconds"] / runs["synthetic_p4"]["wall_seconds"]
                                    if two and "synthetic_p4" in runs else None),
            "loadavg_of_runs": [r["loadavg_before"][0] for r in syn], "dim": sc["dim"]}


def plan(m: dict, entities: int, edges: int, machines: int, cores: int, memory_gb: float, epochs: int) -> dict:
    per_ent = m["training_memory_fit"]["bytes_per_entity_in_memory"]
    budget = memory_gb * 2 ** 30 - max(0.0, m["training_memory_fit"]["base_bytes"])
    p = 1 if machines == 1 else 2 ** math.ceil(math.log2(2 * machines))
    while entities * min(1.0, 2 / p) * per_ent > budget:
        p *= 2
    train_mem = m["training_memory_fit"]["base_bytes"] + entities * min(1.0, 2 / p) * per_ent
    rate = m["steady_edges_per_second_one_worker"] * cores * machines
    epoch_h = edges / rate / 3600
    dim = m["dim"]
    return {"machines": machines, "cores_per_machine": cores, "partitions": p, "buckets": p * p,
            "training_memory_per_machine_gb": round(train_mem / 2 ** 30, 1),
            "rank0_export_import_process_gb": round((m["main_memory_fit"]["base_bytes"]
                                                     + entities * m["main_memory_fit"]["bytes_per_entity"]) / 2 ** 30, 1),
            "export_hours": round(edges / m["export_edges_per_second"] / 3600, 2) if m["export_edges_per_second"] else None,
            "core_hours_per_epoch": round(edges / m["steady_edges_per_second_one_worker"] / 3600, 2),
            "hours_per_epoch": round(epoch_h, 2), "train_hours": round(epoch_h * epochs, 1),
            "import_hours": round(entities * max(0.0, m["import_seconds_per_entity"]) / 3600, 2),
            "bucket_disk_gb": round(12 * edges / 1e9, 1),
            "checkpoint_disk_gb": round(2 * entities * (dim + 1) * 4 / 1e9, 1),
            "embedding_table_gb": round(entities * dim * 4 / 1e9, 1),
            "pbg_hdf5_floor_gb": round(p * p * 3 * 50 * 2 ** 20 / 1e9, 1)}


def _rel(path) -> str:
    """A path inside the repository as the repository sees it (results files are committed)."""
    p = Path(path).resolve()
    root = Path(__file__).resolve().parents[1]
    return str(p.relative_to(root)) if p.is_relative_to(root) else str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scaling", default=str(RESULTS / "kge_pbg_scaling.json"))
    ap.add_argument("--commit", action="store_true", help="write into benchmarks/results/ (committed figures)")
    ap.add_argument("--out", default=None, help="output base (default: next to --scaling unless --commit)")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--memory-gb", type=float, default=32.0)
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()
    sc = json.loads(Path(args.scaling).read_text())
    m = measured(sc)
    rows = {name: {"scenario": s, "plans": [plan(m, s["entities"], s["edges"], k, args.cores, args.memory_gb,
                                                 args.epochs) for k in (1, 2, 4, 8)]}
            for name, s in SCENARIOS.items()}
    res = {"benchmark": "kge_pbg_projection", "command": "python " + " ".join(sys.argv),
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "scaling_results": _rel(args.scaling),
           "scaling_date": sc["date"], "assumptions": {"cores_per_machine": args.cores, "memory_gb": args.memory_gb,
                                                       "epochs": args.epochs, "hogwild_scaling": "linear in cores "
                                                       "and machines (not measured here)"},
           "measured": m, "scenarios": rows, "loadavg": os.getloadavg()}
    base = Path(args.out) if args.out else (RESULTS / "kge_pbg_projection" if args.commit
                                            else Path(args.scaling).with_name("kge_pbg_projection"))
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    atomic_write_json(Path(f"{base}.json"), res, indent=1)
    tm = m["training_memory_fit"]
    md = ["# PyTorch-BigGraph: projection for a Wikidata-scale graph (on paper)", "",
          f"From `{_rel(args.scaling)}` ({sc['date']}, load average {min(m['loadavg_of_runs']):.1f}-"
          f"{max(m['loadavg_of_runs']):.1f} during the synthetic runs: a shared machine, so the rate below is a "
          "lower bound of an idle core's). Command: `" + res["command"] + "`.", "",
          f"Measured: {m['steady_edges_per_second_one_worker']:,.0f} edges a second for one Hogwild worker (TransE, "
          f"dim {m['dim']}, 100 negatives an edge; median of {', '.join(f'{r:,.0f}' for r in m['rates'])}); export "
          f"{m['export_edges_per_second'] or float('nan'):,.0f} edges a second (slope of a line through the runs' "
          f"export times, {m['export_fixed_seconds']:.1f} s fixed); import {m['import_seconds_per_entity'] * 1e6:.1f} "
          f"s per million entities ({m['import_fixed_seconds']:.1f} s fixed); training memory {tm['base_bytes'] / 2 ** 20:,.0f} MB + "
          f"{tm['bytes_per_entity_in_memory']:,.0f} bytes per entity in memory (least squares over the FB13 and "
          f"synthetic runs); the `wgb` process {m['main_memory_fit']['base_bytes'] / 2 ** 20:,.0f} MB + "
          f"{m['main_memory_fit']['bytes_per_entity']:,.0f} bytes per entity (names, partition tables)."
          + (f" 2 ranks on one machine took x{m['two_rank_wall_ratio']:.2f} the wall time of one (same cores: the "
             "protocol's overhead, not a speed-up)." if m["two_rank_wall_ratio"] else ""), "",
          f"Assumed: {args.cores} cores a machine, each a Hogwild worker at the measured rate (linear scaling in cores "
          f"and machines is not measured here and is optimistic), {args.epochs} epochs, {args.memory_gb:g} GB a "
          "machine for the two partitions in memory; partitions = the fewest (a power of 2, at least 2 per machine) "
          "that fit.", ""]
    for name, block in rows.items():
        s = block["scenario"]
        md += [f"## {name}: {s['entities']:,} entities, {s['edges']:,} edges ({s['source']})", "",
               "| machines | partitions | training GB/machine | rank-0 export/import GB | export h | "
               f"core-h/epoch (measured rate) | h/epoch ({args.cores} workers a machine, assumed linear) | "
               f"train h ({args.epochs} epochs) | import h | buckets GB | checkpoint GB | PBG HDF5 floor GB |",
               "|" + "---|" * 12]
        for p in block["plans"]:
            md.append(f"| {p['machines']} | {p['partitions']} | {p['training_memory_per_machine_gb']} | "
                      f"{p['rank0_export_import_process_gb']} | {p['export_hours']} | {p['core_hours_per_epoch']} | "
                      f"{p['hours_per_epoch']} | "
                      f"{p['train_hours']} | {p['import_hours']} | {p['bucket_disk_gb']} | {p['checkpoint_disk_gb']} | "
                      f"{p['pbg_hdf5_floor_gb']} |")
        md.append("")
    atomic_write_text(Path(f"{base}.md"), "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
