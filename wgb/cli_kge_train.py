"""`wgb kge train` and `wgb kge eval`: knowledge graph embeddings (package `kge`)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from wgb.cli_choices import RegistryChoice
from kge.train_profiles import PROFILES
from wgb.cli_types import FINITE, NONNEG_FLOAT, SEED
from wgb.errors import OutputPath, check_writable, hold_lock

_POS = click.IntRange(min=1)
_NONNEG = click.IntRange(min=0)


def _graph(path: str | None, min_score: float | None):
    from kge.graph import load_graph

    return load_graph(path, min_score=min_score)


@click.command("train")
@click.argument("graph", required=False)
@click.option("--out", "out_dir", required=True, type=OutputPath(directory=True), help="Embedding dir to write.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="JSON or YAML file of TrainConfig fields (flags given on the command line override it).")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default=None,
              help="Named preset of the fields below (openke: L1, margin, Bernoulli, 10 negatives, as in Bourli "
                   "2021); the config file and flags override it.")
@click.option("--model", type=RegistryChoice("kge.models:MODELS"), default=None, help="Model (default transe).")
@click.option("--dim", type=_POS, default=None, help="Embedding dimension (default 100).")
@click.option("--p-norm", type=click.Choice(["1", "2"]), default=None, help="TransE/TransH distance norm (default 2).")
@click.option("--epochs", type=_POS, default=None, help="Maximum epochs (default 100).")
@click.option("--batch-size", type=_POS, default=None, help="Positives per batch (default 4096).")
@click.option("--lr", type=NONNEG_FLOAT, default=None, help="Adam learning rate (default 0.01).")
@click.option("--negatives", type=_POS, default=None, help="Negatives per positive (default 1).")
@click.option("--loss", type=RegistryChoice("kge.losses:LOSSES"), default=None, help="Loss (default margin).")
@click.option("--margin", type=NONNEG_FLOAT, default=None, help="Margin of the margin loss (default 1.0).")
@click.option("--optimizer", type=RegistryChoice("kge.optim:ROW_OPTIMIZERS"), default=None,
              help="Optimizer (default adam; adagrad, sgd).")
@click.option("--tail-candidates", type=click.Choice(["sampled", "range"]), default=None,
              help="sampled (default): --negatives from --sampler per positive; range: softmax over every tail "
                   "the relation has in training plus --negatives uniform entities per batch (tail side only).")
@click.option("--sampler", type=RegistryChoice("kge.sampling:SAMPLERS"), default=None,
              help="Negative sampler (default uniform).")
@click.option("--regularization", type=NONNEG_FLOAT, default=None, help="L2 weight on batch embeddings (default 0).")
@click.option("--seed", type=SEED, default=None, help="Seed for everything (default 0).")
@click.option("--eval-every", type=_NONNEG, default=None, help="Validate every k epochs (0 = never).")
@click.option("--patience", type=_NONNEG, default=None, help="Early stopping: validations without improvement.")
@click.option("--valid-max-triples", type=_POS, default=None, help="Validate on a seeded subset of this size.")
@click.option("--checkpoint-every", type=_POS, default=None, help="Checkpoint every k epochs (default 1).")
@click.option("--threads", type=_POS, default=None, help="torch threads.")
@click.option("--device", default=None, metavar="cpu|cuda|cuda:N",
              help="Where the model and its optimizer state live (default cpu; --engine ours).")
@click.option("--min-score", type=FINITE, default=None, help="For extracted triples (.jsonl): drop triples scored below.")
@click.option("--no-test", is_flag=True, help="Skip the test-set evaluation at the end.")
@click.option("--overwrite", is_flag=True, help="Start over even if DIR holds a checkpoint or finished run.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--engine", type=click.Choice(["ours", "pbg"]), default="ours", show_default=True,
              help="pbg: PyTorch-BigGraph (partitioned, multi-machine; its venv via $WGB_PBG_PYTHON or --pbg-python).")
@click.option("--partitions", type=_POS, default=None, help="pbg: entity partitions (default 1; 2 in memory at a time).")
@click.option("--machines", type=_POS, default=1, show_default=True, help="pbg: machines training together.")
@click.option("--rank", type=_NONNEG, default=0, show_default=True, help="pbg: this machine's rank (0 exports and imports).")
@click.option("--init", "init_method", default=None, metavar="tcp://HOST:PORT",
              help="pbg, --machines > 1: rank 0's address (the same on every machine).")
@click.option("--job-dir", type=click.Path(file_okay=False), default=None,
              help="pbg: PBG's working folder (default DIR/pbg_job; several machines: one shared folder).")
@click.option("--keep-job", is_flag=True, help="pbg: keep the job folder (checkpoint, buckets) to train on later.")
@click.option("--pbg-python", type=click.Path(dir_okay=False), default=None,
              help="pbg: the Python that has torchbiggraph (default $WGB_PBG_PYTHON).")
def train_cmd(graph, out_dir, config_file, profile, model, dim, p_norm, epochs, batch_size, lr, negatives, loss,
              margin, optimizer, tail_candidates, sampler, regularization, seed, eval_every, patience, valid_max_triples, checkpoint_every, threads,
              device, min_score, no_test, overwrite, quiet, **pbg):
    """Train embeddings of GRAPH (default: the shipped FB13) into DIR.

    GRAPH: an OpenKE folder, a graph dir, a folder of labelled TSV triples, a TSV file, or the
    triples.jsonl of `wgb re extract`. Rerunning the same command resumes an interrupted run.
    With --engine pbg, PyTorch-BigGraph trains it (streamed, partitioned, optionally on several
    machines: see kge.pbg) into the same embedding dir format.
    """
    from wgb import cli_kge_pbg

    engine = pbg.pop("engine")
    if engine == "pbg" and any(v is not None for v in (device, profile, optimizer, tail_candidates)):
        raise click.UsageError("--device, --profile, --optimizer and --tail-candidates apply to the built-in trainer "
                               "(--engine ours)")
    if engine != "pbg" or pbg["rank"] == 0:  # rank 0 writes DIR; other ranks only train
        hold_lock(out_dir, "embedding folder")
    if engine == "pbg":
        flags = {"model": model, "dim": dim, "epochs": epochs, "batch_size": batch_size, "lr": lr,
                 "negatives": negatives, "loss": loss, "margin": margin, "sampler": sampler,
                 "regularization": regularization, "seed": seed, "eval_every": eval_every, "patience": patience,
                 "valid_max_triples": valid_max_triples, "checkpoint_every": checkpoint_every, "num_threads": threads}
        cfg = cli_kge_pbg.pbg_config(config_file, flags, p_norm, pbg.pop("partitions"))
        return cli_kge_pbg.run(graph, out_dir, cfg, machines=pbg["machines"], rank=pbg["rank"],
                               init=pbg["init_method"], job_dir=pbg["job_dir"], keep_job=pbg["keep_job"],
                               python=pbg["pbg_python"], overwrite=overwrite, min_score=min_score, quiet=quiet)
    given = cli_kge_pbg.pbg_only_given(pbg)
    if given:
        raise click.UsageError(f"{', '.join(given)} only apply with --engine pbg")
    from kge.train import TrainConfig, train
    from wgbcore.config import check_fields, read_config_file

    fields: dict = dict(PROFILES[profile]) if profile else {}
    if config_file:
        try:
            given = check_fields(TrainConfig, read_config_file(config_file), source=config_file)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--config")
        if "model_kwargs" in given:  # the profile's p_norm stays unless the file gives one
            given["model_kwargs"] = {**fields.get("model_kwargs", {}), **given["model_kwargs"]}
        fields.update(given)
    flags = {"model": model, "dim": dim, "epochs": epochs, "batch_size": batch_size, "lr": lr, "negatives": negatives,
             "loss": loss, "margin": margin, "optimizer": optimizer, "tail_candidates": tail_candidates,
             "sampler": sampler, "regularization": regularization, "seed": seed,
             "eval_every": eval_every, "patience": patience, "valid_max_triples": valid_max_triples,
             "checkpoint_every": checkpoint_every, "num_threads": threads, "device": device}
    fields.update({k: v for k, v in flags.items() if v is not None})
    if p_norm is not None:
        fields["model_kwargs"] = {**fields.get("model_kwargs", {}), "p_norm": int(p_norm)}
    if no_test:
        fields["evaluate_test"] = False
    # library errors (bad graph file, config, checkpoint, run dir of another graph) become one
    # line naming the file or field in the error boundary of wgb.cli
    try:
        config = TrainConfig.from_dict(fields, source=config_file or "")
    except ValueError as e:  # flags are range-checked by click: a bad value comes from the file
        raise click.BadParameter(f"{config_file}: {e}" if config_file else str(e),
                                 param_hint="--config" if config_file else None) from None
    g = _graph(graph, min_score)
    click.echo(f"graph: {g!r}", err=True)
    res = train(g, config, out_dir, overwrite=overwrite, progress=False if quiet else None)
    summary = {"out_dir": out_dir, "epochs_run": res.epochs_run, "best_epoch": res.best_epoch,
               "train_seconds": round(res.train_seconds, 2), "triples_per_second": round(res.triples_per_second),
               "test": {k: res.test[k] for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")} if res.test else None}
    click.echo(json.dumps(summary, indent=2))


@click.command("eval")
@click.argument("emb_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("graph", required=False)
@click.option("--split", type=click.Choice(["test", "valid", "train"]), default="test")
@click.option("--raw", is_flag=True, help="Unfiltered ranks (default: filtered).")
@click.option("--max-triples", type=_POS, default=None, help="Evaluate a seeded random subset.")
@click.option("--out", "out_file", type=OutputPath(directory=False), default=None,
              help="Metrics JSON (default EMB_DIR/metrics_<split>.json).")
@click.option("--type-constrain", is_flag=True,
              help="Rank each answer only among the entities seen on its side of the relation in training "
                   "(OpenKE's type_constrain).")
@click.option("--threads", type=_POS, default=None)
@click.option("--quiet", is_flag=True)
def eval_cmd(emb_dir, graph, split, raw, max_triples, out_file, type_constrain, threads, quiet):
    """Filtered MRR and Hits@1/3/10 of the embeddings in EMB_DIR on GRAPH (default FB13), both
    sides and each side apart (`sides` in the JSON)."""
    import torch

    from kge.embeddings import load_model
    from kge.evaluate import evaluate
    from wgbcore.atomicio import atomic_write_json

    out = Path(out_file) if out_file else Path(emb_dir) / f"metrics_{split}.json"
    problem = check_writable(out, directory=False)
    if problem:  # before the work, not after it
        raise click.BadParameter(problem, param_hint="--out")
    if threads:
        torch.set_num_threads(threads)
    g = _graph(graph, None)
    model = load_model(emb_dir, g)
    m = evaluate(model, g, split, filtered=not raw, max_triples=max_triples, progress=False if quiet else None,
                 type_constrain=type_constrain)
    d = {"graph": g.name, "split": split, "type_constrained": type_constrain, **m.to_dict()}
    atomic_write_json(out, d, clean=False)
    click.echo(json.dumps({k: d[k] for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "seconds")}, indent=2))


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
    group.add_command(train_cmd)
    group.add_command(eval_cmd)
