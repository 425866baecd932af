"""The physical floor of a PCNN+attention training epoch on the real WikiGenderBias train split
(issue 39, item 4): FLOPs and bytes per epoch, this machine's measured matrix-product and memory
throughput, and the floor ``max(FLOP time, byte time)`` at 1 and 2 threads against the measured epoch.

1. **Counts.** Every batch of one epoch (the trainer's batches: 160 bags, one shuffle) through
   :mod:`re_floor_counts`: analytic FLOPs (matrix products / other) and minimal bytes (stream /
   gather) per stage, forward + backward + SGD step, for ``conv_impl="gather"`` and ``"dense"``; and
   the bytes the code moves per ATen operator (``OpTraffic``) over the same epoch, training for real.
2. **Throughput**, at 1 and 2 threads, best of ``--best-of`` (the machine is shared: the best repeat
   is the least disturbed one), wall clock, float32: ``torch.mm`` / ``addmm`` at the epoch's shapes
   (median distinct words per batch, mean dense bucket), a large copy (torch, numpy) and one of a
   batch's conv-output size, and the gathers at a real batch's shapes and indices (the taps'
   ``embedding_bag``, the backward's scatter as ``index_add_`` per tap and as the ``embedding_bag``
   over sorted entries it uses, the pooling's ``index_select``).
3. **Floor**: FLOP time = each product group's FLOPs at its measured rate + the other FLOPs at the
   best product rate; byte time = stream bytes at the best copy rate + gather bytes at the best gather
   rate (both lower bounds); floor = the larger. Given with the trainer's SGD (weight decay on every
   word row each step) and with a lazy decay of the touched rows only.
4. **Measured epoch**: the committed ones (``re_conv_speed``, ``re_equivalence``) and ``--batches``
   batches per path and thread count timed here (``--rounds`` rounds, extrapolated, labelled).
5. **Profile**: ``--profile-batches`` batches of the gather path under ``torch.profiler`` (1 thread):
   top operators by self CPU time.

    python benchmarks/re_floor.py                         # about 7 minutes on 2 loaded cores
    python benchmarks/re_floor.py --rerender              # the floor and the .md again from the stored .json

Writes ``--out``.json and .md (default ``benchmarks/results/re_floor``), rewritten after every step.
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

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import re_floor_counts as rfc  # noqa: E402

PATHS = ("gather", "dense")
GEMM_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _measured(fn):
    """``fn()`` with the 1/5/15-minute load averages before and after it."""
    l0 = _load()
    out = fn()
    return {**out, "load_before": l0, "load_after": _load()}


def best_rate(fn, work: float, *, repeats: int, calls: int) -> tuple[float, float]:
    """``work`` units per second of ``fn``: the best of ``repeats`` timings of ``calls`` calls, by the
    wall clock and by the process's CPU time (at 1 thread the time it ran, waits for the core left out)."""
    fn()
    wall = cpu = float("inf")
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(calls):
            fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return work * calls / wall, work * calls / max(cpu, 1e-9)


