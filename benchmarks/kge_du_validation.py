"""Du et al. on real FB13 data: influence approximation vs real leave-k-out retraining, and the
two debiasing strategies (each followed by retraining).

Graph: a real subgraph of FB13's training split -- every training triple whose head is a person
with one of ``--occupations`` (and the entities they reach), re-indexed; full FB13 retraining
dozens of times does not fit on 2 shared cores. Steps (each retraining result is checkpointed in
``--work``, so an interrupted run resumes):

1. train TransE (``kge.train``) on the subgraph; B_gr and weighted/vanilla B_in per occupation,
   and the Pearson r between B_gr and the averaged B_in across occupations (paper §3.3);
2. for each of ``--validate`` occupations: rank training triples by ``delta_z B_gr``, remove the
   top-k (k in ``--ks``), retrain with the same seed/config, and correlate the summed predicted
   change with the real change of B_gr (paper §4.2, Pearson r);
3. IF-REMOVE vs Random-REMOVE at the largest k, and adding dummy entities (c = 0.5) (paper §4.3).

    python benchmarks/kge_du_validation.py      # defaults = the committed run
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from wgbcore.atomicio import atomic_torch_save, atomic_write_json, atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_OCCS = "journalist,poet"


def subgraph(graph, occupations: list[str]):
    from kge.graph import KnowledgeGraph

    rp = graph.relation_id("profession")
    occ = np.array([graph.entity_id(o) for o in occupations])
    tr = graph.train
    persons = np.unique(tr[(tr[:, 1] == rp) & np.isin(tr[:, 2], occ), 0])
    keep = tr[np.isin(tr[:, 0], persons)]
    used = np.unique(keep[:, [0, 2]])
    remap = np.full(graph.num_entities, -1, np.int64)
    remap[used] = np.arange(len(used))
    new = np.stack([remap[keep[:, 0]], keep[:, 1], remap[keep[:, 2]]], 1)
    return KnowledgeGraph([graph.entities[i] for i in used], graph.relations, new, None, None,
                          name=f"fb13-sub-{len(occupations)}occ")


def graph_key(graph) -> str:
    """A name for a graph's training data (its triples and entity count)."""
    data = np.ascontiguousarray(graph.train).tobytes() + str(graph.num_entities).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def make_train_fn(cfg_kwargs: dict, work: Path, cache: "Cache"):
    """``graph -> model`` training with ``kge.train``; the parameters of each trained graph are kept
    in ``work`` (keyed by :func:`graph_key`) with its training time, so an interrupted run resumes."""
    from kge.models import get_model
    from kge.train import TrainConfig, train

    def fn(graph):
        key = graph_key(graph)
        path = work / f"{key}.pt"
        if path.exists():
            m = get_model(cfg_kwargs["model"], graph.num_entities, graph.num_relations, dim=cfg_kwargs["dim"])
            m.load_state_dict(torch.load(path))
            m.eval()
            return m
        t0 = time.perf_counter()
        res = train(graph, TrainConfig(**cfg_kwargs), None, progress=False)
        cache.put(key + ":seconds", time.perf_counter() - t0)
        res.model.eval()
        atomic_torch_save(path, res.model.state_dict())
        return res.model
    return fn


