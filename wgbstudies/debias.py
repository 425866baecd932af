"""The debiasing study of Gaut et al. 2020: PCNN+attention under every combination of
name anonymization, CDA and hard-debiased Word2Vec, over several seeds.

Each variant is an ordinary training run whose config names its debiasers
(``dataset_transform=["anonymize+cda"]``, ``vectors_transform=["hard_debias"]``), so Word2Vec is
retrained on each variant's own corpus (as the paper did), prediction applies the same dataset
transform to the test sets (anonymization), and every run directory says what it was.

The study runs on :func:`wgbstudies.grid.run_grid` (one "encoder" slot per debiasing variant), so it
resumes like any grid: finished runs (``DONE``) are skipped, unfinished ones resume from their
checkpoint, evaluations are reused. Layout of ``OUT``::

    OUT/plan.json                  the pre-registered plan (wgbstudies.plan): claims, families,
                                   seeds, folds, stopping rule, written before the first run; a
                                   folder whose plan differs is refused (unless amend_plan says why)
    OUT/study.json                 the study config
    OUT/variants.json              what each variant's debiasers are (describe(): NER model, lists)
    OUT/runs/<variant>-<selector>-seed<k>/   run directories (relext.training.train + relext.evaluation.evaluate)
    OUT/results.json, results.md   per variant: F1 gap and EO gap per relation (seed mean and
                                   t-interval; entity-bootstrap intervals per run), F1 per gender,
                                   comparison with the paper's claims
    OUT/claims.json                the claims' verdicts ("interim: not decided" until every planned
                                   seed is in), with the design version and the sha256 of the count
                                   files they were computed from (wgbstudies.recheck)
    OUT/gaps_<rule>.png, OUT/f1_by_gender_<rule>.png   the paper's two figures, per decision rule
    OUT/timing.json                seconds per run and per invocation
    OUT/DONE                       written last, once every run is evaluated
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from relext.debias import STUDY_VARIANTS, canonical_name, get_debiaser
from wgbstudies.parts import with_parts
from wgbstudies.plan import DESIGN_RESAMPLES

DATASET_PARTS = ("anonymize", "cda", "duplicate")
VECTOR_PARTS = ("hard_debias",)
SINGLE = ("anonymize", "cda", "hard_debias")

#: ``--quick``: one seed, one epoch on 1,000 of the 4,118 training articles (validation and
#: test sets whole), fewer bootstrap resamples -- a check that every variant runs end to end
#: and a first look at the numbers, not the study (target: under 15 minutes on 2 free cores).
QUICK: dict[str, Any] = {"seeds": [0], "epochs": 1, "n_resamples": 200, "train_articles": 1000,
                         "train_overrides": {"patience": 0}}


@dataclass
class DebiasStudyConfig:
    variants: list[str] = field(default_factory=lambda: list(STUDY_VARIANTS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    encoder: str = "pcnn"
    selector: str = "attention"
    epochs: int | None = None
    #: extra TrainConfig fields for every run (e.g. {"threads": 2, "dataset": "path"})
    train_overrides: dict = field(default_factory=dict)
    threshold_mode: str = "global"
    n_resamples: int = 1000
    confidence: float = 0.95
    bootstrap_seed: int = 0
    #: train on this many training articles only (a seeded sample; None = all)
    train_articles: int | None = None
    subsample_seed: int = 0
    #: variant -> its own seeds (e.g. 10 for the main arms, 5 for combinations); others use ``seeds``
    variant_seeds: dict = field(default_factory=dict)
    #: where run directories live (default OUT/runs); several study folders may share one, so that
    #: parts of a study can train in parallel processes and one folder aggregates them
    runs_dir: str | None = None
    #: person-level cross-fitting (relext.protocols.crossfit): None = the test protocol; K = K fold runs
    #: per variant and seed, every person of the benchmark predicted once
    folds: int | None = None
    fold_seed: int = 0

    def __post_init__(self) -> None:
        if self.train_articles is not None and self.train_articles < 1:
            raise ValueError(f"train_articles must be >= 1, got {self.train_articles}")
        if not self.variants:
            raise ValueError("the study needs at least one variant")
        canon = [canonical_name(v) for v in self.variants]
        dup = sorted({v for v in canon if canon.count(v) > 1})
        if dup:
            raise ValueError(f"variants name the same combination twice: {dup}")
        self.variants = canon
        vs = {canonical_name(k): list(v) for k, v in self.variant_seeds.items()}
        unknown = sorted(set(vs) - set(canon))
        if unknown:
            raise ValueError(f"variant_seeds names variant(s) not in the study: {unknown}")
        self.variant_seeds = vs
        from wgbstudies.grid_exec import SET_PER_RUN, check_overrides

        check_overrides(self.train_overrides, {**SET_PER_RUN, "encoder": "--encoder", "selector": "--selector",
                                               "dataset_transform": "--variants", "vectors_transform": "--variants"})

    def to_dict(self) -> dict:
        return asdict(self)

    def grid_config(self):
        from wgbstudies.grid import GridConfig

        return GridConfig(encoders=list(self.variants), selectors=[self.selector], seeds=list(self.seeds),
                          epochs=self.epochs, train_overrides=dict(self.train_overrides),
                          threshold_mode=self.threshold_mode, n_resamples=self.n_resamples,
                          confidence=self.confidence, bootstrap_seed=self.bootstrap_seed,
                          runs_dir=self.runs_dir, seeds_by_encoder=dict(self.variant_seeds),
                          folds=self.folds, fold_seed=self.fold_seed)


def methods_of(variant: str) -> list[str]:
    """The methods of a variant, without options: ``"anonymize[ner=gazetteer]+cda"`` -> [anonymize, cda]."""
    from relext.debias import split_outside_brackets

    canon = canonical_name(variant)
    return [] if canon == "none" else [p.split("[", 1)[0] for p in split_outside_brackets(canon, "+")]


def base_name(variant: str) -> str:
    """The variant's methods joined by '+' (``"none"`` for none), options dropped."""
    return "+".join(methods_of(variant)) or "none"


