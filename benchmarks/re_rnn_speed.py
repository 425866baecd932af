"""RNN/BiRNN training speed, ``rnn_impl="fused"`` (old) against ``"gather"`` (new), on the real
WikiGenderBias train split, with a profile of where a step goes and the floor the recurrence's
matrix products set (issue 39, item 2).

Per encoder (GRU + attention, OpenNRE's hyperparameters, 1 torch thread by default):

1. **Profile.** Each path trains ``--batches`` untimed batches, then ``--batches`` more under
   ``torch.profiler``: the top operators by self CPU time, and the share of the matrix products
   (``addmm``, ``mm``, ``bmm``, ``baddbmm`` and their in-place forms).
2. **Floor.** The recurrence's matrix products are the same on both paths and on any exact float32
   rewrite: per real token and direction, ``h W_hh^T`` forward, ``dgh W_hh`` and ``dgh^T h`` backward,
   ``3 x 2 x 3H x H`` FLOPs. Their FLOPs over an epoch, divided by this machine's float32
   matrix-product rate at the step's shapes (``[346, 230] x [230, 690]``, measured in the same
   run with operands in cache), is the least CPU time any exact float32 path can spend; the
   epoch over it is the most any such restructuring can gain.
3. **Paired timing.** ``--rounds`` rounds, alternating which path goes first, of ``--batches``
   batches each (the same bags for both paths in a round), extrapolated to the whole epoch
   (labelled so); CPU and wall seconds, and the 1/5/15-minute load averages around each.

    python benchmarks/re_rnn_speed.py                                  # rnn and birnn, 6 batches, 3 rounds
    python benchmarks/re_rnn_speed.py --encoders birnn --batches 10 --rounds 5

Writes ``--out``.json and .md (default ``benchmarks/results/re_speed_rnn_gather``), rewritten after
every step.
"""
from __future__ import annotations

