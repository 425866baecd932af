"""Training speed of our bag-level extractors vs OpenNRE (0.1.1) on the real WikiGenderBias train split.

Same run, same machine, same hyperparameters (OpenNRE's: 230 filters, window 3, 50-d words, 5-d
positions, max length 120, batch 160 bags, SGD lr 0.1, weight decay 1e-5, dropout 0.5), same
Word2Vec matrix and vocabulary. One training epoch is timed for each model after data
preparation (OpenNRE prepares sentences in its DataLoader workers during the epoch, which is
part of its epoch time; our one-off featurization is reported separately).

    python benchmarks/re_speed.py                       # pcnn+attention ours vs OpenNRE, + other encoders
    python benchmarks/re_speed.py --models pcnn:attention --no-opennre
    python benchmarks/re_speed.py --models rnn:attention,birnn:attention --no-opennre --out benchmarks/results/re_speed_rnn
    # the GRU encoders with PCNN before and after them in the same run (the committed re_speed_gru)
    python benchmarks/re_speed.py --models pcnn:attention,rnn:attention,birnn:attention,pcnn:attention \
        --no-opennre --out benchmarks/results/re_speed_gru

A third field picks the RNN path: ``rnn:attention:module`` times torch's nn.GRU over a packed
sequence (the code before the fused path). ``--batches N`` times only the first N batches of each
epoch and extrapolates to the whole epoch (labelled so in the results; for quick iterations).
Every run's epoch time is also given as a ratio to the mean PCNN+attention epoch of the same run.

Writes benchmarks/results/re_speed.json and .md (with the machine's load average: the machine
may be shared, so compare the ratio, measured in the same run).
"""
from __future__ import annotations

import os

# OpenMP's wait policy is left at its default (idle threads spin briefly), which is what users
# get and the fastest on free cores: PASSIVE made our epoch 2x slower on an idle 2-core machine
# (22 s vs 11 s). On a machine loaded beyond its core count, spinning threads can make 2-thread
# torch far slower; there run with OMP_WAIT_POLICY=PASSIVE in the environment (recorded below).

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def _cpu() -> float:
    """CPU seconds used by this process and its finished children (OpenNRE's DataLoader workers
    are joined at the end of each epoch, so they are counted)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def time_ours(prepared, vocab, vectors, encoder: str, selector: str, *, epochs: int, seed: int = 0,
              impl: str | None = None, batches: int | None = None) -> dict:
    from relext.train import TrainConfig, make_optimizer, model_from_config, run_epoch, seed_everything

    cfg = TrainConfig(encoder=encoder, selector=selector, seed=seed)
    seed_everything(seed)
    model = model_from_config(cfg, vocab, vectors)
    if impl is not None:
        if not hasattr(model.encoder, "impl"):
            raise ValueError(f"encoder {encoder!r} has no implementation choice (got {impl!r})")
        model.encoder.impl = impl
    opt = make_optimizer(cfg, model)
    total = -(-len(prepared.bags) // cfg.batch_size)
    scale = total / min(batches, total) if batches else 1.0
    rng = np.random.default_rng(seed)
    times, losses = [], []
    load_before = _load()
    cpu = []
    for _ in range(epochs):
        order = rng.permutation(len(prepared.bags))
        if batches:
            order = order[: batches * cfg.batch_size]
        t, c = time.perf_counter(), _cpu()
        losses.append(run_epoch(model, opt, prepared, order, cfg.batch_size, progress=False))
        times.append((time.perf_counter() - t) * scale)
        cpu.append((_cpu() - c) * scale)
    name = f"ours {encoder}+{selector}" + (f" ({impl})" if impl else "")
    out = {"model": name, "encoder": encoder, "selector": selector, "impl": impl,
           "epoch_seconds": [round(x, 2) for x in times], "epoch_cpu_seconds": [round(x, 2) for x in cpu],
           "mean_loss": [round(x, 4) for x in losses], "load_before": load_before, "load_after": _load()}
    if batches and scale > 1:
        out["extrapolated_from_batches"] = [min(batches, total), total]
    return out


def opennre_inputs(ds_train, path: Path) -> int:
    """The train split in OpenNRE's bag format (one python-dict line per sentence)."""
    from wikigenderbias.schema import RELATIONS

    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in ds_train:
            hs, ts = row["head_span"], row["tail_span"]
            hs = hs if hs[0] >= 0 else [0, 1]
            ts = ts if ts[0] >= 0 else [0, 1]
            fh.write(repr({"token": row["tokens"], "h": {"name": row["head"], "id": row["entity_id"], "pos": hs},
                           "t": {"name": row["tail"], "id": row["tail"], "pos": ts},
                           "relation": RELATIONS[row["relation"]]}) + "\n")
            n += 1
    return n


