"""PyTorch-BigGraph on real FB13: partitioned training, import, evaluation and bias measures.

Trains TransE (PBG ``translation`` operator, ``l2`` comparator) on FB13's training split with
the entities split into ``--partitions`` partitions, imports the embeddings into our embedding-dir
format, evaluates filtered MRR / Hits@k with our evaluator on (a seeded sample of) the test
split and runs Du et al.'s measures on the PBG-trained embeddings.

PBG 1.0.0 needs ``setuptools<81``; run it from another interpreter with ``--python`` or
``$WGB_PBG_PYTHON`` (e.g. a venv made with ``pip install torch==2.13.0 torchbiggraph==1.0.0
'setuptools<81'``). Results go to ``--work``/results unless ``--commit`` (then into
``benchmarks/results/``, the committed figures).

    python benchmarks/kge_pbg_fb13.py --python /tmp/pbgvenv/bin/python --epochs 5 [--commit]

The scale-out study (partitions, 2 ranks, a 10x graph, memory, determinism) is
``benchmarks/kge_pbg_scaling.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=None)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--test-sample", type=int, default=2000)
    ap.add_argument("--work", default="/tmp/kge_pbg_fb13")
    ap.add_argument("--out", default=None, help="output base (default: WORK/results/kge_pbg_fb13)")
    ap.add_argument("--commit", action="store_true", help="write benchmarks/results/kge_pbg_fb13.{json,md}")
    args = ap.parse_args()
    if args.out is None:
        args.out = str(RESULTS / "kge_pbg_fb13") if args.commit else str(Path(args.work) / "results" / "kge_pbg_fb13")
    torch.set_num_threads(2)

    from kge import pbg
    from kge.bias import du
    from kge.evaluate import evaluate_triples
    from kge.graph import load_fb13

    g = load_fb13()
    cfg = pbg.PBGConfig(model="transe", dim=args.dim, num_partitions=args.partitions, epochs=args.epochs,
                        lr=args.lr, margin=1.0, batch_size=1000, num_batch_negs=50, num_uniform_negs=50)
    load0 = os.getloadavg()
    res = pbg.train_pbg(g, cfg, Path(args.work) / "embeddings", job_dir=Path(args.work) / "job", python=args.python)
    rng = np.random.default_rng(0)
    idx = rng.choice(len(g.test), size=min(args.test_sample, len(g.test)), replace=False)
    t0 = time.perf_counter()
    metrics = evaluate_triples(res.model, g.test[idx], g.all_triples(), g.num_relations)
    eval_s = time.perf_counter() - t0
    metrics = metrics.to_dict() if hasattr(metrics, "to_dict") else dict(metrics.__dict__)
    t0 = time.perf_counter()
    d = du.du_bias(res.model, g)
    du_s = time.perf_counter() - t0
    order = np.argsort(d.group_bias)
    big = (d.count_a + d.count_b) >= 100
    ents = g.entities
    top = {"most_female_leaning_B_gr": [(ents[int(d.items[i])], float(d.group_bias[i])) for i in order if big[i]][:5],
           "most_male_leaning_B_gr": [(ents[int(d.items[i])], float(d.group_bias[i])) for i in order[::-1] if big[i]][:5]}
    out = {"benchmark": "kge_pbg_fb13", "command": "python " + " ".join(sys.argv), "config": cfg.__dict__,
           "pbg_seconds_total": res.seconds, "test_sample": int(len(idx)), "eval_seconds": eval_s,
           "filtered_metrics_test_sample": metrics, "du_seconds": du_s, "du_occupations": int(len(d.items)),
           "du": top, "loadavg_before": load0, "loadavg_after": os.getloadavg(),
           "embedding_dir": str(res.embedding_dir), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.out + ".json.tmp")
    tmp.write_text(json.dumps(out, indent=1, default=str))
    os.replace(tmp, args.out + ".json")
    m = {k: metrics[k] for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mean_rank") if k in metrics}
    md = ["# PyTorch-BigGraph on FB13 (TransE, partitioned)", "",
          f"Command: `{out['command']}`. Load average {load0[0]:.1f} before (shared 2-core machine).", "",
          f"PBG {args.partitions} partitions, dim {args.dim}, {args.epochs} epochs, lr {args.lr}: export + train + "
          f"import {res.seconds:.0f} s.", "",
          f"Filtered metrics of the imported model on {len(idx)} sampled FB13 test triples (our evaluator, "
          f"{eval_s:.0f} s): " + ", ".join(f"{k} {v:.4f}" for k, v in m.items()), "",
          f"Du et al. B_gr + B_in on the PBG-trained embeddings: {len(d.items)} occupations in {du_s:.1f} s.", "",
          "Most female-leaning B_gr (>= 100 persons): " + ", ".join(f"{n} {b:.3f}" for n, b in top["most_female_leaning_B_gr"]),
          "", "Most male-leaning B_gr (>= 100 persons): " + ", ".join(f"{n} {b:.3f}" for n, b in top["most_male_leaning_B_gr"]),
          ""]
    tmp = Path(args.out + ".md.tmp")
    tmp.write_text("\n".join(md))
    os.replace(tmp, args.out + ".md")
    print("\n".join(md))


if __name__ == "__main__":
    main()
