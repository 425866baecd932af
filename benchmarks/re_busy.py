"""A PCNN+attention training epoch on a busy machine (issue 39, item 5): why it is slower than a
fair share of the cores, and which defaults degrade gracefully.

Each measurement is a fresh process (OpenMP reads its wait policy once, at start-up) that builds
the model on the real train split, trains ``--warmup`` untimed batches, then times ``--batches``
batches and extrapolates to the whole epoch (wall and CPU seconds of the process). Conditions:

- ours: torch threads 1 or 2 x ``OMP_WAIT_POLICY`` unset (OpenMP's default: idle threads spin a
  while) or ``PASSIVE`` (idle threads sleep);
- competitors, started before and stopped after each measurement: none; ``burn`` (N single-thread
  Python busy loops: any CPU-bound job); ``torch`` (N processes training the same model with
  torch's default threads and wait policy: another user's or another of our runs with defaults).

The fair share of a process with ``t`` runnable threads next to ``k`` runnable competitor threads
on ``C`` cores is ``t C / (t + k)`` cores when ``t + k > C`` (Linux's scheduler is fair between
threads, not processes); its fair-share epoch is the idle 1-thread epoch's CPU seconds divided by
that share. The ratio measured / fair-share says how much a setting loses beyond its share.

    python benchmarks/re_busy.py                     # writes benchmarks/results/re_busy.{json,md}
    python benchmarks/re_busy.py --competitors 2 --batches 20
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD_TIMEOUT_S = 1800


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def child(batches: int, warmup: int, threads: int | None, forever: bool) -> None:
    """One process: build PCNN+attention on the train split, time ``batches`` batches (or train
    forever as a competitor); prints one JSON line."""
    import resource

    import numpy as np
    import torch

    if threads:
        torch.set_num_threads(threads)
    import wikigenderbias
    from relext.protocols.data import prepare_split
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import (TrainConfig, make_optimizer, model_from_config, run_epoch,
                              seed_everything, training_sentences)
    from relext.model.vocab import Vocab

    ds = wikigenderbias.load()
    cfg = TrainConfig(encoder="pcnn", selector="attention", seed=0)
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params())
    vocab = Vocab.from_words(kv.index_to_key)
    prepared = prepare_split(ds["train"], "train", encoder="pcnn", vocab=vocab, max_length=120, kind="train")
    seed_everything(0)
    model = model_from_config(cfg, vocab, embedding_matrix(vocab, kv))
    opt = make_optimizer(cfg, model)
    rng = np.random.default_rng(0)
    bs = cfg.batch_size
    total = -(-len(prepared.bags) // bs)

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    if forever:
        print(json.dumps({"ready": True}), flush=True)
        while True:
            run_epoch(model, opt, prepared, rng.permutation(len(prepared.bags))[: 10 * bs], bs, progress=False)
    order = rng.permutation(len(prepared.bags))
    run_epoch(model, opt, prepared, order[: warmup * bs], bs, progress=False)
    order = order[warmup * bs: (warmup + batches) * bs]
    t, c = time.perf_counter(), cpu()
    run_epoch(model, opt, prepared, order, bs, progress=False)
    wall, used = time.perf_counter() - t, cpu() - c
    scale = total / batches
    print(json.dumps({"epoch_wall_s": wall * scale, "epoch_cpu_s": used * scale,
                      "threads": torch.get_num_threads(), "batches": batches, "total_batches": total}),
          flush=True)


BURN = "import time\nwhile True:\n    sum(i * i for i in range(10000))\n"


def start_competitors(kind: str, n: int) -> list[subprocess.Popen]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}
    procs = []
    for _ in range(n):
        if kind == "burn":
            procs.append(subprocess.Popen([sys.executable, "-c", BURN], env=env))
        else:
            p = subprocess.Popen([sys.executable, __file__, "--child", "--forever"], env=env,
                                 stdout=subprocess.PIPE, text=True)
            p.stdout.readline()     # built and training
            procs.append(p)
    time.sleep(3 if procs else 0)
    return procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def measure(threads: int, policy: str | None, batches: int, warmup: int) -> dict:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, __file__, "--child", "--threads", str(threads), "--batches",
                          str(batches), "--warmup", str(warmup)], env=env, capture_output=True, text=True,
                         timeout=CHILD_TIMEOUT_S, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def render(r: dict) -> str:
    lines = [
        "# re_busy: a PCNN+attention epoch on a busy machine", "",
        f"Command: `{r['command']}`. {r['cpu_count']} cores ({r['cpu']}), torch {r['torch']}; started "
        f"{r['started']}, finished {r.get('finished', '(running)')}. Each epoch is extrapolated from "
        f"{r['batches']} timed batches (after {r['warmup']} untimed) of a fresh process. Load averages "
        "(1/5/15 min) are before each measurement, competitors included.", "",
        "Fair-share epoch: the idle 1-thread epoch's CPU seconds / the cores a fair scheduler gives the "
        "process (threads x cores / all runnable threads, at most its threads); measured / fair > 1 is "
        "time lost beyond the share.", "",
        "| competitors | ours: threads | OMP_WAIT_POLICY | epoch s (wall) | epoch CPU s | fair-share epoch s | "
        "measured / fair | load before |", "|---|---|---|---|---|---|---|---|",
    ]
    for m in r["rows"]:
        lines.append(f"| {m['competitors']} | {m['threads']} | {m['policy'] or '(default)'} | "
                     f"{m['epoch_wall_s']:.1f} | {m['epoch_cpu_s']:.1f} | {m.get('fair_epoch_s', float('nan')):.1f} | "
                     f"{m.get('vs_fair', float('nan')):.2f} | {m['load_before']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--forever", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--competitors", type=int, default=2, help="busy processes next to ours (default 2)")
    ap.add_argument("--kinds", default="none,burn,torch")
    ap.add_argument("--out", default=str(HERE / "results" / "re_busy"))
    a = ap.parse_args(argv)
    if a.child:
        child(a.batches, a.warmup, a.threads, a.forever)
        return 0
    import torch
    from wgbcore.atomicio import atomic_write_text

    cores = os.cpu_count() or 1
    r = {"benchmark": "re_busy", "command": "python " + " ".join([sys.argv[0], *sys.argv[1:]]),
         "cpu_count": cores, "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
         "batches": a.batches, "warmup": a.warmup, "started": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    out = Path(a.out)
    idle_cpu = None
    for kind in [k for k in a.kinds.split(",") if k]:
        n = 0 if kind == "none" else a.competitors
        # runnable competitor threads: a burner is 1; a default torch competitor runs `cores` threads
        k_threads = {"none": 0, "burn": n, "torch": n * cores}[kind]
        for threads in (1, 2):
            for policy in (None, "PASSIVE"):
                procs = start_competitors(kind, n) if n else []
                try:
                    row = {"competitors": f"{n} x {kind}" if n else "none", "threads": threads, "policy": policy,
                           "load_before": _load()}
                    row.update(measure(threads, policy, a.batches, a.warmup))
                finally:
                    stop(procs)
                if kind == "none" and threads == 1 and policy is None:
                    idle_cpu = row["epoch_cpu_s"]
                if idle_cpu is not None:
                    share = min(threads, threads * cores / max(threads + k_threads, cores))
                    row["fair_epoch_s"] = idle_cpu / share
                    row["vs_fair"] = row["epoch_wall_s"] / row["fair_epoch_s"]
                r["rows"].append(row)
                print(json.dumps(row), flush=True)
                atomic_write_text(out.with_suffix(".json"), json.dumps(r, indent=2) + "\n")
                atomic_write_text(out.with_suffix(".md"), render(r))
    r["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    atomic_write_text(out.with_suffix(".json"), json.dumps(r, indent=2) + "\n")
    atomic_write_text(out.with_suffix(".md"), render(r))
    print(render(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
