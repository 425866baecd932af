"""Do the fused GRU encoders train to the accuracy of the nn.GRU path they replace?

On the real WikiGenderBias release (train / validation / male_test / female_test), with the
trainer's own pieces (``relext.training.train``: Word2Vec, model, SGD, bag shuffling, one seed for all),
every (encoder, seed) trains ``--epochs`` epochs with the fused path (``impl="fused"``, the
default on CPU); at ``--reference-seed`` the same training also runs on torch's ``nn.GRU`` over a
packed sequence (``impl="module"``, the code before the fused path), and the fused training runs
a second time to check that one seed gives identical numbers. After every epoch: mean training
loss, validation micro F1 / PR-AUC / accuracy (``relext.training.train.validation_metrics``, argmax with
NA) and the same on the two test splits pooled (evaluation only; nothing is selected on them).

The two paths compute the same function (equal up to float summation order, checked in
``tests/relext/test_rnn_fused.py``), so at one seed they differ only by rounding that training
amplifies; the seed-to-seed spread of the fused runs is the noise scale the difference is read
against.

    python benchmarks/re_rnn_accuracy.py                      # the committed run
    python benchmarks/re_rnn_accuracy.py --encoders rnn --epochs 1 --seeds 0 --out /tmp/acc

Writes ``--out``.json and .md after every training (a rerun with the same arguments skips the
trainings already there: the old path takes many minutes per epoch on a loaded machine).
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
sys.path.insert(0, str(HERE.parent))
TEST_SPLITS = ("male_test", "female_test")


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def prepare(seed: int, encoder: str):
    """Word2Vec (cached) with the seed's parameters, and the prepared splits."""
    import wikigenderbias
    from relext.protocols.data import prepare_split
    from relext.model.embeddings import embedding_matrix, train_word2vec
    from relext.training.train import TrainConfig, training_sentences
    from relext.model.vocab import Vocab

    ds = wikigenderbias.load()
    cfg = TrainConfig(encoder=encoder, seed=seed)
    kv = train_word2vec(training_sentences(ds["train"]), cfg.word2vec_params())
    vocab = Vocab.from_words(kv.index_to_key, lowercase=cfg.lowercase)
    vectors = embedding_matrix(vocab, kv, seed=seed)
    splits = {"train": prepare_split(ds["train"], "train", encoder=encoder, vocab=vocab, max_length=cfg.max_length,
                                     kind="train", unlocated=cfg.unlocated)}
    for name in ("validation",) + TEST_SPLITS:
        splits[name] = prepare_split(ds[name], name, encoder=encoder, vocab=vocab, max_length=cfg.max_length, kind="eval")
    return cfg, vocab, vectors, splits


def train_one(encoder: str, impl: str, seed: int, epochs: int, prepared) -> dict:
    """``epochs`` epochs as ``relext.training.train.train_extractor`` runs them, metrics after each."""
    from relext.training.train import make_optimizer, model_from_config, predict_proba, run_epoch, seed_everything, validation_metrics

    cfg, vocab, vectors, splits = prepared
    seed_everything(seed)
    model = model_from_config(cfg, vocab, vectors)
    model.encoder.impl = impl
    opt = make_optimizer(cfg, model)
    shuffle = np.random.default_rng(seed)
    out = {"encoder": encoder, "impl": impl, "seed": seed, "epochs": [], "load_before": _load()}
    for epoch in range(epochs):
        order = shuffle.permutation(len(splits["train"].bags))
        t, c = time.perf_counter(), time.process_time()
        loss = run_epoch(model, opt, splits["train"], order, cfg.batch_size, progress=False)
        row = {"epoch": epoch + 1, "train_loss": loss, "train_seconds": round(time.perf_counter() - t, 2),
               "train_cpu_seconds": round(time.process_time() - c, 2)}
        probs = {s: predict_proba(model, splits[s], cfg.eval_batch_size) for s in ("validation",) + TEST_SPLITS}
        row["validation"] = validation_metrics(probs["validation"], splits["validation"].bags.labels)
        row["test"] = validation_metrics(np.concatenate([probs[s] for s in TEST_SPLITS]),
                                         [lab for s in TEST_SPLITS for lab in splits[s].bags.labels])
        out["epochs"].append(row)
        print(json.dumps({k: out[k] for k in ("encoder", "impl", "seed")} | row), flush=True)
    out["load_after"] = _load()
    return out


def _key(r: dict) -> str:
    return f"{r['encoder']}/{r['impl']}/seed{r['seed']}" + ("/rerun" if r.get("rerun") else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoders", default="rnn,birnn")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seeds", default="0,1,2", help="seeds of the fused path (the noise scale)")
    ap.add_argument("--reference-seed", type=int, default=0, help="seed also trained with nn.GRU and rerun")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: kind to a shared machine)")
    ap.add_argument("--impls", default="module,fused", help="paths to train now (the rest can come in a rerun)")
    ap.add_argument("--out", default=str(HERE / "results" / "re_speed_rnn_accuracy"))
    ap.add_argument("--merge-from", default="", help="results JSON files of other invocations (e.g. one per "
                    "--impls, run side by side with another --out) whose trainings count as done and are included")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    results = {"benchmark": "re_rnn_accuracy", "data": "WikiGenderBias (embedded release)", "epochs": args.epochs,
               "threads": args.threads, "torch": torch.__version__, "runs": []}
    for path in [out.with_suffix(".json")] + [Path(p) for p in args.merge_from.split(",") if p]:
        if path.exists():
            old = json.loads(path.read_text())
            if all(old.get(k) == results[k] for k in ("epochs", "threads")):
                keys = {_key(r) for r in results["runs"]}
                results["runs"] += [r for r in old.get("runs", []) if _key(r) not in keys]
    done = {_key(r) for r in results["runs"]}
    seeds = [int(s) for s in args.seeds.split(",") if s]
    for enc in [e for e in args.encoders.split(",") if e]:
        plan = [("module", args.reference_seed, False)] + [("fused", s, False) for s in seeds]
        plan += [("fused", args.reference_seed, True)]
        plan = [p for p in plan if p[0] in args.impls.split(",")]
        cache = {}
        for impl, seed, rerun in plan:
            key = _key({"encoder": enc, "impl": impl, "seed": seed, "rerun": rerun})
            if key in done:
                continue
            if seed not in cache:
                cache = {seed: prepare(seed, enc)}
            r = train_one(enc, impl, seed, args.epochs, cache[seed])
            r["rerun"] = rerun
            results["runs"].append(r)
            write(results, out)
    results["runs"].sort(key=lambda r: (r["encoder"] != "rnn", r["encoder"], r["impl"] != "module", r["seed"], r["rerun"]))
    summarize(results)
    write(results, out)
    print(render_md(results))
    return 0


