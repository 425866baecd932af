"""Scores of a trained run on evaluation bags (one bag per entity pair), as JSON lines.

``run_dir/predictions/<split>.jsonl`` holds one row per bag::

    {"bag_id", "split", "entity_id", "head", "tail", "gender": "male"|"female",
     "labels": [gold relation ids of the pair], "scores": [probability per relation id],
     "sentence_ids": [...]}

With the attention selector the score of relation r comes from the bag attended with r's own
query (OpenNRE). The same dataset transforms as in training are applied first (a transform
decides itself which splits it changes).

``run_dir/predictions/provenance.json`` records, per split, the sha256 of the ``model.pt`` and
the model-defining config fields that wrote the file, the content hash of the split's rows
(``dataset_sha256``) and the file's own sha256 (``predictions_sha256``);
:func:`verify_predictions` compares cached predictions with the run's current ``model.pt``,
``config.json`` and data before they are evaluated or turned into triples: a mismatch of model,
config or file is refused, changed data (or a record without the hashes) is predicted again.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import torch

from relext.model.bags import check_dataset
from relext.protocols.data import apply_dataset_transforms, load_dataset_dict, prepare_split, resolve_transforms
from relext.training.run import RunDir
from wgbcore.atomicio import atomic_write_text
from wgbcore.provenance import file_sha256
from relext.training.train import TrainConfig, featurize_options, load_torch_file, model_from_config, predict_proba
from relext.model.vocab import Vocab
from wikigenderbias.content import dataset_sha256

DEFAULT_SPLITS = ("validation", "male_test", "female_test")


#: A shipped (pretrained) model: the state dict as safetensors, its config, vocabulary fingerprint,
#: epoch and score as JSON under the metadata key ``relext``; read instead of ``model.pt`` when present.
MODEL_SAFETENSORS = "model.safetensors"


def model_file(run_dir: str | os.PathLike) -> Path:
    """The model file of a run directory: ``model.safetensors`` when present, else ``model.pt``."""
    run = RunDir(run_dir)
    st = run.root / MODEL_SAFETENSORS
    return st if st.exists() else run.model


def vocab_file(run_dir: str | os.PathLike) -> Path:
    """``vocab.json``, or ``vocab.json.gz`` when only that is present."""
    run = RunDir(run_dir)
    gz = run.vocab.with_name(run.vocab.name + ".gz")
    return gz if not run.vocab.exists() and gz.exists() else run.vocab


def load_vocab(path: Path) -> Vocab:
    if path.suffix != ".gz":
        return Vocab.load(path)
    import gzip

    try:
        obj = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a gzipped JSON vocabulary ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: not a relext vocabulary (expected a JSON object)")
    return Vocab.from_json(obj, source=str(path))


def _read_safetensors(path: Path) -> dict[str, Any]:
    """``{"config", "vocab_fingerprint", "state_dict", ...}`` of a ``model.safetensors`` (tensors
    only: reading it runs no code). Any failure is a one-line ``ValueError`` naming the file."""
    try:
        from safetensors import safe_open
    except ImportError:  # pragma: no cover - safetensors comes with transformers
        raise ValueError(f"{path}: reading it needs the 'safetensors' package (pip install safetensors)") from None
    try:
        with safe_open(str(path), framework="pt", device="cpu") as fh:
            meta = fh.metadata() or {}
            state = {k: fh.get_tensor(k) for k in fh.keys()}
    except Exception as exc:  # noqa: BLE001  (safetensors raises its own error types)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable safetensors model ({first[:200]})") from None
    try:
        record = json.loads(meta["relext"])
    except KeyError:
        raise ValueError(f"{path}: not a relext model file (no 'relext' record in its metadata)") from None
    except json.JSONDecodeError:
        raise ValueError(f"{path}: the 'relext' record in its metadata is not valid JSON") from None
    if (not isinstance(record, dict) or record.get("format_version") != 1
            or not isinstance(record.get("config"), dict) or not isinstance(record.get("vocab_fingerprint"), str)):
        raise ValueError(f"{path}: not a relext model file (its 'relext' record needs format_version 1, a "
                         "config object and a vocab_fingerprint)")
    return {**{k: v for k, v in record.items() if k != "format_version"}, "state_dict": state}


def read_model_file(path: str | os.PathLike) -> dict[str, Any]:
    """The saved model of a run: ``model.safetensors`` or ``model.pt`` (tensors and plain values)."""
    path = Path(path)
    saved = _read_safetensors(path) if path.suffix == ".safetensors" else load_torch_file(path, what="model")
    if not isinstance(saved, dict) or "state_dict" not in saved or not isinstance(saved.get("config"), dict):
        raise ValueError(f"{path}: not a relext model file (no config / state_dict)")
    return saved


def load_trained(run_dir: str | os.PathLike, *, verify: bool = True):
    """(config, vocab, model in eval mode) of a run directory holding ``model.pt`` (or a shipped
    model: ``model.safetensors``, and ``vocab.json.gz`` in place of ``vocab.json``).

    A folder with a ``SHA256SUMS`` (a shipped model, or a copy of one) must still hold the files it
    lists (``verify``; checked once the files are known to be well-formed)."""
    run = RunDir(run_dir)
    model_path, vocab_path = model_file(run_dir), vocab_file(run_dir)
    for p in (run.config, vocab_path, model_path):
        if not p.exists():
            raise FileNotFoundError(f"{p}: missing; is {run.root} a trained run directory?")
    cfg = TrainConfig.from_json(run.config, record=True)
    vocab = load_vocab(vocab_path)
    saved = read_model_file(model_path)
    if saved.get("vocab_fingerprint") != vocab.fingerprint():
        raise ValueError(f"{model_path}: model does not match {vocab_path} (vocabulary fingerprint differs)")
    diff = cfg.differences(TrainConfig.from_json(saved["config"], source=str(model_path), record=True))
    if diff:
        raise ValueError(f"{model_path}: model does not match {run.config} (fields {diff} differ)")
    model = model_from_config(cfg, vocab)
    try:
        model.load_state_dict(saved["state_dict"])
    except (RuntimeError, ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()
        detail = " ".join(line.strip() for line in first[:3])[:300]
        raise ValueError(f"{model_path}: its tensors do not fit the model of {run.config} ({detail})") from None
    # a run trained on a GPU is read on a machine without one on the CPU
    dev = cfg.torch_device() if cfg.device == "cpu" or torch.cuda.is_available() else torch.device("cpu")
    model.to(dev).eval()
    if verify and (run.root / "SHA256SUMS").is_file():
        from wgbcore.provenance import verify_checksums

        verify_checksums(run.root, hint=f"{run.root} is not the model its SHA256SUMS describes")
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


def _loaded_dataset(cfg: TrainConfig, dataset):
    """The rows a run predicts from (before its transforms): what its cache's fingerprint covers."""
    from relext.protocols.crossfit import view_for

    return view_for(cfg, load_dataset_dict(cfg.dataset, dataset))


