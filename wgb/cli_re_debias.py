"""`wgb re debias-grid`, `wgb re embedding-bias`, `wgb re debias-data`: the debiasing study."""
from __future__ import annotations

from pathlib import Path

import click

from wgb.cli_executor import executor_options, run_device
from wgb.cli_groups import group_options, resolve_groups, write_groups
from wgb.cli_protocol import parse_named_seeds, protocol_options, resolve_folds, seeds_option
from wgb.cli_types import RESAMPLES, SEED
from wgb.errors import OutputPath


def _csv(ctx, param, value):
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise click.BadParameter("expected a comma-separated list")
    return items


def _overrides(items) -> dict:
    """``--set FIELD=VALUE`` items (VALUE read as JSON when it parses, else as a string)."""
    from wgbcore.config import parse_overrides

    try:
        return parse_overrides(items, option="--set", form="FIELD=VALUE")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--set") from None


def _variants(ctx, param, value):
    """``none,cda,anonymize+cda@0-4``: variants, each optionally with its own seeds after ``@``.
    Returns a list of (canonical name, seeds or None)."""
    from relext.debias import canonical_name, split_outside_brackets

    if value is None:
        return None
    try:
        return parse_named_seeds(value, split=split_outside_brackets, canonical=canonical_name)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(name="debias-grid")
@click.argument("out", type=OutputPath(directory=True, path_type=Path))
@click.option("--variants", callback=_variants, default=None,
              help="Comma-separated debiasing variants ('+' combines; default: the paper's eight: "
                   "none, anonymize, cda, hard_debias and their combinations). A variant may carry "
                   "its own seeds after '@': 'none,cda,anonymize+cda@0-4'.")
@click.option("--seeds", callback=seeds_option, default=None,
              help="Seeds, e.g. 0,1,2 or 0-9 [default: 0,1,2]. Variants with the full seed list train "
                   "first, seed by seed; then the others.")
@click.option("--runs-dir", type=OutputPath(directory=True, path_type=Path), default=None,
              help="Where run directories live [default: OUT/runs]. Study folders sharing one can train "
                   "parts of a study in parallel processes (disjoint --variants); one folder with all "
                   "variants and --no-train aggregates them.")
@click.option("--no-train", is_flag=True, help="Only evaluate and aggregate finished runs; train nothing.")
@click.option("--ner", default=None,
              help="NER of the anonymizing variants: auto (spaCy when installed, else the gazetteer), "
                   "spacy, spacy:<package>, gazetteer [default: auto].")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="Max epochs per run [default: the trainer's].")
@click.option("--quick", is_flag=True,
              help="Quick profile: seed 0, 1 epoch on 1,000 sampled training articles, 200 bootstrap "
                   "resamples (options given explicitly win). A smoke test, not the study.")
@click.option("--train-articles", type=click.IntRange(min=1), default=None,
              help="Train on this many (seeded, sampled) training articles only [default: all; --quick: 1000].")
@click.option("--encoder", default="pcnn", show_default=True)
@click.option("--selector", default="attention", show_default=True)
@click.option("--dataset", type=click.Path(exists=True, file_okay=False), default=None,
              help="Benchmark folder [default: the embedded WikiGenderBias release].")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch threads per run.")
@click.option("--threshold-mode", type=click.Choice(["global", "per_relation"]), default="global", show_default=True)
@click.option("--resamples", "n_resamples", type=RESAMPLES, default=None,
              help="Bootstrap resamples over test entities [default: 1000; --quick: 200].")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=JSON",
              help="Extra TrainConfig field for every run, e.g. --set word_dim=100 (repeatable).")
@click.option("--device", default=None, help="Training device: cpu, cuda, cuda:N or auto [default: cpu].")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--amend-plan", metavar="WHY", default=None,
              help="Replace OUT/plan.json when this command's plan differs (more seeds, other claims), saying "
                   "why; the old plan is kept in its history, and the study counts as registered after its runs "
                   "(exploratory) when any of them had finished.")