def transforms_of(variant: str) -> tuple[list[str], list[str]]:
    """(dataset_transform, vectors_transform) names of a variant (options kept), for ``TrainConfig``."""
    from relext.debias import split_outside_brackets

    canon = canonical_name(variant)
    parts = [] if canon == "none" else split_outside_brackets(canon, "+")
    ds = "+".join(p for p in parts if p.split("[", 1)[0] in DATASET_PARTS)
    vec = [p for p in parts if p.split("[", 1)[0] in VECTOR_PARTS]
    return ([ds] if ds else []), vec


def with_ner(variant: str, ner: str) -> str:
    """``variant`` with its anonymization set to use ``ner`` (unchanged without anonymization)."""
    from relext.debias import split_outside_brackets

    canon = canonical_name(variant)
    if "anonymize" not in methods_of(canon):
        return canon
    parts = [f"anonymize[ner={ner}]" if p.split("[", 1)[0] == "anonymize" else p
             for p in split_outside_brackets(canon, "+")]
    return canonical_name("+".join(parts))


def make_config_for(study: DebiasStudyConfig) -> Callable[..., Any]:
    """The grid's ``make_config``: the grid's "encoder" slot carries the debiasing variant."""

    def make(*, encoder: str, selector: str, seed: int, epochs: int | None, **overrides):
        from relext.training.train import TrainConfig

        ds, vec = transforms_of(encoder)
        kwargs = dict(encoder=study.encoder, selector=selector, seed=seed, dataset_transform=ds,
                      vectors_transform=vec, **overrides)
        if epochs is not None:
            kwargs["epochs"] = epochs
        return TrainConfig(**kwargs).validate()

    return make