def time_opennre(train_path: Path, vocab, vectors, selector: str, *, epochs: int) -> dict:
    import opennre
    from opennre import encoder as onre_encoder, framework, model as onre_model
    from wikigenderbias.schema import RELATIONS

    token2id = {w: i for i, w in enumerate(vocab.tokens[2:])}
    w2v = np.ascontiguousarray(vectors[2:])
    rel2id = {r: i for i, r in enumerate(RELATIONS)}
    torch.manual_seed(0)
    enc = onre_encoder.PCNNEncoder(token2id=token2id, max_length=120, word_size=50, position_size=5,
                                   hidden_size=230, blank_padding=True, kernel_size=3, padding_size=1,
                                   word2vec=w2v, dropout=0.5)
    cls = {"attention": onre_model.BagAttention, "average": onre_model.BagAverage}[selector]
    m = cls(enc, len(rel2id), rel2id)
    fw = framework.BagRE(train_path=str(train_path), val_path=None, test_path=None, model=m,
                         ckpt=str(train_path) + ".ckpt", batch_size=160, max_epoch=epochs, lr=0.1,
                         weight_decay=1e-5, opt="sgd", bag_size=0)
    times, losses, cpu = [], [], []
    load_before = _load()
    for _ in range(epochs):
        c = _cpu()
        # OpenNRE's BagRE.train_model loop body, without its validation pass
        fw.train()
        t = time.perf_counter()
        total, count = 0.0, 0
        for data in fw.train_loader:
            label, scope, args = data[0], data[2], data[3:]
            logits = fw.model(label, scope, *args, bag_size=fw.bag_size)
            loss = fw.criterion(logits, label)
            loss.backward()
            fw.optimizer.step()
            fw.optimizer.zero_grad()
            total += loss.item()
            count += 1
        times.append(time.perf_counter() - t)
        losses.append(total / max(count, 1))
        del data
        import gc

        gc.collect()
        cpu.append(_cpu() - c)
    return {"model": f"OpenNRE {opennre.__name__} 0.1.1 pcnn+{selector}", "epoch_seconds": [round(x, 2) for x in times],
            "epoch_cpu_seconds": [round(x, 2) for x in cpu],
            "mean_loss": [round(x, 4) for x in losses], "load_before": load_before, "load_after": _load(),
            "dataloader_workers": fw.train_loader.num_workers}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="pcnn:attention,pcnn:average,cnn:attention,rnn:attention,birnn:attention",
                    help="our encoder:selector pairs to time")
    ap.add_argument("--opennre-selectors", default="attention", help="OpenNRE PCNN selectors to time")
    ap.add_argument("--no-opennre", action="store_true")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=None,
                    help="time only the first N batches of each epoch and extrapolate (labelled)")
    ap.add_argument("--out", default=str(HERE / "results" / "re_speed"))
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    import wikigenderbias
    from relext.data import prepare_split
    from relext.embeddings import embedding_matrix, train_word2vec
    from relext.train import TrainConfig, training_sentences
    from relext.vocab import Vocab

    ds = wikigenderbias.load()
    cfg = TrainConfig()
    t = time.perf_counter()
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params())
    w2v_s = time.perf_counter() - t
    vocab = Vocab.from_words(kv.index_to_key)
    vectors = embedding_matrix(vocab, kv)
    t = time.perf_counter()
    prepared = prepare_split(ds["train"], "train", encoder="pcnn", vocab=vocab, max_length=120, kind="train")
    prep_s = time.perf_counter() - t
    results = {
        "benchmark": "re_speed", "data": "WikiGenderBias train split (embedded release)",
        "train_bags": len(prepared.bags), "train_sentences": int(len(prepared.bags.rows)),
        "mean_tokens": round(float(prepared.table.lengths.float().mean()), 2),
        "hyperparameters": {"hidden": 230, "kernel": 3, "word_dim": 50, "pos_dim": 5, "max_length": 120,
                            "batch_bags": 160, "optimizer": "sgd", "lr": 0.1, "weight_decay": 1e-5, "dropout": 0.5},
        "threads": args.threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "cpu_count": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
        "torch": torch.__version__, "python": platform.python_version(),
        "word2vec_seconds": round(w2v_s, 2), "featurize_seconds": round(prep_s, 2), "runs": [],
        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "load_start": _load(),
    }
    pairs = [tuple(p.split(":")) for p in args.models.split(",") if p]
    bad = [":".join(p) for p in pairs if len(p) not in (2, 3)]
    if bad:
        ap.error(f"--models: {bad} are not encoder:selector or encoder:selector:impl")
    if args.batches is not None and args.batches < 1:
        ap.error("--batches must be >= 1")
    results["batches"] = args.batches
    onre_sels = [] if args.no_opennre else [s for s in args.opennre_selectors.split(",") if s]
    # OpenNRE runs right after our PCNN runs with the same selector, so both see similar load
    ours = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.txt"
        if onre_sels:
            opennre_inputs(ds["train"], path)
        for enc, sel, *impl in pairs:
            r = time_ours(prepared, vocab, vectors, enc, sel, epochs=args.epochs, impl=impl[0] if impl else None,
                          batches=args.batches)
            print(json.dumps(r), flush=True)
            results["runs"].append(r)
            ours[(enc, sel)] = r
            if enc == "pcnn" and sel in onre_sels and not impl:
                onre_sels.remove(sel)
                o = time_opennre(path, vocab, vectors, sel, epochs=args.epochs)
                print(json.dumps(o), flush=True)
                results["runs"].append(o)
                # ours again after OpenNRE: the load of a shared machine drifts, so the ratio uses
                # the mean of our runs before and after the peer's
                r2 = time_ours(prepared, vocab, vectors, enc, sel, epochs=args.epochs, batches=args.batches)
                r2["model"] += " (again, after OpenNRE)"
                print(json.dumps(r2), flush=True)
                results["runs"].append(r2)
                mine = r["epoch_seconds"] + r2["epoch_seconds"]
                ratio = float(np.mean(o["epoch_seconds"]) / np.mean(mine))
                results.setdefault("speedup_vs_opennre", {})[f"pcnn+{sel}"] = round(ratio, 2)
                mine_cpu = r["epoch_cpu_seconds"] + r2["epoch_cpu_seconds"]
                results.setdefault("cpu_ratio_vs_opennre", {})[f"pcnn+{sel}"] = round(
                    float(np.mean(o["epoch_cpu_seconds"]) / np.mean(mine_cpu)), 2)
            pcnn_ratios(results)
            write(results, args.out)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write(results, args.out)
    print(render_md(results))
    return 0


