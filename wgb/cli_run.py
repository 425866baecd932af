"""`wgb run`: the end-to-end main job (see ``wgb.pipeline``)."""
from __future__ import annotations

import click

from wgb.cli_executor import executor_options
from wgb.cli_groups import group_options, resolve_groups
from wgb.cli_protocol import resolve_folds
from wgb.cli_types import SEED, SEEDS
from wgb.errors import OutputPath, hold_lock


@click.command()
@click.option("--out", "out_dir", type=OutputPath(directory=True), default="wgb-output/run", show_default=True,
              help="Folder for intermediate results and the report; rerun the same command to resume.")
@click.option("--profile", type=click.Choice(["tiny", "quick", "full"]), default="quick", show_default=True,
              help="quick: one seed, 3 extractor epochs (its measured wall time, with the cores and the load it "
                   "ran under, is in the README, from results/wgb_run/quick/run.json; expect more on a busy "
                   "machine); full: the documented long run; tiny: seconds (tests).")
@click.option("--quick", "quick_flag", is_flag=True, help="Same as --profile quick.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change one profile setting, e.g. --set kge_epochs=20 (repeatable).")
@click.option("--seed", type=SEED, default=None, help="One seed (default 0).")
@click.option("--seeds", "seeds", type=SEEDS, default=None, metavar="SEEDS",
              help="Several seeds, e.g. 0,1,2 or 0-4: every stage per seed (OUT/seed-<s>/), one report pooled over "
                   "them with verdicts (3 or more seeds decide them).")
@click.option("--min-count", type=click.IntRange(min=1), default=5, show_default=True,
              help="Item tables of the report list items held by at least this many persons.")
@click.option("--dataset", type=click.Path(file_okay=False), default=None,
              help="Benchmark folder (default: the embedded WikiGenderBias release).")
@click.option("--encoder", default="pcnn", show_default=True)
@click.option("--selector", default="attention", show_default=True)
@click.option("--debias", default="cda", show_default=True,
              help="Comma-separated debiasing variants to compare with the baseline (e.g. cda,hard_debias).")
@click.option("--kge-model", default="transe", show_default=True)
@click.option("--kge-engine", type=click.Choice(["ours", "pbg"]), default="ours", show_default=True,
              help="pbg: train the embeddings with PyTorch-BigGraph ($WGB_PBG_PYTHON; transe, distmult, complex).")
@click.option("--measures", default=None, help="Comma-separated kge bias measures (default: data,fisher,bourli_projection).")
@click.option("--link-fb13", is_flag=True, help="Link people and places to FB13 by name and add FB13 as background.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch threads (default: torch's choice).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--protocol", type=click.Choice(["test", "crossfit"]), default=None,
              help="test: extract the release's 523 annotated test persons; crossfit: every person of the "
                   "benchmark, each by a fold model that never saw them [default: crossfit for --profile full, "
                   "else test].")
@click.option("--folds", type=click.IntRange(min=2), default=None,
              help="Person-disjoint folds under crossfit [default: 5]; refused under the test protocol.")
@click.option("--fold-seed", type=SEED, default=0, show_default=True, help="Deals the persons into folds.")
@click.option("--runs-dir", type=click.Path(file_okay=False), default=None,
              help="A shared store of fold runs (crossfit), e.g. the cross-fitted study's runs folder: a "
                   "finished run with the same config is reused, not retrained [default: inside OUT].")
@group_options
@executor_options
def run(out_dir, profile, quick_flag, overrides, seed, seeds, min_count, dataset, encoder, selector, debias, kge_model,
        measures, link_fb13, threads, quiet, protocol, folds, fold_seed, runs_dir, executor, groups=None,
        era_edges="1850,1900,1950", min_cell=30, kge_engine="ours") -> None:
    """Run the main job: extraction bias -> knowledge graph -> embedding bias, one report.

    For each seed: trains the baseline extractor and the debiased one(s) on the benchmark, extracts
    triples from the held-out (test) articles, builds knowledge graphs from the gold labels and from
    each extractor, trains embeddings on each and runs the kge bias measures (OUT/seed-<s>/). Then
    writes OUT/report/report.html (+ .md, .json, charts): verdicts first, estimates pooled over the
    seeds and the test articles with intervals. Rerun to resume; add seeds to the same OUT later.
    With --groups, also the gender gap per cell (gender x era, region or North/South) of every
    extractor and graph into OUT/groups/ and the report's intersectional section; a finished OUT
    asked again with --groups reuses every stage and adds this one.
    """
    from wgb.pipeline import DEFAULT_MEASURES, PipelineConfig, parse_overrides, run_pipeline
    from wgb.pipeline.config import DEFAULT_PROTOCOL
    from wgb.pipeline.groups import settings_of

    group_settings = settings_of(resolve_groups(groups, era_edges, min_cell))

    try:
        settings = parse_overrides(overrides)
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    if seed is not None and seeds is not None:
        raise click.ClickException("give --seed (one run) or --seeds (several), not both")
    profile = "quick" if quick_flag else profile
    k = resolve_folds(protocol or DEFAULT_PROTOCOL.get(profile, "test"), folds)   # as re train refuses it
    cfg = PipelineConfig(
        profile=profile, overrides=settings, seed=seed or 0, seeds=seeds,
        min_count=min_count, dataset=dataset, encoder=encoder, selector=selector,
        debias=[d.strip() for d in debias.split(",") if d.strip()], kge_model=kge_model, kge_engine=kge_engine,
        measures=[m.strip() for m in measures.split(",")] if measures else list(DEFAULT_MEASURES),
        link_fb13=link_fb13, threads=threads, protocol=protocol, folds=k or 5, fold_seed=fold_seed,
        runs_dir=runs_dir, groups=group_settings,
    )
    try:
        cfg.validate()
    except (ValueError, FileNotFoundError) as err:
        raise click.ClickException(str(err)) from err
    # --quiet drops progress, never a warning: a stage run again over a changed file is said
    log = (lambda msg: click.echo(msg, err=True) if msg.startswith("[redo]") else None) if quiet else click.echo
    hold_lock(out_dir, "run folder")
    try:
        result = run_pipeline(cfg, out_dir, log=log, progress=not quiet, executor=executor)
    except (ValueError, FileNotFoundError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"report: {result.report_html} (seeds {','.join(map(str, result.seeds))}; "
               f"{result.seconds:.0f} s this session)")
