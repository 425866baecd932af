"""Speed benchmark: our TransE vs PyKEEN's on FB13, same run, same machine, same settings.

Both train TransE (dim 100, L2 distance, entities on the unit sphere, margin ranking loss with
margin 1, Adam, batch 4096, 1 uniformly corrupted head-or-tail negative per positive) for the same
number of epochs. Reported:

- training triples/s (wall and CPU time) and the ratio ours / PyKEEN;
- filtered MRR / Hits@10 on the full FB13 test set (both sides) of both trained models, both
  computed with our evaluator (PyKEEN's parameters are copied into our TransE);
- filtered evaluation time: ours on the full test set; PyKEEN's RankBasedEvaluator on a seeded
  subset (``--pykeen-eval-triples``), extrapolated linearly to the full set; on that subset both
  evaluators' Hits@10/MRR on the PyKEEN model are reported side by side (they must agree).

Usage: python benchmarks/kge_speed.py [--epochs 5] [--threads 2] [--tag 2t] [--out benchmarks/results]
writes ``kge_speed[_TAG].json`` and ``.md``. The machine may be shared: load averages are
recorded before and after each phase, and speed is only ever the ratio of the two trainers
measured in the same run (wall and CPU time).
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


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pykeen-eval-triples", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed trainings of each (alternating ours, PyKEEN); ratios are the median of the pairs")
    ap.add_argument("--skip-pykeen", action="store_true")
    ap.add_argument("--tag", default="", help="results file suffix: kge_speed_<tag>.json")
    ap.add_argument("--device", default="cpu", help="ours: cpu or cuda (PyKEEN then trains on the same device)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--render", metavar="JSON", help="only re-render the markdown of a results JSON")
    args = ap.parse_args(argv)
    if args.render:
        r = json.loads(Path(args.render).read_text(encoding="utf-8"))
        _write(Path(args.render).with_suffix(".md"), _markdown(r))
        return 0
    torch.set_num_threads(args.threads)

    from kge.embeddings import package_version
    from kge.evaluate import evaluate, evaluate_triples
    from kge.graph import load_fb13
    from kge.train import TrainConfig, train

    graph = load_fb13()
    n = len(graph.train)
    res: dict = {"benchmark": "kge_speed", "graph": graph.fingerprint(), "version": package_version(),
                 "command": "python " + " ".join([sys.argv[0], *sys.argv[1:]]), "device": args.device,
                 "torch": torch.__version__, "threads": args.threads, "cpu_count": os.cpu_count(),
                 "platform": platform.platform(), "python": sys.version.split()[0],
                 "settings": {"model": "TransE", "p_norm": 2, "dim": args.dim, "batch_size": args.batch_size,
                              "negatives": 1, "loss": "margin", "margin": 1.0, "optimizer": "Adam", "lr": args.lr,
                              "epochs": args.epochs, "seed": args.seed, "sampler": "uniform head/tail"},
                 "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"FB13: {graph}", flush=True)

    # Creating the first torch optimizer of a process imports torch._dynamo (about 1.2 s here): a
    # one-time cost that would land on whichever trainer is timed first (ours). Both are timed
    # after it, so the ratio compares the trainers, not the order they ran in.
    t0 = time.perf_counter()
    torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=args.lr)
    res["warmup_s"] = time.perf_counter() - t0

    # ---------------- ours
    cfg = TrainConfig(model="transe", dim=args.dim, model_kwargs={"p_norm": 2}, epochs=args.epochs,
                      batch_size=args.batch_size, lr=args.lr, negatives=1, loss="margin", margin=1.0,
                      sampler="uniform", seed=args.seed, evaluate_test=False, num_threads=args.threads,
                      device=args.device)
    load0 = _load()
    tr, wall, cpu = _timed(lambda: train(graph, cfg, progress=False))
    ours = {"train_wall_s": wall, "train_cpu_s": cpu, "epoch_wall_s": wall / args.epochs,
            "triples_per_s_wall": n * args.epochs / wall, "triples_per_s_cpu": n * args.epochs / cpu,
            "final_loss": tr.history[-1]["loss"], "load_before": load0, "load_after": _load()}
    print("ours train", json.dumps(ours), flush=True)
    load0 = _load()
    m, wall, cpu = _timed(lambda: evaluate(tr.model, graph, "test", progress=False))
    ours["eval_full_test"] = {"wall_s": wall, "cpu_s": cpu, "num_triples": m.num_triples, "mrr": m.mrr,
                              "hits_at_1": m.hits_at_1, "hits_at_3": m.hits_at_3, "hits_at_10": m.hits_at_10,
                              "load_before": load0, "load_after": _load()}
    print("ours eval", json.dumps(ours["eval_full_test"]), flush=True)
    res["ours"] = ours

    # ---------------- PyKEEN
    if not args.skip_pykeen:
        from pykeen.evaluation import RankBasedEvaluator
        from pykeen.losses import MarginRankingLoss
        from pykeen.models import TransE as PKTransE
        from pykeen.training import SLCWATrainingLoop

        from kge.pykeen_io import model_from_pykeen, to_pykeen

        import pykeen.version
        res["pykeen_version"] = pykeen.version.get_version()
        f = to_pykeen(graph)

        def pykeen_training():
            """A fresh PyKEEN TransE and its training call (model built outside the timed call;
            ours builds its model inside `train`, so this favours PyKEEN slightly)."""
            torch.manual_seed(args.seed)
            model = PKTransE(triples_factory=f["training"], embedding_dim=args.dim, scoring_fct_norm=2,
                             loss=MarginRankingLoss(margin=1.0), random_seed=args.seed).to(args.device)
            loop = SLCWATrainingLoop(model=model, triples_factory=f["training"],
                                     optimizer=torch.optim.Adam(model.get_grad_params(), lr=args.lr),
                                     negative_sampler="basic", negative_sampler_kwargs={"num_negs_per_pos": 1})
            return model, lambda: loop.train(triples_factory=f["training"], num_epochs=args.epochs,
                                             batch_size=args.batch_size, use_tqdm=False)

        pk, run_pykeen = pykeen_training()
        load0 = _load()
        losses, wall, cpu = _timed(run_pykeen)
        peer = {"train_wall_s": wall, "train_cpu_s": cpu, "epoch_wall_s": wall / args.epochs,
                "triples_per_s_wall": n * args.epochs / wall, "triples_per_s_cpu": n * args.epochs / cpu,
                "final_loss": float(losses[-1]), "load_before": load0, "load_after": _load()}
        print("pykeen train", json.dumps(peer), flush=True)
        pk.eval()
        ours_view = model_from_pykeen(pk, p_norm=2)
        mm = evaluate(ours_view, graph, "test", progress=False)
        peer["eval_full_test_by_our_evaluator"] = {"mrr": mm.mrr, "hits_at_1": mm.hits_at_1,
                                                   "hits_at_3": mm.hits_at_3, "hits_at_10": mm.hits_at_10}
        # PyKEEN's own evaluator on a subset
        rng = np.random.default_rng(args.seed)
        idx = np.sort(rng.choice(len(graph.test), args.pykeen_eval_triples, replace=False))
        sub = torch.from_numpy(graph.test[idx])
        ev = RankBasedEvaluator(filtered=True)
        load0 = _load()
        pr, wall, cpu = _timed(lambda: ev.evaluate(
            pk, mapped_triples=sub, batch_size=256, use_tqdm=False,
            additional_filter_triples=[f["training"].mapped_triples, f["validation"].mapped_triples,
                                         f["testing"].mapped_triples]))
        ours_sub = evaluate_triples(ours_view, graph.test[idx], graph.all_triples(), graph.num_relations,
                                    progress=False)
        peer["eval_subset"] = {
            "num_triples": int(len(idx)), "wall_s": wall, "cpu_s": cpu,
            "extrapolated_full_test_wall_s": wall * len(graph.test) / len(idx),
            "pykeen_evaluator": {"mrr": float(pr.get_metric("both.realistic.inverse_harmonic_mean_rank")),
                                 "hits_at_10": float(pr.get_metric("both.realistic.hits_at_10"))},
            "our_evaluator_same_subset": {"mrr": ours_sub.mrr, "hits_at_10": ours_sub.hits_at_10},
            "load_before": load0, "load_after": _load()}
        print("pykeen eval", json.dumps(peer["eval_subset"]), flush=True)
        res["pykeen"] = peer

        # the same trainings again, alternating, so the ratio is not one pair's luck
        pairs = [{"ours_wall_s": ours["train_wall_s"], "ours_cpu_s": ours["train_cpu_s"],
                  "pykeen_wall_s": peer["train_wall_s"], "pykeen_cpu_s": peer["train_cpu_s"],
                  "load": [ours["load_before"], peer["load_after"]]}]
        for _ in range(args.repeats - 1):
            l0 = _load()
            tr2, ow, oc = _timed(lambda: train(graph, cfg, progress=False))
            assert tr2.history[-1]["loss"] == ours["final_loss"]  # one seed, identical numbers
            _, again = pykeen_training()
            _, pw, pc = _timed(again)
            pairs.append({"ours_wall_s": ow, "ours_cpu_s": oc, "pykeen_wall_s": pw, "pykeen_cpu_s": pc,
                          "load": [l0, _load()]})
            print("repeat", json.dumps(pairs[-1]), flush=True)
        for q in pairs:
            q["ratio_wall"], q["ratio_cpu"] = q["pykeen_wall_s"] / q["ours_wall_s"], q["pykeen_cpu_s"] / q["ours_cpu_s"]
        res["repeats"] = pairs
        o, p = ours, peer
        res["ratios"] = {
            "train_triples_per_s_wall": float(np.median([q["ratio_wall"] for q in pairs])),
            "train_triples_per_s_cpu": float(np.median([q["ratio_cpu"] for q in pairs])),
            "train_wall_range": [min(q["ratio_wall"] for q in pairs), max(q["ratio_wall"] for q in pairs)],
            "eval_full_test_wall_speedup": p["eval_subset"]["extrapolated_full_test_wall_s"] / o["eval_full_test"]["wall_s"],
            "hits_at_10_difference_points": 100 * (o["eval_full_test"]["hits_at_10"]
                                                   - p["eval_full_test_by_our_evaluator"]["hits_at_10"]),
        }
        res["targets"] = {
            "train_5x": res["ratios"]["train_triples_per_s_wall"] >= 5.0,
            "hits_at_10_within_1_point": abs(res["ratios"]["hits_at_10_difference_points"]) <= 1.0,
            "eval_full_test_under_30s": o["eval_full_test"]["wall_s"] < 30.0,
        }
    res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "kge_speed" + (f"_{args.tag}" if args.tag else "")
    _write(out / f"{name}.json", json.dumps(res, indent=2))
    _write(out / f"{name}.md", _markdown(res))
    print(json.dumps(res.get("ratios", {}), indent=2))
    return 0


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _markdown(r: dict) -> str:
    s = r["settings"]
    o = r["ours"]
    lines = [
        "# KGE speed: TransE on FB13, ours vs PyKEEN (same run)", "",
        f"Settings: TransE L{s['p_norm']}, dim {s['dim']}, batch {s['batch_size']}, {s['negatives']} negative, "
        f"margin loss ({s['margin']}), Adam lr {s['lr']}, {s['epochs']} epochs, seed {s['seed']}; "
        f"torch {r['torch']}, {r['threads']} thread(s), device {r.get('device', 'cpu')}, {r['cpu_count']} CPU(s); "
        f"load averages recorded per phase (below). Started {r['started']}, finished {r['finished']}.", "",
        f"Command: `{r.get('command', '')}`", "",
        "Wall and CPU times: ours, the whole `train` call (model set-up included); PyKEEN, its training loop's "
        "`train` (model built before the clock starts). Both start after one throwaway "
        "torch optimizer has been created, whose lazy import of `torch._dynamo`"
        + (f" ({r['warmup_s']:.1f} s)" if r.get("warmup_s") is not None else "")
        + " happens once per process and would otherwise fall on whichever trainer runs first.", "",
        "| | ours | PyKEEN | ratio |", "|---|---|---|---|",
    ]
    p = r.get("pykeen")
    rat = r.get("ratios", {})

    def row(name, a, b, ratio=""):
        lines.append(f"| {name} | {a} | {b} | {ratio} |")

    if p:
        reps = r.get("repeats") or []
        many = len(reps) > 1
        row("train triples/s (wall)" + (", first pair" if many else ""), f"{o['triples_per_s_wall']:,.0f}",
            f"{p['triples_per_s_wall']:,.0f}",
            f"{rat['train_triples_per_s_wall']:.2f}x" + (f" (median of {len(reps)} pairs, range "
                                                          f"{rat['train_wall_range'][0]:.2f}-"
                                                          f"{rat['train_wall_range'][1]:.2f})" if many else ""))
        row("train triples/s (CPU time)" + (", first pair" if many else ""), f"{o['triples_per_s_cpu']:,.0f}",
            f"{p['triples_per_s_cpu']:,.0f}",
            f"{rat['train_triples_per_s_cpu']:.2f}x" + (f" (median of {len(reps)} pairs)" if many else ""))
        if many:
            row("train wall s, each pair (alternating)", ", ".join(f"{q['ours_wall_s']:.2f}" for q in reps),
                ", ".join(f"{q['pykeen_wall_s']:.2f}" for q in reps),
                ", ".join(f"{q['ratio_wall']:.2f}x" for q in reps))
        row("seconds/epoch (wall)", f"{o['epoch_wall_s']:.2f}", f"{p['epoch_wall_s']:.2f}", "")
        oe, pe = o["eval_full_test"], p["eval_full_test_by_our_evaluator"]
        row("test filtered Hits@10", f"{oe['hits_at_10']:.4f}", f"{pe['hits_at_10']:.4f}",
            f"{rat['hits_at_10_difference_points']:+.2f} points")
        row("test filtered MRR", f"{oe['mrr']:.4f}", f"{pe['mrr']:.4f}", "")
        sub = p["eval_subset"]
        row("filtered eval, full test (23,733 x 2 sides), wall s", f"{oe['wall_s']:.1f}",
            f"{sub['extrapolated_full_test_wall_s']:.0f} (extrapolated from {sub['num_triples']} triples: "
            f"{sub['wall_s']:.1f} s)", f"{rat['eval_full_test_wall_speedup']:.0f}x")
        lines.append(f"| filtered eval, full test, CPU s (ours) / subset CPU s (PyKEEN) | {oe['cpu_s']:.1f} | "
                     f"{sub['cpu_s']:.1f} for {sub['num_triples']} triples | |")
        lines += ["", f"Evaluator agreement on the {sub['num_triples']}-triple subset (PyKEEN model): "
                  f"PyKEEN Hits@10 {sub['pykeen_evaluator']['hits_at_10']:.4f} / MRR "
                  f"{sub['pykeen_evaluator']['mrr']:.4f}; ours Hits@10 "
                  f"{sub['our_evaluator_same_subset']['hits_at_10']:.4f} / MRR "
                  f"{sub['our_evaluator_same_subset']['mrr']:.4f}.", "",
                  "Targets: " + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in r["targets"].items()), ""]
    else:
        row("train triples/s (wall)", f"{o['triples_per_s_wall']:,.0f}", "-", "")
    lines += [f"Load averages (1/5/15 min): ours train {o['load_before']} -> {o['load_after']}" +
              (f"; PyKEEN train {p['load_before']} -> {p['load_after']}" if p else ""), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