def describe_variants(variants: Sequence[str]) -> dict[str, Any]:
    """What each variant's debiasers are, without running them (which NER ``auto`` picks)."""
    from relext.debias import spacy_pipeline

    models = spacy_pipeline.installed_models()
    out = {}
    for v in variants:
        d = get_debiaser(v).describe()
        if "anonymize" in methods_of(v):
            d["ner_available"] = {"installed": models,
                                  "auto_uses": models[0] if models else "gazetteer (no spaCy pipeline)",
                                  "version": _model_version(models[0]) if models else None}
        ds, vec = transforms_of(v)
        out[v] = {"dataset_transform": ds, "vectors_transform": vec, "debiaser": d}
    return out


def _model_version(pkg: str) -> str | None:
    try:
        import spacy.util

        return spacy.util.get_package_version(pkg)
    except Exception:  # noqa: BLE001 - only for the record
        return None


def run_study(config: DebiasStudyConfig, out: str | Path, *, train_fn=None, predict_fn=None,
              dataset=None, progress: bool = True, plots: bool = True, train: bool = True,
              executor=None, amend_plan: str | None = None) -> dict:
    """Train/evaluate every (variant, seed) not done yet; write the study report. ``executor``: where
    the runs train (:class:`wgbcore.executor.ExecutorConfig`; default serial). The study's plan is
    registered before anything else (:func:`wgbstudies.plan.register`; ``amend_plan``: why a
    folder's differing plan is replaced)."""
    from wgbstudies.grid import run_grid
    from wgbstudies.grid_exec import check_overrides, checked_configs
    from wgbcore.atomicio import atomic_write_json

    out = Path(out)
    check_overrides(config.train_overrides)
    make = make_config_for(config)
    grid = config.grid_config()  # every run's config checked: bad names, fields, values fail before any work
    configs = checked_configs(grid.runs(), lambda r: make(encoder=r.encoder, selector=r.selector, seed=r.seed,
                                                          epochs=config.epochs, **config.train_overrides,
                                                          **grid.fold_overrides(r)))
    loader = None
    if config.train_articles is not None and dataset is not None:
        dataset = subsample_train(dataset, config.train_articles, seed=config.subsample_seed)
    elif config.train_articles is not None:  # each worker loads and cuts the data itself
        import functools

        loader = functools.partial(subsampled_dataset, config.train_overrides.get("dataset"),
                                   config.train_articles, config.subsample_seed)
    from relext.protocols.crossfit import check_fold_plans

    check_fold_plans(configs.values(), dataset if dataset is not None else loader)  # the whole fold plan, first
    from wgbstudies.plan import register, study_plan

    planned = grid.runs()
    register(out, study_plan(config), runs_finished=sum((grid.run_dir(out, r) / "DONE").exists() for r in planned),
             n_runs=len(planned), amend=amend_plan)   # before anything else is written: another plan is refused here
    out.mkdir(parents=True, exist_ok=True)
    done = out / "DONE"
    if done.exists():
        done.unlink()  # a rerun (e.g. with more seeds) is not done until it finishes
    atomic_write_json(out / "study.json", config.to_dict())
    atomic_write_json(out / "variants.json", describe_variants(config.variants))
    t0 = time.time()
    summary = run_grid(grid, out, train_fn=train_fn, make_config=make,
                       predict_fn=predict_fn, dataset=dataset, progress=progress, plots=plots, train=train,
                       design=False, executor=executor, dataset_loader=loader)
    summary = finish_report(config, out, summary, seconds=time.time() - t0)
    meta = summary["meta"]
    if meta["runs_evaluated"] == meta["n_runs"] and not meta["runs_failed"]:
        from wgbcore.atomicio import atomic_write_text

        atomic_write_text(done, time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
    return summary


def subsampled_dataset(path: str | None, n_articles: int, seed: int = 0):
    """The benchmark at ``path`` (None: the embedded release) with its training split cut to
    ``n_articles`` articles: the loader each worker of a ``train_articles`` study calls."""
    from relext.protocols.data import load_dataset_dict

    return subsample_train(load_dataset_dict(path), n_articles, seed=seed)


def subsample_train(dsdict, n_articles: int, *, seed: int = 0):
    """``dsdict`` with the training split cut to ``n_articles`` seeded-random articles (all their
    rows); the other splits whole."""
    import random

    from datasets import DatasetDict

    ents = sorted(set(dsdict["train"]["entity_id"]))
    if n_articles >= len(ents):
        return dsdict
    keep = set(random.Random(seed).sample(ents, n_articles))
    idx = [i for i, e in enumerate(dsdict["train"]["entity_id"]) if e in keep]
    return DatasetDict({k: (v.select(idx) if k == "train" else v) for k, v in dsdict.items()})


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------
def _pooled_f1(c: dict) -> float:
    return c["micro_f1"].get("pooled", {}).get("mean", float("nan"))


def study_runs(config: DebiasStudyConfig, out: Path) -> dict[tuple[str, int], Path | list[Path]]:
    """(variant, seed) -> run directory of every finished run with per-entity counts (cross-fitted:
    the list of its fold run directories, for seeds whose every fold is finished)."""
    from wgbstudies.grid import finished_runs

    return finished_runs(config.grid_config(), out, key=lambda r: (r.encoder, r.seed))


def design_report(config: DebiasStudyConfig, out: Path, *, rule: str = "argmax",
                  n_resamples: int = DESIGN_RESAMPLES, alpha: float = 0.05) -> dict[str, Any]:
    """Verdicts of the paper's claims (Holm), their half-split check, and every variant x relation
    gap with its combined interval (Benjamini-Hochberg flags), from the finished runs."""
    from wgbstudies.claims import (
        HALF_MIN_SEEDS, LITTLE, claim_specs, claims_by_population, design_for_runs, gap_flags,
        is_paper_variant, population_views,
    )
    from wgbstudies.grid_exec import split_readable
    from relext.evaluation.run_sets import check_run_folders

    from wgbstudies.plan import apply_status, read_plan, status
    from wgbstudies.recheck import stamp

    runs, _ = split_readable(study_runs(config, out))  # unreadable count files: named in meta.runs_unreadable
    check_run_folders(runs)   # distinct, complete, one fold seed (relext.evaluation.run_sets)
    if not runs:
        return {}
    variants = [v for v in config.variants if v in {name for name, _ in runs}]
    design = design_for_runs(runs, rule=rule, n_resamples=n_resamples, seed=config.bootstrap_seed)
    by_population = claims_by_population(design, claim_specs(variants), alpha=alpha)
    main = population_views(design)[0][1]   # the gaps and the budget: on the claims' main population
    report = {
        "rule": rule,
        "design": {"unit": "seeds x test entities (crossed); entities resampled within gender (and fold); "
                           "paired across variants on seeds and entities; the seed x entity interaction counted "
                           "once (relext.design)",
                   "n_resamples": n_resamples, "alpha": alpha, "claims_correction": "holm",
                   "claims_interval": "at the level Holm tested each claim at (1 - alpha/(m - k))",
                   "claims_reference": ("studentized: value / se against the seed reference (Student's t(S - 1) "
                       "where the seeds may dominate, t with the persons' df where they cannot, "
                       "a Berger-Boos bound on the seed share between; design version 2)"),
                   "claims_test": "intersection-union for claims about every member of a set",
                   "paper_variants": [v for v in variants if is_paper_variant(v)],
                   "controls": [v for v in variants if not is_paper_variant(v)],
                   "little_gap": LITTLE, "half_min_seeds": HALF_MIN_SEEDS,
                   "gap_flags_correction": "benjamini-hochberg", "bootstrap_seed": config.bootstrap_seed,
                   "seeds": {v: design.data.seeds(v) for v in variants}},
        **by_population,
        "budget": training_budget(main, variants),
        "gaps": gap_flags(main, variants, alpha=alpha),
    }
    # the look against the plan (interim: no verdict), then what it was computed from
    apply_status(report, status(read_plan(out), {v: design.data.seeds(v) for v in variants}))
    return stamp(report, runs, out)


def training_budget(design, variants: Sequence[str]) -> dict[str, Any]:
    """CDA's micro-F1 gain split into training as long (duplicate - none) and counterfactual data
    (cda - duplicate), paired estimates on the seeds the three share; {} without those variants."""
    if not {"none", "cda", "duplicate"} <= set(variants):
        return {}
    seeds = design.data.common_seeds(["none", "cda", "duplicate"])
    if not seeds:
        return {}
    out = {}
    for name, a, b in (("cda_minus_none", "cda", "none"), ("duplicate_minus_none", "duplicate", "none"),
                       ("cda_minus_duplicate", "cda", "duplicate")):
        e = design.difference(a, b, "micro_f1:pooled", seeds=seeds)
        out[name] = {"value": e.value, "ci": e.ci, "n_seeds": e.n_seeds}
    total = out["cda_minus_none"]["value"]
    out["budget_share"] = out["duplicate_minus_none"]["value"] / total if total else None
    return out


def trained_embedding_bias(config: DebiasStudyConfig, out: Path, *, n_permutations: int = 1000) -> dict:
    """Embedding bias before / after training of the baseline and every hard-debiasing variant
    without a dataset transform (their Word2Vec rebuilds from the cache in seconds)."""
    from wgbstudies.embedding import study_embedding_bias

    keep = [v for v in config.variants if v == "none" or (methods_of(v) and set(methods_of(v)) == {"hard_debias"})]
    # cross-fitted: the first fold's run stands for its seed (its Word2Vec saw 4/5 of the persons)
    runs = {k: (d[0] if isinstance(d, list) else d) for k, d in study_runs(config, out).items() if k[0] in keep}
    return study_embedding_bias(runs, n_permutations=n_permutations, progress=False) if runs else {}


def verdict_lines(report: dict) -> list[str]:
    """One line per claim: verdict, effect and its interval at the level Holm tested it at, seeds
    (for the CLI and results.md)."""
    from wgbstudies.claims import level_text
    from wgbstudies.plan import label_of

    label = label_of(report) if report.get("claims") else None
    out = [f"Status of these claims: {label}."] if label else []
    for c in report.get("claims", []):
        lo, hi = c.get("ci_adjusted") or c["ci"]
        level = c.get("ci_adjusted_level")
        line = (f"{c['claim']} ({c['source']}): **{c['verdict']}**; {c['statistic']} = {c['value']:+.4f} "
                f"[{lo:+.4f}, {hi:+.4f}] ({f'{level_text(level)} interval, Holm level' if level else '95%, unadjusted'}), "
                f"Holm p {c['p_adjusted']:.3g}, {c['n_seeds']} seeds")
        if c["verdict"] == "undecided" and c.get("note"):
            line += f"; {c['note']}"
        out.append(line + ".")
    if report.get("budget"):
        from wgbstudies.report import budget_sentence

        out.append(budget_sentence(report["budget"]))
    return out


def finish_report(config: DebiasStudyConfig, out: Path, summary: dict, *, seconds: float) -> dict:
    from wgbstudies.report import study_document
    from wgbcore.atomicio import atomic_write_json

    summary["design_report"] = design_report(config, out)
    from wgbstudies.grid_exec import missing_line

    meta = summary["meta"]
    summary["findings"] = verdict_lines(summary["design_report"]) + [x for x in [missing_line(
        meta.get("runs_missing", []), meta["n_runs"], meta.get("runs_unreadable", {}))] if x]
    if summary["design_report"]:
        summary["design_report"]["missing_runs"] = meta.get("runs_missing", [])
    summary["embedding_bias_trained"] = trained_embedding_bias(config, out)
    summary["meta"]["study"] = config.to_dict()
    summary["meta"]["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    summary["timing"] = with_parts(summary.get("timing") or {}, out)   # runs trained by OUT/parts/*
    info = json.loads((out / "variants.json").read_text()) if (out / "variants.json").exists() else {}
    atomic_write_json(out / "results.json", summary)
    if summary["design_report"]:
        atomic_write_json(out / "claims.json", {"meta": {"version": summary["meta"].get("version"),
                                                         "study": config.to_dict()},
                                                **summary["design_report"]})
    study_document(config, summary, info, images=(out / "gaps_argmax.png").exists()).write(out, "results")
    return summary
