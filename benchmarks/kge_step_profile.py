"""Where an epoch of our TransE on FB13 goes: the batch step cut into its phases, timed one by one.

The phases are those of :class:`kge.train_step.BatchStep` (closed-form path) and
:class:`kge.optim.RowAdam`, run by hand in the same order on the same batches as the trainer, so
their sum is one epoch (plus the loop). The gather and the write-back move every touched entity
row with its two Adam moments; their bytes over their time is the memory rate reached, and the
bytes over a copy rate of the same machine is a floor for them.

Usage: python benchmarks/kge_step_profile.py [--threads 2] [--epochs 3] [--out benchmarks/results]
writes ``kge_step_profile.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def copy_rate(n_bytes: int = 256 << 20) -> float:
    """Bytes a second of one large contiguous copy (read + write counted once each)."""
    a = torch.ones(n_bytes // 4)
    b = torch.empty_like(a)
    b.copy_(a)
    t0 = time.perf_counter()
    for _ in range(5):
        b.copy_(a)
    return 2 * n_bytes * 5 / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up epoch")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from kge.graph import load_fb13
    from kge.train import EmbeddingConfig, _Run

    g = load_fb13()
    cfg = EmbeddingConfig(model="transe", dim=100, model_kwargs={"p_norm": 2}, epochs=args.epochs + 1,
                          batch_size=4096, negatives=1, loss="margin", margin=1.0, optimizer="adam", lr=0.01, seed=0)
    run = _Run(g, cfg, None)
    load0 = [round(x, 2) for x in os.getloadavg()]
    run._epoch(0)
    st, ro = run.step, run.row_opt
    acc: dict[str, float] = {}
    rows_moved = 0

    def tm(k, f, *a):
        t = time.perf_counter()
        r = f(*a)
        acc[k] = acc.get(k, 0.0) + time.perf_counter() - t
        return r

    torch.set_grad_enabled(False)
    t_all = time.perf_counter()
    for _ in range(args.epochs):
        perm = torch.randperm(run.n, generator=run.gen)
        for i in range(0, run.n, cfg.batch_size):
            batch = run.train_t[perm[i:i + cfg.batch_size]]
            b = batch.shape[0]
            e_ids, ch = tm("negatives", st.sampler.corrupt, batch, 1, run.gen)
            ids = torch.cat([batch[:, 0], batch[:, 2], e_ids.reshape(-1)])
            rows, inv, handle = tm("unique + gather rows and moments", ro.gather, ids)
            rows_moved += len(handle[0])
            hv, tv, ev = tm("expand rows to the batch", lambda: st._split(rows.index_select(0, inv), b))
            pos, neg, backward = tm("scores", st.model.score_pairs_grad, hv, batch[:, 1], tv, ev, ch)
            _, dpos, dneg = tm("loss and its gradient", st.loss_grad, pos, neg, st.margin)
            per_id, dense = tm("gradients (closed form)", backward, dpos, dneg)
            grad = tm("sum gradients per row", lambda: torch.zeros_like(rows).index_add_(0, inv, per_id))
            for p, gr in dense:
                p.grad = gr
            tm("relation table (dense Adam)", lambda: [o.step() for o in st.dense_opts])
            uniq, blocks = handle
            ro.step_count += 1
            tm("row Adam update", ro._update, blocks, grad)
            tm("unit-sphere projection", st.project, blocks[0])
            tm("write rows and moments back", lambda: ro.store.index_copy_(
                0, uniq, torch.stack(blocks, dim=1, out=ro._ibuf[:len(uniq)])))
    total = time.perf_counter() - t_all
    per_epoch = {k: v / args.epochs for k, v in acc.items()}
    per_epoch["loop and the rest"] = total / args.epochs - sum(per_epoch.values())
    row_bytes = 3 * cfg.dim * 4
    moved = 2 * rows_moved / args.epochs * row_bytes  # gathered and written back
    mem_s = per_epoch["unique + gather rows and moments"] + per_epoch["write rows and moments back"]
    rate = copy_rate()
    res = {"benchmark": "kge_step_profile", "command": "python " + " ".join(["benchmarks/kge_step_profile.py", *sys.argv[1:]]),
           "threads": args.threads, "epochs_timed": args.epochs, "torch": torch.__version__, "cpu_count": os.cpu_count(),
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg_before": load0,
           "loadavg_after": [round(x, 2) for x in os.getloadavg()],
           "epoch_seconds": total / args.epochs, "phases_seconds_per_epoch": per_epoch,
           "unique_rows_per_batch": rows_moved / args.epochs / int(np.ceil(run.n / cfg.batch_size)),
           "row_bytes_moved_per_epoch": moved, "row_move_seconds_per_epoch": mem_s,
           "row_move_bytes_per_second": moved / mem_s, "contiguous_copy_bytes_per_second": rate,
           "row_move_floor_seconds_per_epoch": moved / rate}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    atomic_write_json(out / "kge_step_profile.json", res, indent=2)
    lines = ["# Where an epoch of TransE on FB13 goes (our trainer)", "",
             f"`{res['command']}` ({res['date']}; {args.threads} threads on {res['cpu_count']} cores; load average "
             f"{load0[0]} before, {res['loadavg_after'][0]} after). Batch 4096, 1 negative, Adam; {args.epochs} "
             "epochs timed phase by phase after a warm-up epoch.", "",
             "| phase | seconds / epoch | share |", "|---|---|---|"]
    for k, v in sorted(per_epoch.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {k} | {v:.3f} | {v / res['epoch_seconds']:.0%} |")
    lines += [f"| **epoch** | **{res['epoch_seconds']:.3f}** | |", "",
              f"Rows moved: {res['unique_rows_per_batch']:,.0f} unique entity rows per batch, each with its two Adam "
              f"moments ({row_bytes} bytes), gathered and written back: {moved / 1e9:.2f} GB an epoch in "
              f"{mem_s:.3f} s ({moved / mem_s / 1e9:.1f} GB/s). A contiguous copy on this machine moves "
              f"{rate / 1e9:.1f} GB/s, so those bytes cannot move in less than {moved / rate:.3f} s an epoch; "
              "random rows reach a fraction of that rate."]
    atomic_write_text(out / "kge_step_profile.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
