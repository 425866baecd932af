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
3. IF-REMOVE vs Random-REMOVE at the largest k, and adding dummy entities (c = 0.5) (paper §4.3);
4. removal that stops at the target (``kge.bias.du.debias_to_target``) for each of ``--validate``:
   remove in steps, retrain ``--replicates`` seeds after each, re-estimate the influence (averaged
   over them), calibrate the step by measured / predicted change, stop within ``--tol`` of 0;
   beside it the one-shot removals: the top ``max(--ks)`` (step 3's figure) and the top k whose
   predicted change, scaled by the leave-k-out ratio of step 2, equals the bias. Every end graph
   (and the start graph) is then retrained with ``--eval-seeds``, seeds the procedures never saw:
   B_gr there, with a t-interval over those seeds, is the remaining bias.

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


def graph_key(graph, cfg: dict | None = None) -> str:
    """A name for a graph's training data (its triples and entity count) and the training config
    (``num_threads`` left out: it does not change the trained numbers here)."""
    data = np.ascontiguousarray(graph.train).tobytes() + str(graph.num_entities).encode()
    if cfg is not None:
        data += json.dumps({k: v for k, v in cfg.items() if k != "num_threads"}, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def make_train_fn(cfg_kwargs: dict, work: Path, cache: "Cache", seed: int | None = None):
    """``graph -> model`` training with ``kge.train`` (``seed`` overrides the config's); the
    parameters of each trained (graph, config) are kept in ``work`` with the training time, so an
    interrupted run resumes."""
    from kge.models import get_model
    from kge.train import TrainConfig, train

    cfg = {**cfg_kwargs, **({} if seed is None else {"seed": seed})}

    def fn(graph):
        key = graph_key(graph, cfg)
        path = work / f"{key}.pt"
        if path.exists():
            m = get_model(cfg["model"], graph.num_entities, graph.num_relations, dim=cfg["dim"])
            m.load_state_dict(torch.load(path, weights_only=True))
            m.eval()
            return m
        t0 = time.perf_counter()
        res = train(graph, TrainConfig(**cfg), None, progress=False)
        cache.put(key + ":seconds", time.perf_counter() - t0)
        res.model.eval()
        atomic_torch_save(path, res.model.state_dict())
        return res.model
    return fn


def seeds_fn(cfg_kwargs: dict, work: Path, cache: "Cache", seeds: list[int]):
    """``graph -> [model per seed]`` (replicates for :func:`kge.bias.du.debias_to_target`)."""
    fns = [make_train_fn(cfg_kwargs, work, cache, seed=s) for s in seeds]
    return lambda graph: [f(graph) for f in fns]


def t_interval(values, confidence: float = 0.95) -> dict:
    """Mean and t-interval over seeds (``n >= 2``)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.5 + confidence / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return {"mean": float(v.mean()), "ci": [float(v.mean() - half), float(v.mean() + half)], "n": int(len(v)),
            "values": v.tolist()}


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


def bgr(model, groups, item: int) -> float:
    """``B_gr`` of one occupation (entity id) under ``model``."""
    from kge.bias import du

    items, values, _, _ = du.group_bias(model, groups)
    return float(values[list(items).index(item)])


def top_rows(graph, groups, infl, k: int) -> np.ndarray:
    """The one-shot IF-REMOVE rows: the ``k`` best of the influence ranking, gender triples left out."""
    order = infl.debiasing_order()
    return order[graph.train[order, 1] != groups.sensitive_relation][:k]


def stop_at_target(g, groups, base, cfg: dict, work: Path, cache: "Cache", validation: dict, args) -> dict:
    """Step 4 (module docstring): stepwise removal to the target against the one-shot removals,
    every end graph re-measured on held-out seeds."""
    from kge.bias import du

    rep_seeds = [args.seed + i for i in range(args.replicates)]
    eval_seeds = [int(x) for x in args.eval_seeds.split(",") if x]
    if set(rep_seeds) & set(eval_seeds):
        raise SystemExit(f"--eval-seeds {eval_seeds} overlap the replicate seeds {rep_seeds}")
    rep_fn = seeds_fn(cfg, work, cache, rep_seeds)
    eval_fn = seeds_fn(cfg, work, cache, eval_seeds)
    train_fn = make_train_fn(cfg, work, cache)
    settings = {"groups": groups, "hessian": args.hessian, "damping": args.damping}
    kmax = max(int(k) for k in args.ks.split(","))
    out = {"replicate_seeds": rep_seeds, "eval_seeds": eval_seeds, "tol": args.tol, "patience": args.patience,
           "max_retrains": args.max_retrains, "occupations": {}}
    for occ, val in validation.items():
        o = g.entity_id(occ)
        ratio = val["ratio_through_origin"]   # leave-k-out: real / predicted change, through the origin
        procs, ends = {}, {}
        for name, start_ratio in (("stepwise, start ratio 1", 1.0), ("stepwise, start ratio leave-k-out", ratio)):
            t0 = time.perf_counter()
            res = du.debias_to_target(g, rep_fn(g), occ, rep_fn, target=0.0, tol=args.tol, ratio=start_ratio,
                                      max_retrains=args.max_retrains, patience=args.patience, progress=True,
                                      **settings)
            # wall time of this invocation: retrainings found in --work are loaded, not repeated
            procs[name] = {**res.to_dict(), "seconds": time.perf_counter() - t0}
            ends[name] = res.removed_rows
        infl = du.triple_influence(base, g, occ, **settings)
        # one shot, k from the influence scaled by the leave-k-out ratio
        gain = -np.sign(infl.group_bias) * infl.delta
        ok = (gain > 0) & (g.train[infl.triple_index, 1] != groups.sensitive_relation)
        k_cal = du.plan_k(np.sort(gain[ok])[::-1], abs(infl.group_bias), ratio)
        ends = {"start": np.zeros(0, np.int64), f"one-shot k={kmax}": top_rows(g, groups, infl, kmax),
                f"one-shot calibrated k={k_cal}": top_rows(g, groups, infl, k_cal), **ends}
        held, seen = {}, {}
        for name, rows in ends.items():
            key = tuple(sorted(rows.tolist()))
            if key in seen:    # the same graph as an earlier end (e.g. nothing removed): same numbers
                held[name] = {**held[seen[key]], "same_graph_as": seen[key]}
                continue
            seen[key] = name
            values = [bgr(m, groups, o) for m in eval_fn(du.remove_triples(g, rows))]
            held[name] = {"removed": int(len(rows)),
                          "B_gr_seed": bgr(train_fn(du.remove_triples(g, rows)), groups, o), **t_interval(values)}
            if name != "start":   # paired by seed: change of |B_gr| against the start graph
                start = np.abs(held["start"]["values"])
                held[name]["abs_change_vs_start"] = t_interval(np.abs(values) - start)
        out["occupations"][occ] = {"procedures": procs, "leave_k_out_ratio": ratio, "calibrated_k": int(k_cal),
                                   "ends": held}
    return out


def to_target_markdown(tt: dict, seed: int) -> list[str]:
    """The step-4 section of the results markdown."""
    md = ["## Stopping at the target: stepwise removal against one-shot removal", "",
          f"`kge.bias.du.debias_to_target`: remove in steps; after each step retrain seeds "
          f"{tt['replicate_seeds']} and re-estimate the influence (averaged over them); plan the next step "
          f"from the influence scaled by measured / predicted change so far (starting at 1, or at the "
          f"leave-k-out ratio above); undo a step that crosses 0 by more than tol = {tt['tol']} and retry "
          f"smaller; retry a step lost in noise at twice the size (patience {tt['patience']}); stop within tol "
          f"(at most {tt['max_retrains']} retrainings). One-shot: the top k of the start model's "
          "ranking, k = max of the leave-k-out ks (the figure above), or k whose predicted change times the "
          "leave-k-out ratio (through the origin) equals the bias. The remaining bias is B_gr of each end "
          f"graph retrained with held-out seeds {tt['eval_seeds']} (mean, 95% t-interval over seeds); "
          "|B_gr| change: paired by seed against the start graph.", "",
          "| occupation | procedure | stop | retrainings | removed | B_gr start -> end (replicate mean) | "
          "calibration at the end |", "|---|---|---|---|---|---|---|"]
    for occ, r in tt["occupations"].items():
        for name, p in r["procedures"].items():
            md.append(f"| {occ} | {name} | {p['stop']} | {p['retrains']} | {p['removed']} | "
                      f"{p['bias_before']:+.4f} -> {p['bias_after']:+.4f} | {p['ratio']:.3g} |")
    md += ["", "| occupation | end graph | removed | B_gr seed " + str(seed) + " | B_gr held-out seeds "
           "[95% CI] | |B_gr| change vs start [95% CI] |", "|---|---|---|---|---|---|"]
    for occ, r in tt["occupations"].items():
        for name, e in r["ends"].items():
            ch = e.get("abs_change_vs_start")
            if "same_graph_as" in e:
                md.append(f"| {occ} | {name} | {e['removed']} | the same graph as {e['same_graph_as']} | | |")
                continue
            chs = "-" if ch is None else f"{ch['mean']:+.4f} [{ch['ci'][0]:+.4f}, {ch['ci'][1]:+.4f}]"
            md.append(f"| {occ} | {name} | {e['removed']} | {e['B_gr_seed']:+.4f} | {e['mean']:+.4f} "
                      f"[{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}] | {chs} |")
    md += ["", "Trials (k removed, predicted and measured change of the replicate-mean B_gr, outcome):", ""]
    for occ, r in tt["occupations"].items():
        for name, p in r["procedures"].items():
            md.append(f"- {occ}, {name}: " + "; ".join(
                f"k={t['k']} pred {t['predicted']:+.3g} meas {t['measured']:+.3g} -> {t['bias_after']:+.4f} "
                f"({t['outcome']})" for t in p["trials"]))
    return md + [""]


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
    ap.add_argument("--tol", type=float, default=0.01, help="stop within tol of B_gr = 0 (step 4)")
    ap.add_argument("--max-retrains", type=int, default=8, help="retrainings at most (step 4)")
    ap.add_argument("--patience", type=int, default=1, help="retries of a step lost in noise, at 2k (step 4)")
    ap.add_argument("--replicates", type=int, default=3,
                    help="seeds seed..seed+n-1 retrained after each step; B_gr and influence averaged (step 4)")
    ap.add_argument("--eval-seeds", default="3,4,5,6,7", help="held-out seeds for the remaining bias (step 4)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (numbers do not depend on it)")
    ap.add_argument("--work", default="/tmp/kge_du_validation")
    ap.add_argument("--out", default=str(RESULTS / "kge_du_validation"))
    ap.add_argument("--markdown-only", action="store_true", help="rewrite OUT.md from OUT.json, compute nothing")
    args = ap.parse_args()
    if args.markdown_only:
        atomic_write_text(args.out + ".md", markdown(json.loads(Path(args.out + ".json").read_text())))
        return
    torch.set_num_threads(args.threads)

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
           "num_threads": args.threads, **json.loads(args.train_config)}
    train_fn = make_train_fn(cfg, work, cache)
    print(g, flush=True)
    load0 = os.getloadavg()

    base = train_fn(g)
    base_secs = cache.get(graph_key(g, cfg) + ":seconds")
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
                           "slope_actual_vs_predicted": float(np.polyfit(pred, act, 1)[0]),
                           "ratio_through_origin": float(np.dot(pred, act) / np.dot(pred, pred))}

    val_occs = list(validation)
    added = du.debias_by_adding(g, base, val_occs, train_fn, c=0.5, groups=groups)
    adding = {o: {"B_gr_before": per_occ[o]["B_gr"], "B_gr_after": added.after[o], "dummies": added.changed[o]}
              for o in val_occs}

    to_target = stop_at_target(g, groups, base, cfg, work, cache, validation, args)

    out = {
        "benchmark": "kge_du_validation", "command": "python " + " ".join(sys.argv), "graph": repr(g), "occupations": occs, "train_config": cfg,
        "base_train_seconds": base_secs, "hessian": args.hessian, "damping": args.damping,
        "per_occupation": per_occ,
        "pearson_B_gr_vs_B_in_weighted": {"r": float(r_w[0]), "p": float(r_w[1])},
        "pearson_B_gr_vs_B_in_vanilla": {"r": float(r_v[0]), "p": float(r_v[1])},
        "leave_k_out": validation, "debias_add": adding, "to_target": to_target,
        "loadavg_before": load0, "loadavg_after": os.getloadavg(), "torch_threads": args.threads,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    atomic_write_json(args.out + ".json", out, indent=1, clean=False)
    md = markdown(out)
    atomic_write_text(args.out + ".md", md)
    print(md)


def markdown(out: dict) -> str:
    """The results markdown, from the results JSON alone."""
    per_occ, validation, adding = out["per_occupation"], out["leave_k_out"], out["debias_add"]
    focus = sorted((o for o, v in per_occ.items() if v["count_a"] >= 5 and v["count_b"] >= 5),
                   key=lambda o: -(per_occ[o]["count_a"] + per_occ[o]["count_b"]))
    r_w, r_v = out["pearson_B_gr_vs_B_in_weighted"], out["pearson_B_gr_vs_B_in_vanilla"]
    load0, load1 = out["loadavg_before"], out["loadavg_after"]
    md = ["# Du et al. on a real FB13 subgraph: influence validation and debiasing", "",
          f"Graph: {out['graph']} (training triples of every person with a profession among "
          f"{', '.join(out['occupations'])}). TransE via `kge.train` with {json.dumps(out['train_config'])}; base "
          f"training {out['base_train_seconds']:.0f} s. Hessian `{out['hessian']}`, damping {out['damping']}. Load "
          f"average {load0[0]:.1f} before, {load1[0]:.1f} after ({out['torch_threads']} torch thread(s), 2 cores; "
          "shared machine).", "",
          f"Command: `{out['command']}`", "",
          "| occupation | #male | #female | B_gr | B_in weighted | B_in vanilla |", "|---|---|---|---|---|---|",
          *[f"| {o} | {per_occ[o]['count_a']} | {per_occ[o]['count_b']} | {per_occ[o]['B_gr']:.4f} | "
            f"{per_occ[o]['B_in_weighted']:.4g} | {per_occ[o]['B_in_vanilla']:.4g} |" for o in focus], "",
          f"Occupations listed: every one with >= 5 persons of each gender in the subgraph. "
          f"Pearson r across them, B_gr vs weighted B_in: {r_w['r']:.3f} (p {r_w['p']:.3g}); "
          f"vs vanilla B_in: {r_v['r']:.3f} (p {r_v['p']:.3g}).", "",
          "## Influence vs leave-k-out retraining", "",
          "| occupation | B_gr | k | predicted change | actual change |", "|---|---|---|---|---|"]
    for o, v in validation.items():
        for k, pr, ac in zip(v["ks"], v["predicted_change"], v["actual_change"]):
            md.append(f"| {o} | {v['B_gr']:.4f} | {k} | {pr:.4g} | {ac:.4g} |")
    md += ["", "| occupation | Pearson r | p | slope actual/predicted | ratio through the origin | "
               "B_gr IF-REMOVE (k max) | B_gr Random-REMOVE (k max) |", "|---|---|---|---|---|---|---|",
           *[f"| {o} | {v['pearson_r']:.3f} | {v['p_value']:.3g} | {v['slope_actual_vs_predicted']:.3g} | "
             f"{v['ratio_through_origin']:.3g} | {v['if_remove_B_gr_at_kmax']:.4f} | "
             f"{v['random_remove_B_gr_at_kmax']:.4f} |" for o, v in validation.items()],
           "", "## Debiasing by adding dummy entities (c = 0.5, all listed occupations in one retraining)", "",
           "| occupation | dummies | B_gr before | B_gr after |", "|---|---|---|---|",
           *[f"| {o} | {v['dummies']} | {v['B_gr_before']:.4f} | {v['B_gr_after']:.4f} |" for o, v in adding.items()],
           ""]
    md += to_target_markdown(out["to_target"], out["train_config"]["seed"])
    return "\n".join(md)


if __name__ == "__main__":
    sys.exit(main())
