"""Scores of a trained run on evaluation bags (one bag per entity pair), as JSON lines.

``run_dir/predictions/<split>.jsonl`` holds one row per bag::

    {"bag_id", "split", "entity_id", "head", "tail", "gender": "male"|"female",
     "labels": [gold relation ids of the pair], "scores": [probability per relation id],
     "sentence_ids": [...]}

With the attention selector the score of relation r comes from the bag attended with r's own
query (OpenNRE). The same dataset transforms as in training are applied first (a transform
decides itself which splits it changes).

``run_dir/predictions/provenance.json`` records, per split, the sha256 of the ``model.pt`` and
the model-defining config fields that wrote the file; :func:`check_predictions` compares cached
predictions with the run's current ``model.pt`` and ``config.json`` (and those two with each
other) before they are evaluated or turned into triples.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Sequence

import torch

from relext.bags import check_dataset
from relext.data import apply_dataset_transforms, load_dataset_dict, prepare_split, resolve_transforms
from relext.run import RunDir
from wgbcore.atomicio import atomic_write_text
from relext.train import TrainConfig, featurize_options, load_torch_file, model_from_config, predict_proba
from relext.vocab import Vocab

DEFAULT_SPLITS = ("validation", "male_test", "female_test")


def load_trained(run_dir: str | os.PathLike):
    """(config, vocab, model in eval mode) of a run directory holding ``model.pt``."""
    run = RunDir(run_dir)
    for p in (run.config, run.vocab, run.model):
        if not p.exists():
            raise FileNotFoundError(f"{p}: missing; is {run.root} a trained run directory?")
    cfg = TrainConfig.from_json(run.config)
    vocab = Vocab.load(run.vocab)
    saved = load_torch_file(run.model, what="model")
    if not isinstance(saved, dict) or "state_dict" not in saved or "config" not in saved:
        raise ValueError(f"{run.model}: not a relext model file (no config / state_dict)")
    if saved.get("vocab_fingerprint") != vocab.fingerprint():
        raise ValueError(f"{run.model}: model does not match {run.vocab} (vocabulary fingerprint differs)")
    diff = cfg.differences(TrainConfig.from_json(saved["config"], source=str(run.model)))
    if diff:
        raise ValueError(f"{run.model}: model does not match {run.config} (fields {diff} differ)")
    model = model_from_config(cfg, vocab)
    model.load_state_dict(saved["state_dict"])
    # a run trained on a GPU is read on a machine without one on the CPU
    dev = cfg.torch_device() if cfg.device == "cpu" or torch.cuda.is_available() else torch.device("cpu")
    model.to(dev).eval()
    return cfg, vocab, model


def _rows(split: str, prepared, probs) -> list[dict[str, Any]]:
    out = []
    for i, meta in enumerate(prepared.bags.meta):
        out.append({
            "bag_id": f"{split}-{i:06d}",
            "split": split,
            "entity_id": meta["entity_id"],
            "head": meta["head"],
            "tail": meta["tail"],
            "gender": meta["gender"],
            "labels": list(prepared.bags.labels[i]),
            "scores": [float(x) for x in probs[i]],
            "sentence_ids": meta["sentence_ids"],
        })
    return out


def _prepared_dataset(cfg: TrainConfig, dataset, splits: Sequence[str]):
    dataset = load_dataset_dict(cfg.dataset, dataset)
    check_dataset(dataset, list(splits), source=str(cfg.dataset or "dataset"))
    transforms = resolve_transforms(cfg.dataset_transform, "dataset")
    if transforms:
        dataset = apply_dataset_transforms(dataset, transforms, seed=cfg.seed)
    return dataset


def predict_split(run_dir: str | os.PathLike, split: str, *, dataset=None) -> list[dict[str, Any]]:
    """One prediction row per evaluation bag of ``split``."""
    return _predict(run_dir, [split], dataset)[split]


def _predict(run_dir, splits: Sequence[str], dataset) -> dict[str, list[dict[str, Any]]]:
    cfg, vocab, model = load_trained(run_dir)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    dataset = _prepared_dataset(cfg, dataset, splits)
    opts = featurize_options(cfg)
    out = {}
    for split in splits:
        prepared = prepare_split(dataset[split], split, encoder=cfg.encoder, vocab=vocab,
                                 max_length=cfg.max_length, kind="eval", featurize_options=opts)
        out[split] = _rows(split, prepared, predict_proba(model, prepared, cfg.eval_batch_size))
    return out


def write_predictions(run_dir: str | os.PathLike, splits: Sequence[str] = DEFAULT_SPLITS, *,
                      dataset=None) -> dict[str, Path]:
    """Write ``run_dir/predictions/<split>.jsonl`` (atomically) for every split, and record in
    ``predictions/provenance.json`` which model and config wrote them."""
    run = RunDir(run_dir)
    preds = _predict(run_dir, list(splits), dataset)
    stamp = model_fingerprint(run_dir)
    paths = {}
    for split, rows in preds.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        paths[split] = atomic_write_text(run.prediction_file(split), text)
    prov = _read_provenance(run) if run.prediction_provenance.exists() else {}
    prov.update({split: stamp for split in preds})
    atomic_write_text(run.prediction_provenance, json.dumps(prov, indent=1, sort_keys=True) + "\n")
    return paths


# --------------------------------------------------------------------------------------------
# provenance of cached predictions
# --------------------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_fingerprint(run_dir: str | os.PathLike) -> dict[str, Any]:
    """``{"model_sha256", "config"}``: the bytes of ``model.pt`` and the model-defining fields of
    ``config.json`` (runtime settings such as threads or device left out)."""
    run = RunDir(run_dir)
    return {"model_sha256": _sha256(run.model),
            "config": TrainConfig.from_json(run.config).identity()}


def _read_provenance(run: RunDir) -> dict[str, Any]:
    path = run.prediction_provenance
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc}); delete {run.predictions} to predict again") from None
    if not isinstance(prov, dict) or not all(isinstance(v, dict) for v in prov.values()):
        raise ValueError(f"{path}: expected an object of split -> record; delete {run.predictions} to predict again")
    return prov


def check_predictions(run_dir: str | os.PathLike, splits: Sequence[str] | None = None) -> list[str]:
    """Check the cached prediction files of ``splits`` (default: all present) against the run.

    A run dir with ``model.pt`` must have a ``config.json`` that fits the model (the config saved
    inside ``model.pt``), and every cached predictions file must come from that ``model.pt`` and
    config (``predictions/provenance.json``); a mismatch is a ``ValueError`` saying what differs.
    Returns notes for files that cannot be checked (predictions written by an older wgb). A run dir
    holding predictions only (no ``model.pt``) has nothing to compare with and passes.
    """
    run = RunDir(run_dir)
    if splits is None:
        splits = sorted(p.stem for p in run.predictions.glob("*.jsonl")) if run.predictions.is_dir() else []
    present = [s for s in splits if run.prediction_file(s).exists()]
    if not present or not run.model.exists():
        return []
    if not run.config.exists():
        raise FileNotFoundError(f"{run.config}: missing; {run.root} holds model.pt but no config")
    cfg = TrainConfig.from_json(run.config)
    saved = load_torch_file(run.model, what="model")
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        raise ValueError(f"{run.model}: not a relext model file (no config / state_dict)")
    diff = cfg.differences(TrainConfig.from_json(saved["config"], source=str(run.model)))
    if diff:
        raise ValueError(f"{run.config} does not match {run.model} (fields {diff} differ); the predictions in "
                         f"{run.predictions} cannot be attributed to this config")
    prov = _read_provenance(run) if run.prediction_provenance.exists() else {}
    now = {"model_sha256": _sha256(run.model), "config": cfg.identity()}
    notes = []
    for split in present:
        rec = prov.get(split)
        path = run.prediction_file(split)
        if rec is None:
            notes.append(f"{path}: written by an older wgb, so not checked against {run.model}; delete it to "
                         "predict again")
            continue
        if rec.get("model_sha256") != now["model_sha256"]:
            raise ValueError(f"{path}: written by another model than the current {run.model} (the file changed "
                             f"since); delete {run.predictions} to predict again")
        old = rec.get("config") or {}
        fields_diff = sorted(k for k in set(old) | set(now["config"]) if old.get(k) != now["config"].get(k))
        if fields_diff:
            raise ValueError(f"{path}: written under another config (fields {fields_diff} differ from "
                             f"{run.config}); delete {run.predictions} to predict again")
    return notes
