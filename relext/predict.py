"""Scores of a trained run on evaluation bags (one bag per entity pair), as JSON lines.

``run_dir/predictions/<split>.jsonl`` holds one row per bag::

    {"bag_id", "split", "entity_id", "head", "tail", "gender": "male"|"female",
     "labels": [gold relation ids of the pair], "scores": [probability per relation id],
     "sentence_ids": [...]}

With the attention selector the score of relation r comes from the bag attended with r's own
query (OpenNRE). The same dataset transforms as in training are applied first (a transform
decides itself which splits it changes).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import torch

from relext.bags import check_dataset
from relext.data import apply_dataset_transforms, load_dataset_dict, prepare_split, resolve_transforms
from relext.run import RunDir
from wikigenderbias.io import write_text_atomic as atomic_write_text
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
    """Write ``run_dir/predictions/<split>.jsonl`` (atomically) for every split."""
    run = RunDir(run_dir)
    preds = _predict(run_dir, list(splits), dataset)
    paths = {}
    for split, rows in preds.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        paths[split] = atomic_write_text(run.prediction_file(split), text)
    return paths
