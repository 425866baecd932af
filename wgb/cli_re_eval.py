"""`wgb re eval`, `wgb re score`, `wgb re grid`, `wgb re extract`, `wgb re infer`: evaluation,
fairness (also of any extractor's predictions), grids, triples and one-sentence inference (also
with a pretrained extractor shipped with wgb)."""
from __future__ import annotations

from pathlib import Path

import click

from wgb.cli_executor import executor_options, run_device
from wgb.cli_groups import group_options, resolve_groups, write_groups
from wgb.cli_protocol import parse_named_seeds, protocol_options, resolve_folds, seeds_option
from wgb.cli_types import ALPHA, CONFIDENCE, RESAMPLES, SEED, UNIT

from wgb.errors import OutputPath, check_writable, one_line, refuse_unusable_runs


def _csv(kind: str):
    def parse(ctx, param, value):
        if value is None:
            return None
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise click.BadParameter(f"expected a comma-separated list of {kind}")
        return items
    return parse


def _encoders(ctx, param, value):
    """``cnn,pcnn,rnn@0-2``: encoders, each optionally with its own seeds after ``@``."""
    from relext.model.encoders import encoder_class

    def known(name: str) -> str:
        encoder_class(name)  # an unknown encoder is a ValueError naming the choices
        return name

    if value is None:
        return None
    try:
        return parse_named_seeds(value, canonical=known)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_eval_options = [
    click.option("--threshold-mode", type=click.Choice(["global", "per_relation"]), default="global",
                 show_default=True, help="How the threshold variant picks thresholds on validation."),
    click.option("--resamples", "n_resamples", type=RESAMPLES, default=1000,
                 show_default=True, help="Bootstrap resamples over test entities."),
    click.option("--confidence", type=CONFIDENCE,
                 default=0.95, show_default=True, help="Interval coverage."),
    click.option("--bootstrap-seed", type=SEED, default=0, show_default=True),
]


def _apply(options):
    def deco(f):
        for opt in reversed(options):
            f = opt(f)
        return f
    return deco


@click.command(name="eval")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_apply(_eval_options)
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Also write eval_gaps.png (gaps with bootstrap intervals).")
@click.option("--json", "as_json", is_flag=True, help="Print eval.json instead of the table.")
def eval_cmd(run_dir: Path, threshold_mode, n_resamples, confidence, bootstrap_seed, plot, as_json):
    """Evaluate RUN_DIR: per-relation P/R/F1, micro/macro F1, PR-AUC on male_test, female_test
    and pooled; F1 and equality-of-opportunity gaps with bootstrap intervals.

    Writes RUN_DIR/predictions/*.jsonl when missing, then RUN_DIR/eval.json and eval.md.
    """
    from relext.evaluation.evaluate import evaluate_run
    from relext.evaluation.report import eval_markdown

    problem = check_writable(run_dir / "eval.json", directory=False)
    if problem:
        raise click.BadParameter(problem, param_hint="RUN_DIR")
    # cached predictions must come from this run's model.pt, config.json and data (else refused,
    # or predicted again when only the data changed: relext.evaluation.evaluate.ensure_predictions)
    notes: list[str] = []
    try:
        result = evaluate_run(run_dir, threshold_mode=threshold_mode, n_resamples=n_resamples,
                              confidence=confidence, bootstrap_seed=bootstrap_seed, notes=notes)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(one_line(exc)) from None
    finally:
        for note in notes:
            click.echo(f"warning: {note}", err=True)
    if plot:
        from relext.evaluation.plots import plot_run_gaps

        plot_run_gaps(result, run_dir / "eval_gaps.png")
    if as_json:
        click.echo((run_dir / "eval.json").read_text())
    else:
        click.echo(eval_markdown(result))
        click.echo(f"\nwrote {run_dir / 'eval.json'} and {run_dir / 'eval.md'}", err=True)


