"""Training speed of our bag-level extractors vs OpenNRE (0.1.1) on the real WikiGenderBias train split.

Same run, same machine, same hyperparameters (OpenNRE's: 230 filters, window 3, 50-d words, 5-d
positions, max length 120, batch 160 bags, SGD lr 0.1, weight decay 1e-5, dropout 0.5), same
Word2Vec matrix and vocabulary. OpenNRE prepares sentences in its DataLoader workers during the
epoch, which is part of its epoch time; our one-off featurization is reported separately.

Methodology (as ``kge_speed.py``): each side's model is built once and first trains ``--warmup``
untimed epochs (the first epoch of a process pays one-off costs, which an earlier version of this
benchmark put into the ratio); then ``--pairs`` pairs of one more epoch each are timed, alternating which side goes
first, with the 1/5/15-minute load averages before and after each pair. The speedup is the
median of the pairs' ratios (OpenNRE epoch / ours; wall and CPU seconds), with their range.

    python benchmarks/re_speed.py                       # 5 pairs vs OpenNRE, then pcnn+average, cnn+attention
    # the committed re_speed (1 thread, as the studies' runs) and re_speed_2t (2 threads; a loaded machine)
    python benchmarks/re_speed.py --models '' --threads 1
    OMP_WAIT_POLICY=PASSIVE python benchmarks/re_speed.py --models '' --threads 2 --out benchmarks/results/re_speed_2t
    python benchmarks/re_speed.py --models pcnn:attention --no-opennre
    # our PCNN with the gather convolution against OpenNRE (issue 39's goal: >= 10x at 2 threads)
    python benchmarks/re_speed.py --models '' --threads 2 --ours-impl gather --out benchmarks/results/re_speed_gather_2t
    python benchmarks/re_speed.py --models rnn:attention,birnn:attention --no-opennre --out benchmarks/results/re_speed_rnn
    # the GRU encoders with PCNN before and after them in the same run (the committed re_speed_gru)
    python benchmarks/re_speed.py --models pcnn:attention,rnn:attention,birnn:attention,pcnn:attention \
        --no-opennre --out benchmarks/results/re_speed_gru

A third field picks the RNN path: ``rnn:attention:module`` times torch's nn.GRU over a packed
sequence (the code before the fused path); for CNN/PCNN it picks the convolution,
``pcnn:attention:gather`` or ``:dense`` (``conv_impl``; ``benchmarks/re_conv_speed.py`` alternates
the two in one process). ``--batches N`` times only the first N batches of each
epoch of ``--models`` and extrapolates to the whole epoch (labelled so in the results; for quick
iterations; not for the OpenNRE pairs). Every model's epoch time is also given as a ratio to the
mean PCNN+attention epoch of the same run.

Writes benchmarks/results/re_speed.json and .md (rewritten after every step, so a cut-short run
keeps what it measured). Results committed before this methodology (re_speed_gru, _rnn, _birnn,
_loaded, ...) timed the first epoch with no warm-up.
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
import shlex
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


class OursTrainer:
    """Our model and optimizer, built once; ``epoch()`` trains one more epoch (a new shuffle) and
    times it."""

    def __init__(self, prepared, vocab, vectors, encoder: str = "pcnn", selector: str = "attention", *,
                 seed: int = 0, impl: str | None = None, batches: int | None = None) -> None:
        from relext.training.train import TrainConfig, make_optimizer, model_from_config, seed_everything

        self.cfg = TrainConfig(encoder=encoder, selector=selector, seed=seed)
        seed_everything(seed)
        self.model = model_from_config(self.cfg, vocab, vectors)
        if impl is not None:
            if not hasattr(self.model.encoder, "impl"):
                raise ValueError(f"encoder {encoder!r} has no implementation choice (got {impl!r})")
            self.model.encoder.impl = impl
        self.opt = make_optimizer(self.cfg, self.model)
        self.prepared, self.batches = prepared, batches
        total = -(-len(prepared.bags) // self.cfg.batch_size)
        self.total = total
        self.scale = total / min(batches, total) if batches else 1.0
        self.rng = np.random.default_rng(seed)
        self.name = f"ours {encoder}+{selector}" + (f" ({impl})" if impl else "")

    def epoch(self) -> dict:
        from relext.training.train import run_epoch

        order = self.rng.permutation(len(self.prepared.bags))
        if self.batches:
            order = order[: self.batches * self.cfg.batch_size]
        t, c = time.perf_counter(), _cpu()
        loss = run_epoch(self.model, self.opt, self.prepared, order, self.cfg.batch_size, progress=False)
        return {"wall_s": (time.perf_counter() - t) * self.scale, "cpu_s": (_cpu() - c) * self.scale,
                "mean_loss": loss}


def time_ours(prepared, vocab, vectors, encoder: str, selector: str, *, epochs: int, warmup: int = 1,
              seed: int = 0, impl: str | None = None, batches: int | None = None) -> dict:
    """``warmup`` untimed epochs, then ``epochs`` timed ones, of one of our models."""
    tr = OursTrainer(prepared, vocab, vectors, encoder, selector, seed=seed, impl=impl, batches=batches)
    load_before = _load()
    warm = [tr.epoch() for _ in range(warmup)]
    timed = [tr.epoch() for _ in range(epochs)]
    out = {"model": tr.name, "encoder": encoder, "selector": selector, "impl": impl,
           "warmup_epoch_seconds": [round(e["wall_s"], 2) for e in warm],
           "epoch_seconds": [round(e["wall_s"], 2) for e in timed],
           "epoch_cpu_seconds": [round(e["cpu_s"], 2) for e in timed],
           "mean_loss": [round(e["mean_loss"], 4) for e in warm + timed], "load_before": load_before,
           "load_after": _load()}
    if batches and tr.scale > 1:
        out["extrapolated_from_batches"] = [min(batches, tr.total), tr.total]
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


class OpenNRETrainer:
    """OpenNRE's PCNN + bag selector and its ``BagRE`` framework, built once; ``epoch()`` runs the
    body of ``BagRE.train_model``'s epoch loop (without its validation pass) and times it."""

    def __init__(self, train_path: Path, vocab, vectors, selector: str = "attention") -> None:
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
        self.fw = framework.BagRE(train_path=str(train_path), val_path=None, test_path=None, model=m,
                                  ckpt=str(train_path) + ".ckpt", batch_size=160, max_epoch=1, lr=0.1,
                                  weight_decay=1e-5, opt="sgd", bag_size=0)
        self.name = f"OpenNRE {opennre.__name__} 0.1.1 pcnn+{selector}"
        self.workers = self.fw.train_loader.num_workers

    def epoch(self) -> dict:
        import gc

        fw = self.fw
        c = _cpu()
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
        wall = time.perf_counter() - t
        del data
        gc.collect()
        # the DataLoader workers are joined when the epoch's iterator ends: their CPU is counted
        return {"wall_s": wall, "cpu_s": _cpu() - c, "mean_loss": total / max(count, 1)}


