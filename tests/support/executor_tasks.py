"""Top-level task functions for the run executor's tests (picklable: workers import them)."""
from __future__ import annotations

import os
from pathlib import Path

from wgbcore.lock import folder_lock


def write_done(folder: str, value: int) -> dict:
    """Write ``value`` and the marker under the folder's lock; return where it ran."""
    with folder_lock(folder, what="run"):
        (Path(folder) / "value.txt").write_text(str(value))
        (Path(folder) / "DONE").write_text("")
    print(f"wrote {value}")
    return {"pid": os.getpid(), "value": value, "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "omp": os.environ.get("OMP_NUM_THREADS")}


def fail_times(folder: str, n: int) -> int:
    """Fail the first ``n`` calls (counted in the folder), then succeed."""
    p = Path(folder)
    p.mkdir(parents=True, exist_ok=True)
    count = p / "calls"
    calls = int(count.read_text()) + 1 if count.exists() else 1
    count.write_text(str(calls))
    if calls <= n:
        raise ValueError(f"planned failure {calls} of {n}\nsecond line of the message")
    (p / "DONE").write_text("")
    return calls


def die_once(folder: str) -> int:
    """Kill the worker process the first time (as a machine loss would), succeed after."""
    p = Path(folder)
    p.mkdir(parents=True, exist_ok=True)
    if not (p / "died").exists():
        (p / "died").write_text(str(os.getpid()))
        os._exit(17)
    (p / "DONE").write_text("")
    return os.getpid()


def always_die(folder: str) -> None:
    os._exit(18)


# ---- a fake trainer for grids (synthetic predictions, milliseconds), picklable for workers
def fake_train(config: dict, run_dir) -> None:
    """Write what relext.training.train writes for the evaluation (config, predictions, DONE); male
    accuracy 0.9, female 0.6. ``config["fail_seed"]`` equal to the seed: raise instead (a run that fails at run time)."""
    import json
    import zlib

    from support.relext_data import synthetic_predictions

    if config.get("fail_seed") == config["seed"]:
        raise RuntimeError(f"planned failure of seed {config['seed']}")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(config))
    seed = config["seed"] * 1000 + zlib.crc32(f"{config['encoder']}{config['selector']}".encode()) % 997
    pred = run_dir / "predictions"
    pred.mkdir(exist_ok=True)
    for i, split in enumerate(("validation", "male_test", "female_test")):
        acc = 0.9 if split == "male_test" else 0.6
        rows = synthetic_predictions(split, n_entities=15, accuracy=acc, seed=seed + i,
                                     gender="mixed" if split == "validation" else None)
        (pred / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run_dir / "DONE").write_text("")


def fake_config(**kw) -> dict:
    return dict(kw)


def keep_predictions(run_dir, splits=(), **kw) -> None:
    """A predict_fn for fake runs: their prediction files are already written."""