def summarize(results: dict) -> None:
    """Per encoder: fused - module at the reference seed, the fused seeds' spread, rerun identity."""
    summary = {}
    for enc in sorted({r["encoder"] for r in results["runs"]}):
        runs = [r for r in results["runs"] if r["encoder"] == enc]
        fused = [r for r in runs if r["impl"] == "fused" and not r["rerun"]]
        module = [r for r in runs if r["impl"] == "module"]
        rerun = [r for r in runs if r["rerun"]]
        s = {}
        for part in ("validation", "test"):
            vals = [r["epochs"][-1][part]["micro_f1"] for r in fused]
            s[f"{part}_micro_f1_fused_seeds"] = vals
            if len(vals) > 1:
                s[f"{part}_micro_f1_fused_sd"] = float(np.std(vals, ddof=1))
            if module:
                ref = next((r for r in fused if r["seed"] == module[0]["seed"]), None)
                if ref is not None:
                    s[f"{part}_micro_f1_fused_minus_module"] = (ref["epochs"][-1][part]["micro_f1"]
                                                                - module[0]["epochs"][-1][part]["micro_f1"])
        if rerun:
            ref = next((r for r in fused if r["seed"] == rerun[0]["seed"]), None)
            if ref is not None:
                s["rerun_identical"] = [e["train_loss"] for e in ref["epochs"]] == [e["train_loss"] for e in rerun[0]["epochs"]] \
                    and [e["validation"] for e in ref["epochs"]] == [e["validation"] for e in rerun[0]["epochs"]] \
                    and [e["test"] for e in ref["epochs"]] == [e["test"] for e in rerun[0]["epochs"]]
        f_sec = [e["train_cpu_seconds"] for r in fused for e in r["epochs"]]
        m_sec = [e["train_cpu_seconds"] for r in module for e in r["epochs"]]
        if f_sec and m_sec:
            s["train_cpu_seconds_module_over_fused"] = float(np.mean(m_sec) / np.mean(f_sec))
        summary[enc] = s
    results["summary"] = summary


def write(results: dict, out: Path) -> None:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    results["load_end"] = _load()
    atomic_write_json(out.with_suffix(".json"), results)
    atomic_write_text(out.with_suffix(".md"), render_md(results))


def render_md(r: dict) -> str:
    lines = [
        "# Fused GRU vs nn.GRU: the same training, the same accuracy?",
        "",
        f"WikiGenderBias (embedded release); {r['epochs']} epoch(s) per training, OpenNRE's hyperparameters "
        f"(`relext.training.train` defaults), {r['threads']} torch thread(s), torch {r['torch']}. Micro F1: argmax over all "
        "classes with NA (`relext.training.train.validation_metrics`); test = male_test and female_test pooled. "
        "`module` = torch's nn.GRU over a packed sequence (the code before the fused path). CPU seconds are "
        "this process's, on a shared machine (load averages per run).",
        "",
        "| encoder | path | seed | epoch | train loss | validation micro F1 | validation PR-AUC | test micro F1 | test PR-AUC | train CPU s | load before/after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in r["runs"]:
        for e in run["epochs"]:
            path = run["impl"] + (" (rerun)" if run.get("rerun") else "")
            lines.append(f"| {run['encoder']} | {path} | {run['seed']} | {e['epoch']} | {e['train_loss']:.4f} | "
                         f"{e['validation']['micro_f1']:.4f} | {e['validation']['pr_auc']:.4f} | "
                         f"{e['test']['micro_f1']:.4f} | {e['test']['pr_auc']:.4f} | {e['train_cpu_seconds']} | "
                         f"{run['load_before']} / {run.get('load_after')} |")
    for enc, s in r.get("summary", {}).items():
        lines += ["", f"**{enc}**, after the last epoch:"]
        for part in ("validation", "test"):
            if f"{part}_micro_f1_fused_minus_module" in s:
                sd = s.get(f"{part}_micro_f1_fused_sd")
                lines.append(f"- {part} micro F1, fused - module at the same seed: "
                             f"{s[f'{part}_micro_f1_fused_minus_module']:+.4f}"
                             + (f" (seed-to-seed SD of the fused path over {len(s[f'{part}_micro_f1_fused_seeds'])} seeds: {sd:.4f})" if sd is not None else ""))
        if "rerun_identical" in s:
            lines.append(f"- the same seed rerun gives identical losses and metrics: {s['rerun_identical']}")
        if "train_cpu_seconds_module_over_fused" in s:
            lines.append(f"- training CPU seconds per epoch, module / fused: {s['train_cpu_seconds_module_over_fused']:.1f}x")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
