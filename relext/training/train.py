"""Training a bag-level relation extractor into a run directory (see :mod:`relext.training.run`).

>>> from relext.training.train import ExtractorConfig, train_extractor
>>> run_dir = train_extractor(ExtractorConfig(encoder="pcnn", selector="attention", epochs=3), "runs/pcnn-att-s0")

* One ``seed`` seeds python, numpy and torch (model init, dropout, bag shuffling); two runs with
  the same config give identical numbers (CPU, same thread count).
* Model selection and early stopping use the **validation** split only (``select_metric``:
  ``micro_f1`` = micro F1 over the positive relations with argmax including NA, or ``pr_auc`` =
  average precision over (bag, positive relation) scores). Test splits are never read here.
* After every epoch ``checkpoint.pt`` holds everything to resume (model, optimizer, epoch, all
  random states, best score); rerunning on a run directory without ``DONE`` resumes there, with
  ``DONE`` returns at once. A run directory holding another config, or a checkpoint that does
  not match its config or vocabulary, is an error before any training.
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import nn

from relext.model.bags import check_dataset, iter_batches
from relext.training.checkpoint import load_torch_file, restore, save_checkpoint
from relext.training.config import DEVICES, OPTIMIZERS, RUNTIME_FIELDS, SELECT_METRICS, ExtractorConfig  # noqa: F401  (re-exported)
from relext.protocols.crossfit import view_for
from relext.protocols.data import PreparedSplit, apply_dataset_transforms, load_dataset_dict, prepare_split, resolve_transforms
from relext.model.embeddings import embedding_matrix, train_word2vec
from relext.model.encoders import encoder_class
from relext.model.heap import retain_freed_memory
from relext.model.bag_model import BagModel, build_model
from relext.training.run import RunDir, atomic_torch_save, atomic_write_json, package_version
from relext.model.vocab import PAD, UNK, Vocab
from wgbcore.cores import busy_hint
from wgbcore.progress import progress as progress_bar
from wgbcore.seeding import seed_everything
from wikigenderbias.schema import RELATIONS

#: Splits training reads (the test splits are never read while training).
TRAIN_SPLITS = ("train", "validation")


#: The relation extractor's config and trainer have names of their own (kge trains embeddings
#: with :class:`kge.train.EmbeddingConfig`); ``TrainConfig`` / ``train`` stay as aliases.
TrainConfig = ExtractorConfig

# --------------------------------------------------------------------------------------------
def validation_metrics(probs: np.ndarray, labels: Sequence[Sequence[int]]) -> dict[str, float]:
    """Quick validation metrics (full evaluation: relext.evaluation.evaluate).

    ``micro_f1``: argmax over all classes including NA; a bag predicted r != NA is a true
    positive when r is among its gold labels; every positive gold label not predicted is a false
    negative. ``pr_auc``: average precision of the (bag, positive relation) scores.
    """
    from sklearn.metrics import average_precision_score

    n, c = probs.shape
    gold = np.zeros((n, c), dtype=bool)
    for i, labs in enumerate(labels):
        gold[i, list(labs)] = True
    pred = probs.argmax(1)
    pos_pred = pred != 0
    tp = int(gold[np.arange(n), pred][pos_pred].sum())
    fp = int(pos_pred.sum()) - tp
    fn = int(gold[:, 1:].sum()) - tp
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    y, s = gold[:, 1:].ravel(), probs[:, 1:].ravel()
    ap = float(average_precision_score(y, s)) if y.any() else 0.0
    acc = float(np.mean(gold[np.arange(n), pred])) if n else 0.0
    return {"micro_f1": f1, "precision": prec, "recall": rec, "pr_auc": ap, "accuracy": acc, "bags": n}


@torch.inference_mode()
def predict_proba(model: BagModel, split: PreparedSplit, batch_size: int = 512) -> np.ndarray:
    """[num_bags, num_classes] probabilities of the evaluation bags of ``split`` (computed on the
    model's device)."""
    device = model_device(model)
    was_training = model.training
    model.eval()
    out = []
    try:
        for b in iter_batches(split.bags, batch_size):
            flat, seg = split.bags.select(b)
            batch = to_device(split.table.gather(flat), device)
            out.append(model.predict_proba(batch, seg.to(device), len(b)).float().cpu().numpy())
    finally:
        model.train(was_training)
    return np.concatenate(out, 0) if out else np.zeros((0, model.num_classes), np.float32)


def model_device(model: nn.Module) -> torch.device:
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    if device.type == "cpu":
        return batch
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def run_epoch(model: BagModel, optimizer: torch.optim.Optimizer, split: PreparedSplit, order: np.ndarray,
              batch_size: int, *, desc: str = "train", progress: bool = True) -> float:
    """One pass over the training bags of ``split`` in ``order``; returns the mean loss per bag.
    ``progress``: a bar on a terminal, a plain line every 30 s elsewhere (:mod:`wgbcore.progress`)."""
    model.train()
    device = model_device(model)
    criterion = nn.CrossEntropyLoss()
    labels_all = torch.from_numpy(split.bags.label).to(device)
    total_loss, seen = 0.0, 0
    bar = progress_bar(iter_batches(split.bags, batch_size, order), total=math.ceil(len(order) / batch_size),
                       desc=desc, unit="batch", enabled=None if progress else False, leave=False)
    for b in bar:
        flat, seg = split.bags.select(b)
        batch = to_device(split.table.gather(flat), device)
        labels = labels_all.index_select(0, torch.from_numpy(b).to(device))
        loss = criterion(model(batch, seg.to(device), len(b), labels), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(b)
        seen += len(b)
        bar.set_postfix(loss=f"{total_loss / seen:.4f}")
    bar.close()
    return total_loss / max(seen, 1)


def make_optimizer(cfg: TrainConfig, model: nn.Module) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def model_from_config(cfg: TrainConfig, vocab: Vocab, vectors: np.ndarray | None = None) -> BagModel:
    return build_model(
        cfg.encoder, cfg.selector, num_words=len(vocab), vectors=vectors, num_classes=len(RELATIONS),
        dropout=cfg.dropout, word_dim=cfg.word_dim, pos_dim=cfg.pos_dim, max_length=cfg.max_length,
        hidden=cfg.hidden, kernel=cfg.kernel, cell=cfg.rnn_cell, bucket_size=cfg.bucket_size, conv_impl=cfg.conv_impl,
        rnn_impl=cfg.rnn_impl,
        model_path=cfg.transformer_path,
    )


def featurize_options(cfg: TrainConfig) -> dict[str, Any]:
    if encoder_class(cfg.encoder).features == "words":
        return {}
    from relext.model.encoders.transformer import load_tokenizer

    return {"tokenizer": load_tokenizer(cfg.transformer_path), "max_wordpieces": cfg.max_wordpieces}


def training_sentences(train_split) -> list[list[str]]:
    """The Word2Vec corpus: each distinct training sentence once (rows repeat a sentence per
    relation of its head)."""
    seen: set[str] = set()
    out = []
    for sid, toks in zip(train_split["sentence_id"], train_split["tokens"]):
        if sid not in seen:
            seen.add(sid)
            out.append(toks)
    return out


def freezes_word_embeddings(kv_transforms: Sequence[Callable]) -> bool:
    """Does a vectors transform ask the trainer to keep the word embeddings fixed
    (``hard_debias[freeze=true]``)?"""
    return any(bool(getattr(getattr(fn, "__self__", fn), "freeze", False)) for fn in kv_transforms)


def freeze_word_embeddings(model: nn.Module) -> bool:
    """Stop gradients to the model's word embedding table; False when it has none (transformer)."""
    embed = getattr(getattr(model, "encoder", None), "embed", None)
    word = getattr(embed, "word", None)
    if not isinstance(word, nn.Embedding):
        return False
    word.weight.requires_grad_(False)
    return True


# --------------------------------------------------------------------------------------------
def train_extractor(
    config: "ExtractorConfig",
    run_dir: str | os.PathLike,
    *,
    dataset=None,
    progress: bool = True,
    dataset_transforms: Sequence[Callable] = (),
    vectors_transforms: Sequence[Callable] = (),
) -> Path:
    """Train into ``run_dir`` (resuming an unfinished run); returns the run directory.

    ``dataset``: a DatasetDict of the canonical ``sentences`` form (default: ``config.dataset``
    or the embedded release). ``dataset_transforms`` / ``vectors_transforms``: extra callables
    applied after the ones named in the config (``f(dataset_dict, seed=) -> dataset_dict`` before
    Word2Vec; ``f(keyed_vectors, seed=) -> keyed_vectors`` after it).

    An unfinished run is written under the run folder's lock (:mod:`wgbcore.lock`): a second
    process on the same folder gets ``FolderLocked`` naming the holder at once; a killed writer's
    lock vanishes with it.
    """
    from wgbcore.lock import folder_lock

    config.validate()
    if RunDir(run_dir).is_done():  # a finished run is only read
        return _train_locked(config, run_dir, dataset=dataset, progress=progress,
                             dataset_transforms=dataset_transforms, vectors_transforms=vectors_transforms)
    created = not Path(run_dir).exists()
    with folder_lock(run_dir, what="run"):
        try:
            return _train_locked(config, run_dir, dataset=dataset, progress=progress,
                                 dataset_transforms=dataset_transforms, vectors_transforms=vectors_transforms)
        except BaseException:
            if created:  # failed before writing anything: leave no folder holding only the lock
                _remove_lock_only_folder(Path(run_dir))
            raise


def _remove_lock_only_folder(folder: Path) -> None:
    from wgbcore.lock import LOCK_NAME

    try:
        if {p.name for p in folder.iterdir()} <= {LOCK_NAME}:
            (folder / LOCK_NAME).unlink(missing_ok=True)
            folder.rmdir()
    except OSError:
        pass


def _train_locked(config: "ExtractorConfig", run_dir, *, dataset, progress: bool, dataset_transforms,
                  vectors_transforms) -> Path:
    """:func:`train_extractor`'s work, with the run folder's lock held (checks again under it)."""
    cfg = config.validate().current()   # transform versions explicit: what is recorded
    run = RunDir(run_dir)
    ckpt = _checked_checkpoint(cfg, run)     # everything that can fail fast, before long work
    if run.is_done():
        return run.root
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    if progress and (hint := busy_hint(torch.get_num_threads())):
        print(f"warning: {hint}", file=sys.stderr, flush=True)
    retain_freed_memory()   # no page faults on each batch's temporaries (exact; relext.model.heap)
    device = cfg.torch_device()
    ds_transforms = resolve_transforms(cfg.dataset_transform, "dataset") + list(dataset_transforms)
    kv_transforms = resolve_transforms(cfg.vectors_transform, "vectors") + list(vectors_transforms)
    dataset = view_for(cfg, load_dataset_dict(cfg.dataset, dataset))
    check_dataset(dataset, TRAIN_SPLITS, source=str(cfg.dataset or "dataset"))

    seed_everything(cfg.seed)
    t0 = time.perf_counter()
    dataset = apply_dataset_transforms(dataset, ds_transforms, seed=cfg.seed)
    info: dict[str, Any] = {"dataset_transform": list(cfg.dataset_transform), "vectors_transform": list(cfg.vectors_transform)}
    vocab, vectors = _vocab_and_vectors(cfg, run, ckpt, dataset, kv_transforms, info)
    train_split, val_split = _prepare_splits(cfg, dataset, vocab, info)
    info["prepare_seconds"] = round(time.perf_counter() - t0, 3)

    # ---- model, optimizer, state
    seed_everything(cfg.seed)
    model = model_from_config(cfg, vocab, vectors).to(device)
    if freezes_word_embeddings(kv_transforms):
        info["frozen_word_embeddings"] = freeze_word_embeddings(model)
    optimizer = make_optimizer(cfg, model)
    shuffle = np.random.default_rng(cfg.seed)
    state = {"epoch": 0, "best_score": -math.inf, "best_epoch": None, "bad_epochs": 0, "history": []}
    if ckpt is not None:
        info = restore(ckpt, run, model, optimizer, state, shuffle, device, info)
        if not run.config.exists():   # a folder copied without its small records (the checkpoint matched cfg)
            atomic_write_json(run.config, {**cfg.to_json(), "package_version": package_version()})
    else:
        run.root.mkdir(parents=True, exist_ok=True)
        atomic_write_json(run.config, {**cfg.to_json(), "package_version": package_version()})
        vocab.save(run.vocab)

    for epoch in range(state["epoch"], cfg.epochs):
        if cfg.patience and state["bad_epochs"] >= cfg.patience:
            break
        _epoch(cfg, run, model, optimizer, vocab, train_split, val_split, state, shuffle, epoch, progress)
        save_checkpoint(cfg, run, model, optimizer, vocab, state, info, shuffle, device)
        _write_metrics(run, cfg, state, info)
    _write_metrics(run, cfg, state, info, finished=True)
    run.mark_done()
    return run.root


def _checked_checkpoint(cfg: TrainConfig, run: RunDir) -> dict | None:
    """The run directory's checkpoint (None when there is none), after checking that the folder
    and the checkpoint hold this config and a vocabulary."""
    if run.config.exists():
        diff = cfg.differences(TrainConfig.from_json(run.config, record=True))
        if diff:
            raise ValueError(f"{run.config}: the run directory holds another config (fields {diff} differ); "
                             "use a new run directory")
    if run.is_done() or not run.checkpoint.exists():
        return None
    ckpt = load_torch_file(run.checkpoint, what="checkpoint")
    if not isinstance(ckpt, dict) or "config" not in ckpt:
        raise ValueError(f"{run.checkpoint}: not a relext checkpoint")
    diff = cfg.differences(TrainConfig.from_json(ckpt["config"], source=str(run.checkpoint), record=True))
    if diff:
        raise ValueError(f"{run.checkpoint}: checkpoint does not match the config (fields {diff} differ)")
    if not run.vocab.exists():
        raise ValueError(f"{run.checkpoint}: checkpoint without {run.vocab.name}")
    return ckpt


def _vocab_and_vectors(cfg: TrainConfig, run: RunDir, ckpt, dataset, kv_transforms, info: dict):
    """(vocabulary, initial word vectors or None): the run's own vocabulary when resuming, else
    Word2Vec on the training sentences (cached) after the vectors transforms."""
    if ckpt is not None:
        vocab = Vocab.load(run.vocab)
        if ckpt.get("vocab_fingerprint") != vocab.fingerprint():
            raise ValueError(f"{run.checkpoint}: checkpoint does not match {run.vocab} (vocabulary fingerprint differs)")
        return vocab, None
    if encoder_class(cfg.encoder).features != "words":
        return Vocab([PAD, UNK], lowercase=cfg.lowercase), None
    tw = time.perf_counter()
    kv = train_word2vec(training_sentences(dataset["train"]), cfg.word2vec_params(), cache_dir=cfg.cache_dir)
    for fn in kv_transforms:
        kv = fn(kv, seed=cfg.seed)
    vocab = Vocab.from_words(kv.index_to_key, lowercase=cfg.lowercase)
    info["word2vec"] = {"seconds": round(time.perf_counter() - tw, 3), "words": len(kv.index_to_key),
                        "params": cfg.word2vec_params().to_json()}
    return vocab, embedding_matrix(vocab, kv, seed=cfg.seed)


def _prepare_splits(cfg: TrainConfig, dataset, vocab: Vocab, info: dict):
    opts = featurize_options(cfg)
    train_split = prepare_split(dataset["train"], "train", encoder=cfg.encoder, vocab=vocab, max_length=cfg.max_length,
                                kind="train", unlocated=cfg.unlocated, featurize_options=opts)
    val_split = prepare_split(dataset["validation"], "validation", encoder=cfg.encoder, vocab=vocab,
                              max_length=cfg.max_length, kind="eval", featurize_options=opts)
    if len(train_split.bags) == 0 or len(val_split.bags) == 0:
        raise ValueError("the train and validation splits need at least one bag each")
    info["data"] = {s.name: {**s.bags.info, "bags": len(s.bags), "sentences": len(s.bags.rows), **s.table.info}
                    for s in (train_split, val_split)}
    return train_split, val_split


def _epoch(cfg: TrainConfig, run: RunDir, model, optimizer, vocab: Vocab, train_split, val_split, state: dict,
           shuffle, epoch: int, progress: bool) -> None:
    """One epoch: train, validate, keep the model when it is the best so far; updates ``state``."""
    from tqdm.auto import tqdm

    t_epoch = time.perf_counter()
    order = shuffle.permutation(len(train_split.bags))
    mean_loss = run_epoch(model, optimizer, train_split, order, cfg.batch_size,
                          desc=f"epoch {epoch + 1}/{cfg.epochs}", progress=progress)
    train_seconds = time.perf_counter() - t_epoch
    t_eval = time.perf_counter()
    val = validation_metrics(predict_proba(model, val_split, cfg.eval_batch_size), val_split.bags.labels)
    eval_seconds = time.perf_counter() - t_eval
    score = val[cfg.select_metric]
    improved = score > state["best_score"]
    if improved:
        state.update(best_score=score, best_epoch=epoch + 1, bad_epochs=0)
        atomic_torch_save(run.model, {"config": cfg.to_json(), "vocab_fingerprint": vocab.fingerprint(),
                                      "epoch": epoch + 1, "score": score, "state_dict": model.state_dict()})
    else:
        state["bad_epochs"] += 1
    state["epoch"] = epoch + 1
    state["history"].append({
        "epoch": epoch + 1, "train_loss": mean_loss, "train_seconds": round(train_seconds, 3),
        "eval_seconds": round(eval_seconds, 3), "validation": val, "best": improved,
    })
    if progress:
        tqdm.write(f"epoch {epoch + 1}: loss {mean_loss:.4f}  validation {cfg.select_metric} "
                   f"{score:.4f}  ({train_seconds:.1f}s train, {eval_seconds:.1f}s eval)")


def _write_metrics(run: RunDir, cfg: TrainConfig, state: dict, info: dict, finished: bool = False) -> None:
    atomic_write_json(run.metrics, {
        "select_metric": cfg.select_metric, "split": "validation", "best_epoch": state["best_epoch"],
        "best_score": state["best_score"] if state["best_epoch"] else None, "epochs_run": state["epoch"],
        "stopped_early": bool(finished and state["epoch"] < cfg.epochs), "epochs": state["history"],
        "threads": torch.get_num_threads(), "device": str(cfg.torch_device()),
        "device_name": torch.cuda.get_device_name(cfg.torch_device()) if cfg.torch_device().type == "cuda" else "cpu",
        "seed": cfg.seed, "package_version": package_version(), **info,
    })


train = train_extractor
