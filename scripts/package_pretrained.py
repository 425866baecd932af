"""Package a finished training run as a pretrained extractor shipped inside ``relext``.

    .venv/bin/python scripts/package_pretrained.py \
        [--run results/re_debias/study/runs/none-attention-seed0] [--name pcnn-attention]

Writes ``relext/pretrained/<name>/``:

* ``model.safetensors``: the run's ``model.pt`` state dict (float32, unchanged); its config,
  vocabulary fingerprint, best epoch and validation score as JSON under the metadata key
  ``relext`` (byte-reproducible: rerunning gives the same file);
* ``vocab.json.gz``: the run's ``vocab.json`` gzipped (``-9``, mtime 0: byte-reproducible);
* ``config.json``, ``metrics.json``, ``eval.json``: byte copies of the run's (committed) records;
* ``SHA256SUMS`` (``sha256sum -c`` format; checked by ``relext.pretrained.load``);
* ``PROVENANCE.md``: data, command, commits, and the validation / test scores read from
  ``metrics.json`` / ``eval.json`` by this script (no number in it is typed by hand).

Read-only git commands only (``git rev-parse``, ``git log``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from relext.training.train import TrainConfig, load_torch_file  # noqa: E402
from relext.model.vocab import Vocab  # noqa: E402

COPIED = ("config.json", "metrics.json", "eval.json")
CHECKED = ("model.safetensors", "vocab.json.gz", "config.json")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def sha256(path: Path) -> str:
    from wgbcore.provenance import file_sha256

    return file_sha256(path)


def convert(run: Path, out: Path) -> dict:
    from safetensors.torch import save_file

    saved = load_torch_file(run / "model.pt", what="model")
    vocab = Vocab.load(run / "vocab.json")
    if saved["vocab_fingerprint"] != vocab.fingerprint():
        raise SystemExit(f"{run}: model.pt does not match vocab.json")
    cfg = TrainConfig.from_json(run / "config.json")
    diff = cfg.differences(TrainConfig.from_json(saved["config"]))
    if diff:
        raise SystemExit(f"{run}: model.pt does not match config.json (fields {diff})")
    tensors = {k: v.detach().cpu().contiguous() for k, v in saved["state_dict"].items()}
    # one metadata key: safetensors writes its metadata map in no fixed order, one key keeps the
    # file byte-reproducible
    record = {"format_version": 1, "config": saved["config"], "vocab_fingerprint": saved["vocab_fingerprint"],
              "epoch": int(saved["epoch"]), "score": float(saved["score"])}
    save_file(tensors, str(out / "model.safetensors"), metadata={"relext": json.dumps(record, sort_keys=True)})
    raw = (run / "vocab.json").read_bytes()
    with open(out / "vocab.json.gz", "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9,
                                                                 mtime=0, filename="") as gz:
        gz.write(raw)
    for name in COPIED:
        shutil.copyfile(run / name, out / name)
    return {"saved": saved, "vocab_size": len(vocab), "n_params": sum(t.numel() for t in tensors.values()),
            "model_pt_sha256": sha256(run / "model.pt"), "vocab_sha256": hashlib.sha256(raw).hexdigest()}


def provenance(run: Path, out: Path, name: str, info: dict, trained_commit: str, trained_note: str) -> str:
    metrics = json.loads((out / "metrics.json").read_text())
    ev = json.loads((out / "eval.json").read_text())
    cfg = json.loads((out / "config.json").read_text())
    best = next(e for e in metrics["epochs"] if e["epoch"] == metrics["best_epoch"])["validation"]
    rel = run.resolve().relative_to(ROOT)
    head = git("rev-parse", "HEAD")
    lines = [
        f"# Pretrained extractor `{name}`",
        "",
        f"{cfg['encoder'].upper()} encoder + {cfg['selector']} selector (OpenNRE's bag-level model), "
        f"{info['n_params']:,} parameters, vocabulary of {info['vocab_size']:,} tokens. Written by "
        "`scripts/package_pretrained.py`; every number below is read from the files beside this one.",
        "",
        "## Data",
        "",
        "The WikiGenderBias release embedded in `wikigenderbias` (config `dataset: null`): trained on its "
        "`train` split, the epoch kept by micro F1 on `validation`; `male_test` / `female_test` were read "
        "only after training, for `eval.json`. No debiasing (`dataset_transform` and `vectors_transform` "
        "empty). Word embeddings were initialised from a Word2Vec model trained on the train sentences. "
        "The training text is Wikipedia's (CC BY-SA 3.0).",
        "",
        "## How it was trained",
        "",
        f"- command: `scripts/study/debias_study.sh` (the debiasing study of issue #19), run `{run.name}`, "
        f"seed {cfg['seed']}, run directory `{rel}`",
        f"- wgb commit when the run started: `{trained_commit}` ({trained_note})",
        f"- packaged at wgb commit `{head}`; package version of the run: {cfg.get('package_version')}",
        f"- config: `config.json` (a byte copy of the run's); {metrics['epochs_run']} of {cfg['epochs']} "
        f"epochs run, best epoch {metrics['best_epoch']}",
        f"- the run's `model.pt` sha256 `{info['model_pt_sha256']}`; its `vocab.json` sha256 "
        f"`{info['vocab_sha256']}`; the state dict is stored unchanged (float32) in `model.safetensors`",
        "",
        "## Scores (copied from `metrics.json` and `eval.json`)",
        "",
        f"Validation (best epoch {metrics['best_epoch']}, argmax over all classes, NA included), from "
        "`metrics.json`:",
        "",
        "| micro F1 | precision | recall | PR-AUC | bags |",
        "|---|---|---|---|---|",
        f"| {best['micro_f1']:.4f} | {best['precision']:.4f} | {best['recall']:.4f} | {best['pr_auc']:.4f} "
        f"| {best['bags']} |",
        "",
        "Test, from `eval.json` (`scores.<rule>.<split>`):",
        "",
        "| rule | split | micro F1 | macro F1 | PR-AUC | bags |",
        "|---|---|---|---|---|---|",
    ]
    for rule in ("argmax", "threshold"):
        for split in ("male_test", "female_test", "pooled"):
            s = ev["scores"][rule][split]
            lines.append(f"| {rule} | {split} | {s['micro_f1']:.4f} | {s['macro_f1']:.4f} | {s['pr_auc']:.4f} "
                         f"| {s['n_bags']} |")
    lines += [
        "",
        "Per-relation scores, gender gaps with bootstrap intervals and the thresholds are in `eval.json` "
        "(its `run_dir` is the path on the machine that trained it).",
        "",
        "## Files",
        "",
        "`SHA256SUMS` (checked by `relext.pretrained.load`):",
        "",
        "```",
        *(out / "SHA256SUMS").read_text().splitlines(),
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, default=ROOT / "results/re_debias/study/runs/none-attention-seed0")
    ap.add_argument("--name", default="pcnn-attention")
    ap.add_argument("--out-root", type=Path, default=ROOT / "relext/pretrained")
    ap.add_argument("--trained-commit", default=None,
                    help="wgb commit the run was trained at (default: the last commit before the run's "
                    "config.json was written)")
    args = ap.parse_args()
    run = args.run
    out = args.out_root / args.name
    out.mkdir(parents=True, exist_ok=True)
    info = convert(run, out)
    if args.trained_commit:
        trained, note = args.trained_commit, "given to scripts/package_pretrained.py"
    else:
        started = dt.datetime.fromtimestamp((run / "config.json").stat().st_mtime, dt.timezone.utc)
        stamp = started.strftime("%Y-%m-%d %H:%M:%S +0000")
        trained = git("log", f"--before={stamp}", "-1", "--format=%H")
        note = (f"the last commit before the run's config.json was written at {stamp}, "
                "`git log --before=... -1`; uncommitted changes of that working tree are not recorded")
    (out / "SHA256SUMS").write_text("".join(f"{sha256(out / f)}  {f}\n" for f in CHECKED))
    (out / "PROVENANCE.md").write_text(provenance(run, out, args.name, info, trained, note))
    for p in out.iterdir():
        p.chmod(0o644)
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"wrote {out} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
