"""Worked example: score a non-wgb extractor with ``wgb re score`` (OpenNRE 0.1.1, PCNN + bag attention).

Steps (what a researcher with their own system does; every number of the README's example comes
from the files this writes):

1. ``wgb data export --format opennre --out WORK/export``: the benchmark in OpenNRE's format.
2. Train OpenNRE's PCNN + ``BagAttention`` on the exported train split (``--epochs``, CPU, words
   initialised at random: no GloVe download offline), with OpenNRE's own ``BagRE`` data loader,
   model, loss and optimiser settings (SGD, lr 0.1, batch 160, as ``benchmarks/re_speed.py``).
3. Predict the exported ``male_test`` / ``female_test`` bags (OpenNRE groups sentences into bags by
   entity pair) and write them in ``wgb re score``'s format (``relext/evaluation/score.py``):
   ``{"bag_id", "entity_id", "gender", "labels", "scores"}``, one line per bag, scores in the
   order of ``rel2id.json`` (NA first, as ``wikigenderbias.schema.RELATIONS``). The gender is the
   test split's; the entity is the article (``h.id``); the gold labels are the relations of the
   bag's sentences (NA when none).
4. ``wgb re score OUT/predictions --out OUT/score.json``, and the printed table as ``score.md``.

OpenNRE 0.1.1's loader ``eval``-s every line as a Python literal; the export's lines are both JSON
and Python literals (``"located": 1``). Step 2 still re-writes each line through ``json.loads`` and
``repr``, so exports written before that change work too (nothing is executed).

    pip install -e '.[bench]'          # OpenNRE 0.1.1
    python scripts/score_opennre.py    # -> results/score_opennre/{score.json,score.md,run.json,predictions/}
    python scripts/score_opennre.py --score-only   # step 4 again on the committed predictions
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "score_opennre"
TESTS = {"male_test": "male", "female_test": "female"}


def wgb(*args: str) -> str:
    """Run the ``wgb`` CLI of this interpreter in the repository root; its stdout."""
    cmd = [sys.executable, "-c", "from wgb.cli import main; main()", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout


def score(out: Path, resamples: int, command: str) -> str:
    """Step 4: ``wgb re score`` on the written predictions -> ``score.json`` + ``score.md``."""
    from wgbcore.atomicio import atomic_write_text

    rel = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    score_cmd = ["re", "score", f"{rel}/predictions", "--resamples", str(resamples), "--out", f"{rel}/score.json"]
    table = wgb(*score_cmd)
    atomic_write_text(out / "score.md", f"<!-- written by `{command}`; the table is the output of "
                      f"`wgb {' '.join(score_cmd)}` (training: run.json) -->\n\n" + table)
    return table


def python_literal_copy(src: Path, dst: Path) -> int:
    """The exported JSON lines as Python literals, which OpenNRE's loader ``eval``-s."""
    n = 0
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            if line.strip():
                fout.write(repr(json.loads(line)) + "\n")
                n += 1
    return n


def build_model(train_file: Path, rel2id: dict, min_count: int, seed: int):
    from opennre import encoder, model

    counts = Counter(tok for line in open(train_file, encoding="utf-8") for tok in json.loads(line)["token"])
    vocab = sorted(t for t, c in counts.items() if c >= min_count)
    torch.manual_seed(seed)
    enc = encoder.PCNNEncoder(token2id={t: i for i, t in enumerate(vocab)}, max_length=120, word_size=50,
                              position_size=5, hidden_size=230, blank_padding=True, kernel_size=3,
                              padding_size=1, word2vec=None, dropout=0.5)
    return model.BagAttention(enc, len(rel2id), rel2id), len(vocab)


