"""Speed of Du et al.'s measures over all FB13 (person, occupation) pairs.

Times, in one run on this machine (torch threads = 2):
- ours: B_gr + B_in for every training (person, profession) pair of FB13, vectorised
  (autograd through ``score_emb``) -- the target is < 10 s on 2 cores;
- closed form: the paper's Eq. 5 in numpy (TransE only);
- peer: a straightforward per-pair loop (one autograd call per pair, as a direct transcription of
  Corollary 4 would do), timed on a sample of pairs and extrapolated to all pairs;
- influence of every training triple on B_gr for a few occupations.

Embeddings: ``--embeddings DIR`` (an embedding dir written by ``wgb kge train``) or, without it,
a freshly initialised TransE (dim 100): the cost does not depend on the values.

    python benchmarks/kge_du_speed.py [--embeddings DIR] [--peer-sample 2000]
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


def _load_model(graph, emb_dir: str | None, dim: int, seed: int):
    if emb_dir:
        from kge.embeddings import load_model, read_config

        cfg = read_config(emb_dir)
        return load_model(emb_dir, graph), (f"embedding dir {emb_dir} ({cfg.get('model')}, dim {cfg.get('dim')}, "
                                            f"trained by {cfg.get('trainer', 'kge.train')})")
    from kge.models import get_model

    torch.manual_seed(seed)
    return get_model("transe", graph.num_entities, graph.num_relations, dim=dim), f"random TransE dim {dim}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embeddings", default=None)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--peer-sample", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--influence-items", default="actor,nurse,lawyer")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "kge_du_speed"))
    args = ap.parse_args()
    torch.set_num_threads(2)

    from kge.bias import du
    from kge.graph import load_fb13

    graph = load_fb13()
    model, source = _load_model(graph, args.embeddings, args.dim, args.seed)
    model = model.model if hasattr(model, "model") else model
    load_before = os.getloadavg()

    t0 = time.perf_counter()
    groups = du.build_groups(graph)
    t_groups = time.perf_counter() - t0
    ours = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = du.du_bias(model, graph, groups=groups)
        ours.append(time.perf_counter() - t0)
    n_pairs = len(groups.pair_person)

    closed = None
    if getattr(model, "name", "") == "transe":
        t0 = time.perf_counter()
        cf = du.transe_individual_bias(model.entity.weight.detach().numpy(), model.relation.weight.detach().numpy(),
                                       groups)
        closed = time.perf_counter() - t0
        assert np.allclose(cf, res.pair_bias, rtol=1e-3, atol=1e-6 * np.abs(cf).max())

    # peer: one autograd call per pair
    alpha = du.hessian_diagonal(groups)
    kind = du.resolve_psi(model, "auto")
    rng = np.random.default_rng(args.seed)
    sample = rng.choice(n_pairs, size=min(args.peer_sample, n_pairs), replace=False)
    w = model.entity.weight.detach()
    rg = torch.tensor([groups.sensitive_relation])
    rp = torch.tensor([groups.target_relation])
    t0 = time.perf_counter()
    peer_vals = []
    for i in sample:
        s, o = int(groups.pair_person[i]), int(groups.pair_item[i])
        grads = []
        for r, t in ((rp, o), (rg, groups.a), (rg, groups.b)):
            h = w[s:s + 1].clone().requires_grad_(True)
            sc = model.score_emb(h, r, w[t:t + 1])
            val = (sc * sc if kind == "squared" else -sc).sum()
            grads.append(torch.autograd.grad(val, h)[0][0])
        peer_vals.append(float(grads[0] @ (grads[1] - grads[2])) / alpha[s])
    peer_sample_s = time.perf_counter() - t0
    peer_all = peer_sample_s * n_pairs / len(sample)
    agree = float(np.max(np.abs(np.array(peer_vals) - res.pair_bias[sample])))

    infl = {}
    for item in [x for x in args.influence_items.split(",") if x]:
        t0 = time.perf_counter()
        r = du.triple_influence(model, graph, item, groups=groups)
        infl[item] = {"seconds": time.perf_counter() - t0, "triples_with_influence": int(len(r.triple_index))}
    t0 = time.perf_counter()
    everything = du.influence_all(model, graph, groups=groups, progress=False)
    infl_all = {"seconds": time.perf_counter() - t0, "occupations": len(everything),
                "triple_occupation_pairs_with_influence": int(sum(len(r.triple_index) for r in everything))}

    best = min(ours)
    out = {
        "benchmark": "kge_du_speed", "graph": "FB13 (train split)", "embeddings": source,
        "pairs": int(n_pairs), "persons": int(len(np.unique(groups.pair_person))), "occupations": int(len(res.items)),
        "ours_seconds": ours, "ours_best_seconds": best, "groups_seconds": t_groups,
        "closed_form_numpy_seconds": closed,
        "peer": "per-pair autograd loop", "peer_sample": int(len(sample)), "peer_sample_seconds": peer_sample_s,
        "peer_extrapolated_seconds": peer_all, "speedup_vs_peer": peer_all / best,
        "max_abs_diff_vs_peer": agree, "influence": infl, "influence_all_occupations": infl_all,
        "target": "B_in over all FB13 (person, occupation) pairs < 10 s on 2 cores",
        "met": bool(best + t_groups < 10.0),
        "torch_threads": torch.get_num_threads(), "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "torch": torch.__version__,
        "platform": platform.platform(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.out + ".json.tmp")
    tmp.write_text(json.dumps(out, indent=1))
    os.replace(tmp, args.out + ".json")
    md = [
        "# Du et al. measures on FB13: speed", "",
        f"Embeddings: {source}. {n_pairs:,} (person, occupation) training pairs, {out['persons']:,} persons, "
        f"{out['occupations']} occupations. torch threads: 2; load average before/after: "
        f"{load_before[0]:.2f} / {out['loadavg_after'][0]:.2f} (machine shared).", "",
        "| what | seconds |", "|---|---|",
        f"| build groups (ids, pairs, degrees) | {t_groups:.2f} |",
        f"| ours: B_gr + B_in all pairs (best of {args.repeat}) | {best:.2f} |",
        f"| closed form Eq. 5 (numpy) | {closed:.2f} |" if closed is not None else "| closed form | n/a |",
        f"| peer: per-pair autograd loop, extrapolated from {len(sample)} pairs | {peer_all:.1f} |",
        "", f"Speed-up vs the per-pair loop: **{out['speedup_vs_peer']:.0f}x** "
        f"(max |difference| {agree:.2e}). Target < 10 s: **{'met' if out['met'] else 'not met'}**.", "",
        "Influence of every training triple on B_gr:", "", "| occupation | seconds | triples with influence |",
        "|---|---|---|",
        *[f"| {k} | {v['seconds']:.2f} | {v['triples_with_influence']:,} |" for k, v in infl.items()],
        f"| all {infl_all['occupations']} occupations (shared gradients) | {infl_all['seconds']:.2f} | "
        f"{infl_all['triple_occupation_pairs_with_influence']:,} |", "",
    ]
    tmp = Path(args.out + ".md.tmp")
    tmp.write_text("\n".join(md))
    os.replace(tmp, args.out + ".md")
    print("\n".join(md))


if __name__ == "__main__":
    main()
