"""The main job under person-level cross-fitting (``wgb run --protocol crossfit``, the ``full``
profile's default): every person of the benchmark is extracted by a model that never saw them.

For every seed, fold ``k`` and extractor (the baseline and each debiased one) a fold run of
:mod:`relext.protocols.crossfit` trains on the other folds and predicts fold k's persons; the extracted graph
of a seed is the union of its folds' triples, so it covers all persons, and the gold graph holds
every person's labelled facts (the annotated test persons and the distant-labelled rest, told
apart in the report by each person's ``population``).

**Reuse, don't retrain.** Fold runs are ordinary run directories named as the cross-fitted
debiasing study names them (``<variant>-<selector>-seed<s>-fold<k>``, the baseline is ``none``)
in ``--runs-dir`` (default: inside the run folder). A finished run in that store whose config
identity (:meth:`relext.training.train.ExtractorConfig.identity`) equals the one needed is used as it is,
under whatever name it has; a run folder of that name holding another config is never touched
(the new run goes to ``<name>-<fingerprint>``). So ``wgb run --runs-dir <study>/runs`` reuses the
study's fold runs, and the study finds the fold runs ``wgb run`` trained there.

Layout of a seed folder: ``extractors/<variant>.folds.json`` (the fold run directories, relative
to the seed folder), ``triples/<graph>.jsonl`` and the rest as under the test protocol.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from wgbcore.atomicio import atomic_write_json

BASELINE = "baseline"


def study_variant(variant: str) -> str:
    """The debiasing study's name of a pipeline variant (the baseline is ``none``)."""
    return "none" if variant == BASELINE else variant


def extractor_config(cfg, s: dict[str, Any], variant: str, fold: int):
    """The fold run's config: the debiasing study's (``wgbstudies.debias``) for the same
    variant, seed and fold, with the profile's sizes."""
    from wgbstudies.debias import transforms_of
    from relext.training.train import ExtractorConfig

    ds, vec = transforms_of(study_variant(variant))
    return ExtractorConfig(
        encoder=cfg.encoder, selector=cfg.selector, seed=cfg.seed, epochs=s["re_epochs"], word_dim=s["word_dim"],
        hidden=s["hidden"], w2v_epochs=s["w2v_epochs"], dataset=cfg.dataset, threads=cfg.threads,
        dataset_transform=ds, vectors_transform=vec, patience=3,
        folds=cfg.folds, fold=fold, fold_seed=cfg.fold_seed,
    ).validate()


def identity_key(config) -> str:
    """A short fingerprint of a run config's identity (the fields that define the run)."""
    text = json.dumps(config.identity(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _identity_of(run_dir: Path):
    from relext.training.train import ExtractorConfig

    try:
        return ExtractorConfig.from_json(run_dir / "config.json", record=True).identity()
    except (OSError, ValueError, TypeError):
        return None


def find_run(store: Path, config) -> Path | None:
    """A finished run directory in ``store`` whose config identity is ``config``'s (None if none)."""
    if not store.is_dir():
        return None
    want = config.identity()
    for cfg_file in sorted(store.glob("*/config.json")):
        d = cfg_file.parent
        if (d / "DONE").exists() and _identity_of(d) == want:
            return d
    return None


def fold_run_dir(cfg, s: dict[str, Any], seed_out: Path, variant: str, fold: int) -> tuple[Path, bool]:
    """(run directory, reused): where the fold run of ``variant`` lives (module docstring)."""
    c = extractor_config(cfg, s, variant, fold)
    if cfg.runs_dir is None:
        return seed_out / "extractors" / variant / f"fold{fold}", False
    store = Path(cfg.runs_dir)
    found = find_run(store, c)
    if found is not None:
        return found, True
    name = f"{study_variant(variant)}-{cfg.selector}-seed{cfg.seed}-fold{fold}"
    d = store / name
    if (d / "config.json").exists() and _identity_of(d) != c.identity():
        d = store / f"{name}-{identity_key(c)}"
    return d, False


def folds_file(seed_out: Path, variant: str) -> Path:
    return seed_out / "extractors" / f"{variant}.folds.json"


def extractor_dirs(seed_out: Path, variant: str) -> Path | list[Path]:
    """The extractor run(s) of a seed folder: one run directory (test protocol) or the list of
    its fold run directories (crossfit)."""
    f = folds_file(seed_out, variant)
    if not f.exists():
        return seed_out / "extractors" / variant
    rec = json.loads(f.read_text())
    return [(seed_out / p).resolve() if not os.path.isabs(p) else Path(p) for p in rec["runs"]]


def extractor_stages(stages, cfg, s: dict[str, Any], out: Path, dataset, variants: list[str], progress: bool,
                     log: Callable[[str], None] = print) -> None:
    """Train (or reuse) and evaluate every fold run of every extractor of one seed."""
    from relext.evaluation.evaluate import ENTITY_COUNTS, evaluate_run
    from relext.training.train import train_extractor

    for v in variants:
        dirs = []
        for k in range(cfg.folds):
            run_dir, reused = fold_run_dir(cfg, s, out, v, k)
            dirs.append(run_dir)
            if reused:
                log(f"[reuse] {v} fold {k}: {run_dir}")
            conf = extractor_config(cfg, s, v, k)
            stages.run(f"train/{v}/fold{k}", lambda c=conf, d=run_dir: train_extractor(
                c, d, dataset=dataset, progress=progress))

            def evaluate(d=run_dir):
                # a shared run is evaluated once, with the study's settings (its eval.json is the
                # study's): only its per-entity counts are read here, and they do not depend on them
                if not (d / ENTITY_COUNTS).exists() or not (d / "eval.json").exists():
                    evaluate_run(d, n_resamples=1000, bootstrap_seed=0, dataset=dataset)
            stages.run(f"eval/{v}/fold{k}", evaluate)
        atomic_write_json(folds_file(out, v), {
            "folds": cfg.folds, "fold_seed": cfg.fold_seed,
            "runs": [os.path.relpath(Path(d).resolve(), out.resolve()) for d in dirs]})


def triple_stages(stages, cfg, out: Path, dataset, variants: list[str]) -> None:
    """Triples of every person: the gold labels of all splits, and each extractor's triples of
    each fold's held-out persons, joined."""
    from relext.extract import extract_split, write_triples
    from wgb.pipeline.gold import gold_triples
    from wikigenderbias.schema import SPLITS

    tdir = out / "triples"
    stages.run("triples/gold", lambda: write_triples(gold_triples(dataset, splits=SPLITS), tdir / "gold.jsonl"))
    for v in variants:
        def extract(v=v):
            triples = []
            for d in extractor_dirs(out, v):
                for split in ("male_test", "female_test"):   # fold k's held-out persons, by gender
                    triples += extract_split(d, split, min_score=cfg.min_score, dataset=dataset)
            write_triples(triples, tdir / f"{v}.jsonl")
        stages.run(f"triples/{v}", extract)