def paired(ours: OursTrainer, peer: OpenNRETrainer, *, pairs: int, warmup: int, log=print, partial=None) -> dict:
    """``warmup`` untimed epochs of each, then ``pairs`` pairs of one epoch each, alternating which
    goes first (ours first in pairs 1, 3, 5, ...), with the load averages before and after each
    pair; the ratio of a pair is the peer's epoch over ours (wall and CPU seconds). ``partial``
    is called with the summary so far after every pair (a cut-short run keeps its pairs)."""
    warm, rows = [], []
    for _ in range(warmup):
        l0 = _load()
        w = {"ours": ours.epoch(), "opennre": peer.epoch(), "load_before": l0, "load_after": _load()}
        warm.append(w)
        log(json.dumps({"warmup": w}))
    for i in range(pairs):
        l0 = _load()
        first, second = ("ours", "opennre") if i % 2 == 0 else ("opennre", "ours")
        trainers = {"ours": ours, "opennre": peer}
        r = {first: trainers[first].epoch()}
        r[second] = trainers[second].epoch()
        row = {"pair": i + 1, "first": first, "ours": r["ours"], "opennre": r["opennre"],
               "ratio_wall": r["opennre"]["wall_s"] / r["ours"]["wall_s"],
               "ratio_cpu": r["opennre"]["cpu_s"] / r["ours"]["cpu_s"], "load_before": l0, "load_after": _load()}
        rows.append(row)
        log(json.dumps(row))
        if partial is not None:
            partial(_summary(ours, peer, warm, rows, pairs))
    return _summary(ours, peer, warm, rows, pairs)


