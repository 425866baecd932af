"""Throughput of the run executor: runs per hour of a fixed small study, one run after another
(``--executor serial``, every core's threads for the one run) vs local worker processes
(``--executor processes``, ``--workers`` x ``--threads-per-run``), measured in one invocation;
then a projection of the cross-fitted study's wall time on more machines.

The study: ``--runs`` PCNN+attention runs (seeds 0..N-1) of ``--epochs`` epochs on the embedded
release, each trained (Word2Vec from an empty cache, so every run pays its own as in a study) and
evaluated (``--resamples`` bootstrap resamples) through ``wgbstudies.grid.run_grid``. A run is what
a study pays per run; its parts (Word2Vec + featurizing, epochs, evaluation) are read from the
runs' ``metrics.json`` and the grid's ``timing.json``. Load averages are sampled every 5 s in
each phase: on a shared machine the ratio, not the absolute rate, is the figure to keep.

Projection (printed with its assumptions): the cross-fitted protocol's main arms, 5 folds x 5
seeds x 5 arms = 125 runs, each as long as one run here at 1 thread with ``--project-epochs``
epochs (the trainer's default, the debiasing study's runs ran all 10), its training data scaled
by the share of persons a fold run trains on; ``c`` cores run ``c`` single-thread workers at the
per-worker rate measured here (linear, not measured beyond 2 cores), in ``ceil(125 / c)`` waves.
The H100 line is a lower bound, not a measurement: model compute taken as free, a run's time is
its host-side work (Word2Vec, featurizing, batch gathering, measured here on one thread), with
as many runs per GPU as the GPU box has host cores (``--gpu-host-cores``).

    python benchmarks/re_throughput.py [--runs 8 --epochs 2 --workers 2] [--out benchmarks/results/re_throughput]
    # on a GPU machine:  --device cuda --runs-per-gpu 8 --workers 8
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CROSSFIT_RUNS = {"folds": 5, "seeds": 5, "arms": 5}


class LoadSampler:
    """1-minute load averages every ``every`` seconds while a phase runs."""

    def __init__(self, every: float = 5.0):
        self.every, self.samples = every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(round(os.getloadavg()[0], 2))
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        s = self.samples or [round(os.getloadavg()[0], 2)]
        return {"min": min(s), "median": round(statistics.median(s), 2), "max": max(s), "n": len(s)}


def run_phase(name: str, executor, root: Path, args) -> dict:
    from wgbstudies.grid import GridConfig, run_grid

    overrides = {"patience": 0, "cache_dir": str(root / f"w2v-{name}")}
    if args.device:
        overrides["device"] = args.device
    cfg = GridConfig(encoders=["pcnn"], selectors=["attention"], seeds=list(range(args.runs)), epochs=args.epochs,
                     n_resamples=args.resamples, train_overrides=overrides)
    out = root / name
    load_before = [round(x, 2) for x in os.getloadavg()]
    with LoadSampler() as sampler:
        t0 = time.perf_counter()
        summary = run_grid(cfg, out, executor=executor, progress=True, plots=False, design=False)
        wall = time.perf_counter() - t0
    if summary["meta"]["runs_failed"]:
        raise SystemExit(f"{name}: runs failed: {summary['meta']['runs_failed']}")
    per_run = json.loads((out / "timing.json").read_text())["runs"]
    runs = []
    for d in sorted((out / "runs").iterdir()):
        m = json.loads((d / "metrics.json").read_text())
        t = per_run.get(d.name, {})
        epochs = [e["train_seconds"] + e["eval_seconds"] for e in m["epochs"]]
        runs.append({"run": d.name, "threads": m["threads"], "run_seconds": round(t.get("train_seconds", 0)
                                                                                 + t.get("eval_seconds", 0), 2),
                     "train_seconds": round(t.get("train_seconds", 0), 2), "eval_seconds": round(t.get("eval_seconds", 0), 2),
                     "epoch_seconds": [round(x, 2) for x in epochs],
                     "prepare_seconds": m.get("prepare_seconds"),
                     "word2vec_seconds": (m.get("word2vec") or {}).get("seconds")})
    return {"phase": name, **executor.describe(), "runs": len(runs), "wall_seconds": round(wall, 1),
            "runs_per_hour": round(len(runs) / wall * 3600, 1), "load_before": load_before,
            "load_during": sampler.summary(), "load_after": [round(x, 2) for x in os.getloadavg()], "per_run": runs}


def host_batch_seconds(threads: int = 1) -> dict:
    """One epoch's host-side batch work (select + gather of every training batch) on one thread:
    what a GPU run still does on the CPU per epoch, and the release's split sizes."""
    import numpy as np
    import torch

    import wikigenderbias
    from relext.model.bags import iter_batches
    from relext.protocols.data import prepare_split
    from relext.model.vocab import Vocab

    torch.set_num_threads(threads)
    ds = wikigenderbias.load()
    vocab = Vocab.from_words(w for toks in ds["train"]["tokens"] for w in toks)
    split = prepare_split(ds["train"], "train", encoder="pcnn", vocab=vocab, max_length=120, kind="train")
    order = np.random.default_rng(0).permutation(len(split.bags))
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for b in iter_batches(split.bags, 160, order):
            flat, _seg = split.bags.select(b)
            split.table.gather(flat)
        times.append(time.perf_counter() - t0)
    persons = {s: len(set(ds[s]["entity_id"])) for s in ds}
    return {"epoch_host_seconds": round(statistics.median(times), 3), "persons": persons,
            "rows": {s: len(ds[s]) for s in ds}}