def pcnn_ratios(results: dict) -> None:
    """Each of our runs' mean epoch time over the mean PCNN+attention epoch of the same run (all
    PCNN+attention runs pooled: with one before and one after, the load's drift partly cancels)."""
    pcnn = [x for run in results["runs"] if run.get("encoder") == "pcnn" and run.get("selector") == "attention"
            for x in run["epoch_seconds"]]
    pcnn_cpu = [x for run in results["runs"] if run.get("encoder") == "pcnn" and run.get("selector") == "attention"
                for x in run["epoch_cpu_seconds"]]
    if not pcnn:
        return
    for run in results["runs"]:
        if run.get("encoder") is not None:
            run["vs_pcnn"] = round(float(np.mean(run["epoch_seconds"]) / np.mean(pcnn)), 2)
            run["cpu_vs_pcnn"] = round(float(np.mean(run["epoch_cpu_seconds"]) / np.mean(pcnn_cpu)), 2)


def write(results: dict, out: str) -> None:
    """Results so far (rewritten after every model, so a cut-short run keeps what it measured)."""
    results["load_end"] = _load()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix, text in ((".json", json.dumps(results, indent=2) + "\n"), (".md", render_md(results))):
        tmp = out.with_suffix(suffix + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, out.with_suffix(suffix))


def render_md(r: dict) -> str:
    lines = [
        "# re_speed: one training epoch on the WikiGenderBias train split",
        "",
        f"{r['train_bags']} training bags, {r['train_sentences']} sentences (mean {r['mean_tokens']} tokens), "
        f"{r['threads']} torch threads on {r['cpu_count']} cores (OMP_WAIT_POLICY={r.get('omp_wait_policy')}); "
        f"torch {r['torch']}; started {r['started']}.",
        f"Load average (1/5/15 min) at start {r['load_start']}, at end {r['load_end']}: the machine is shared, "
        "so absolute times vary with its load; the ratio is measured in the same run.",
        f"One-off preparation (not in the epoch times): Word2Vec {r['word2vec_seconds']} s (cached after the first run), "
        f"featurization {r['featurize_seconds']} s.",
        "",
    ]
    if r.get("batches"):
        lines += [f"**Extrapolated**: each epoch was timed over its first {r['batches']} batches only and scaled "
                  "to the whole epoch (the mean loss is over those batches).", ""]
    with_pcnn = any("vs_pcnn" in run for run in r["runs"])
    lines += [
        "| model | seconds per epoch (wall) | CPU seconds per epoch | mean loss | load before | load after |"
        + (" wall / PCNN+attention | CPU / PCNN+attention |" if with_pcnn else ""),
        "|---|---|---|---|---|---|" + ("---|---|" if with_pcnn else ""),
    ]
    for run in r["runs"]:
        lines.append(f"| {run['model']} | {', '.join(str(x) for x in run['epoch_seconds'])} | "
                     f"{', '.join(str(x) for x in run.get('epoch_cpu_seconds', []))} | "
                     f"{', '.join(str(x) for x in run['mean_loss'])} | {run['load_before']} | {run['load_after']} |"
                     + (f" {run.get('vs_pcnn', '')} | {run.get('cpu_vs_pcnn', '')} |" if with_pcnn else ""))
    for k, v in r.get("cpu_ratio_vs_opennre", {}).items():
        lines.append("")
        lines.append(f"CPU seconds per epoch, OpenNRE / ours (mean of before and after), {k}: {v}x "
                     "(less sensitive to the other jobs on a shared machine than wall time).")
    for k, v in r.get("speedup_vs_opennre", {}).items():
        lines.append("")
        lines.append(f"**Speedup vs OpenNRE, {k}: {v}x** (OpenNRE epoch time / mean of our epoch times "
                     "measured just before and just after it).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # datasets spawns workers: guard the entry point
    sys.exit(main())