@click.command(name="grid")
@click.option("--encoders", callback=_encoders, default="cnn,pcnn,rnn,birnn", show_default=True,
              help="Comma-separated encoders; one may carry its own seeds after '@' "
                   "('cnn,pcnn,rnn@0-2,birnn@0-2'): those with all --seeds train first, seed by seed.")
@click.option("--selectors", callback=_csv("selectors"), default="attention,average", show_default=True)
@click.option("--seeds", callback=seeds_option, default="1,2,3", show_default=True,
              help="Seeds, e.g. 1,2,3 or 0-4.")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Maximum epochs per run (default: the trainer's).")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE",
              help="Extra training config field for every run (JSON value), repeatable.")
@click.option("--out", type=OutputPath(directory=True, path_type=Path), default=Path("results/re_grid"),
              show_default=True)
@_apply(_eval_options)
@click.option("--runs-dir", type=OutputPath(directory=True, path_type=Path), default=None,
              help="Where run directories live (default OUT/runs); e.g. runs/re_grid keeps "
              "checkpoints out of a committed results folder.")
@click.option("--no-train", is_flag=True,
              help="Only evaluate and summarise finished runs; leave unfinished ones alone.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failing run.")
@click.option("--no-plots", is_flag=True)
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="torch.set_num_threads for training.")
@click.option("--device", default=None, help="Training device for every run: cpu, cuda, cuda:N or auto "
              "[default: cpu]; a runtime setting, so runs resume on any device.")
@click.option("--amend-plan", metavar="WHY", default=None,
              help="Replace OUT/plan.json when this command's plan differs (more seeds, other combinations), "
                   "saying why; the old plan is kept in its history, and the grid counts as registered after its "
                   "runs (exploratory) when any of them had finished.")
@protocol_options
@executor_options
@group_options
def grid_cmd(encoders, selectors, seeds, epochs, overrides, out, threshold_mode, n_resamples,
             confidence, bootstrap_seed, runs_dir, no_train, fail_fast, no_plots, threads, device, amend_plan,
             protocol, folds, fold_seed, executor, groups, era_edges, min_cell):
    """Train and evaluate encoder x selector x seed, resumably, into OUT.

    Runs go seed-major (every combination with the first seed first). Finished runs (with
    DONE) are skipped, interrupted ones resume from their checkpoint: rerun the same command to
    continue. OUT/plan.json is written before the first run (the claims, seeds, folds and
    stopping rule: a rerun with another plan is refused; the claims are "interim: not decided"
    until every planned seed is in). OUT/results.json and OUT/results.md are rewritten after
    every run, the PNG plots at the end; OUT/timing.json records the time spent.
    """
    from wgbstudies.grid import GridConfig, run_grid
    from wgbcore.config import parse_overrides

    group_opts = resolve_groups(groups, era_edges, min_cell)
    if threads:
        import torch

        torch.set_num_threads(threads)
    try:
        train_overrides = parse_overrides(overrides, form="FIELD=VALUE")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--set") from None
    device = run_device(executor, device)
    if device:
        train_overrides["device"] = device
    if threads:
        train_overrides["threads"] = threads
    try:
        config = GridConfig(encoders=[e for e, _ in encoders], selectors=selectors, seeds=seeds, epochs=epochs,
                            seeds_by_encoder={e: own for e, own in encoders if own is not None},
                            train_overrides=train_overrides, threshold_mode=threshold_mode,
                            n_resamples=n_resamples, confidence=confidence,
                            bootstrap_seed=bootstrap_seed,
                            runs_dir=str(runs_dir) if runs_dir else None,
                            folds=resolve_folds(protocol, folds), fold_seed=fold_seed)
        from wgb.errors import hold_lock

        hold_lock(out, "study folder")   # one writer of OUT: a second grid on it is refused, naming the holder
        summary = run_grid(config, out, keep_going=not fail_fast, plots=not no_plots,
                           train=not no_train, executor=executor, amend_plan=amend_plan)
    except (ValueError, TypeError) as exc:
        raise click.ClickException(str(exc)) from None
    if group_opts:
        from wgbstudies.grid import design_runs

        write_groups(design_runs(config, out), out, group_opts, dataset=train_overrides.get("dataset"),
                     n_resamples=n_resamples or 1000, seed=bootstrap_seed)
    meta, t = summary["meta"], summary["timing"]
    click.echo(f"{len(meta['runs_done'])}/{meta['n_runs']} runs done, "
               f"{meta['runs_evaluated']} evaluated; training {t['train_seconds_total']:.0f} s, "
               f"evaluation {t['eval_seconds_total']:.0f} s. Results in {out}/results.md")
    for line in summary.get("findings", []):
        click.echo(f"- {line}")
    if meta["runs_failed"]:
        for name, err in meta["runs_failed"].items():
            where = meta.get("runs_failed_logs", {}).get(name)
            click.echo(f"FAILED {name}: {err}" + (f" (log: {where})" if where else ""), err=True)
        raise SystemExit(1)
    refuse_unusable_runs(meta)