def _summary(ours, peer, warm: list, rows: list, planned: int) -> dict:
    wall = [q["ratio_wall"] for q in rows]
    cpu = [q["ratio_cpu"] for q in rows]
    med = lambda side, key: float(np.median([q[side][key] for q in rows]))  # noqa: E731
    return {
        "ours": ours.name, "opennre": peer.name, "dataloader_workers": peer.workers, "warmup_epochs": len(warm),
        "pairs_planned": planned, "warmup": warm, "pairs": rows,
        "ratio_wall_median": float(np.median(wall)), "ratio_wall_range": [min(wall), max(wall)],
        "ratio_cpu_median": float(np.median(cpu)), "ratio_cpu_range": [min(cpu), max(cpu)],
        "ours_epoch_wall_median": med("ours", "wall_s"), "opennre_epoch_wall_median": med("opennre", "wall_s"),
        "ours_epoch_cpu_median": med("ours", "cpu_s"), "opennre_epoch_cpu_median": med("opennre", "cpu_s"),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="pcnn:average,cnn:attention",
                    help="more of our encoder:selector pairs to time alone (after the OpenNRE pairs); '' for none")
    ap.add_argument("--opennre-selectors", default="attention", help="OpenNRE PCNN selectors to time")
    ap.add_argument("--no-opennre", action="store_true")
    ap.add_argument("--epochs", type=int, default=1, help="timed epochs of each of --models")
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed epochs before the timed ones, for every model and OpenNRE (default 1)")
    ap.add_argument("--pairs", type=int, default=5,
                    help="timed ours/OpenNRE epoch pairs, alternating which goes first (default 5)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ours-impl", choices=("dense", "gather"), default=None,
                    help="our PCNN's convolution in the OpenNRE pairs (conv_impl; default: the trainer's)")
    ap.add_argument("--batches", type=int, default=None,
                    help="time only the first N batches of each epoch and extrapolate (labelled)")
    ap.add_argument("--out", default=str(HERE / "results" / "re_speed"))
    ap.add_argument("--render", metavar="JSON", help="only re-render the markdown of a results JSON")
    args = ap.parse_args(argv)
    if args.render:
        r = json.loads(Path(args.render).read_text(encoding="utf-8"))
        _atomic_text(Path(args.render).with_suffix(".md"), render_md(r))
        return 0

    torch.set_num_threads(args.threads)
    import wikigenderbias
    from relext.protocols.data import prepare_split
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import TrainConfig, training_sentences
    from relext.model.vocab import Vocab

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
        "command": "python " + shlex.join([sys.argv[0], *sys.argv[1:]]),
        "train_bags": len(prepared.bags), "train_sentences": int(len(prepared.bags.rows)),
        "mean_tokens": round(float(prepared.table.lengths.float().mean()), 2),
        "hyperparameters": {"hidden": 230, "kernel": 3, "word_dim": 50, "pos_dim": 5, "max_length": 120,
                            "batch_bags": 160, "optimizer": "sgd", "lr": 0.1, "weight_decay": 1e-5, "dropout": 0.5},
        "threads": args.threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "cpu_count": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
        "torch": torch.__version__, "python": platform.python_version(),
        "word2vec_seconds": round(w2v_s, 2), "featurize_seconds": round(prep_s, 2), "runs": [],
        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "load_start": _load(),
    }
    models = [tuple(p.split(":")) for p in args.models.split(",") if p]
    bad = [":".join(p) for p in models if len(p) not in (2, 3)]
    if bad:
        ap.error(f"--models: {bad} are not encoder:selector or encoder:selector:impl")
    if args.batches is not None and args.batches < 1:
        ap.error("--batches must be >= 1")
    if args.pairs < 1 or args.warmup < 0 or args.epochs < 1:
        ap.error("--pairs and --epochs must be >= 1, --warmup >= 0")
    results["batches"] = args.batches
    results["ours_impl"] = args.ours_impl
    onre_sels = [] if args.no_opennre else [s for s in args.opennre_selectors.split(",") if s]
    results["warmup_epochs"] = args.warmup
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.txt"
        if onre_sels:
            opennre_inputs(ds["train"], path)
        # against OpenNRE: warm-up epochs excluded, then alternating pairs (see `paired`)
        for sel in onre_sels:
            if args.batches:
                ap.error("--batches does not apply to the OpenNRE pairs (whole epochs only); add --no-opennre")
            ours = OursTrainer(prepared, vocab, vectors, "pcnn", sel, impl=args.ours_impl)
            peer = OpenNRETrainer(path, vocab, vectors, sel)
            def record(res, sel=sel):
                results.setdefault("vs_opennre", {})[f"pcnn+{sel}"] = res
                results.setdefault("speedup_vs_opennre", {})[f"pcnn+{sel}"] = round(res["ratio_wall_median"], 2)
                results.setdefault("cpu_ratio_vs_opennre", {})[f"pcnn+{sel}"] = round(res["ratio_cpu_median"], 2)
                write(results, args.out)

            record(paired(ours, peer, pairs=args.pairs, warmup=args.warmup, log=lambda x: print(x, flush=True),
                          partial=record))
        for enc, sel, *impl in models:
            r = time_ours(prepared, vocab, vectors, enc, sel, epochs=args.epochs, warmup=args.warmup,
                          impl=impl[0] if impl else None, batches=args.batches)
            print(json.dumps(r), flush=True)
            results["runs"].append(r)
            pcnn_ratios(results)
            write(results, args.out)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write(results, args.out)
    print(render_md(results))
    return 0


