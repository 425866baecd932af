"""Wall time of one cross-fitted fold run per encoder, old path against new (issue #39, item 4):
PCNN and CNN with the dense convolution against the gather one (``conv_impl``), and, with
``--encoders rnn,birnn``, the fused recurrence against the gather one (``rnn_impl``).

A fold run is what every study here pays per fold and seed: fold 0 of 5 (fold seed 0) of the
embedded release, the trainer's defaults (10 epochs at most, early stopping on the fold's
validation persons), Word2Vec from the run's own empty cache, prediction and evaluation of the
held-out fold (``--resamples`` bootstrap resamples). Each encoder's two runs use the same seed
(``--seed``, default 100, a seed no study uses) and run one after another at ``--threads``
threads, the order alternating between encoders; load averages before and after each run are
recorded, and the table says what each run's wall time includes. The ratio old / new is per
encoder; the runs per hour of a 2-worker executor are ``workers x 3600 / wall`` (a projection
from the measured wall, not a measurement of the executor: ``benchmarks/re_throughput.py`` is
that one).

    python benchmarks/re_fold_runs.py                      # PCNN and CNN, ~6 min on 2 idle cores
    python benchmarks/re_fold_runs.py --encoders rnn,birnn --out benchmarks/results/re_fold_runs_rnn

Runs go to ``--runs-dir`` (a fresh folder per invocation; not committed); writes ``--out``.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIELDS = {"pcnn": "conv_impl", "cnn": "conv_impl", "rnn": "rnn_impl", "birnn": "rnn_impl"}
PATHS_OF = {"pcnn": ("dense", "gather"), "cnn": ("dense", "gather"), "rnn": ("fused", "gather"),
            "birnn": ("fused", "gather")}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def one_run(enc: str, path: str, args, runs_dir: Path) -> dict:
    from relext.evaluation.evaluate import evaluate_run
    from relext.training.train import TrainConfig, train

    run_dir = runs_dir / f"{enc}-{path}"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    cfg = TrainConfig(encoder=enc, selector=args.selector, seed=args.seed, threads=args.threads, folds=5, fold=0,
                      fold_seed=0, cache_dir=str(run_dir / "w2v_cache"), **{FIELDS[enc]: path})
    load_before, t0 = _load(), time.perf_counter()
    train(cfg, run_dir)
    t1 = time.perf_counter()
    evaluate_run(run_dir, n_resamples=args.resamples)
    t2 = time.perf_counter()
    m = json.loads((run_dir / "metrics.json").read_text())
    epochs = m.get("epochs") or []
    return {"encoder": enc, "path": path, "field": FIELDS[enc], "seed": args.seed, "epochs_run": m.get("epochs_run"),
            "train_wall_s": round(t1 - t0, 2), "eval_wall_s": round(t2 - t1, 2), "wall_s": round(t2 - t0, 2),
            "epoch_train_s": [e.get("train_seconds") for e in epochs],
            "mean_epoch_train_s": round(sum(e.get("train_seconds") or 0 for e in epochs) / max(len(epochs), 1), 3),
            "load_before": load_before, "load_after": _load()}


def markdown(doc: dict) -> str:
    m = doc["meta"]
    out = ["# One cross-fitted fold run per encoder: old path vs new", "",
           f"`{m['command']}` ({m['started']}; {m['cpu_count']} cores, torch {m['torch']}, {m['threads']} thread(s) "
           f"per run, runs one after another; OMP_WAIT_POLICY={m['omp_wait_policy']}).", "",
           "A fold run: fold 0 of 5 (fold seed 0) of the embedded release, the trainer's defaults (at most 10 epochs, "
           "early stopping on the fold's validation persons), Word2Vec from an empty cache, then prediction and "
           f"evaluation of the held-out fold ({m['resamples']} bootstrap resamples). Wall = training (with Word2Vec "
           "and featurizing) + evaluation. Paired: the same seed and fold for both paths.", "",
           "| encoder | path | epochs | s / epoch (training) | train wall (s) | eval wall (s) | wall (s) | load before | load after |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["runs"]:
        out.append(f"| {r['encoder']} | {r['path']} | {r['epochs_run']} | {r['mean_epoch_train_s']:.2f} | "
                   f"{r['train_wall_s']:.1f} | {r['eval_wall_s']:.1f} | {r['wall_s']:.1f} | {r['load_before']} | "
                   f"{r['load_after']} |")
    out += ["", "| encoder | old / new, fold-run wall | old / new, s per epoch | runs / hour, 2 workers (old -> new; projection) |",
            "|---|---|---|---|"]
    for enc, s in doc["summary"].items():
        out.append(f"| {enc} | {s['wall_ratio']:.2f}x | {s['epoch_ratio']:.2f}x | "
                   f"{s['runs_per_hour_old']:.1f} -> {s['runs_per_hour_new']:.1f} |")
    out += ["", "Runs per hour: 2 x 3600 / the fold run's wall, as if two single-thread workers ran at this speed side by "
            "side (a projection from the wall above, which ran alone)."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoders", default="pcnn,cnn")
    ap.add_argument("--selector", default="attention")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--runs-dir", default=str(ROOT / "runs" / "re_fold_runs"))
    ap.add_argument("--out", default=str(HERE / "results" / "re_fold_runs"))
    args = ap.parse_args(argv)
    encoders = [e.strip() for e in args.encoders.split(",") if e.strip()]
    if not encoders or any(e not in FIELDS for e in encoders):
        ap.error(f"--encoders: some of {sorted(FIELDS)}, got {args.encoders!r}")
    import torch

    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    torch.set_num_threads(args.threads)
    meta = {"command": "python " + shlex.join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])]),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu_count": os.cpu_count(), "torch": torch.__version__,
            "platform": platform.platform(), "threads": args.threads, "resamples": args.resamples,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "load_start": _load()}
    runs_dir = Path(args.runs_dir)
    runs = []
    for i, enc in enumerate(encoders):
        order = PATHS_OF[enc] if i % 2 == 0 else PATHS_OF[enc][::-1]
        for path in order:
            r = one_run(enc, path, args, runs_dir)
            print(f"{enc} {path}: {r['epochs_run']} epochs, {r['wall_s']:.1f} s wall, load {r['load_after']}", flush=True)
            runs.append(r)
    summary = {}
    for enc in encoders:
        old, new = (next(r for r in runs if r["encoder"] == enc and r["path"] == p) for p in PATHS_OF[enc])
        summary[enc] = {"wall_ratio": old["wall_s"] / new["wall_s"],
                        "epoch_ratio": old["mean_epoch_train_s"] / new["mean_epoch_train_s"],
                        "runs_per_hour_old": 2 * 3600 / old["wall_s"], "runs_per_hour_new": 2 * 3600 / new["wall_s"]}
    meta["finished"], meta["load_end"] = time.strftime("%Y-%m-%d %H:%M:%S"), _load()
    doc = {"meta": meta, "runs": runs, "summary": summary}
    out = Path(args.out)
    atomic_write_json(out.with_suffix(".json"), doc, indent=1)
    atomic_write_text(out.with_suffix(".md"), markdown(doc))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