def _pretrained_option(f):
    return click.option(
        "--pretrained", default=None, is_flag=False, flag_value="pcnn-attention", metavar="[NAME]",
        help="Use a pretrained extractor shipped with wgb instead of RUN_DIR (no training, no download); "
        "NAME defaults to pcnn-attention (relext.pretrained.available()).")(f)


def _unmentioned_option(f):
    return click.option(
        "--unmentioned", type=click.Choice(["refuse", "skip"]), default="refuse", show_default=True,
        help="A sentence that does not mention its head or its tail says nothing about the pair and is never "
        "scored: refuse it (an error naming its line) or skip it (counted in a warning).")(f)


def _model_dir(run_dir: Path | None, pretrained: str | None) -> Path:
    """RUN_DIR, or the folder of a shipped pretrained model (checked against its SHA256SUMS)."""
    if (run_dir is None) == (pretrained is None):
        raise click.UsageError("give exactly one of RUN_DIR or --pretrained [NAME]")
    if run_dir is not None:
        return run_dir
    from relext import pretrained as shipped

    try:
        return shipped.verify(pretrained)
    except (ValueError, FileNotFoundError) as exc:
        raise click.BadParameter(one_line(exc), param_hint="--pretrained") from None


@click.command(name="extract")
@click.argument("run_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@_pretrained_option
@click.option("--split", default=None, help="Benchmark split to extract from (e.g. male_test).")
@click.option("--text", "text_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help='New text: JSON lines of {"head", "tail", "gender"?, "tokens" or '
              '"text", "head_span"?, "tail_span"?}; sentences are grouped into bags by (head, tail).')
@click.option("--out", "-o", type=OutputPath(directory=False, path_type=Path), default=None,
              help="Output triples.jsonl (default: RUN_DIR/triples/<split>.jsonl; with --pretrained "
              "triples/<NAME>/<split>.jsonl in the current folder).")
@click.option("--min-score", type=UNIT, default=0.0, show_default=True)
@click.option("--rule", type=click.Choice(["argmax", "all"]), default="argmax", show_default=True,
              help="argmax: top class per bag (NA dropped); all: every relation >= --min-score.")
@_unmentioned_option
def extract_cmd(run_dir, pretrained, split, text_file, out, min_score, rule, unmentioned):
    """Extract (head, relation, tail) triples with scores from a trained run (RUN_DIR) or a
    pretrained extractor shipped with wgb (--pretrained), as JSON lines.

    With --pretrained nothing is written into the installed package: predictions stay in memory.
    """
    from relext.extract import extract_split, extract_text, write_triples

    if (split is None) == (text_file is None):
        raise click.UsageError("give exactly one of --split or --text")
    model_dir = _model_dir(run_dir, pretrained)
    default_root = run_dir / "triples" if run_dir is not None else Path("triples") / pretrained
    out = out or default_root / f"{split or 'text'}.jsonl"
    problem = check_writable(out, directory=False)
    if problem:  # before the work, not after it
        raise click.BadParameter(problem, param_hint="--out")
    notes: list[str] = []
    skipped: list[str] = []
    try:
        if split is not None:
            triples = extract_split(model_dir, split, min_score=min_score, rule=rule, notes=notes,
                                    cache=None if run_dir is not None else False)
        else:
            triples = extract_text(model_dir, text_file, min_score=min_score, rule=rule, skipped=skipped,
                                   unmentioned_policy=unmentioned)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise click.ClickException(one_line(exc)) from None
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    if skipped:
        click.echo(f"warning: skipped {len(skipped)} sentence(s) that do not mention their head and their tail "
                   f"(first: {', '.join(skipped[:5])})", err=True)
    write_triples(triples, out)
    click.echo(f"wrote {len(triples)} triples to {out}")


def _span(ctx, param, value):
    if value is None:
        return None
    try:
        s, e = (int(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"expected START,END (character offsets, end exclusive), got {value!r}") from None
    return [s, e]


@click.command(name="infer")
@click.argument("run_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@_pretrained_option
@click.option("--text", required=True, help="One sentence.")
@click.option("--head", required=True, help="The head entity's name (located in the text unless --head-pos).")
@click.option("--tail", required=True, help="The tail entity's name (located in the text unless --tail-pos).")
@click.option("--head-pos", callback=_span, default=None, metavar="START,END",
              help="Character offsets of the head in --text, end exclusive (OpenNRE's 'pos').")
@click.option("--tail-pos", callback=_span, default=None, metavar="START,END",
              help="Character offsets of the tail in --text, end exclusive.")
@click.option("--json", "as_json", is_flag=True, help="Print every relation's probability as JSON.")
@_unmentioned_option
def infer_cmd(run_dir, pretrained, text, head, tail, head_pos, tail_pos, as_json, unmentioned):
    """The relation of one sentence's head and tail, as OpenNRE's model.infer: prints
    RELATION<TAB>PROBABILITY (NA when no relation wins)."""
    import json

    from relext.pretrained import Extractor

    model_dir = _model_dir(run_dir, pretrained)
    item = {"text": text, "h": {"name": head}, "t": {"name": tail}}
    if head_pos is not None:
        item["h"]["pos"] = head_pos
    if tail_pos is not None:
        item["t"]["pos"] = tail_pos
    skipped: list[str] = []
    try:
        model = Extractor.from_dir(model_dir, name=pretrained, verify=pretrained is None)  # --pretrained: verified
        probs = model.predict_proba([[item]], unmentioned=unmentioned, skipped=skipped)[0]
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise click.ClickException(one_line(exc).replace("item: ", "--text: ", 1)) from None
    if skipped:  # --unmentioned skip: nothing predicted, and said so
        click.echo(f"warning: skipped 1 sentence ({skipped[0].replace('item: ', '')}); nothing predicted", err=True)
        return
    best = int(probs.argmax())
    if as_json:
        click.echo(json.dumps({"relation": model.relations[best], "score": float(probs[best]),
                               "scores": {r: float(p) for r, p in zip(model.relations, probs)}}, indent=2))
    else:
        click.echo(f"{model.relations[best]}\t{float(probs[best]):.4f}")


@click.command(name="score")
@click.argument("predictions", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--rule", type=click.Choice(["argmax", "threshold"]), default="argmax", show_default=True,
              help="Decision rule for rows with scores (threshold: picked on the validation rows).")
@click.option("--threshold-mode", type=click.Choice(["global", "per_relation"]), default="global",
              show_default=True, help="How the threshold rule picks thresholds on validation.")
@click.option("--resamples", "n_resamples", type=RESAMPLES, default=1000, show_default=True,
              help="Bootstrap resamples.")
@click.option("--confidence", type=CONFIDENCE, default=0.95,
              show_default=True, help="Interval coverage.")
@click.option("--alpha", type=ALPHA, default=0.05,
              show_default=True, help="Several runs: level of the Benjamini-Hochberg flags.")
@click.option("--bootstrap-seed", type=SEED, default=0, show_default=True)
@click.option("--out", "-o", type=OutputPath(directory=False, path_type=Path), default=None,
              help="Also write the report as JSON to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Benchmark folder the runs predicted (default: the runs' config's dataset, else the embedded "
              "release): every test bag of it must be scored.")
@click.option("--allow-subset", is_flag=True,
              help="Score runs that cover only part of the test bags (refused without it); the report warns.")
@click.option("--groups", default=None, metavar="gender,COLUMN[,COLUMN]",
              help="Also the gender gap per cell of a person-level grouping: gender,era | gender,region | "
              "gender,north_south (several columns: crossed cells); the per-cell table, max - min over cells "
              "(relext.evaluation.cell_gaps).")
@click.option("--era-edges", default="1850,1900,1950", show_default=True,
              help="With --groups ...era: birth-era bin edges (years, increasing).")
@click.option("--min-cell", type=click.IntRange(min=2), default=30, show_default=True,
              help="With --groups: fewest persons of each gender in a cell for a verdict (below: too few to estimate).")
@click.option("--groups-report", type=OutputPath(directory=True, path_type=Path), default=None,
              help="With --groups: write cells.json, cells.md, cells.html and the plot cells.png to this folder.")
def score_cmd(predictions, rule, threshold_mode, n_resamples, confidence, alpha, bootstrap_seed, out, as_json,
              data, allow_subset, groups, era_edges, min_cell, groups_report):
    """F1 gap and equality of opportunity, per relation with intervals, of any extractor's
    PREDICTIONS on the WikiGenderBias test sets.

    Give one PREDICTIONS per run (seed): a JSON-lines file of test bags or a folder with
    male_test.jsonl and female_test.jsonl (a run's predictions/). Each row: bag_id, entity_id,
    gender, labels and either scores (one per relation, NA first) or predicted (relation names
    or ids). Several runs: intervals of the two-level seed x entity bootstrap and
    Benjamini-Hochberg flags (relext.design). Format details: relext.evaluation.score.

    The runs are checked as one study's before anything is scored (relext.evaluation.run_sets): distinct,
    complete (every fold), one fold seed, current predictions, valid and agreeing gold labels, no
    bag twice, every test bag of the data (or --allow-subset).
    """
    import json

    from relext.evaluation.score import score_files
    from wgbcore.atomicio import atomic_write_json

    if out is not None:
        problem = check_writable(out, directory=False)
        if problem:
            raise click.BadParameter(problem, param_hint="--out")
    group_opts = _group_options(groups, era_edges, min_cell, groups_report)
    try:
        report = score_files(list(predictions), rule=rule, threshold_mode=threshold_mode,
                             n_resamples=n_resamples, confidence=confidence, seed=bootstrap_seed, alpha=alpha,
                             coverage=True, data=data, allow_subset=allow_subset, groups=group_opts)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(one_line(exc)) from None
    for w in report.warnings:
        click.echo(f"WARNING: {w}", err=True)
    if out is not None:
        atomic_write_json(out, report.to_dict())
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.to_markdown())
    if out is not None:
        click.echo(f"wrote {out}", err=True)
    if groups_report is not None and report.groups:
        from relext.evaluation.cell_gaps import write_report

        paths = write_report(report.groups, groups_report)
        click.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def _group_options(groups, era_edges, min_cell, groups_report) -> dict | None:
    """--groups and its options checked before any work (one-line errors naming the option)."""
    if groups is None:
        if groups_report is not None:
            raise click.BadParameter("needs --groups", param_hint="--groups-report")
        return None
    options = resolve_groups(groups, era_edges, min_cell)
    if groups_report is not None:
        problem = check_writable(groups_report, directory=True)
        if problem:
            raise click.BadParameter(problem, param_hint="--groups-report")
    return options


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
    group.add_command(eval_cmd)
    group.add_command(grid_cmd)
    group.add_command(extract_cmd)
    group.add_command(infer_cmd)
    group.add_command(score_cmd)
