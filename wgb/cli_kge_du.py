"""`wgb kge du-debias`: Du et al. (2022) debiasing of one embedding dir, followed by retraining.

Strategies: ``add`` (dummy entities that balance each occupation's gender counts), ``remove``
(IF-REMOVE: drop the k training triples whose removal the influence function predicts moves
B_gr(occupation) most towards 0), ``random-remove`` (k random triples, the paper's baseline) and
``to-target`` (remove in steps, retraining and re-estimating after each, the step calibrated by the
measured / predicted change, until B_gr is within ``--tol`` of ``--target-bias``: the one-shot removal
overshoots because the influence function overestimates the change; ``kge.bias.du.stepwise``).
The retraining uses the embedding dir's own training config (``--epochs`` overrides its length).
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click

from wgb.cli_types import FINITE, NONNEG_FLOAT, POS_FLOAT, SEED
from wgb.errors import OutputPath, hold_lock


@click.command("du-debias")
@click.argument("emb_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("graph", required=False)
@click.option("--strategy", type=click.Choice(["add", "remove", "random-remove", "to-target"]), default="remove",
              show_default=True)
@click.option("--occupation", "occupations", multiple=True, required=True,
              help="Occupation (a tail of the target relation), repeatable; remove strategies take one.")
@click.option("--k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Triples to remove (remove strategies).")
@click.option("--target-bias", "target_bias", type=FINITE, default=0.0, show_default=True,
              help="B_gr to stop at (to-target).")
@click.option("--tol", type=NONNEG_FLOAT, default=0.01, show_default=True,
              help="Stop when |B_gr - target| <= tol (to-target).")
@click.option("--max-retrains", type=click.IntRange(min=1), default=10, show_default=True,
              help="Retrainings at most (to-target).")
@click.option("--max-removed", type=click.IntRange(min=1), default=None, help="Triples removed at most (to-target).")
@click.option("--ratio", type=POS_FLOAT, default=1.0, show_default=True,
              help="Starting calibration, real / predicted change (to-target; 1 = trust the influence).")
@click.option("--c", type=FINITE, default=0.5, show_default=True, help="Balance target of dummy entities (add).")
@click.option("--sensitive", default="gender", show_default=True)
@click.option("--a", "a", default="male", show_default=True)
@click.option("--b", "b", default="female", show_default=True)
@click.option("--target", default="profession", show_default=True, help="Target relation (occupation).")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Retraining epochs [default: the embedding dir's training config].")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None)
@click.option("--out", type=OutputPath(directory=False, path_type=Path), default=Path("du_debias.json"), show_default=True)
def du_debias_cmd(emb_dir, graph, strategy, occupations, k, target_bias, tol, max_retrains, max_removed, ratio, c,
                  sensitive, a, b, target, epochs, seed, threads, out):
    """Debias the embeddings in EMB_DIR by Du et al.'s strategies and retrain; report B_gr of each
    occupation before and after (JSON)."""
    import torch

    from kge.bias import du
    from kge.embeddings import load_model, read_config
    from kge.train import TrainConfig
    from wgb.cli_kge_bias import _graph
    from wgbcore.atomicio import atomic_write_json
    from wgbcore.provenance import provenance

    if threads:
        torch.set_num_threads(threads)
    if strategy != "add" and len(occupations) != 1:
        raise click.BadParameter("the remove strategies take exactly one occupation", param_hint="--occupation")
    hold_lock(out, "result file")
    names = {"sensitive_relation": sensitive, "a": a, "b": b, "target_relation": target}
    try:
        kg = _graph(graph, emb_dir)
        model = load_model(emb_dir, kg)
        emb_cfg = read_config(emb_dir)
        # retrain as the embeddings were trained (dirs without a recorded config: trainer defaults)
        cfg_d = dict(emb_cfg.get("train_config") or {"model": emb_cfg["model"], "dim": emb_cfg["dim"]})
        cfg_d.update(seed=seed, evaluate_test=False, eval_every=0, patience=0, max_train_seconds=None)
        if epochs:
            cfg_d["epochs"] = epochs
        train_cfg = TrainConfig.from_dict(cfg_d)
        groups = du.build_groups(kg, **names)   # unknown relation / value -> clear error now
        train_fn = du.retrain_fn(train_cfg)
        if strategy == "add":
            res = du.debias_by_adding(kg, model, list(occupations), train_fn, c=c, groups=groups, **names)
        elif strategy == "to-target":
            # steps compare retrainings: start from the full graph retrained under the same config
            res = du.debias_to_target(kg, train_fn(kg), occupations[0], train_fn, target=target_bias, tol=tol,
                                      ratio=ratio, max_retrains=max_retrains, max_removed=max_removed,
                                      groups=groups, **names)
            items, values, _, _ = du.group_bias(model, groups)
            loaded = dict(zip(items.tolist(), values.tolist())).get(groups.names["entity_names"].index(res.item))
        else:
            res = du.debias_by_removing(kg, model, occupations[0], k, train_fn, groups=groups, seed=seed,
                                        random_baseline=strategy == "random-remove", **names)
    except (ValueError, KeyError, FileNotFoundError) as e:
        raise click.ClickException(str(e)) from e
    prov = provenance(seed=seed, config={"strategy": strategy, "k": k, "c": c, "target_bias": target_bias,
                                         "tol": tol, "max_retrains": max_retrains, "max_removed": max_removed,
                                         "ratio": ratio, **names})
    if strategy == "to-target":
        record = {"strategy": "to_target", **res.to_dict(), "B_gr_loaded_embeddings": loaded,
                  "emb_dir": str(emb_dir), "retrain_config": train_cfg.to_dict(), "provenance": prov}
        atomic_write_json(out, record)
        click.echo(f"{res.item}: B_gr {res.bias_before:+.4f} -> {res.bias_after:+.4f} (retrained; {res.removed} "
                   f"triples removed in {res.retrains} retrainings, stop: {res.stop}, calibration {res.ratio:.3g})")
        click.echo(f"wrote {out}")
        return
    record = {**asdict(res), "emb_dir": str(emb_dir), "retrain_config": train_cfg.to_dict(), "provenance": prov}
    atomic_write_json(out, record)
    for o in res.items:
        click.echo(f"{o}: B_gr {res.before[o]:+.4f} -> {res.after[o]:+.4f} ({res.changed.get(o)} triples "
                   f"{'added' if strategy == 'add' else 'removed'})")
    click.echo(f"wrote {out}")


def register(group: click.Group) -> None:
    group.add_command(du_debias_cmd)
