"""`wgb re train`: train a bag-level relation extractor into a run directory (package relext)."""
from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import click

from wgb.cli_choices import RegistryChoice
from wgb.cli_protocol import protocol_options, resolve_folds
from wgb.cli_types import NONNEG_FLOAT, POS_FLOAT, SEED, FiniteFloat
from wgb.errors import OutputPath, hold_lock


def _list(ctx, param, value):
    if not value:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


@click.command(name="train")
@click.argument("run_dir", type=OutputPath(directory=True, path_type=Path))
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A TrainConfig file, YAML (.yaml/.yml) or JSON (a run's config.json works); options given "
              "on the command line override it.")
@click.option("--encoder", type=RegistryChoice("relext.model.encoders:ENCODERS"), help="Sentence encoder [default: pcnn].")
@click.option("--selector", type=RegistryChoice("relext.model.selectors:SELECTORS"),
              help="Bag selector [default: attention].")
@click.option("--seed", type=SEED, help="Seeds python, numpy and torch [default: 0].")
@click.option("--epochs", type=click.IntRange(min=1), help="Maximum epochs [default: 10].")
@click.option("--batch-size", type=click.IntRange(min=1), help="Bags per batch [default: 160].")
@click.option("--optimizer", type=click.Choice(["sgd", "adam"]), help="[default: sgd]")
@click.option("--lr", type=POS_FLOAT, help="Learning rate [default: 0.1].")
@click.option("--weight-decay", type=NONNEG_FLOAT, help="[default: 1e-5]")
@click.option("--word-dim", type=click.IntRange(min=1), help="Word2Vec dimension (OpenNRE 50, the authors 100) [default: 50].")
@click.option("--pos-dim", type=click.IntRange(min=1), help="[default: 5]")
@click.option("--hidden", type=click.IntRange(min=1), help="Filters / hidden units [default: 230].")
@click.option("--kernel", type=click.IntRange(min=1), help="CNN window [default: 3].")
@click.option("--max-length", type=click.IntRange(min=2), help="Tokens per sentence [default: 120].")
@click.option("--dropout", type=FiniteFloat(0, 1, max_open=True), help="[default: 0.5]")
@click.option("--patience", type=click.IntRange(min=0), help="Early stopping on validation; 0 = off [default: 3].")
@click.option("--select-metric", type=click.Choice(["micro_f1", "pr_auc"]), help="Validation metric [default: micro_f1].")
@click.option("--rnn-cell", type=click.Choice(["gru", "lstm"]), help="[default: gru]")
@click.option("--unlocated", type=click.Choice(["start", "skip"]), help="Mentions not located in a sentence [default: start].")
@click.option("--conv-impl", type=click.Choice(["dense", "gather"]),
              help="CNN/PCNN convolution: dense (im2col over length buckets, every run before gather) or gather "
                   "(per-word projections gathered at the real tokens; the same function, other float rounding, "
                   "equivalent within 0.005 F1; part of the run's identity) [default: gather].")
@click.option("--rnn-impl", type=click.Choice(["fused", "gather"]),
              help="RNN/BiRNN recurrence on CPU: fused (every committed run) or gather (gathered input projections, "
                   "a leaner step; the same function, other float rounding; part of the run's identity) "
                   "[default: fused].")
