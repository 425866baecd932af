"""Tiny fixtures of the round-3 bad-input tour (scripts/tour/round3.py), made once per tour under
its root by the commands a user runs: a benchmark folder of 22 real release persons, test-protocol
and cross-fitted runs of a 1-epoch CNN on it, a finished ``re grid``, ``re debias-grid`` and
``wgb run --profile tiny``, a small knowledge graph, embeddings and a bias file. Each takes seconds;
cases copy what they change (:meth:`Fixtures.copy`)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WGB = [sys.executable, "-m", "wgb"]
#: the small model of every training case: seconds on the tiny benchmark
SMALL = ["--encoder", "cnn", "--selector", "average", "--epochs", "1", "--word-dim", "8", "--hidden", "8",
         "--max-length", "30", "--batch-size", "8", "--threads", "1", "--quiet"]


def env(root: Path) -> dict[str, str]:
    """The environment of every command of the tour: offline, one thread, caches under ``root``."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "WGB_CACHE": str(root / "cache"), "PYTHONPATH": str(REPO), "WGB_DEBUG": "", "NO_COLOR": "1"}


def wgb(args: list[str], root: Path, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``wgb ARGS``; a fixture or a case's preparation must succeed (RuntimeError otherwise)."""
    r = subprocess.run([*WGB, *map(str, args)], cwd=cwd or root, env=env(root), capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"wgb {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


@dataclass
class Fixtures:
    root: Path
    paths: dict[str, Path] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]

    def small(self, *extra: str) -> list[str]:
        """The tiny model's options with the shared Word2Vec cache."""
        return [*SMALL, "--cache-dir", str(self.root / "w2v"), *extra]

    def grid_set(self) -> list[str]:
        """``--set`` options that make a grid's or a study's runs the tiny model on the benchmark."""
        fields = {"word_dim": 8, "hidden": 8, "max_length": 30, "batch_size": 8, "w2v_epochs": 1,
                  "cache_dir": str(self.root / "w2v")}
        return [a for k, v in fields.items() for a in ("--set", f"{k}={json.dumps(v)}")]

    def grid_args(self, out: Path, *extra: str, seeds: str = "1,2") -> list[str]:
        return ["re", "grid", "--out", str(out), "--encoders", "cnn", "--selectors", "average", "--seeds", seeds,
                "--epochs", "1", "--set", f"dataset={json.dumps(str(self['bench']))}", *self.grid_set(),
                "--no-plots", "--resamples", "100", "--threads", "1", *extra]

    def debias_args(self, out: Path, *extra: str, variants: str = "none,anonymize", seeds: str = "0") -> list[str]:
        return ["re", "debias-grid", str(out), "--variants", variants, "--seeds", seeds, "--dataset",
                str(self["bench"]), "--epochs", "1", "--quiet", *self.grid_set(), "--ner", "gazetteer",
                "--resamples", "100", "--threads", "1", *extra]

    def run_args(self, out: Path, *extra: str) -> list[str]:
        return ["run", "--profile", "tiny", "--dataset", str(self["bench"]), "--out", str(out), "--quiet",
                "--threads", "1", *extra]

    def copy(self, name: str, dst: Path) -> Path:
        """A copy of fixture ``name`` at ``dst`` (symlinks kept as links)."""
        src = self[name]
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst)
        return dst


def build(root: Path, log=print) -> Fixtures:
    """Every fixture under ``root`` (reused when a previous tour left them complete)."""
    fx = Fixtures(root)
    marker = root / "FIXTURES_DONE"
    names = {"bench": "bench", "run0": "run0", "run1": "run1", "cf0": "cf0", "cf1": "cf1", "cf_fs1": "cf_fs1",
             "grid": "grid", "dg": "dg", "wr": "wr", "graph": "kge-fixture/graph", "emb": "kge-fixture/emb", "bias": "bias.json"}
    fx.paths = {k: root / v for k, v in names.items()}
    if marker.exists():
        return fx
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    import wikigenderbias  # noqa: F401  (the package, before tests/ joins the path: tests/wikigenderbias is not it)

    sys.path.append(str(REPO / "tests"))
    from support.fold_plans import benchmark_folder   # real release persons, 11 women and 11 men
    from support.hardening import kge_fixture

    log("fixture: bench")
    benchmark_folder(fx["bench"], women={"train": 6, "validation": 2, "female_test": 3},
                     men={"train": 6, "validation": 2, "male_test": 3})
    for name, extra in [("run0", ["--seed", "0"]), ("run1", ["--seed", "1"]),
                        ("cf0", ["--seed", "0", "--protocol", "crossfit", "--folds", "2"]),
                        ("cf1", ["--seed", "1", "--protocol", "crossfit", "--folds", "2"]),
                        ("cf_fs1", ["--seed", "1", "--protocol", "crossfit", "--folds", "2", "--fold-seed", "1"])]:
        log(f"fixture: {name}")
        wgb(["re", "train", fx[name], "--dataset", fx["bench"], *fx.small(*extra)], root)
    log("fixture: grid")
    wgb(fx.grid_args(fx["grid"]), root)
    log("fixture: debias-grid")
    wgb(fx.debias_args(fx["dg"]), root)
    log("fixture: wgb run")
    wgb(fx.run_args(fx["wr"], "--seeds", "0"), root)
    log("fixture: kge")
    import torch

    torch.set_num_threads(1)
    kge_fixture(root)
    wgb(["kge", "bias", fx["emb"], fx["graph"], "--measure", "fisher", "--a", "male", "--b", "female",
         "--out", fx["bias"]], root)
    marker.write_text("done\n")
    return fx