def _prepared_dataset(cfg: TrainConfig, dataset, splits: Sequence[str], fingerprints: dict | None = None):
    dataset = _loaded_dataset(cfg, dataset)
    if fingerprints is not None:  # the content of each split used, before any transform
        fingerprints.update(dataset_sha256(dataset, splits, source=_data_name(cfg)))
    check_dataset(dataset, list(splits), source=str(cfg.dataset or "dataset"))
    transforms = resolve_transforms(cfg.dataset_transform, "dataset")
    if transforms:
        dataset = apply_dataset_transforms(dataset, transforms, seed=cfg.seed)
    return dataset


def predict_split(run_dir: str | os.PathLike, split: str, *, dataset=None) -> list[dict[str, Any]]:
    """One prediction row per evaluation bag of ``split``."""
    return _predict(run_dir, [split], dataset)[split]


def _predict(run_dir, splits: Sequence[str], dataset, fingerprints: dict | None = None) -> dict[str, list[dict[str, Any]]]:
    cfg, vocab, model = load_trained(run_dir)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    dataset = _prepared_dataset(cfg, dataset, splits, fingerprints)
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
    ``predictions/provenance.json`` which model, config and data wrote them and the file's hash."""
    import hashlib

    run = RunDir(run_dir)
    data_fp: dict[str, str] = {}
    preds = _predict(run_dir, list(splits), dataset, data_fp)
    stamp = model_fingerprint(run_dir)
    paths, stamps = {}, {}
    for split, rows in preds.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        paths[split] = atomic_write_text(run.prediction_file(split), text)
        stamps[split] = {**stamp, "dataset_sha256": data_fp[split],
                         "predictions_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    prov = _read_provenance(run) if run.prediction_provenance.exists() else {}
    prov.update(stamps)
    atomic_write_text(run.prediction_provenance, json.dumps(prov, indent=1, sort_keys=True) + "\n")
    return paths


# --------------------------------------------------------------------------------------------
# provenance of cached predictions
# --------------------------------------------------------------------------------------------


def model_fingerprint(run_dir: str | os.PathLike) -> dict[str, Any]:
    """``{"model_sha256", "config"}``: the bytes of ``model.pt`` and the model-defining fields of
    ``config.json`` (runtime settings such as threads or device left out)."""
    run = RunDir(run_dir)
    return {"model_sha256": file_sha256(model_file(run_dir)),
            "config": TrainConfig.from_json(run.config, record=True).identity()}


def _read_provenance(run: RunDir) -> dict[str, Any]:
    path = run.prediction_provenance
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc}); delete {run.predictions} to predict again") from None
    if not isinstance(prov, dict) or not all(isinstance(v, dict) for v in prov.values()):
        raise ValueError(f"{path}: expected an object of split -> record; delete {run.predictions} to predict again")
    return prov