@click.option("--dataset", help="Benchmark folder (wgb data build, or a saved DatasetDict) [default: the embedded release].")
@click.option("--dataset-transform", callback=_list, help="Comma-separated debiasers applied to the data before Word2Vec.")
@click.option("--vectors-transform", callback=_list, help="Comma-separated debiasers applied to the word vectors.")
@click.option("--threads", type=click.IntRange(min=1), help="torch threads [default: torch's choice].")
@click.option("--device", type=str, help="cpu, cuda, cuda:N or auto (cuda when available) [default: cpu].")
@click.option("--cache-dir", help="Word2Vec cache [default: $WGB_CACHE/word2vec or ~/.cache/wgb/word2vec].")
@click.option("--predict/--no-predict", default=True, show_default=True,
              help="Write predictions/{validation,male_test,female_test}.jsonl after training.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@protocol_options
@click.option("--fold", type=click.IntRange(min=0), default=None,
              help="Under --protocol crossfit: train this fold only, into RUN_DIR [default: every fold, "
                   "into RUN_DIR/fold<k>].")
def train_cmd(run_dir: Path, config_file: Path | None, predict: bool, quiet: bool, protocol: str,
              folds: int | None, fold_seed: int, fold: int | None, **options):
    """Train an OpenNRE-style extractor into RUN_DIR (resumes an unfinished run; a finished run,
    marked DONE, is kept as it is).

    Model selection and early stopping use the validation split only.
    """
    from relext.training.predict import write_predictions
    from relext.training.train import TrainConfig, train

    from wgbcore.config import check_fields, read_config_file

    known = {f.name for f in fields(TrainConfig)}
    overrides = {k: v for k, v in options.items() if v is not None and k in known}
    data: dict = {}
    if config_file:  # YAML or JSON; field names and value types, naming the file and field, before anything runs
        try:
            data = read_config_file(config_file)
            data = dict(data["config"]) if isinstance(data.get("config"), dict) else data
            data.pop("package_version", None)
            check_fields(TrainConfig, data, source=str(config_file))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--config") from None
    k = resolve_folds(protocol, folds)
    if fold is not None and k is None:
        raise click.BadParameter("--fold needs --protocol crossfit", param_hint="--fold")
    if k is not None:
        _same_protocol(config_file, data, folds=k, fold_seed=fold_seed, fold=fold)
        overrides.update(folds=k, fold_seed=fold_seed)
    try:
        base = TrainConfig.from_json(data, source=str(config_file)) if config_file else TrainConfig()
        merged = {**base.to_json(), **overrides}
        if {"dataset_transform", "vectors_transform"} & set(overrides):
            merged["transform_versions"] = None   # the versions of the transforms now named: this wgb's
        cfg = TrainConfig.from_json(merged, source=str(config_file or "options"))
        # one run, or (crossfit without --fold) one run per fold in RUN_DIR/fold<k>
        plan = [(cfg if k is None else replace(cfg, fold=fold), run_dir)] if (k is None or fold is not None) \
            else [(replace(cfg, fold=i), run_dir / f"fold{i}") for i in range(k)]
        for c, _ in plan:
            c.validate()
        if plan[0][0].folds is not None:   # every fold's persons and test splits, before any fold trains
            from relext.protocols.crossfit import check_fold_plans

            check_fold_plans([plan[0][0]])
        hold_lock(run_dir, "run")  # training and the predictions after it: one writer
        for c, d in plan:
            out = train(c, d, progress=not quiet)
            if predict:
                write_predictions(out)
            metrics = json.loads((out / "metrics.json").read_text())
            click.echo(f"{out}: best validation {metrics['select_metric']} {metrics['best_score']:.4f} "
                       f"at epoch {metrics['best_epoch']} of {metrics['epochs_run']}")
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None


def _same_protocol(config_file, data: dict, **given) -> None:
    """Under ``--protocol crossfit`` the command line sets ``folds``, ``fold`` and ``fold_seed`` of
    every fold run: a config file holding other values is refused naming them (its ``folds: 2`` was
    silently replaced by the default 5 folds)."""
    clash = [f"{f} {data[f]!r} (the command line's: {'every fold' if f == 'fold' and v is None else repr(v)})"
             for f, v in given.items() if data.get(f) is not None and data[f] != v]
    if clash:
        raise click.BadParameter(f"{config_file}: {'; '.join(clash)}; under --protocol crossfit the folds are set "
                                 "by --folds, --fold and --fold-seed: give them there, or drop them from the file",
                                 param_hint="--config")


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
    group.add_command(train_cmd)