def projection(serial: dict, parallel: dict, host: dict, args) -> dict:
    """Wall time of the cross-fitted main arms, from the per-worker figures measured here."""
    n_runs = math.prod(CROSSFIT_RUNS.values())
    one = [r for r in parallel["per_run"] if r["threads"] == 1] or parallel["per_run"]
    epoch = statistics.median(statistics.median(r["epoch_seconds"]) for r in one)
    run_s = statistics.median(r["run_seconds"] for r in one)
    fixed = max(0.0, run_s - epoch * args.epochs)
    persons = host["persons"]
    everyone = sum(persons.values())
    # a fold run trains on (K-1)/K of every person, less the share held back for model selection
    k = CROSSFIT_RUNS["folds"]
    share = everyone * (k - 1) / k * (1 - args.fold_val_fraction) / persons["train"]
    run_1t = fixed + share * epoch * args.project_epochs
    cores = {}
    for c in (1, 8, 32):
        waves = math.ceil(n_runs / c)
        cores[f"{c} core" + ("s" if c > 1 else "")] = {"workers": c, "threads_per_run": 1, "waves": waves,
                               "hours": round(waves * run_1t / 3600, 2)}
    gpu_run = fixed + share * host["epoch_host_seconds"] * args.project_epochs
    waves = math.ceil(n_runs / args.gpu_host_cores)
    cores["1 H100 (lower bound)"] = {"runs_per_gpu": args.gpu_host_cores, "waves": waves,
                                     "hours": round(waves * gpu_run / 3600, 2)}
    return {
        "study": {**CROSSFIT_RUNS, "runs": n_runs},
        "measured": {"epoch_seconds_1_thread": round(epoch, 2), "run_seconds_1_thread": round(run_s, 2),
                     "fixed_seconds_per_run": round(fixed, 2), "epochs_measured": args.epochs,
                     "epoch_host_seconds": host["epoch_host_seconds"]},
        "assumptions": [
            f"a run trains {args.project_epochs} epochs (the trainer's default; the debiasing study's runs ran all 10)",
            f"a fold run's epoch scales with its training persons: {share:.2f} x the release's training split "
            f"((K-1)/K of all {everyone} persons, {args.fold_val_fraction:.0%} held back for model selection)",
            "the fixed part of a run (Word2Vec, featurizing, evaluation) as measured here, not scaled",
            "c cores run c single-thread workers at the per-worker rate measured here with 2 workers on 2 cores "
            "(linear; memory bandwidth and file system not modelled); the same per-core speed as this machine",
            f"H100: a lower bound, not a measurement -- model compute taken as free; a run costs its host-side "
            f"work (the fixed part plus the measured single-thread batch gathering per epoch); "
            f"{args.gpu_host_cores} runs at once (one per host core of the GPU box)",
            "this machine was shared while measuring (see the load averages): absolute times are pessimistic",
        ],
        "projection": cores,
    }