def _data_name(cfg: TrainConfig) -> str:
    return str(cfg.dataset) if cfg.dataset else "the embedded release"


def verify_predictions(run_dir: str | os.PathLike, splits: Sequence[str] | None = None, *,
                       dataset=None) -> dict[str, str]:
    """Check the cached prediction files of ``splits`` (default: all present) before they are used.

    Refused (a ``ValueError`` saying what differs; deleting ``predictions/`` predicts again):
    prediction files in a run dir trained here (its ``vocab.json`` or ``checkpoint.pt`` is there)
    whose model is gone (nothing to check them against); a
    ``config.json`` that does not fit the model; a file written by another ``model.pt`` or under
    another config; a file whose bytes differ from the sha256 recorded when it was written.
    Returned, as ``{split: why}``, the files to predict again: written by an older wgb (no record,
    or one without the data and file hashes), or from data that changed since (the content hash of
    the split, :mod:`wikigenderbias.content`, differs: e.g. ``wgb data annotate-import`` in place).
    A folder holding predictions only (no model, no trace of training: an external extractor's
    files laid out as a run) has nothing to check them against; they are used as given.
    ``dataset``: the rows in memory, as given to :func:`write_predictions` (default: load the run's)."""
    run = RunDir(run_dir)
    if splits is None:
        splits = sorted(p.stem for p in run.predictions.glob("*.jsonl")) if run.predictions.is_dir() else []
    present = [s for s in splits if run.prediction_file(s).exists()]
    if not present:
        return {}
    mfile = model_file(run_dir)
    if not mfile.exists():
        trained = [p.name for p in (run.vocab, run.checkpoint) if p.exists()]
        if not trained:  # a folder of predictions only (an external extractor's): nothing to check
            return {}
        raise ValueError(f"{run.prediction_file(present[0])}: cached predictions but no model in {run.root} "
                         f"({run.model.name} missing, though {', '.join(trained)} show a run trained there), so "
                         f"nothing says which model and data they come from; restore the model or delete "
                         f"{run.predictions}")
    if not run.config.exists():
        raise FileNotFoundError(f"{run.config}: missing; {run.root} holds {mfile.name} but no config")
    cfg = TrainConfig.from_json(run.config, record=True)
    saved = read_model_file(mfile)
    diff = cfg.differences(TrainConfig.from_json(saved["config"], source=str(mfile), record=True))
    if diff:
        raise ValueError(f"{run.config} does not match {mfile} (fields {diff} differ); the predictions in "
                         f"{run.predictions} cannot be attributed to this config")
    prov = _read_provenance(run) if run.prediction_provenance.exists() else {}
    now = {"model_sha256": file_sha256(mfile), "config": cfg.identity()}
    stale: dict[str, str] = {}
    data_checks = []
    for split in present:
        rec = prov.get(split)
        path = run.prediction_file(split)
        if rec is None:
            stale[split] = "no provenance record: written by an older wgb"
            continue
        if rec.get("model_sha256") != now["model_sha256"]:
            raise ValueError(f"{path}: written by another model than the current {mfile} (the file changed "
                             f"since); delete {run.predictions} to predict again")
        old = rec.get("config") or {}
        fields_diff = sorted(k for k in set(old) | set(now["config"]) if old.get(k) != now["config"].get(k))
        if fields_diff:
            raise ValueError(f"{path}: written under another config (fields {fields_diff} differ from "
                             f"{run.config}); delete {run.predictions} to predict again")
        if not rec.get("dataset_sha256") or not rec.get("predictions_sha256"):
            stale[split] = "its record has no data or file hash: written by an older wgb"
            continue
        if file_sha256(path) != rec["predictions_sha256"]:
            raise ValueError(f"{path}: changed since it was written (its sha256 differs from the one in "
                             f"{run.prediction_provenance}); delete it to predict again")
        data_checks.append(split)
    if data_checks:
        current = dataset_sha256(_loaded_dataset(cfg, dataset), data_checks, source=_data_name(cfg))
        for split in data_checks:
            if current[split] != prov[split]["dataset_sha256"]:
                stale[split] = f"the {split} rows of {_data_name(cfg)} changed since it was written"
    return stale


def check_predictions(run_dir: str | os.PathLike, splits: Sequence[str] | None = None, *,
                      dataset=None) -> list[str]:
    """:func:`verify_predictions` as notes: one line per cached file that may not be used as it is
    (``relext.evaluation.evaluate.ensure_predictions`` predicts those again); refusals raise."""
    run = RunDir(run_dir)
    return [f"{run.prediction_file(s)}: not used ({why}); predicting it again"
            for s, why in verify_predictions(run_dir, splits, dataset=dataset).items()]