import argparse
import copy
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
PATHS = ("fused", "gather")
GEMM_OPS = ("aten::addmm", "aten::addmm_", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::baddbmm_")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def gemm_rate(hidden: int = 230, rows: int = 346, repeats: int = 200) -> float:
    """GFLOP/s of one float32 ``addmm`` at a recurrent step's shapes, operands in cache."""
    g = 3 * hidden
    h, w, b = torch.randn(rows, hidden), torch.randn(g, hidden), torch.randn(g)
    out = torch.empty(rows, g)
    for _ in range(10):
        torch.addmm(b, h, w.t(), out=out)
    c = time.process_time()
    for _ in range(repeats):
        torch.addmm(b, h, w.t(), out=out)
    return 2 * rows * hidden * g * repeats / (time.process_time() - c) / 1e9


def epoch_tokens(prepared) -> int:
    return int(prepared.table.lengths.clamp(min=1, max=120).sum())


def profile(trainer, top: int = 12) -> dict:
    from torch.profiler import ProfilerActivity, profile as torch_profile

    trainer.epoch()                                               # warm-up, untimed
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        trainer.epoch()
    ops = sorted(({"op": e.key, "self_cpu_s": e.self_cpu_time_total / 1e6, "calls": e.count}
                  for e in prof.key_averages()), key=lambda o: -o["self_cpu_s"])
    total = sum(o["self_cpu_s"] for o in ops)
    gemm = sum(o["self_cpu_s"] for o in ops if o["op"] in GEMM_OPS)
    return {"operator_cpu_s": round(total, 3), "gemm_cpu_s": round(gemm, 3), "gemm_share": round(gemm / total, 4),
            "top_ops": [{**o, "self_cpu_s": round(o["self_cpu_s"], 3),
                         "share": round(o["self_cpu_s"] / total, 4)} for o in ops[:top]]}


def paired(trainers: dict, rounds: int, log=print) -> list[dict]:
    """Rounds of one bounded epoch per path, alternating the first; both paths train on the same
    bags in a round (each trainer's own shuffle, from the same seed)."""
    rows = []
    for i in range(rounds):
        order = PATHS if i % 2 == 0 else PATHS[::-1]
        row = {"round": i + 1, "first": order[0]}
        for p in order:
            l0 = _load()
            e = trainers[p].epoch()
            row[p] = {"wall_s": round(e["wall_s"], 2), "cpu_s": round(e["cpu_s"], 2),
                      "mean_loss": round(e["mean_loss"], 4), "load_before": l0, "load_after": _load()}
        row["ratio_cpu"] = row["fused"]["cpu_s"] / row["gather"]["cpu_s"]
        row["ratio_wall"] = row["fused"]["wall_s"] / row["gather"]["wall_s"]
        rows.append(row)
        log(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoders", default="rnn,birnn")
    ap.add_argument("--selector", default="attention")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", type=int, default=6, help="batches per timed (extrapolated) epoch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "re_speed_rnn_gather"))
    args = ap.parse_args(argv)
    encoders = [e for e in args.encoders.split(",") if e]
    if not encoders or any(e not in ("rnn", "birnn") for e in encoders):
        ap.error(f"--encoders: rnn and/or birnn, got {args.encoders!r}")
    if args.batches < 1 or args.rounds < 1:
        ap.error("--batches and --rounds must be >= 1")

    torch.set_num_threads(args.threads)
    from relext.model.heap import retain_freed_memory

    heap = retain_freed_memory()                                  # as relext.training.train does
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
    prepared = prepare_split(ds["train"], "train", encoder="rnn", vocab=vocab, max_length=cfg.max_length, kind="train")
    tokens = epoch_tokens(prepared)
    res = {"benchmark": "re_rnn_speed", "command": "python " + shlex.join([sys.argv[0], *(argv or sys.argv[1:])]),
           "threads": args.threads, "batches": args.batches, "rounds": args.rounds, "keep_heap": heap,
           "train_bags": len(prepared.bags), "train_sentences": int(len(prepared.bags.rows)),
           "epoch_batches": -(-len(prepared.bags) // cfg.batch_size), "epoch_tokens": tokens,
           "mean_tokens": round(float(prepared.table.lengths.float().mean()), 2), "hidden": cfg.hidden,
           "cpu_count": os.cpu_count(), "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
           "python": platform.python_version(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
           "started": started, "load_start": load_start, "encoders": {}}
    out = Path(args.out)
    h, g = cfg.hidden, 3 * cfg.hidden
    for enc in encoders:
        def make(p, enc=enc):
            return OursTrainer(prepared, vocab, vectors, enc, args.selector, impl=p, batches=args.batches)

        d = 2 if enc == "birnn" else 1
        r = {"directions": d, "recurrent_gflop_per_epoch": round(3 * 2 * g * h * d * tokens / 1e9, 1)}
        res["encoders"][enc] = r
        if not args.no_profile:
            r["profile"] = {}
            for p in PATHS:
                r["profile"][p] = profile(make(p))
                print(enc, p, r["profile"][p]["gemm_share"], flush=True)
                write(res, out)
        trainers = {p: make(p) for p in PATHS}
        for p in PATHS:                                           # warm-up, untimed
            trainers[p].epoch()
        r["rounds"] = paired(trainers, args.rounds, log=lambda x: print(x, flush=True))
        rate = gemm_rate(cfg.hidden)
        rc = [x["ratio_cpu"] for x in r["rounds"]]
        med = {p: float(np.median([x[p]["cpu_s"] for x in r["rounds"]])) for p in PATHS}
        floor = r["recurrent_gflop_per_epoch"] / rate
        r.update(ratio_cpu_median=float(np.median(rc)), ratio_cpu_range=[min(rc), max(rc)],
                 ratio_wall_median=float(np.median([x["ratio_wall"] for x in r["rounds"]])),
                 cpu_s_median=med, gemm_gflops_per_s=round(rate, 1), floor_cpu_s=round(floor, 2),
                 ceiling_vs_fused=round(med["fused"] / floor, 2))
        write(res, out)
    res.update(finished=time.strftime("%Y-%m-%d %H:%M:%S"))
    write(res, out)
    print(render_md(res))
    return 0


def write(res: dict, out: Path) -> None:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    res["load_end"] = _load()
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out.with_suffix(".json"), res)
    atomic_write_text(out.with_suffix(".md"), render_md(res))


def render_md(r: dict) -> str:
    lines = [
        "# re_rnn_speed: RNN/BiRNN training, fused (old) vs gather (new) recurrence", "",
        f"Command: `{r['command']}`. {r['train_bags']} training bags, {r['train_sentences']} sentences (mean "
        f"{r['mean_tokens']} tokens, {r['epoch_tokens']} real tokens per epoch), GRU hidden {r['hidden']}; "
        f"{r['threads']} torch thread(s) on {r['cpu_count']} cores ({r['cpu']}), torch {r['torch']}; glibc heap kept "
        f"between batches: {r['keep_heap']}; started {r['started']}, finished {r.get('finished', '(running)')}; load "
        f"average (1/5/15 min) {r['load_start']} at the start, {r.get('load_end')} at the end.", "",
        f"**Extrapolated**: every epoch below was timed over {r['batches']} batches (of {r['epoch_batches']}) and "
        "scaled to the whole epoch. The machine is shared: with other processes on its cores absolute times are "
        "indicative only; compare the ratios, measured side by side (CPU seconds are the steadier measure).", "",
    ]
    for enc, e in r["encoders"].items():
        lines += [f"## {enc} + attention", ""]
        if "ratio_cpu_median" in e:
            lines += [
                f"**fused / gather: {e['ratio_cpu_median']:.2f}x in CPU seconds** (median of {len(e['rounds'])} "
                f"rounds, range {e['ratio_cpu_range'][0]:.2f}-{e['ratio_cpu_range'][1]:.2f}; wall "
                f"{e['ratio_wall_median']:.2f}x). Median epoch CPU: fused {e['cpu_s_median']['fused']:.1f} s, gather "
                f"{e['cpu_s_median']['gather']:.1f} s.", "",
                f"**Floor**: the recurrence's matrix products alone are {e['recurrent_gflop_per_epoch']} GFLOP per "
                f"epoch; at this machine's float32 rate for a step's product measured in this run "
                f"({e['gemm_gflops_per_s']} GFLOP/s, operands in cache) that is {e['floor_cpu_s']} CPU s: "
                f"**no exact float32 path can be more than {e['ceiling_vs_fused']}x faster than fused** here.", "",
                "| round | path | wall s | CPU s | mean loss | load before | load after |",
                "|---|---|---|---|---|---|---|"]
            for row in e["rounds"]:
                for p in (row["first"], PATHS[1] if row["first"] == PATHS[0] else PATHS[0]):
                    x = row[p]
                    lines.append(f"| {row['round']} | {p} | {x['wall_s']} | {x['cpu_s']} | {x['mean_loss']} | "
                                 f"{x['load_before']} | {x['load_after']} |")
            lines.append("")
        for p, prof in e.get("profile", {}).items():
            lines += [f"Profile, {p} path ({r['batches']} batches under torch.profiler): matrix products "
                      f"{prof['gemm_share']:.0%} of {prof['operator_cpu_s']} operator CPU s.", "",
                      "| operator | self CPU s | share | calls |", "|---|---|---|---|"]
            lines += [f"| {o['op']} | {o['self_cpu_s']} | {o['share']:.1%} | {o['calls']} |" for o in prof["top_ops"]]
            lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
