"""Run directories: where a training run keeps its files, atomic writes, the DONE marker.

Layout of a run directory::

    config.json         the TrainConfig (+ package version): everything to rebuild the model
    vocab.json          the word vocabulary (relext.model.vocab.Vocab)
    checkpoint.pt       resume state, rewritten after every epoch
    model.pt            the best model on the validation split
    metrics.json        per-epoch validation metrics and timings
    predictions/<split>.jsonl   one row per evaluation bag (relext.training.predict)
    predictions/provenance.json which model.pt (sha256) and config wrote each predictions file
    DONE                written last: the run finished
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgbcore import atomicio
from wgbcore.atomicio import atomic_torch_save, atomic_write_bytes, atomic_write_text
from wgbcore.provenance import package_version

__all__ = ["RunDir", "atomic_write_json", "atomic_torch_save", "atomic_write_bytes", "atomic_write_text",
           "package_version"]


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """A run's JSON files keep NaN as ``NaN`` (``json.dumps``'s default), so they read back as written."""
    return atomicio.atomic_write_json(path, obj, clean=False)


@dataclass(frozen=True)
class RunDir:
    """Paths of one run directory."""

    root: Path

    def __init__(self, root: str | os.PathLike) -> None:
        object.__setattr__(self, "root", Path(root))

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def vocab(self) -> Path:
        return self.root / "vocab.json"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint.pt"

    @property
    def model(self) -> Path:
        return self.root / "model.pt"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.json"

    @property
    def done(self) -> Path:
        return self.root / "DONE"

    @property
    def predictions(self) -> Path:
        return self.root / "predictions"

    def prediction_file(self, split: str) -> Path:
        return self.predictions / f"{split}.jsonl"

    @property
    def prediction_provenance(self) -> Path:
        return self.predictions / "provenance.json"

    def is_done(self) -> bool:
        return self.done.exists()

    def mark_done(self) -> None:
        atomic_write_text(self.done, "done\n")