@protocol_options
@executor_options
@group_options
def debias_grid_cmd(out, variants, seeds, runs_dir, no_train, ner, epochs, quick, train_articles, encoder, selector,
                    dataset, threads, threshold_mode, n_resamples, overrides, device, quiet, amend_plan, protocol,
                    folds, fold_seed, executor, groups, era_edges, min_cell):
    """Train and evaluate ENCODER+SELECTOR under every debiasing variant x seed into OUT.

    Resumable: rerun the same command to continue; finished runs are skipped. Writes
    OUT/plan.json before the first run (the claims, seeds, folds and stopping rule: a rerun with
    another plan is refused), OUT/results.json, OUT/results.md (F1 and equality-of-opportunity gaps
    per relation with intervals, F1 per gender, the paper's claims checked: "interim: not decided"
    until every planned seed is in), plots and OUT/DONE at the end.
    """
    from relext.debias import STUDY_VARIANTS
    from wgbstudies.debias import QUICK, DebiasStudyConfig, run_study, with_ner

    group_opts = resolve_groups(groups, era_edges, min_cell)

    train_overrides: dict = dict(QUICK["train_overrides"]) if quick else {}
    train_overrides.update(_overrides(overrides))
    if threads is not None:
        train_overrides["threads"] = threads
    device = run_device(executor, device)
    if device:
        train_overrides["device"] = device
    if dataset is not None:
        train_overrides["dataset"] = str(dataset)
    kwargs = dict(encoder=encoder, selector=selector, threshold_mode=threshold_mode,
                  train_overrides=train_overrides, folds=resolve_folds(protocol, folds), fold_seed=fold_seed)
    pairs = list(variants if variants is not None else [(v, None) for v in STUDY_VARIANTS])
    if ner is not None:
        try:
            from relext.debias.anonymize import Anonymize

            Anonymize(ner=ner)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--ner") from None
        pairs = [(with_ner(v, ner), k) for v, k in pairs]
    kwargs["variants"] = [v for v, _ in pairs]
    kwargs["variant_seeds"] = {v: k for v, k in pairs if k is not None}
    kwargs["runs_dir"] = str(runs_dir) if runs_dir else None
    kwargs["seeds"] = seeds if seeds is not None else (QUICK["seeds"] if quick else [0, 1, 2])
    kwargs["epochs"] = epochs if epochs is not None else (QUICK["epochs"] if quick else None)
    kwargs["n_resamples"] = n_resamples if n_resamples is not None else (QUICK["n_resamples"] if quick else 1000)
    kwargs["train_articles"] = train_articles if train_articles is not None else (
        QUICK["train_articles"] if quick else None)
    try:
        config = DebiasStudyConfig(**kwargs)
        from wgb.errors import hold_lock

        hold_lock(out, "study folder")   # one writer of OUT: a second study on it is refused, naming the holder
        summary = run_study(config, out, progress=not quiet, train=not no_train, executor=executor,
                            amend_plan=amend_plan)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if group_opts:
        from wgbstudies.debias import study_runs

        write_groups(study_runs(config, out), out, group_opts, dataset=train_overrides.get("dataset"),
                     n_resamples=kwargs["n_resamples"], seed=config.bootstrap_seed)
    meta = summary["meta"]
    click.echo((out / "results.md").read_text())
    click.echo(f"\n{meta['runs_evaluated']}/{meta['n_runs']} runs evaluated; wrote {out / 'results.json'}"
               + ("" if (out / "DONE").exists() else " (not finished: rerun to resume)"), err=True)
    if meta.get("runs_failed"):
        logs = meta.get("runs_failed_logs", {})
        for name, err in meta["runs_failed"].items():
            click.echo(f"FAILED {name}: {err}" + (f" (log: {logs[name]})" if logs.get(name) else ""), err=True)
        raise click.ClickException(f"{len(meta['runs_failed'])} run(s) failed (listed above); rerun to retry them")
    from wgb.errors import refuse_unusable_runs

    refuse_unusable_runs(meta)


@click.command(name="embedding-bias")
@click.argument("out", type=OutputPath(directory=True, path_type=Path))
@click.option("--variants", callback=_variants, default="none,anonymize,cda,anonymize+cda", show_default=True,
              help="Dataset variants whose Word2Vec to measure (hard debiasing is applied by the report).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--dataset", type=click.Path(exists=True, file_okay=False), default=None)
