"""Are a KGE bias measure's most biased items stable across embedding models and seeds? (issue #42)

Trains TransE and DistMult (``--models``) on FB13 at 3 seeds each on one thread, either with a
short, fixed budget (``--epochs``, dim ``--dim``) or, with ``--settings convergence``, at each
model's settings and best validated epoch in the committed convergence benchmark
(``benchmarks/results/kge_convergence.json``: dim, loss, sampler, regularization; epochs = its
best epoch, no validation), runs one per-item bias measure (default ``fisher``: gender male vs female -> profession)
on each embedding with the embedding's training seed as the result's seed, and writes

* ``OUT/bias.json``: the six results (``wgb kge report OUT/bias.json`` renders them);
* ``OUT/results.json`` / ``OUT/results.md``: per model, the items' mean scores over seeds with
  their intervals (top 10 towards each value) and the mean |score| (seeds x items); the seeds'
  agreement within a model (descriptive); the claims "the top-k items towards male / female agree
  across TransE and DistMult" with their verdicts (:mod:`kge.bias.stability`, :mod:`wgbstats.ranking`);
  timings and load averages;
* ``OUT/report/``: the embedding report (``kge.report.render``) with the uncertainty section.

Embeddings go to ``--runs-dir/<model>-seed<s>`` (resumed when finished; not committed).

Usage: python scripts/kge_stability.py [--epochs 20] [--dim 50] [--top 20] [--measure fisher]
           [--settings short|convergence] [--models transe,distmult,complex]
           [--runs-dir out/kge_stability] [--out results/kge_stability]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

MODELS = ("transe", "distmult")
SEEDS = (0, 1, 2)
CONVERGENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "kge_convergence.json"
#: The convergence benchmark's training fields a run here takes over (threads, validation and the
#: time budget are this script's own).
CONVERGED_FIELDS = ("dim", "model_kwargs", "batch_size", "lr", "negatives", "loss", "margin", "sampler",
                    "regularization", "optimizer")


def converged_settings(models: list[str], path: Path = CONVERGENCE) -> dict[str, dict]:
    """model -> its EmbeddingConfig fields at the convergence benchmark's best validated epoch."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        recs = {m["model"]: m for m in doc["models"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"{path}: cannot read the convergence benchmark's models ({e})")
    out = {}
    for model in models:
        rec = recs.get(model)
        if rec is None or not rec.get("best_epoch"):
            raise SystemExit(f"{path}: no best epoch for model {model!r} (has: {sorted(recs)})")
        out[model] = {**{k: rec["config"][k] for k in CONVERGED_FIELDS if k in rec["config"]},
                      "epochs": int(rec["best_epoch"])}
    return out


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--dim", type=int, default=50)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--measure", default="fisher")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--settings", choices=("short", "convergence"), default="short",
                    help="short: --epochs/--dim, lr 0.01, margin loss; convergence: each model's settings and "
                         "best epoch in benchmarks/results/kge_convergence.json")
    ap.add_argument("--runs-dir", type=Path, default=Path("out/kge_stability"))
    ap.add_argument("--out", type=Path, default=Path("results/kge_stability"))
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    settings = (converged_settings(models) if args.settings == "convergence" else
                {m: {"dim": args.dim, "epochs": args.epochs, "batch_size": 4096, "lr": 0.01} for m in models})

    import torch

    from kge.bias import BiasSpec, run_measure, save_results
    from kge.bias import stability as st
    from kge.graph import load_fb13
    from kge.report import render
    from kge.train import EmbeddingConfig, train_embeddings
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    torch.set_num_threads(1)
    t_start, load_start = time.time(), _load()
    graph = load_fb13()
    spec = BiasSpec("gender", "male", "female", "profession")
    results, runs = [], []
    for model in models:
        for seed in SEEDS:
            cfg = EmbeddingConfig(model=model, seed=seed, num_threads=1, evaluate_test=False, **settings[model])
            t0 = time.time()
            tr = train_embeddings(graph, cfg, args.runs_dir / f"{model}-seed{seed}", progress=False)
            t1 = time.time()
            res = run_measure(args.measure, graph, tr.model, spec, seed=seed, model_label=model)
            runs.append({"model": model, "seed": seed, "epochs_run": tr.epochs_run, "train_seconds": tr.train_seconds,
                         "wall_train_s": round(t1 - t0, 1), "measure_s": round(res.seconds, 2),
                         "resumed_or_reused": tr.resumed_from_epoch > 0 or (t1 - t0) < 0.5 * max(tr.train_seconds, 1),
                         "load": _load()})
            print(f"{model} seed {seed}: {tr.epochs_run} epochs, {t1 - t0:.0f} s; {args.measure} {res.seconds:.1f} s",
                  flush=True)
            results.append(res)
    args.out.mkdir(parents=True, exist_ok=True)
    save_results(results, args.out / "bias.json")

    by_model = st.groups(results)[st.group_key(results[0])]
    per_model = {}
    for model, rs in by_model.items():
        table = st.item_table(rs, min_count=5)
        e = st.mean_abs_score(rs)
        # towards male: the highest mean scores; towards female: the lowest (the sides of the claims'
        # top k); the rows say how many items lean each way, so 10 lowest that all lean male read as such
        by_score = sorted(table, key=lambda x: -x["score"])
        side = {"male": by_score[:10], "female": by_score[::-1][:10]}
        leaning = {"male": sum(x["score"] > 0 for x in table), "female": sum(x["score"] < 0 for x in table)}
        per_model[model] = {
            "seeds": [r.seed for r in rs], "items": len(table), "decided_items": sum(x["decided"] for x in table),
            "mean_abs_score": {"value": e.value, "ci": e.ci, "se": e.se},
            "top10": side, "leaning": leaning,
            "seed_agreement": {lab: st.seed_agreement(rs, k=args.top, side=s) for lab, s in (("male", "high"), ("female", "low"))},
        }
    claims = st.stability_claims(results, k=args.top)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    meta = {"command": command, "measure": args.measure, "spec": "gender: male vs female -> profession", "graph": "FB13",
            "models": models, "seeds": list(SEEDS), "settings": args.settings, "training": settings,
            "epochs": {m: v["epochs"] for m, v in settings.items()}, "dim": {m: v["dim"] for m, v in settings.items()},
            "top_k": args.top,
            "margin": st.MARGIN, "threads": 1, "wall_s": round(time.time() - t_start, 1), "load_start": load_start,
            "load_end": _load(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    doc = {"meta": meta, "runs": runs, "per_model": per_model, "claims": claims}
    atomic_write_json(args.out / "results.json", doc, indent=1)
    atomic_write_text(args.out / "results.md", markdown(doc))
    render(results, args.out / "report", top=args.top)
    print(f"wrote {args.out}/results.json, results.md, bias.json, report/ in {meta['wall_s']} s")
    return 0


def _budget(m: dict) -> str:
    each = ", ".join(f"{x} dim {m['dim'][x]}, {m['epochs'][x]} epochs" for x in m["models"])
    if m.get("settings") == "convergence":
        return (f"{each} (each model's settings and best validated epoch in the convergence benchmark, "
                "`benchmarks/results/kge_convergence.md`; one thread, no validation here).")
    return f"{each} (a short budget: the embeddings are far from converged)."


def _ci(ci) -> str:
    return f"[{ci[0]:.3g}, {ci[1]:.3g}]"


def markdown(doc: dict) -> str:
    m = doc["meta"]
    out = [f"# Stability of a KGE bias measure's top items across embedding models and seeds (FB13)", "",
           f"`{m['command']}` ({m['time']}; {m['wall_s']} s wall on {m['threads']} thread, load average "
           f"{m['load_start']} at the start, {m['load_end']} at the end).", "",
           f"Measure `{m['measure']}` ({m['spec']}) on {', '.join(m['models'])}, seeds {m['seeds']}; "
           + _budget(m) + " Claim: the share "
           f"of one run's top {m['top_k']} items also in the paired run's top {m['top_k']} exceeds {m['margin']}; "
           "runs paired by seed; interval over seeds x items; verdicts at Holm's levels (wgbstats).", "",
           "## Claims", "", "| claim | agreement | 95% CI | chance | verdict | p (Holm) |", "|---|---|---|---|---|---|"]
    for c in doc["claims"]:
        out.append(f"| {c['claim']} | {c['agreement']:.3f} | {_ci(c['ci'])} | {c['chance']:.3f} | {c['verdict']} | "
                   f"{c['p_adjusted']:.3g} |")
    out += ["", "## Per model", ""]
    for model, d in doc["per_model"].items():
        sa = d["seed_agreement"]
        out += [f"### {model} (seeds {d['seeds']})", "",
                f"Mean |score| over {d['items']} items: {d['mean_abs_score']['value']:.4g} "
                f"{_ci(d['mean_abs_score']['ci'])} (seeds x items). Items whose lean is decided (Holm over the "
                f"items): {d['decided_items']} of {d['items']}. Seed agreement (seed i vs i + 1, descriptive): "
                + "; ".join(f"top-{m['top_k']} towards {lab} {v['agreement']:.3f} {_ci(v['ci'])}"
                            for lab, v in sa.items() if v) + ".", ""]
        for lab, rows in d["top10"].items():
            n_lean = (d.get("leaning") or {}).get(lab)
            lean = ("" if n_lean is None else f" ({n_lean} of {d['items']} items have a mean score leaning {lab}"
                    + (f"; these 10 are the {'highest' if lab == 'male' else 'lowest'} scores, leaning the other way"
                       if n_lean == 0 else "") + ")")
            out += [f"Top 10 towards {lab}{lean}:", "", "| item | mean score | 95% CI over seeds | decided | C_male | C_female |",
                    "|---|---|---|---|---|---|"]
            out += [f"| {x['item']} | {x['score']:.3g} | {_ci(x['ci'])} | {'yes' if x['decided'] else 'no'} | "
                    f"{x['count_a']} | {x['count_b']} |" for x in rows]
            out.append("")
    out += ["## Runs", "", "Train s: the training's own record (an embedding dir finished by an earlier call is reused, "
            "not retrained: `reused`).", "", "| model | seed | epochs | train s | reused | measure s | load |",
            "|---|---|---|---|---|---|---|"]
    out += [f"| {r['model']} | {r['seed']} | {r['epochs_run']} | {r['train_seconds']:.1f} | "
            f"{'yes' if r['resumed_or_reused'] else 'no'} | {r['measure_s']} | {r['load']} |" for r in doc["runs"]]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
