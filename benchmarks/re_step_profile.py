"""Where a PCNN + attention training epoch goes, ours and OpenNRE's, profiled in the same run.

Both sides train one untimed warm-up epoch, one timed epoch without the profiler, then one epoch
under ``torch.profiler`` (whose overhead weighs more on OpenNRE's many small operators, so only
the profiled epoch's shares are used, applied to the unprofiled epoch's CPU seconds). The
convolution's FLOPs are counted from the shapes (the profiler counts no FLOPs for mkldnn's
convolution). Each side's operator time is cut into the convolution's arithmetic (our ``addmm`` /
``mm`` of the im2col convolution and its backward; OpenNRE's ``mkldnn_convolution`` and
``convolution_backward``) and everything else. The arithmetic cannot be made faster without
changing the numbers (lower precision) or the model (frozen word vectors); so OpenNRE's epoch
over our arithmetic alone is the most a float32 CPU rewrite of our loop could reach against
OpenNRE on this machine. OpenNRE's DataLoader workers run in their own processes; their CPU
time is counted in its epoch CPU seconds, not in its operator table.

Usage: python benchmarks/re_step_profile.py [--threads 1] [--out benchmarks/results/re_step_profile]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARITH = {"ours": ("aten::addmm", "aten::mm"),
         "opennre": ("aten::mkldnn_convolution", "aten::convolution_backward", "aten::_convolution",
                     "aten::convolution", "aten::conv1d", "aten::_mkldnn_convolution")}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def profile_epoch(trainer, side: str) -> dict:
    """One timed epoch of ``trainer``, then one under the profiler: the timed epoch's wall and CPU
    seconds, and the profiled one's operators' self CPU time, the convolution arithmetic apart."""
    from torch.profiler import ProfilerActivity, profile

    load_before = _load()
    timed = trainer.epoch()
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        epoch = trainer.epoch()
    ops = [{"op": e.key, "self_cpu_s": e.self_cpu_time_total / 1e6, "calls": e.count, "flops": int(e.flops or 0)}
           for e in prof.key_averages()]
    ops.sort(key=lambda o: -o["self_cpu_s"])
    total = sum(o["self_cpu_s"] for o in ops)
    arith = [o for o in ops if o["op"] in ARITH[side]]
    a_s = sum(o["self_cpu_s"] for o in arith)
    a_f = sum(o["flops"] for o in arith)
    share = a_s / total
    return {"side": side, "model": trainer.name, "epoch": {k: round(v, 3) for k, v in timed.items()},
            "profiled_epoch": {k: round(v, 3) for k, v in epoch.items()},
            "operator_cpu_s": round(total, 3), "arithmetic_profiled_s": round(a_s, 3),
            "profiler_counted_flops": a_f, "arithmetic_share": round(share, 4),
            "arithmetic_s": round(share * timed["cpu_s"], 3),
            "arithmetic_ops": [o["op"] for o in arith],
            "top_ops": [{**o, "self_cpu_s": round(o["self_cpu_s"], 3)} for o in ops[:12]],
            "load_before": load_before, "load_after": _load()}


def padded_rows(prepared, batch_size: int, bucket: int = 64) -> int:
    """Output rows our convolution computes in one epoch, for an unshuffled epoch (a shuffle
    changes which sentences share a bucket, so the profiler's count of the real epoch differs a
    little): per batch, its sentences sorted by length in buckets of ``bucket``, each bucket cut
    to its longest sentence."""
    import numpy as np

    lengths = prepared.table.lengths.numpy()
    bags = prepared.bags
    rows = 0
    for b0 in range(0, len(bags), batch_size):
        idx = bags.select(np.arange(b0, min(b0 + batch_size, len(bags))))[0].numpy()
        ls = np.sort(np.maximum(lengths[idx], 1))
        for g0 in range(0, len(ls), bucket):
            g = ls[g0:g0 + bucket]
            rows += len(g) * int(g.max())
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "re_step_profile"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    import wikigenderbias
    from re_speed import OpenNRETrainer, OursTrainer, opennre_inputs
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
    prepared = prepare_split(ds["train"], "train", encoder="pcnn", vocab=vocab, max_length=120, kind="train")
    sides = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.txt"
        opennre_inputs(ds["train"], path)
        for side, make in (("ours", lambda: OursTrainer(prepared, vocab, vectors, "pcnn", "attention")),
                           ("opennre", lambda: OpenNRETrainer(path, vocab, vectors, "attention"))):
            tr = make()
            warm = tr.epoch()
            print(f"{side}: warm-up epoch {warm['wall_s']:.1f} s", flush=True)
            sides.append(profile_epoch(tr, side))
            print(f"{side}: profiled epoch {sides[-1]['epoch']}", flush=True)
    ours, peer = sides
    tokens = prepared.table.lengths.float()
    # convolution FLOPs of an epoch: forward 2 * rows * (kernel * channels) * hidden, backward twice
    # that (input and weight gradients); rows = sentences x padded length
    per_row = 3 * 2 * (3 * (50 + 2 * 5)) * 230
    ours["arithmetic_flops"] = int(per_row * padded_rows(prepared, cfg.batch_size))
    peer["arithmetic_flops"] = int(per_row * len(prepared.bags.rows) * 120)
    for sd in sides:
        sd["arithmetic_gflops_per_s"] = round(sd["arithmetic_flops"] / sd["arithmetic_s"] / 1e9, 2)
    res = {"benchmark": "re_step_profile", "data": "WikiGenderBias train split (embedded release)",
           "command": "python " + " ".join([sys.argv[0], *sys.argv[1:]]), "threads": args.threads,
           "torch": torch.__version__, "python": platform.python_version(), "cpu_count": os.cpu_count(),
           "train_sentences": int(len(prepared.bags.rows)), "mean_tokens": round(float(tokens.mean()), 2),
           "max_length": 120, "started": started, "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
           "load_start": load_start, "load_end": _load(), "sides": sides,
           "ratio_cpu": round(peer["epoch"]["cpu_s"] / ours["epoch"]["cpu_s"], 2),
           "flops_ratio": round(peer["arithmetic_flops"] / ours["arithmetic_flops"], 2),
           "ceiling_cpu": round(peer["epoch"]["cpu_s"] / ours["arithmetic_s"], 2)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=2) + "\n")
    out.with_suffix(".md").write_text(render(res))
    print(out.with_suffix(".md").read_text())
    return 0


def render(r: dict) -> str:
    o, p = r["sides"]
    lines = [
        "# re_step_profile: where a PCNN + attention epoch goes (ours vs OpenNRE, same run)", "",
        f"Written by `{r['command']}`; {r['threads']} torch thread(s) on {r['cpu_count']} cores, torch {r['torch']}; "
        f"{r['started']} to {r['finished']}; load average (1/5/15 min) {r['load_start']} at start, {r['load_end']} at "
        "end (the profiled epochs run under torch.profiler, so their times are a little above re_speed's).", "",
        f"{r['train_sentences']} training sentences, mean {r['mean_tokens']} tokens; OpenNRE pads every sentence "
        f"to {r['max_length']}, ours pads each length-sorted bucket to its longest sentence.", "",
        "| | ours | OpenNRE |", "|---|---|---|",
        f"| epoch CPU s (timed, no profiler; OpenNRE incl. its DataLoader workers) | {o['epoch']['cpu_s']} | {p['epoch']['cpu_s']} |",
        f"| epoch CPU s under the profiler | {o['profiled_epoch']['cpu_s']} | {p['profiled_epoch']['cpu_s']} |",
        f"| convolution arithmetic: share of the profiled operator time | {o['arithmetic_share']:.0%} | {p['arithmetic_share']:.0%} |",
        f"| convolution arithmetic CPU s (share x timed epoch) | {o['arithmetic_s']} | {p['arithmetic_s']} |",
        f"| its GFLOP (forward + backward, from the shapes) | {o['arithmetic_flops'] / 1e9:.1f} | {p['arithmetic_flops'] / 1e9:.1f} |",
        f"| its rate, GFLOP/s | {o['arithmetic_gflops_per_s']} | {p['arithmetic_gflops_per_s']} |",
        f"| operators counted as arithmetic | {', '.join(o['arithmetic_ops'])} | {', '.join(p['arithmetic_ops'])} |", "",
        f"**Ratio of the timed epochs (CPU): {r['ratio_cpu']}x.** OpenNRE does {r['flops_ratio']}x "
        f"our convolution FLOPs (its padding). **Ceiling: OpenNRE's epoch over our convolution arithmetic alone is "
        f"{r['ceiling_cpu']}x**: the ratio a float32 CPU loop of ours would reach if everything but the convolution's "
        "matrix products took no time. Past it, only fewer or cheaper FLOPs help (lower precision or frozen word "
        "vectors change the numbers; a GPU changes the machine).", "",
        "## Top operators (self CPU s)", "", "| ours | s | calls | OpenNRE | s | calls |", "|---|---|---|---|---|---|"]
    for a, b in zip(o["top_ops"], p["top_ops"]):
        lines.append(f"| {a['op']} | {a['self_cpu_s']} | {a['calls']} | {b['op']} | {b['self_cpu_s']} | {b['calls']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
