"""scripts/kge_stability.py --settings convergence: each model's training settings and best
validated epoch read from the convergence benchmark's JSON; a model it lacks is one line."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("kge_stability_script", ROOT / "scripts" / "kge_stability.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_converged_settings_take_the_best_epoch_and_the_training_fields(script, tmp_path):
    doc = {"models": [{"model": "distmult", "best_epoch": 30, "epochs_run": 60,
                       "config": {"model": "distmult", "dim": 64, "loss": "softplus", "regularization": 1e-5,
                                  "sampler": "bernoulli", "epochs": 2000, "num_threads": 2, "eval_every": 10}}]}
    p = tmp_path / "conv.json"
    p.write_text(json.dumps(doc))
    s = script.converged_settings(["distmult"], p)["distmult"]
    assert s == {"dim": 64, "loss": "softplus", "regularization": 1e-5, "sampler": "bernoulli", "epochs": 30}
    with pytest.raises(SystemExit, match="no best epoch for model 'transe'"):
        script.converged_settings(["transe"], p)
    p.write_text("{")
    with pytest.raises(SystemExit, match="cannot read the convergence benchmark"):
        script.converged_settings(["distmult"], p)