class Cache:
    """JSON file of finished steps (resume after interruption)."""

    def __init__(self, path: Path):
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
        atomic_write_json(self.path, self.data, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--occupations", default=DEFAULT_OCCS)
    ap.add_argument("--validate", default="journalist,poet")
    ap.add_argument("--ks", default="20,40,80,120,160,240")
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--train-config", default='{"batch_size": 512}', help="extra TrainConfig fields as JSON")
    ap.add_argument("--hessian", default="du")
    ap.add_argument("--damping", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="/tmp/kge_du_validation")
    ap.add_argument("--out", default=str(RESULTS / "kge_du_validation"))
    args = ap.parse_args()
    torch.set_num_threads(2)

    from scipy import stats

    from kge.bias import du
    from kge.graph import load_fb13

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = Cache(work / "steps.json")
    full = load_fb13()
    occs = [o for o in args.occupations.split(",") if o]
    g = subgraph(full, occs)
    cfg = {"model": "transe", "dim": args.dim, "epochs": args.epochs, "seed": args.seed, "evaluate_test": False,
           "num_threads": 2, **json.loads(args.train_config)}
    train_fn = make_train_fn(cfg, work, cache)
    print(g, flush=True)
    load0 = os.getloadavg()

    base = train_fn(g)
    base_secs = cache.get(graph_key(g) + ":seconds")
    groups = du.build_groups(g)
    res = du.du_bias(base, g, groups=groups, hessian=args.hessian, damping=args.damping)
    per_occ = {g.entities[int(i)]: {"B_gr": float(b), "B_in_weighted": float(w), "B_in_vanilla": float(v),
                                      "count_a": int(ca), "count_b": int(cb)}
               for i, b, w, v, ca, cb in zip(res.items, res.group_bias, res.individual_weighted,
                                             res.individual_vanilla, res.count_a, res.count_b)}
    # correlation across every occupation of the subgraph's persons with >= 5 persons of each gender
    focus = sorted((o for o, v in per_occ.items() if v["count_a"] >= 5 and v["count_b"] >= 5),
                   key=lambda o: -(per_occ[o]["count_a"] + per_occ[o]["count_b"]))
    bg = np.array([per_occ[o]["B_gr"] for o in focus])
    r_w = stats.pearsonr(bg, [per_occ[o]["B_in_weighted"] for o in focus])
    r_v = stats.pearsonr(bg, [per_occ[o]["B_in_vanilla"] for o in focus])

    ks = [int(k) for k in args.ks.split(",")]
    kmax = max(ks)
    settings = {"groups": groups, "hessian": args.hessian, "damping": args.damping}
    validation = {}
    for occ in [o for o in args.validate.split(",") if o]:
        val = du.validate_influence(g, base, occ, ks, train_fn, **settings)
        pred, act = val.predicted, val.actual
        rnd = du.debias_by_removing(g, base, occ, kmax, train_fn, random_baseline=True, seed=args.seed, **settings)
        validation[occ] = {"B_gr": val.group_bias, "ks": ks, "predicted_change": pred, "actual_change": act,
                           "pearson_r": val.pearson_r, "p_value": val.p_value,
                           "if_remove_B_gr_at_kmax": val.group_bias + act[ks.index(kmax)],
                           "random_remove_B_gr_at_kmax": rnd.after[occ],
                           "slope_actual_vs_predicted": float(np.polyfit(pred, act, 1)[0])}

    val_occs = list(validation)
    added = du.debias_by_adding(g, base, val_occs, train_fn, c=0.5, groups=groups)
    adding = {o: {"B_gr_before": per_occ[o]["B_gr"], "B_gr_after": added.after[o], "dummies": added.changed[o]}
              for o in val_occs}

    out = {
        "benchmark": "kge_du_validation", "command": "python " + " ".join(sys.argv), "graph": repr(g), "occupations": occs, "train_config": cfg,
        "base_train_seconds": base_secs, "hessian": args.hessian, "damping": args.damping,
        "per_occupation": per_occ,
        "pearson_B_gr_vs_B_in_weighted": {"r": float(r_w[0]), "p": float(r_w[1])},
        "pearson_B_gr_vs_B_in_vanilla": {"r": float(r_v[0]), "p": float(r_v[1])},
        "leave_k_out": validation, "debias_add": adding,
        "loadavg_before": load0, "loadavg_after": os.getloadavg(), "torch_threads": 2,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    atomic_write_json(args.out + ".json", out, indent=1, clean=False)
    md = ["# Du et al. on a real FB13 subgraph: influence validation and debiasing", "",
          f"Graph: {g!r} (training triples of every person with a profession among {', '.join(occs)}). "
          f"TransE via `kge.train` with {json.dumps(cfg)}; base training {base_secs:.0f} s. "
          f"Hessian `{args.hessian}`, damping {args.damping}. Load average {load0[0]:.1f} (shared machine).", "",
          f"Command: `{out['command']}`", "",
          "| occupation | #male | #female | B_gr | B_in weighted | B_in vanilla |", "|---|---|---|---|---|---|",
          *[f"| {o} | {per_occ[o]['count_a']} | {per_occ[o]['count_b']} | {per_occ[o]['B_gr']:.4f} | "
            f"{per_occ[o]['B_in_weighted']:.4g} | {per_occ[o]['B_in_vanilla']:.4g} |" for o in focus], "",
          f"Occupations listed: every one with >= 5 persons of each gender in the subgraph. "
          f"Pearson r across them, B_gr vs weighted B_in: {r_w[0]:.3f} (p {r_w[1]:.3g}); "
          f"vs vanilla B_in: {r_v[0]:.3f} (p {r_v[1]:.3g}).", "",
          "## Influence vs leave-k-out retraining", "",
          "| occupation | B_gr | k | predicted change | actual change |", "|---|---|---|---|---|"]
    for o, v in validation.items():
        for k, pr, ac in zip(v["ks"], v["predicted_change"], v["actual_change"]):
            md.append(f"| {o} | {v['B_gr']:.4f} | {k} | {pr:.4g} | {ac:.4g} |")
    md += ["", "| occupation | Pearson r | p | slope actual/predicted | B_gr IF-REMOVE (k max) | "
               "B_gr Random-REMOVE (k max) |", "|---|---|---|---|---|---|",
           *[f"| {o} | {v['pearson_r']:.3f} | {v['p_value']:.3g} | {v['slope_actual_vs_predicted']:.3g} | "
             f"{v['if_remove_B_gr_at_kmax']:.4f} | {v['random_remove_B_gr_at_kmax']:.4f} |"
             for o, v in validation.items()],
           "", "## Debiasing by adding dummy entities (c = 0.5, all listed occupations in one retraining)", "",
           "| occupation | dummies | B_gr before | B_gr after |", "|---|---|---|---|",
           *[f"| {o} | {v['dummies']} | {v['B_gr_before']:.4f} | {v['B_gr_after']:.4f} |" for o, v in adding.items()],
           ""]
    atomic_write_text(args.out + ".md", "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