def markdown(res: dict) -> str:
    s, p = res["serial"], res["parallel"]
    lines = [
        "# Run executor throughput", "",
        f"{res['runs']} PCNN+attention runs of {res['epochs']} epoch{'s' if res['epochs'] > 1 else ''} on the "
        "embedded release "
        f"(train + evaluate, {res['resamples']} bootstrap resamples), {res['started']}, {res['cpu_count']} cores, "
        f"torch {res['torch']}, OMP_WAIT_POLICY={res.get('omp_wait_policy')}. Shared machine: load averages "
        f"below. Command: `{res.get('command')}`.", "",
        "| executor | workers x threads | wall (s) | runs / hour | load before | load during (min/median/max) |",
        "|---|---|---|---|---|---|",
    ]
    for ph in (s, p):
        ld = ph["load_during"]
        lines.append(f"| {ph['executor']} | {ph['workers']} x {ph['threads_per_run'] or 'torch default'} | "
                     f"{ph['wall_seconds']} | {ph['runs_per_hour']} | {ph['load_before']} | "
                     f"{ld['min']} / {ld['median']} / {ld['max']} |")
    lines += ["", f"**Throughput ratio (processes / serial): {res['ratio']:.2f}x**", ""]
    pr = res["projection"]
    lines += [f"## Projection: the cross-fitted study's main arms ({pr['study']['runs']} runs)", "",
              "| where | runs at once | waves | hours |", "|---|---|---|---|"]
    for name, row in pr["projection"].items():
        lines.append(f"| {name} | {row.get('workers', row.get('runs_per_gpu'))} | {row['waves']} | {row['hours']} |")
    lines += ["", "Measured inputs: " + ", ".join(f"{k} {v}" for k, v in pr["measured"].items()) + ".", "",
              "Assumptions:", ""] + [f"- {a}" for a in pr["assumptions"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads-per-run", type=int, default=1)
    ap.add_argument("--serial-threads", type=int, default=os.cpu_count(), help="torch threads of the serial runs")
    ap.add_argument("--device", default=None, help="training device (cuda on a GPU machine)")
    ap.add_argument("--runs-per-gpu", type=int, default=None)
    ap.add_argument("--project-epochs", type=int, default=10)
    ap.add_argument("--fold-val-fraction", type=float, default=0.1)
    ap.add_argument("--gpu-host-cores", type=int, default=16, help="host cores of the GPU box (H100 lower bound)")
    ap.add_argument("--out", default=str(HERE / "results" / "re_throughput"))
    args = ap.parse_args(argv)

    import torch

    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.executor import ExecutorConfig

    res = {"benchmark": "re_throughput", "started": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": args.runs,
           "epochs": args.epochs, "resamples": args.resamples, "cpu_count": os.cpu_count(),
           "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
           "command": " ".join(["python benchmarks/re_throughput.py", *(argv if argv is not None else sys.argv[1:])]),
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    root = Path(tempfile.mkdtemp(prefix="wgb-throughput-"))
    try:
        res["serial"] = run_phase("serial", ExecutorConfig(threads_per_run=args.serial_threads), root, args)
        print(json.dumps({k: v for k, v in res["serial"].items() if k != "per_run"}), flush=True)
        res["parallel"] = run_phase("processes", ExecutorConfig(kind="processes", workers=args.workers,
                                                                threads_per_run=args.threads_per_run,
                                                                runs_per_gpu=args.runs_per_gpu), root, args)
        print(json.dumps({k: v for k, v in res["parallel"].items() if k != "per_run"}), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    res["ratio"] = round(res["parallel"]["runs_per_hour"] / res["serial"]["runs_per_hour"], 3)
    res["host"] = host_batch_seconds()
    res["projection"] = projection(res["serial"], res["parallel"], res["host"], args)
    res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    out = Path(args.out)
    atomic_write_json(out.with_suffix(".json"), res)
    atomic_write_text(out.with_suffix(".md"), markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