def pcnn_ratios(results: dict) -> None:
    """Each of our runs' mean epoch time over the mean PCNN+attention epoch of the same run (every
    timed PCNN+attention epoch pooled, those of the OpenNRE pairs included)."""
    runs = [r for r in results["runs"] if r.get("encoder") == "pcnn" and r.get("selector") == "attention"]
    pair = results.get("vs_opennre", {}).get("pcnn+attention", {}).get("pairs", [])
    pcnn = [x for r in runs for x in r["epoch_seconds"]] + [q["ours"]["wall_s"] for q in pair]
    pcnn_cpu = [x for r in runs for x in r["epoch_cpu_seconds"]] + [q["ours"]["cpu_s"] for q in pair]
    if not pcnn:
        return
    for run in results["runs"]:
        if run.get("encoder") is not None:
            run["vs_pcnn"] = round(float(np.mean(run["epoch_seconds"]) / np.mean(pcnn)), 2)
            run["cpu_vs_pcnn"] = round(float(np.mean(run["epoch_cpu_seconds"]) / np.mean(pcnn_cpu)), 2)


def write(results: dict, out: str) -> None:
    """Results so far (rewritten after every pair and model, so a cut-short run keeps what it measured)."""
    results["load_end"] = _load()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _atomic_text(out.with_suffix(".json"), json.dumps(results, indent=2) + "\n")
    _atomic_text(out.with_suffix(".md"), render_md(results))


def _atomic_text(path: Path, text: str) -> None:
    from wgbcore.atomicio import atomic_write_text

    atomic_write_text(path, text)


