"""`wgb kge train --engine pbg`: the PyTorch-BigGraph body of `wgb kge train` (see ``kge.pbg``)."""
from __future__ import annotations

import json

import click

#: our loss names -> PBG's
LOSS_TO_PBG = {"margin": "ranking", "softmax": "softmax", "softplus": "logistic"}
#: options of our trainer that PBG has no counterpart for
OURS_ONLY = {"sampler": "--sampler", "regularization": "--regularization", "eval_every": "--eval-every",
             "patience": "--patience", "valid_max_triples": "--valid-max-triples",
             "checkpoint_every": "--checkpoint-every", "num_threads": "--threads"}
#: options that only mean something with --engine pbg: parameter -> (option, its default)
PBG_ONLY = {"partitions": ("--partitions", None), "machines": ("--machines", 1), "rank": ("--rank", 0),
            "init_method": ("--init", None), "job_dir": ("--job-dir", None), "keep_job": ("--keep-job", False),
            "pbg_python": ("--pbg-python", None)}


def pbg_only_given(params: dict) -> list[str]:
    """The --engine pbg options given (not at their defaults)."""
    return [opt for key, (opt, default) in PBG_ONLY.items() if params.get(key, default) != default]


def pbg_config(config_file: str | None, flags: dict, p_norm: str | None, partitions: int | None):
    """A :class:`kge.pbg.PBGConfig` from a config file of its fields and our trainer's flags."""
    from kge.pbg import PBGConfig
    from wgbcore.config import check_fields, read_config_file

    fields: dict = {}
    if config_file:
        try:
            fields = check_fields(PBGConfig, read_config_file(config_file), source=config_file)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--config")
    for key, opt in OURS_ONLY.items():
        if flags.get(key) is not None:
            raise click.BadParameter(f"{opt} belongs to our trainer; PyTorch-BigGraph has no counterpart "
                                     f"(drop it, or use --engine ours)", param_hint=opt)
    if p_norm == "1":
        raise click.BadParameter("PyTorch-BigGraph has no L1 comparator (TransE trains with the L2 norm)",
                                 param_hint="--p-norm")
    if flags.get("loss") is not None:
        if flags["loss"] not in LOSS_TO_PBG:
            raise click.BadParameter(f"loss {flags['loss']!r} has no PBG counterpart; PBG has "
                                     f"{sorted(LOSS_TO_PBG)}", param_hint="--loss")
        fields["loss"] = LOSS_TO_PBG[flags["loss"]]
    for ours, theirs in (("model", "model"), ("dim", "dim"), ("epochs", "epochs"), ("batch_size", "batch_size"),
                         ("lr", "lr"), ("negatives", "num_uniform_negs"), ("margin", "margin"), ("seed", "seed")):
        if flags.get(ours) is not None:
            fields[theirs] = flags[ours]
    if partitions is not None:
        fields["num_partitions"] = partitions
    try:
        return PBGConfig(**fields)
    except (TypeError, ValueError) as e:
        raise click.BadParameter(str(e), param_hint="--config" if config_file else None) from None


def run(graph, out_dir, config, *, machines: int, rank: int, init: str | None, job_dir: str | None,
        keep_job: bool, python: str | None, overwrite: bool, min_score: float | None, quiet: bool) -> None:
    """Train, print the summary JSON (times, peak memory, layout, loss per epoch)."""
    from kge.pbg import check_distributed, train_pbg

    try:
        check_distributed(config, machines, rank, init)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if machines > 1 and job_dir is None:
        raise click.UsageError("--machines > 1 needs --job-dir: one folder that every machine mounts at the same path")
    log = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
    res = train_pbg(graph, config, out_dir if rank == 0 else None, job_dir=job_dir, python=python,
                    keep_job=keep_job, machines=machines, rank=rank, init=init, overwrite=overwrite,
                    min_score=min_score, log=log, progress=not quiet)
    rep = res.report
    mem = rep.get("train_memory", {})
    summary = {"out_dir": out_dir if rank == 0 else None, "engine": "pbg", "rank": rank, "machines": machines,
               "partitions": config.num_partitions, "epochs": config.epochs, "skipped": rep.get("skipped", False),
               "resumed_from_epoch": rep.get("resumed_from_epoch"),
               "seconds": {k: round(rep[k], 2) for k in ("export_seconds", "train_seconds", "import_seconds")
                           if k in rep},
               "peak_memory_mb": {"main_process_rss": round(rep.get("peak_rss_main_bytes", 0) / 2 ** 20, 1),
                                  "training_processes_pss": round(mem.get("peak_pss_bytes", 0) / 2 ** 20, 1),
                                  "largest_training_process_rss":
                                      round(mem.get("peak_rss_largest_process_bytes", 0) / 2 ** 20, 1)},
               "layout": rep.get("layout"), "epoch_loss": (rep.get("worker") or {}).get("epoch_loss"),
               "pbg_timing": {k: v for k, v in (rep.get("worker") or {}).items()
                              if k in ("startup_seconds", "steady_seconds", "steady_edges", "steady_edges_per_second",
                                       "edges_trained", "buckets_trained", "write_seconds")},
               "loadavg": {"before": rep.get("loadavg_before"), "after": rep.get("loadavg_after")},
               "job_dir": str(job_dir) if rep.get("kept_job") or rank > 0 else None,
               "test": None}
    if rank == 0 and not rep.get("skipped"):
        summary["note"] = f"evaluate with: wgb kge eval {out_dir} GRAPH --max-triples 2000"
    click.echo(json.dumps(summary, indent=2))