@click.option("--permutations", type=click.IntRange(min=10), default=10_000, show_default=True,
              help="WEAT permutations when the exact test is too large.")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=JSON",
              help="TrainConfig Word2Vec field, e.g. --set word_dim=100 (repeatable).")
def embedding_bias_cmd(out, variants, seed, dataset, permutations, overrides):
    """Direct bias and WEAT of each dataset variant's Word2Vec, before and after hard debiasing.

    Writes OUT/embedding_bias.json and OUT/embedding_bias.md.
    """
    from wgbstudies.embedding import embedding_bias_study, word2vec_bias_markdown
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    tr = _overrides(overrides)
    try:
        rep = embedding_bias_study(variants, seed=seed, dataset_path=dataset, train_overrides=tr,
                                   n_permutations=permutations)
    except (ValueError, FileNotFoundError, TypeError) as exc:
        raise click.ClickException(str(exc)) from None
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "embedding_bias.json", rep)
    md = word2vec_bias_markdown(rep)
    atomic_write_text(out / "embedding_bias.md", md)
    click.echo(md)


@click.command(name="debias-data")
@click.argument("method")
@click.argument("out", type=OutputPath(directory=True, path_type=Path))
@click.option("--dataset", type=click.Path(exists=True, file_okay=False), default=None,
              help="Benchmark folder [default: the embedded release].")
@click.option("--ner", type=str, default=None, help="Anonymization NER: auto, spacy, spacy:<package>, gazetteer.")
@click.option("--no-names", is_flag=True, help="CDA: do not swap first names.")
@click.option("--seed", type=SEED, default=0, show_default=True)
def debias_data_cmd(method, out, dataset, ner, no_names, seed):
    """Apply the dataset debiaser METHOD (anonymize, cda, anonymize+cda) and save the result to OUT.

    OUT gets one parquet file per split (data/sentences/<split>-00000-of-00001.parquet) and
    debias.json (what was done: describe() of the debiaser; rows and sha256 of every file), loadable with
    datasets.load_dataset("parquet", data_dir=OUT/data/sentences).
    """
    from relext.protocols.data import load_dataset_dict
    from relext.debias import canonical_name, get_debiaser
    from wgb.errors import hold_lock
    from wgbcore.atomicio import atomic_open, atomic_write_json

    try:
        canon = canonical_name(method)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="METHOD") from None
    parts = canon.split("+")
    if "hard_debias" in parts or canon == "none":
        raise click.BadParameter(f"{canon!r} does not change the dataset; use anonymize, cda or anonymize+cda",
                                 param_hint="METHOD")
    opts: dict = {}
    if ner is not None and "anonymize" in parts:
        opts["anonymize"] = {"ner": ner}
    if no_names and "cda" in parts:
        opts["cda"] = {"swap_names": False}
    deb = get_debiaser(canon, **opts) if len(parts) > 1 else get_debiaser(canon, **opts.get(canon, {}))
    hold_lock(out, "dataset folder")
    data = deb.transform_dataset(load_dataset_dict(dataset), seed=seed)
    folder = out / "data" / "sentences"
    folder.mkdir(parents=True, exist_ok=True)
    for split, ds in data.items():
        with atomic_open(folder / f"{split}-00000-of-00001.parquet", "wb") as fh:
            ds.to_parquet(fh)
    from wgbcore.provenance import file_sha256

    files = {}
    for split in data:
        path = folder / f"{split}-00000-of-00001.parquet"
        files[f"data/sentences/{path.name}"] = {"num_bytes": path.stat().st_size, "rows": len(data[split]),
                                                "sha256": file_sha256(path)}
    # loaded with datasets' parquet builder, whose cache key follows the files themselves; the
    # checksums say which data a result was computed on
    atomic_write_json(out / "debias.json", {**deb.describe(), "files": files})
    click.echo(f"wrote {', '.join(f'{s} ({len(d)} rows)' for s, d in data.items())} to {folder}")


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
    group.add_command(debias_grid_cmd)
    group.add_command(embedding_bias_cmd)
    group.add_command(debias_data_cmd)
