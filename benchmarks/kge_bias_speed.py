"""Speed of Fisher et al.'s measure over all FB13 persons x professions (target < 10 s, 2 cores).

Times, in one run on this machine (torch threads = 2), for gender male vs female over every
person with a profession fact in FB13's train split and every profession:
- ours, vectorised through the model's own score function (autograd), for every model;
- ours, closed form for the models whose score is linear in the head (DistMult, ComplEx);
- peer: the loop structure of kgbiasdetec's ``TranslationalLikelihood`` (Keidar et al.'s code:
  one autograd step per person, then one score call per (person, profession) pair), timed on a
  sample of persons and extrapolated to all persons -- reported with the ratio.

Embeddings: ``--embeddings DIR`` (an embedding dir written by ``wgb kge train``) for TransE, or,
without it, freshly initialised models of FB13's shape (dim 100): the cost does not depend on the
values. The result files say which.

    python benchmarks/kge_bias_speed.py [--embeddings DIR] [--peer-sample 200]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

RESULTS = Path(__file__).resolve().parent / "results"


def _peer_loop(model, persons, s_rel, a_id, b_id, t_rel, items, alpha):
    """One person at a time, one profession at a time, as the peer's code does."""
    E = model.entity.weight.detach()
    total = torch.zeros(len(items), dtype=torch.float64)
    rs = torch.tensor([s_rel])
    rt = torch.tensor([t_rel])
    for p in persons.tolist():
        h = E[p:p + 1].clone().requires_grad_(True)
        m = model.score_emb(h, rs, E[a_id:a_id + 1]) - model.score_emb(h, rs, E[b_id:b_id + 1])
        (g,) = torch.autograd.grad(m.sum(), h)
        h2 = h.detach() + alpha * g
        with torch.no_grad():
            for j, q in enumerate(items.tolist()):
                total[j] += float(model.score_emb(h2, rt, E[q:q + 1]) - model.score_emb(h.detach(), rt, E[q:q + 1]))
    return total / len(persons)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embeddings", default=None, help="embedding dir of a trained model (used for its model)")
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--models", default="transe,transh,distmult,complex,rotate")
    ap.add_argument("--peer-sample", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--all-measures", action="store_true",
                    help="also time every registered measure once on FB13 (religion catholicism vs judaism) with "
                         "the first model, and keep their headline numbers")
    ap.add_argument("--out", default=str(RESULTS / "kge_bias_speed"))
    args = ap.parse_args()
    torch.set_num_threads(2)

    from kge.bias import BiasSpec, GraphView, resolve
    from kge.bias.fisher import fisher_bias
    from kge.graph import load_fb13
    from kge.models import get_model

    graph = load_fb13()
    view = GraphView.from_graph(graph)
    g = resolve(view, BiasSpec("gender", "male", "female", "profession"))
    P, Q = len(g.persons), len(g.items)
    rows = []
    models = []
    if args.embeddings:
        from kge.embeddings import load_model

        m = load_model(args.embeddings, graph)
        models.append((m, f"trained: embedding dir {args.embeddings}"))
    for name in [n for n in args.models.split(",") if n]:
        if args.embeddings and name == models[0][0].name:
            continue
        torch.manual_seed(args.seed)
        models.append((get_model(name, graph.num_entities, graph.num_relations, dim=args.dim),
                       f"random init, FB13 shape, dim {args.dim}"))
    for model, source in models:
        methods = ["autograd"] + (["closed"] if model.linear_in_head else [])
        for method in methods:
            times, cpu = [], []
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                fisher_bias(model, g.persons, g.s_rel, g.a_id, g.b_ids, g.t_rel, g.items, method=method)
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            rows.append({"model": model.name, "embeddings": source, "method": method, "seconds_best": min(times),
                         "seconds_all": times, "cpu_seconds_all": cpu,
                         "cpu_seconds_best": min(cpu), "loadavg_1min": os.getloadavg()[0], "persons": P, "professions": Q,
                         "pairs_per_second": P * Q / min(times), "under_10s": min(times) < 10})
            print(f"{model.name:9s} {method:8s} {min(times):7.2f} s wall, {min(cpu):6.2f} s CPU "
                  f"({P} persons x {Q} professions, load {os.getloadavg()[0]:.1f})", flush=True)
    # peer on the first model (TransE), sample of persons, same sample through ours for agreement
    model = models[0][0]
    rng = np.random.default_rng(args.seed)
    sample = np.sort(rng.choice(g.persons, size=min(args.peer_sample, P), replace=False))
    t0 = time.perf_counter()
    peer = _peer_loop(model, sample, g.s_rel, g.a_id, int(g.b_ids[0]), g.t_rel, g.items, 0.01)
    peer_s = time.perf_counter() - t0
    ours_sample = fisher_bias(model, sample, g.s_rel, g.a_id, g.b_ids, g.t_rel, g.items, method="autograd")
    agree = float(np.abs(ours_sample - peer.numpy()).max())
    peer_full = peer_s * P / len(sample)
    ours_full = next(r["seconds_best"] for r in rows if r["model"] == model.name and r["method"] == "autograd")
    peer_row = {"model": model.name, "embeddings": models[0][1], "peer": "kgbiasdetec-style per-pair loop",
                "sample_persons": int(len(sample)), "sample_seconds": peer_s,
                "extrapolated_seconds_all_persons": peer_full, "speedup_ours_vs_peer": peer_full / ours_full,
                "max_abs_difference_on_sample": agree}
    print(f"peer loop: {peer_s:.1f} s for {len(sample)} persons -> {peer_full:.0f} s for {P}; "
          f"ours {ours_full:.2f} s; ratio {peer_full / ours_full:.0f}x; max |diff| {agree:.2e}", flush=True)
    measures = []
    if args.all_measures:
        from kge.bias import MEASURES, run_measure

        spec = BiasSpec("religion", "catholicism", "judaism", "profession")
        for name in sorted(MEASURES):
            if name.startswith("du_"):
                continue  # timed by benchmarks/kge_du_speed.py
            res = run_measure(name, view, None if name == "data" else model, spec, seed=args.seed)
            head = {k: v for k, v in res.summary.items() if isinstance(v, (int, float, str)) and v is not None}
            top = [(r.item, float(f"{r.score:.4g}")) for r in res.top(5) if r.item != "*"]
            measures.append({"measure": name, "seconds": res.seconds, "rows": len(res.rows), "summary": head,
                             "top5": top})
            print(f"{name:18s} {res.seconds:7.2f} s  {head}", flush=True)
    doc = {"benchmark": "kge_bias_speed", "measure": "fisher (alpha=0.01), gender male vs female, FB13 train",
           "rows": rows, "peer": peer_row, "measures_religion_fb13": measures, "torch_threads": torch.get_num_threads(), "loadavg": os.getloadavg(),
           "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "torch": torch.__version__,
           "platform": platform.platform(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, out.with_suffix(".json"))
    md = ["# Fisher et al. bias over all FB13 persons x professions", "",
          f"{P} persons (heads of a profession fact in train) x {Q} professions, gender male vs female, "
          f"alpha 0.01; torch threads {doc['torch_threads']}, load average {tuple(round(x, 2) for x in doc['loadavg'])} "
          f"(machine shared with other jobs), {doc['when']}.", "",
          "Wall time is what a user waits; CPU time (both threads summed) shows the work itself when the "
          "machine is shared (1-minute load average when measured in the last column).", "",
          "| model | embeddings | method | wall, best of %d (s) | CPU (s) | pairs/s (wall) | < 10 s wall | load |"
          % args.repeat, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['model']} | {r['embeddings']} | {r['method']} | {r['seconds_best']:.2f} | "
                  f"{r['cpu_seconds_best']:.2f} | {r['pairs_per_second']:.3g} | {'yes' if r['under_10s'] else 'no'} | "
                  f"{r['loadavg_1min']:.1f} |")
    md += ["", f"Peer (the per-pair loop structure of kgbiasdetec's TranslationalLikelihood, on {model.name}): "
           f"{peer_s:.1f} s for {len(sample)} sampled persons, extrapolated {peer_full:.0f} s for all {P}; "
           f"ours {ours_full:.2f} s: **{peer_full / ours_full:.0f}x** faster. Max |difference| of the scores on "
           f"the sample: {agree:.2e}.", ""]
    if measures:
        md += [f"## Every measure once on FB13, religion catholicism vs judaism ({models[0][1]}, {model.name})", "",
               "| measure | seconds | rows | top 5 (item, score) |", "|---|---|---|---|"]
        for m in measures:
            md.append(f"| {m['measure']} | {m['seconds']:.2f} | {m['rows']} | "
                      + ", ".join(f"{i} {v}" for i, v in m["top5"]) + " |")
        md.append("")
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text("\n".join(md))
    os.replace(tmp, out.with_suffix(".md"))


if __name__ == "__main__":
    main()