def train(m, train_file: Path, epochs: int, seed: int) -> list[dict]:
    """OpenNRE's ``BagRE.train_model`` loop body (no validation pass; ``epochs`` fixed)."""
    from opennre import framework
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    np.random.seed(seed)
    fw = framework.BagRE(train_path=str(train_file), val_path=None, test_path=None, model=m,
                         ckpt=str(train_file) + ".ckpt", batch_size=160, max_epoch=epochs, lr=0.1,
                         weight_decay=1e-5, opt="sgd", bag_size=0)
    log = []
    for epoch in range(epochs):
        fw.train()
        t0, total, count = time.perf_counter(), 0.0, 0
        for data in tqdm(fw.train_loader, desc=f"OpenNRE epoch {epoch + 1}"):
            label, scope, args = data[0], data[2], data[3:]
            loss = fw.criterion(fw.model(label, scope, *args, bag_size=0), label)
            loss.backward()
            fw.optimizer.step()
            fw.optimizer.zero_grad()
            total, count = total + loss.item(), count + 1
        log.append({"epoch": epoch + 1, "seconds": round(time.perf_counter() - t0, 1),
                    "mean_loss": round(total / max(count, 1), 4)})
    return log


def predict(m, test_file: Path, rel2id: dict, gender: str) -> list[dict]:
    """One ``wgb re score`` row per OpenNRE evaluation bag (entity pair)."""
    from opennre.framework.data_loader import BagREDataset

    ds = BagREDataset(str(test_file), rel2id, m.sentence_encoder.tokenize, entpair_as_bag=True, bag_size=0)
    id2rel = {i: r for r, i in rel2id.items()}
    names = [id2rel[i] for i in range(len(id2rel))]
    m.eval()
    rows = []
    for start in range(0, len(ds), 160):
        batch = BagREDataset.collate_fn([ds[i] for i in range(start, min(start + 160, len(ds)))])
        _, bag_names, scope, *args = batch
        with torch.no_grad():
            probs = m(None, scope, *args, train=False, bag_size=0)
        for (h_id, t_id), p, i in zip(bag_names, probs.tolist(), range(start, start + len(bag_names))):
            gold = sorted({ds.data[j]["relation"] for j in ds.bag_scope[i]} - {"NA"}, key=names.index)
            rows.append({"bag_id": t_id, "entity_id": h_id, "gender": gender, "labels": gold or ["NA"],
                         "scores": [float(x) for x in p]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-count", type=int, default=2, help="words seen fewer times are [UNK]")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--work", default="/tmp/wgb-score-opennre")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--score-only", action="store_true", help="only step 4, on the predictions already in --out")
    args = ap.parse_args()
    command = "python scripts/score_opennre.py" + "".join(f" {a}" for a in sys.argv[1:])
    if args.score_only:
        print(score(Path(args.out), args.resamples, command))
        return
    import opennre  # noqa: F401  (fail early: pip install -e '.[bench]')
    from importlib.metadata import version

    from wgbcore.atomicio import atomic_write_json, atomic_write_jsonl

    torch.set_num_threads(args.threads)
    work, out = Path(args.work), Path(args.out)
    export = work / "export"
    load0, t0 = os.getloadavg(), time.perf_counter()
    wgb("data", "export", "--format", "opennre", "--out", str(export), "--overwrite")
    lit = work / "literal"
    lit.mkdir(parents=True, exist_ok=True)
    files = {s: lit / f"{s}.txt" for s in ("train", *TESTS)}
    sentences = {s: python_literal_copy(export / f"wikigenderbias_{s}.txt", f) for s, f in files.items()}
    rel2id = json.loads((export / "rel2id.json").read_text())
    m, vocab_size = build_model(export / "wikigenderbias_train.txt", rel2id, args.min_count, args.seed)
    log = train(m, files["train"], args.epochs, args.seed)
    t_pred = time.perf_counter()
    for split, gender in TESTS.items():
        atomic_write_jsonl(out / "predictions" / f"{split}.jsonl", predict(m, files[split], rel2id, gender))
    pred_seconds = time.perf_counter() - t_pred
    table = score(out, args.resamples, command)
    atomic_write_json(out / "run.json", {
        "command": command, "system": f"OpenNRE {version('open-nre')} PCNN + BagAttention",
        "epochs": log, "seed": args.seed, "vocab_size": vocab_size, "min_count": args.min_count,
        "word_vectors": "random init (no pretrained vectors offline)", "sentences": sentences,
        "predict_seconds": round(pred_seconds, 1), "wall_seconds": round(time.perf_counter() - t0, 1),
        "threads": args.threads, "loadavg_before": load0, "loadavg_after": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=1)
    print(table)


if __name__ == "__main__":
    main()