def render_md(r: dict) -> str:
    warm = r.get("warmup_epochs")
    lines = [
        "# re_speed: one training epoch on the WikiGenderBias train split",
        "",
        f"{r['train_bags']} training bags, {r['train_sentences']} sentences (mean {r['mean_tokens']} tokens), "
        f"{r['threads']} torch threads on {r['cpu_count']} cores (OMP_WAIT_POLICY={r.get('omp_wait_policy')}); "
        f"torch {r['torch']}; started {r['started']}, finished {r.get('finished', '(running)')}.",
        f"Command: `{r.get('command', '')}`.",
        f"Load average (1/5/15 min) at start {r['load_start']}, at end {r['load_end']}: the machine is shared, "
        "so absolute times vary with its load; compare the ratios, measured side by side.",
        f"One-off preparation (not in the epoch times): Word2Vec {r['word2vec_seconds']} s (cached after the first run), "
        f"featurization {r['featurize_seconds']} s."
        + (f" Every model first trains {warm} untimed warm-up epoch(s) (the first epoch of a process pays one-off "
           "costs); the times below are of the epochs after them." if warm is not None else ""),
        "",
    ]
    for key, v in r.get("vs_opennre", {}).items():
        lines += [
            f"## {key}: ours vs {v['opennre']} ({v['dataloader_workers']} DataLoader workers), "
            f"{len(v['pairs'])} alternating pairs" + (f" (of {v['pairs_planned']} planned: cut short)"
                                                      if len(v["pairs"]) < v.get("pairs_planned", 0) else ""), "",
            f"**Speedup (OpenNRE epoch / ours, wall): {v['ratio_wall_median']:.2f}x, median of {len(v['pairs'])} "
            f"pairs (range {v['ratio_wall_range'][0]:.2f}-{v['ratio_wall_range'][1]:.2f})**; CPU seconds: "
            f"{v['ratio_cpu_median']:.2f}x (range {v['ratio_cpu_range'][0]:.2f}-{v['ratio_cpu_range'][1]:.2f}; "
            "CPU time counts OpenNRE's DataLoader workers, and is less sensitive to other jobs than wall time). "
            f"Median epoch: ours {v['ours_epoch_wall_median']:.2f} s wall / {v['ours_epoch_cpu_median']:.2f} s CPU, "
            f"OpenNRE {v['opennre_epoch_wall_median']:.2f} s wall / {v['opennre_epoch_cpu_median']:.2f} s CPU.", "",
            "Both models are built once; each first trains its warm-up epoch(s) (untimed), then the pairs train one "
            "more epoch each, ours first in odd pairs and OpenNRE first in even ones, so a drifting load falls "
            "on both sides alike. Load averages are the 1/5/15-minute ones before and after each pair.", "",
            "| pair | first | ours s (wall) | ours s (CPU) | OpenNRE s (wall) | OpenNRE s (CPU) | ratio wall | "
            "ratio CPU | ours loss | OpenNRE loss | load before | load after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for w in v.get("warmup", []):
            lines.append(f"| warm-up (untimed) | ours | {w['ours']['wall_s']:.2f} | {w['ours']['cpu_s']:.2f} | "
                         f"{w['opennre']['wall_s']:.2f} | {w['opennre']['cpu_s']:.2f} | - | - | "
                         f"{w['ours']['mean_loss']:.4f} | {w['opennre']['mean_loss']:.4f} | {w['load_before']} | "
                         f"{w['load_after']} |")
        for q in v["pairs"]:
            lines.append(f"| {q['pair']} | {q['first']} | {q['ours']['wall_s']:.2f} | {q['ours']['cpu_s']:.2f} | "
                         f"{q['opennre']['wall_s']:.2f} | {q['opennre']['cpu_s']:.2f} | {q['ratio_wall']:.2f} | "
                         f"{q['ratio_cpu']:.2f} | {q['ours']['mean_loss']:.4f} | {q['opennre']['mean_loss']:.4f} | "
                         f"{q['load_before']} | {q['load_after']} |")
        lines.append("")
    if r.get("batches"):
        lines += [f"**Extrapolated**: each epoch of the models below was timed over its first {r['batches']} batches "
                  "only and scaled to the whole epoch (the mean loss is over those batches).", ""]
    if r["runs"]:
        with_pcnn = any("vs_pcnn" in run for run in r["runs"])
        lines += [
            "## Our other models", "",
            "| model | seconds per epoch (wall) | CPU seconds per epoch | mean loss (warm-up, timed) | load before | "
            "load after |" + (" wall / PCNN+attention | CPU / PCNN+attention |" if with_pcnn else ""),
            "|---|---|---|---|---|---|" + ("---|---|" if with_pcnn else ""),
        ]
        for run in r["runs"]:
            lines.append(f"| {run['model']} | {', '.join(str(x) for x in run['epoch_seconds'])} | "
                         f"{', '.join(str(x) for x in run.get('epoch_cpu_seconds', []))} | "
                         f"{', '.join(str(x) for x in run['mean_loss'])} | {run['load_before']} | {run['load_after']} |"
                         + (f" {run.get('vs_pcnn', '')} | {run.get('cpu_vs_pcnn', '')} |" if with_pcnn else ""))
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # datasets spawns workers: guard the entry point
    sys.exit(main())