def machine() -> dict:
    name = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")), platform.processor())
    l3 = Path("/sys/devices/system/cpu/cpu0/cache/index3/size")
    cfg = torch.__config__.show()
    return {"cpu": name, "cpu_count": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "l3": l3.read_text().strip() if l3.exists() else None, "torch": torch.__version__,
            "blas": "mkl" if "BLAS_INFO=mkl" in cfg else "other", "avx": "AVX512" if "AVX512" in cfg else "AVX2",
            "numpy": np.__version__, "python": platform.python_version(), "platform": platform.platform(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


# ----------------------------------------------------------------------------------- counts

def epoch_counts(prepared, dims: rfc.Dims, order: np.ndarray, batch_size: int) -> dict:
    from relext.model.bags import iter_batches

    counts = {p: {} for p in PATHS}
    lazy: dict = {}
    stats = []
    for b in iter_batches(prepared.bags, batch_size, order):
        flat, _ = prepared.bags.select(b)
        st = rfc.batch_stats(prepared.table.gather(flat), len(b), dims.bucket_size)
        stats.append(st)
        for p in PATHS:
            rfc.add_counts(counts[p], rfc.step_counts(st, dims, p))
        rfc.add_counts(lazy, rfc.shared_counts(st, dims, lazy_decay=True))
    keys = ("sentences", "bags", "tokens", "unique_words", "nonempty_pieces", "padded", "buckets")
    epoch = {k: int(sum(s[k] for s in stats)) for k in keys}
    epoch.update(batches=len(stats), window_tokens=epoch["sentences"] * dims.max_length,
                 median_unique_words=int(np.median([s["unique_words"] for s in stats])),
                 median_tokens=int(np.median([s["tokens"] for s in stats])),
                 median_sentences=int(np.median([s["sentences"] for s in stats])),
                 mean_bucket_rows=int(round(epoch["padded"] / epoch["buckets"])))
    return {"epoch": epoch, "stages": counts, "sgd_lazy": lazy["sgd step (touched rows)"],
            "totals": {p: rfc.totals(counts[p]) for p in PATHS}}


def traffic_epoch(prepared, vocab, vectors, path: str, order: np.ndarray, batch_size: int) -> dict:
    """One real training epoch of ``path`` under :class:`re_floor_counts.OpTraffic`."""
    from re_speed import OursTrainer
    from relext.training.train import run_epoch

    tr = OursTrainer(prepared, vocab, vectors, "pcnn", "attention", impl=path)
    t = time.perf_counter()
    with rfc.OpTraffic() as traffic:
        run_epoch(tr.model, tr.opt, prepared, order, batch_size, progress=False)
    s = traffic.summary()
    top = sorted(s["ops"].items(), key=lambda kv: -(kv[1]["stream_bytes"] + kv[1]["gather_bytes"]))[:12]
    return {"stream_bytes": s["stream_bytes"], "gather_bytes": s["gather_bytes"], "gemm_flops": s["gemm_flops"],
            "calls": s["calls"], "wall_s_counted": round(time.perf_counter() - t, 2),
            "top_ops": [{"op": k, **v} for k, v in top]}


# ------------------------------------------------------------------------------- throughput

def gemm_shapes(ep: dict, dims: rfc.Dims) -> dict[str, tuple]:
    """(m, k, n, transposed operands) of each product group at the epoch's typical batch."""
    u, m = ep["median_unique_words"], ep["mean_bucket_rows"]
    kh, dw, kc, h = dims.kernel * dims.hidden, dims.word_dim, dims.kernel * dims.channels, dims.hidden
    return {"projection fwd [U,50]@[50,690]": (u, dw, kh, ""),
            "projection bwd [U,690]@[690,50]": (u, kh, dw, "b"),
            "projection bwd [50,U]@[U,690]": (dw, u, kh, "a"),
            "dense conv fwd addmm [M,180]@[180,230]": (m, kc, h, "bias"),
            "dense conv bwd [M,230]@[230,180]": (m, h, kc, "b"),
            "dense conv bwd [180,M]@[M,230]": (kc, m, h, "a")}


def gemm_rates(shapes: dict, threads: int, repeats: int) -> dict:
    torch.set_num_threads(threads)
    out = {}
    for name, (m, k, n, how) in shapes.items():
        a = torch.randn(k, m).t() if how == "a" else torch.randn(m, k)      # the code's layouts: a transposed view
        b = torch.randn(n, k).t() if how == "b" else torch.randn(k, n)
        c, bias = torch.empty(m, n), torch.randn(n)
        fn = (lambda: torch.addmm(bias, a, b, out=c)) if how == "bias" else (lambda: torch.mm(a, b, out=c))
        flops = 2 * m * k * n
        calls = max(1, int(6e8 / flops))
        out[name] = _measured(lambda: dict(zip(("gflop_s", "gflop_s_cpu"), (
            round(x, 1) for x in best_rate(fn, flops / 1e9, repeats=repeats, calls=calls))), shape=[m, k, n]))
    return out


def real_gather_inputs(prepared, vocab, vectors, order, batch_size) -> dict:
    """The gather path's table and index of a real batch (captured from ``GatherConv.apply``), the
    output gradient's shape and the pooling slots."""
    from relext.model.encoders import conv_gather
    from relext.model.bag_model import build_model

    flat, seg = prepared.bags.select(order[:batch_size])
    batch = prepared.table.gather(flat)
    model = build_model("pcnn", "attention", num_words=len(vocab), vectors=vectors, conv_impl="gather")
    seen = []
    orig = conv_gather.GatherConv.apply
    conv_gather.GatherConv.apply = lambda *a: seen.append(a) or orig(*a)
    try:
        with torch.no_grad():
            model.encoder(batch)
    finally:
        conv_gather.GatherConv.apply = orig
    eu, wc, small, idx = seen[0]
    table = torch.cat([(eu @ wc).view(-1, small.shape[1]), small])
    packed = conv_gather.packed_tokens(batch)
    slot = torch.where(packed["pieces"] > 0, packed["sent"] * 3 + packed["pieces"], 0)
    return {"table": table, "idx": idx, "slot": slot, "slots": 3 * len(flat) + 1}


def memory_rates(g: dict, threads: int, repeats: int, big_mb: int) -> dict:
    torch.set_num_threads(threads)
    table, idx, slot = g["table"], g["idx"], g["slot"]
    n, s = idx.shape
    h = table.shape[1]
    grad = torch.randn(n, h)
    pooled = torch.randn(g["slots"], h)
    big = torch.randn(big_mb * 2 ** 20 // 4)
    big_out = torch.empty_like(big)
    nb, nb_out = big.numpy(), big_out.numpy()
    y, y_out = torch.randn(n, h), torch.empty(n, h)
    flat = idx.reshape(-1)
    order = torch.sort(flat, stable=True).indices
    counts = torch.bincount(flat, minlength=table.shape[0])
    offsets = counts.cumsum(0) - counts
    tokens = order.div(s, rounding_mode="floor")
    acc = torch.zeros_like(table)
    row = h * 4
    cases = {
        # name: (function, bytes moved per call, class)
        f"torch copy {big_mb} MiB": (lambda: big_out.copy_(big), 2 * big.numel() * 4, "stream"),
        f"numpy copy {big_mb} MiB (numpy: 1 thread always)": (lambda: np.copyto(nb_out, nb), 2 * nb.nbytes, "stream"),
        f"torch copy [N,230] = {y.numel() * 4 / 2**20:.1f} MiB (a batch's conv output)": (lambda: y_out.copy_(y), 2 * y.numel() * 4, "stream"),
        f"embedding_bag sum, taps fwd: idx [{n},{s}] into [{table.shape[0]},{h}]":
            (lambda: F.embedding_bag(idx, table, mode="sum"), idx.numel() * row + n * row, "gather"),
        f"embedding_bag over sorted entries (the tap sum's backward): [{n * s}] rows of [{n},{h}]":
            (lambda: F.embedding_bag(tokens, grad, offsets, mode="sum"), idx.numel() * row + table.numel() * 4, "gather"),
        f"index_add_ per tap (scatter): {s} x [{n},{h}] into [{table.shape[0]},{h}]":
            (lambda: [acc.index_add_(0, idx[:, j], grad) for j in range(s)], s * (n * row + 2 * n * row), "gather"),
        f"index_select rows (pooling bwd): [{n}] of [{g['slots']},{h}]":
            (lambda: pooled.index_select(0, slot), 2 * n * row, "gather"),
    }
    out = {}
    for name, (fn, nbytes, kind) in cases.items():
        calls = max(1, int(2e8 / nbytes))
        out[name] = _measured(lambda: dict(zip(("gb_s", "gb_s_cpu"), (
            round(x, 2) for x in best_rate(fn, nbytes / 1e9, repeats=repeats, calls=calls))), **{
            "class": kind, "bytes_per_call": int(nbytes)}))
    return out


# -------------------------------------------------------------------------------- timing

def timed_batches(prepared, vocab, vectors, path: str, threads: int, batches: int, rounds: int) -> dict:
    from re_speed import OursTrainer

    torch.set_num_threads(threads)
    tr = OursTrainer(prepared, vocab, vectors, "pcnn", "attention", impl=path, batches=batches)
    tr.epoch()                                                        # warm-up, untimed
    rows = [_measured(lambda: {k: round(v, 3) for k, v in tr.epoch().items()}) for _ in range(rounds)]
    return {"path": path, "threads": threads, "batches": min(batches, tr.total), "of": tr.total, "rounds": rows,
            "wall_s_median": float(np.median([r["wall_s"] for r in rows])), "wall_s_min": min(r["wall_s"] for r in rows),
            "cpu_s_median": float(np.median([r["cpu_s"] for r in rows])), "cpu_s_min": min(r["cpu_s"] for r in rows)}


GATHER_OPS = ("aten::embedding", "aten::_embedding_bag", "aten::index_select", "aten::index_add", "aten::scatter",
              "aten::embedding_dense_backward", "aten::index")
INDEX_OPS = ("aten::sort", "aten::unique", "aten::_unique", "aten::bincount", "aten::div", "aten::cumsum", "aten::nonzero",
             "aten::where", "aten::clamp", "aten::arange", "aten::remainder", "aten::floor_divide", "aten::stack")


def op_group(name: str) -> str:
    """The profile's operator groups: products, gathers/scatters, index bookkeeping (integer work on
    the token ids: packing, distinct words, the taps' indices, the backward's sort), autograd nodes
    and Python functions, the rest (elementwise float work, allocation)."""
    if name in GEMM_OPS:
        return "matrix products"
    if name.startswith(GATHER_OPS):
        return "gathers / scatters"
    if name.startswith(INDEX_OPS):
        return "index bookkeeping (integer)"
    if not name.startswith("aten::"):
        return "autograd nodes / Python functions"
    return "other aten (elementwise, copies, allocation)"


def profile_gather(prepared, vocab, vectors, batches: int, top: int = 15) -> dict:
    from torch.profiler import ProfilerActivity, profile
    from re_speed import OursTrainer

    torch.set_num_threads(1)
    tr = OursTrainer(prepared, vocab, vectors, "pcnn", "attention", impl="gather", batches=batches)
    tr.epoch()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        tr.epoch()
    ops = sorted(({"op": e.key, "self_cpu_s": e.self_cpu_time_total / 1e6, "calls": e.count}
                  for e in prof.key_averages()), key=lambda o: -o["self_cpu_s"])
    total = sum(o["self_cpu_s"] for o in ops)
    gemm = sum(o["self_cpu_s"] for o in ops if o["op"] in GEMM_OPS)
    groups: dict[str, float] = {}
    for o in ops:
        groups[op_group(o["op"])] = groups.get(op_group(o["op"]), 0.0) + o["self_cpu_s"]
    return {"batches": batches, "operator_cpu_s": round(total, 3), "gemm_share": round(gemm / total, 4),
            "groups": {k: round(v / total, 4) for k, v in sorted(groups.items(), key=lambda kv: -kv[1])},
            "top_ops": [{**o, "self_cpu_s": round(o["self_cpu_s"], 4), "share": round(o["self_cpu_s"] / total, 4)}
                        for o in ops[:top]]}


# --------------------------------------------------------------------------------- floor

def floor(counts: dict, path: str, gemm: dict, mem: dict, *, lazy: bool, cpu: bool) -> dict:
    """FLOP time, byte time and their max for one path at one thread count; ``cpu``: the rates by CPU
    time (1 thread: the time the thread ran), else by the wall clock."""
    fk, bk = ("gflop_s_cpu", "gb_s_cpu") if cpu else ("gflop_s", "gb_s")
    stages = dict(counts["stages"][path])
    if lazy:
        stages.pop("sgd step")
        stages["sgd step (touched rows)"] = counts["sgd_lazy"]
    tot = rfc.totals(stages)
    rates = {k: v[fk] * 1e9 for k, v in gemm.items()}
    best = max(rates.values())
    pick = {"gather": {"projection fwd": ["projection fwd [U,50]@[50,690]"],
                       "projection bwd": ["projection bwd [U,690]@[690,50]", "projection bwd [50,U]@[U,690]"]},
            "dense": {"conv product fwd": ["dense conv fwd addmm [M,180]@[180,230]"],
                      "conv products bwd": ["dense conv bwd [M,230]@[230,180]", "dense conv bwd [180,M]@[M,230]"]}}[path]
    t_gemm = 0.0
    for name, v in stages.items():
        keys = next((ks for prefix, ks in pick.items() if name.startswith(prefix)), None)
        # equal FLOPs per product of a group: the time is the mean of 1 / rate
        t_gemm += v["gemm_flops"] * (np.mean([1 / rates[k] for k in keys]) if keys else 1 / best)
    t_other = tot["other_flops"] / best
    stream = max(v[bk] for v in mem.values() if v["class"] == "stream") * 1e9
    gather = max(v[bk] for v in mem.values() if v["class"] == "gather") * 1e9
    t_bytes = tot["stream_bytes"] / stream + tot["gather_bytes"] / gather
    # the same with the taps' gathers at their own measured rates (the big tables), the rest as above
    own = {"tap sum fwd": "embedding_bag sum, taps fwd", "tap sum bwd": "embedding_bag over sorted entries"}
    t_matched = tot["stream_bytes"] / stream
    for name, v in stages.items():
        case = next((c for prefix, c in own.items() if name.startswith(prefix)), None)
        rate = next(x[bk] for k, x in mem.items() if k.startswith(case)) * 1e9 if case else gather
        t_matched += v["gather_bytes"] / rate
    t_flop = t_gemm + t_other
    return {"flop_s": round(t_flop, 3), "gemm_s": round(t_gemm, 3), "byte_s_best": round(t_bytes, 3),
            "byte_s": round(t_matched, 3), "floor_s": round(max(t_flop, t_matched), 3),
            "dominant": "FLOPs" if t_flop >= t_matched else "bytes", "sum_s": round(t_flop + t_matched, 3),
            "stream_s": round(tot["stream_bytes"] / stream, 3), "gather_s": round(t_matched - tot["stream_bytes"] / stream, 3), "rates": "CPU time" if cpu else "wall clock", "stream_gb_s": round(stream / 1e9, 2), "gather_gb_s": round(gather / 1e9, 2),
            "totals": tot}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--best-of", type=int, default=20)
    ap.add_argument("--big-mb", type=int, default=256)
    ap.add_argument("--batches", type=int, default=10, help="batches per timed (extrapolated) epoch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile-batches", type=int, default=10)
    ap.add_argument("--no-traffic", action="store_true", help="skip the per-operator traffic epochs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(HERE / "results" / "re_floor"))
    ap.add_argument("--rerender", action="store_true", help="recompute the floor and the .md from --out.json only")
    args = ap.parse_args(argv)
    if args.rerender:
        out = Path(args.out)
        if not out.with_suffix(".json").is_file():
            ap.error(f"--rerender: no results at {out.with_suffix('.json')}")
        res = json.loads(out.with_suffix(".json").read_text())
        res["floor"] = floors(res)
        res["rerendered"] = time.strftime("%Y-%m-%d %H:%M:%S")
        write(res, out, keep_load=True)
        return 0
    try:
        threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        ap.error(f"--threads: comma-separated thread counts, got {args.threads!r}")
    if not threads or min(threads) < 1 or args.best_of < 1 or args.batches < 1 or args.rounds < 1:
        ap.error("--threads, --best-of, --batches and --rounds must be positive")

    from relext.model.heap import retain_freed_memory

    heap = retain_freed_memory()                                  # as relext.training.train does
    import wikigenderbias
    from relext.protocols.data import prepare_split
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import TrainConfig, training_sentences
    from relext.model.vocab import Vocab

    res = {"benchmark": "re_floor", "command": "python " + shlex.join([sys.argv[0], *(argv or sys.argv[1:])]),
           "machine": machine(), "keep_heap": None, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
           "load_start": _load(), "best_of": args.best_of}
    out = Path(args.out)
    ds = wikigenderbias.load()
    cfg = TrainConfig()
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params())
    vocab = Vocab.from_words(kv.index_to_key)
    vectors = embedding_matrix(vocab, kv)
    prepared = prepare_split(ds["train"], "train", encoder="pcnn", vocab=vocab, max_length=cfg.max_length, kind="train")
    dims = rfc.Dims(vocab=len(vocab), hidden=cfg.hidden, kernel=cfg.kernel, word_dim=cfg.word_dim, pos_dim=cfg.pos_dim,
                    max_length=cfg.max_length, bucket_size=cfg.bucket_size)
    res.update(keep_heap=heap, dims=dims.__dict__, batch_size=cfg.batch_size, optimizer=f"{cfg.optimizer} lr {cfg.lr} "
               f"weight decay {cfg.weight_decay}")
    order = np.random.default_rng(args.seed).permutation(len(prepared.bags))
    counts = _measured(lambda: epoch_counts(prepared, dims, order, cfg.batch_size))
    res["counts"] = counts
    write(res, out)
    if not args.no_traffic:
        torch.set_num_threads(1)
        res["traffic"] = {p: _measured(lambda p=p: traffic_epoch(prepared, vocab, vectors, p, order, cfg.batch_size))
                          for p in PATHS}
        write(res, out)
    shapes = gemm_shapes(counts["epoch"], dims)
    g_in = real_gather_inputs(prepared, vocab, vectors, order, cfg.batch_size)
    res["throughput"] = {}
    for t in threads:
        res["throughput"][str(t)] = {"gemm": gemm_rates(shapes, t, args.best_of),
                                     "memory": memory_rates(g_in, t, args.best_of, args.big_mb)}
        print(json.dumps(res["throughput"][str(t)]), flush=True)
        write(res, out)
    res["timed"] = {f"{p}@{t}": timed_batches(prepared, vocab, vectors, p, t, args.batches, args.rounds)
                    for t in threads for p in PATHS}
    write(res, out)
    res["committed"] = committed_epochs()
    res["floor"] = floors(res)
    write(res, out)
    if args.profile_batches:
        res["profile"] = _measured(lambda: profile_gather(prepared, vocab, vectors, args.profile_batches))
    res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write(res, out)
    print(out.with_suffix(".md").read_text())
    return 0


def floors(res: dict) -> dict:
    """The floor of each path at each measured thread count, with the trainer's SGD and the lazy one."""
    return {f"{p}@{t}" + ("+lazy" if lazy else ""): floor(res["counts"], p, th["gemm"], th["memory"], lazy=lazy,
                                                          cpu=t == "1")
            for t, th in res["throughput"].items() for p in PATHS for lazy in (False, True)}


def committed_epochs() -> dict:
    """The committed epoch times this floor is compared with (1 thread)."""
    out = {}
    conv = HERE / "results" / "re_conv_speed.json"
    if conv.exists():
        r = json.loads(conv.read_text())
        for p in PATHS:
            out[f"re_conv_speed {p}"] = {"threads": r["threads"], "cpu_s": r[f"{p}_cpu_median"],
                                         "wall_s": float(np.median([x[p]["wall_s"] for x in r["rounds"]])),
                                         "load": [r["load_start"], r["load_end"]]}
    eq = HERE / "results" / "re_equivalence.json"
    if eq.exists():
        r = json.loads(eq.read_text())
        for p in PATHS:
            out[f"re_equivalence {p}"] = {"threads": r["runs"][0]["threads"], "wall_s": r["timing"]["mean_epoch_train_s"][p],
                                          "load": [r["load_start"], r["load_end"]]}
    return out


def write(res: dict, out: Path, keep_load: bool = False) -> None:
    from re_floor_report import render_md
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    if not keep_load:
        res["load_end"] = _load()
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out.with_suffix(".json"), res)
    atomic_write_text(out.with_suffix(".md"), render_md(res))


if __name__ == "__main__":
    sys.exit(main())
