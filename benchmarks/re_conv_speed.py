"""One training epoch of PCNN+attention (or CNN) with the convolution's two paths, alternating in
one process: ``conv_impl="dense"`` (old) and ``"gather"`` (new), on the real train split.

Both models start from the same weights (same seed) and see the same bag order; each first
trains ``--warmup`` untimed epochs, then ``--repeats`` rounds of one more epoch each, the path
that goes first alternating between rounds, with the 1/5/15-minute load averages before and
after each epoch. The ratio is dense / gather per round (CPU seconds and wall), and its median.
CPU seconds are the steadier measure on a shared machine; on busy cores both are indicative only.

``--keep-heap`` (default) raises glibc's mmap/trim thresholds first (:mod:`relext.model.heap`, what
``relext.training.train`` does before training); ``--no-keep-heap`` leaves glibc's defaults (the trainer
before this change).

    python benchmarks/re_conv_speed.py                          # PCNN, 1 thread, 3 rounds
    python benchmarks/re_conv_speed.py --no-keep-heap --repeats 2 --out benchmarks/results/re_conv_speed_glibc

Writes ``--out``.json and .md (default ``benchmarks/results/re_conv_speed``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="pcnn", choices=["pcnn", "cnn"])
    ap.add_argument("--selector", default="attention")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep-heap", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--out", default=str(HERE / "results" / "re_conv_speed"))
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from relext.model.heap import retain_freed_memory

    heap = retain_freed_memory() if args.keep_heap else False
    import wikigenderbias
    from re_speed import OursTrainer
    from relext.protocols.data import prepare_split
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import TrainConfig, training_sentences
    from relext.model.vocab import Vocab

    started, load_start = time.strftime("%Y-%m-%d %H:%M:%S"), _load()
    ds = wikigenderbias.load()
    cfg = TrainConfig()
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params())
    vocab = Vocab.from_words(kv.index_to_key)
    vectors = embedding_matrix(vocab, kv)
    prepared = prepare_split(ds["train"], "train", encoder=args.encoder, vocab=vocab, max_length=120, kind="train")
    trainers = {p: OursTrainer(prepared, vocab, vectors, args.encoder, args.selector, impl=p) for p in ("dense", "gather")}
    res = {"benchmark": "re_conv_speed", "command": "python " + shlex.join([sys.argv[0], *(argv or sys.argv[1:])]),
           "encoder": args.encoder, "selector": args.selector, "threads": args.threads, "keep_heap": heap,
           "train_bags": len(prepared.bags), "train_sentences": int(len(prepared.bags.rows)),
           "mean_tokens": round(float(prepared.table.lengths.float().mean()), 2),
           "cpu_count": os.cpu_count(), "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
           "python": platform.python_version(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
           "started": started, "load_start": load_start, "warmup": [], "rounds": []}

    def epoch(p: str) -> dict:
        l0, f0 = _load(), _faults()
        e = trainers[p].epoch()
        return {"path": p, "wall_s": round(e["wall_s"], 3), "cpu_s": round(e["cpu_s"], 3),
                "mean_loss": round(e["mean_loss"], 4), "minor_faults": _faults() - f0, "load_before": l0,
                "load_after": _load()}

    for _ in range(args.warmup):
        for p in trainers:
            res["warmup"].append(epoch(p))
            print(json.dumps(res["warmup"][-1]), flush=True)
    for i in range(args.repeats):
        order = ("dense", "gather") if i % 2 == 0 else ("gather", "dense")
        row = {"round": i + 1, "first": order[0]}
        for p in order:
            row[p] = epoch(p)
        row["ratio_cpu"] = row["dense"]["cpu_s"] / row["gather"]["cpu_s"]
        row["ratio_wall"] = row["dense"]["wall_s"] / row["gather"]["wall_s"]
        res["rounds"].append(row)
        print(json.dumps(row), flush=True)
    rc = [r["ratio_cpu"] for r in res["rounds"]]
    rw = [r["ratio_wall"] for r in res["rounds"]]
    res.update(ratio_cpu_median=float(np.median(rc)), ratio_cpu_range=[min(rc), max(rc)],
               ratio_wall_median=float(np.median(rw)), ratio_wall_range=[min(rw), max(rw)],
               dense_cpu_median=float(np.median([r["dense"]["cpu_s"] for r in res["rounds"]])),
               gather_cpu_median=float(np.median([r["gather"]["cpu_s"] for r in res["rounds"]])),
               finished=time.strftime("%Y-%m-%d %H:%M:%S"), load_end=_load())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    atomic_write_json(out.with_suffix(".json"), res)
    atomic_write_text(out.with_suffix(".md"), render_md(res))
    print(render_md(res))
    return 0


def render_md(r: dict) -> str:
    lines = [
        f"# re_conv_speed: one {r['encoder']}+{r['selector']} training epoch, dense vs gather convolution", "",
        f"Command: `{r['command']}`. {r['train_bags']} training bags, {r['train_sentences']} sentences (mean "
        f"{r['mean_tokens']} tokens); {r['threads']} torch thread(s) on {r['cpu_count']} cores, torch {r['torch']}; "
        f"glibc heap kept between batches: {r['keep_heap']}; started {r['started']}, finished {r['finished']}; load "
        f"average (1/5/15 min) {r['load_start']} at the start, {r['load_end']} at the end.",
        "",
        f"**dense / gather: {r['ratio_cpu_median']:.2f}x in CPU seconds** (median of {len(r['rounds'])} rounds, range "
        f"{r['ratio_cpu_range'][0]:.2f}-{r['ratio_cpu_range'][1]:.2f}); wall {r['ratio_wall_median']:.2f}x (range "
        f"{r['ratio_wall_range'][0]:.2f}-{r['ratio_wall_range'][1]:.2f}). Median epoch CPU: dense "
        f"{r['dense_cpu_median']:.2f} s, gather {r['gather_cpu_median']:.2f} s. The machine is shared: with other "
        "processes on its cores these are indicative only (CPU seconds are the steadier measure).", "",
        "| round | path | wall s | CPU s | mean loss | minor page faults | load before | load after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in r["warmup"]:
        lines.append(f"| warm-up | {w['path']} | {w['wall_s']} | {w['cpu_s']} | {w['mean_loss']} | {w['minor_faults']} | "
                     f"{w['load_before']} | {w['load_after']} |")
    for row in r["rounds"]:
        for p in (row["first"], "gather" if row["first"] == "dense" else "dense"):
            e = row[p]
            lines.append(f"| {row['round']} | {p} | {e['wall_s']} | {e['cpu_s']} | {e['mean_loss']} | "
                         f"{e['minor_faults']} | {e['load_before']} | {e['load_after']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
