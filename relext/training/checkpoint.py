"""Reading and writing a training run's checkpoint: tensors and plain values only.

``load_torch_file`` reads ``model.pt`` / ``checkpoint.pt`` with ``weights_only=True``, so a crafted
file cannot run code; the random states (python, numpy, torch, cuda, the bag shuffler) are stored
as tensors and plain values so that a resumed run continues exactly where it stopped.
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from relext.training.run import RunDir, atomic_torch_save


def load_torch_file(path: str | os.PathLike, *, what: str) -> Any:
    """``torch.load`` with ``weights_only=True``: tensors, numbers, strings, lists, tuples and dicts
    only, so a crafted file cannot run code. Any failure is a one-line error naming the file."""
    import pickle

    path = Path(path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError, ImportError,
            KeyError, TypeError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable relext {what} ({first[:200]}); files holding anything but "
                         "tensors and plain values are refused, as loading them could run code; a "
                         "checkpoint from an older wgb must be deleted (the run restarts)") from None


def _numpy_state_out() -> tuple:
    """numpy's global RNG state with its key array as a tensor (loadable with weights_only)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return (name, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(cached))


def _numpy_state(st) -> tuple:
    name, keys, pos, has_gauss, cached = st
    keys = keys.numpy() if isinstance(keys, torch.Tensor) else np.asarray(keys)
    return (name, keys.astype(np.uint32), int(pos), int(has_gauss), float(cached))


def _python_state(st) -> tuple:
    version, internal, gauss = st
    return (version, tuple(internal), gauss)


def restore(ckpt: dict, run: RunDir, model, optimizer, state: dict, shuffle, device, info: dict) -> dict:
    """Model, optimizer, training state and every random state from a checkpoint."""
    try:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
    except (RuntimeError, ValueError, KeyError) as exc:
        raise ValueError(f"{run.checkpoint}: checkpoint does not fit the model of its config: {exc}") from None
    for k in state:
        state[k] = ckpt["state"][k]
    random.setstate(_python_state(ckpt["rng"]["python"]))
    np.random.set_state(_numpy_state(ckpt["rng"]["numpy"]))
    torch.set_rng_state(ckpt["rng"]["torch"])
    if device.type == "cuda" and ckpt["rng"].get("cuda") is not None:
        torch.cuda.set_rng_state(ckpt["rng"]["cuda"], device)
    shuffle.bit_generator.state = ckpt["rng"]["shuffle"]
    return ckpt.get("info", info)


def save_checkpoint(cfg, run: RunDir, model, optimizer, vocab, state: dict, info: dict,
                     shuffle, device) -> None:
    atomic_torch_save(run.checkpoint, {
        "config": cfg.to_json(), "vocab_fingerprint": vocab.fingerprint(), "model": model.state_dict(),
        "optimizer": optimizer.state_dict(), "state": state, "info": info,
        "rng": {"python": random.getstate(), "numpy": _numpy_state_out(), "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                "shuffle": shuffle.bit_generator.state},
    })
