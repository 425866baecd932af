"""`wgb kge bias` and `wgb kge report`: run the registered bias measures on an embedding dir and
render the results."""
from __future__ import annotations

import math
from pathlib import Path

import click

from wgb.cli_types import COUNT, SEED
from wgb.errors import OutputPath, hold_lock


def _options(pairs: tuple[str, ...]) -> dict:
    """``--option KEY=VALUE`` settings: JSON values, ``a,b`` lists and JSON lists as tuples."""
    from wgbcore.config import parse_overrides

    try:
        out = parse_overrides(pairs, option="--option", commas=True)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--option") from None
    for k, v in out.items():   # as every float option: nan and inf refused (nan became a TypeError deep inside)
        if any(isinstance(x, float) and not math.isfinite(x) for x in (v if isinstance(v, list) else [v])):
            raise click.BadParameter(f"{k}={v!r}: not a finite number", param_hint="--option")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in out.items()}


def _graph(graph: str | None, emb_dir: Path | None):
    """GRAPH, else the graph the embeddings were trained on when that is FB13 (or recorded as a
    ``graph_path`` in config.json), else FB13 for embedding-free runs."""
    from kge.embeddings import read_config
    from kge.graph import load_graph

    if graph is None and emb_dir is not None and (emb_dir / "config.json").exists():
        cfg = read_config(emb_dir)  # malformed files: an error naming file and line
        if cfg.get("graph_path"):
            graph = cfg["graph_path"]
        elif cfg.get("graph_name") not in (None, "", "fb13"):
            raise click.UsageError(f"{emb_dir} was trained on graph {cfg['graph_name']!r}: pass it as GRAPH")
    return load_graph(graph)


def _split_args(args: tuple[str, ...]) -> tuple[list[str], str | None]:
    """(embedding sources, GRAPH): the last of two or more arguments is GRAPH when it names a graph
    (``fb13``, a file, a folder in a graph format), as in ``EMB_DIR GRAPH``."""
    from kge.embedding_set import is_graph

    if len(args) >= 2 and is_graph(args[-1]):
        return list(args[:-1]), args[-1]
    return list(args), None


def _embedding_set(sources: list[str], seed, model_label):
    """The embedding dirs of the command line with each one's label and seed (read from its
    config.json; ``--seed``/``--model-label`` only for a single dir), checked as a set."""
    from kge.embedding_set import expand, read_set

    dirs = expand(sources)
    if len(dirs) > 1 and (seed is not None or model_label is not None):
        raise click.UsageError(f"--seed and --model-label name one embedding dir; the {len(dirs)} dirs given are "
                               "read with each dir's own seed and model (a label per dir: an @FILE list)")
    runs = read_set(dirs, need_seed=len(dirs) > 1)
    return [(r.path, r.label if model_label is None else model_label, r.seed if seed is None else seed)
            for r in runs]


def _prepare(runs, graph, no_emb, sensitive, a, b, target, names, preds):
    """Load and check everything (names, values, shapes) before any long work starts; ``runs``
    the (dir, label, seed) of each embedding dir (none with EMB_DIR '-')."""
    from kge.bias import MEASURES, BiasSpec, GraphView

    kg = _graph(graph, None if no_emb else runs[0][0])
    view = GraphView.from_graph(kg)
    view.relation_id(target, "target relation")
    specs = []
    for s in sensitive:
        rel = view.relation_id(s, "sensitive relation")
        vals = [view.entity_names[v] for v in view.values(rel)]
        sa = a or (vals[0] if vals else None)
        sb = None if b == "rest" else (b or next((v for v in vals if v != sa), None))
        for v, role in ((sa, "a"), (sb, "b")):
            if v is not None and v not in vals:
                raise click.BadParameter(f"attribute value {role}='{v}' is not a tail of '{s}' in the graph",
                                         param_hint=f"--{role}")
        specs.append(BiasSpec(s, sa, sb, target))
    models = []
    if not no_emb:
        from kge.embeddings import load_model

        for path, _, _ in runs:
            model = load_model(path, kg)
            view.check_model(model)
            models.append(model)
    elif any(MEASURES[n]().needs_model for n in names if not (preds and n.startswith("keidar_") and n != "keidar_tlb")):
        raise click.UsageError("EMB_DIR '-' only works with measures that need no embeddings (data) or --preds")
    return view, specs, models or [None]


@click.command("bias")
@click.argument("args", nargs=-1, required=True, metavar="EMB_DIR... [GRAPH]")
@click.option("--measure", "measures", multiple=True, default=("fisher",), show_default=True,
              help="Registered measure name (repeatable) or 'all'.")
@click.option("--sensitive", "sensitive", multiple=True, default=("gender",), show_default=True,
              help="Sensitive relation (repeatable).")
@click.option("--a", "a", default=None, help="Attribute value a (default: most frequent value).")
@click.option("--b", "b", default=None,
              help="Attribute value b; 'rest' = mean of all other values (default: second most frequent).")
@click.option("--target", default="profession", show_default=True, help="Target relation.")
@click.option("--option", "options", multiple=True, help="Measure setting KEY=VALUE, e.g. alpha=0.01, ks=10,50.")
@click.option("--preds", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Authors'-format predictions CSV for keidar_dpd/keidar_ppd instead of our classifier.")
@click.option("--model-label", default=None,
              help="Name of the embeddings in the report (one EMB_DIR; default: its model name).")
@click.option("--seed", default=None, type=SEED,
              help="The result's seed (one EMB_DIR; default: the training seed in its config.json, else 0).")
@click.option("--top-k", type=click.IntRange(min=1), default=20, show_default=True,
              help="Several dirs: k of the claim 'the top-k items agree across models'.")
@click.option("--min-count", type=COUNT, default=5, show_default=True,
              help="Several dirs: items held by fewer persons of a and b are left out of the items' intervals.")
@click.option("--stability", "stability_out", type=OutputPath(directory=False, path_type=Path), default=None,
              help="Several dirs: where the intervals and claims go (default: OUT with .stability.json).")
@click.option("--out", type=OutputPath(directory=False, path_type=Path), default=Path("bias.json"), show_default=True)
def bias_cmd(args, measures, sensitive, a, b, target, options, preds, model_label, seed, top_k, min_count,
             stability_out, out):
    """Run bias measures on the embeddings in EMB_DIR over GRAPH (default: the graph recorded
    in EMB_DIR, else FB13). EMB_DIR may be '-' for measures that need no embeddings (data).

    Several EMB_DIRs (dirs, a quoted glob such as 'runs/*-seed*', or @FILE listing one dir per
    line, optionally followed by a label) are one set: each dir's model and training seed are read
    from its config.json, they must share a graph, and one model may not repeat a seed or differ
    in a setting other than the seed. Their results go to OUT, and each per-item measure's scores
    with intervals over the seeds and the claims "the top-k items agree across models" to
    --stability (`wgb kge report OUT` shows both)."""
    from tqdm import tqdm

    from kge.bias import MEASURES, check_measure, run_measure, save_results

    names = MEASURES.names() if "all" in measures else list(measures)
    for n in names:
        if n not in MEASURES:
            raise click.BadParameter(MEASURES.unknown_message(n, extra=" or 'all'"), param_hint="--measure")
    names = [MEASURES.canonical(n) for n in names]
    cfg = _options(options)
    known = {f for n in names for f in MEASURES.options(n) or ()}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise click.BadParameter(f"setting(s) {unknown} belong to none of the measures {names}",
                                 param_hint="--option")
    sources, graph = _split_args(args)
    no_emb = sources == ["-"]
    if "-" in sources and not no_emb:
        raise click.UsageError("EMB_DIR '-' (no embeddings) cannot be combined with embedding dirs")
    hold_lock(out, "result file")
    try:
        runs = [] if no_emb else _embedding_set(sources, seed, model_label)
        if len(runs) > 1:
            from kge.report import ITEM_MEASURES

            if not any(n in ITEM_MEASURES for n in names):
                raise click.UsageError(f"measure(s) {names} give no per-item scores; several embedding dirs are "
                                       f"compared by a per-item measure ({', '.join(sorted(ITEM_MEASURES))})")
            stability_out = stability_out or out.with_name(out.name.removesuffix(".json") + ".stability.json")
            if stability_out.resolve() == out.resolve():
                raise click.BadParameter(f"{stability_out} is also --out", param_hint="--stability")
            hold_lock(stability_out, "result file")
        view, specs, models = _prepare(runs, graph, no_emb, sensitive, a, b, target, names, preds)
    except (ValueError, FileNotFoundError) as e:
        raise click.ClickException(str(e)) from e
    runs = runs or [(None, model_label or "", seed or 0)]
    given = None
    if preds is not None and any("preds" in (MEASURES.options(n) or {}) for n in names):
        from kge.bias.keidar import read_preds_csv

        given = read_preds_csv(preds)
    jobs = []
    for (path, label, run_seed), model in zip(runs, models):  # every setting and precondition, before any run
        where = f"{path}: " if len(runs) > 1 else ""
        for n in names:
            fields = MEASURES.options(n) or {}
            kw = {k: v for k, v in cfg.items() if k in fields}
            if given is not None and "preds" in fields:
                kw["preds"] = given
            for s in specs:
                try:
                    check_measure(n, view, model, s, **kw)
                except (ValueError, TypeError) as e:
                    raise click.ClickException(f"{where}{n} on {s.sensitive_relation}: {e}") from e
                jobs.append((n, s, kw, model, label, run_seed, where))
    results = []
    for n, s, kw, model, label, run_seed, where in tqdm(jobs, desc="bias measures", disable=None):
        try:
            results.append(run_measure(n, view, model, s, seed=run_seed, model_label=label, **kw))
        except ValueError as e:
            raise click.ClickException(f"{where}{n} on {s.sensitive_relation}: {e}") from e
    save_results(results, out)
    click.echo(f"wrote {len(results)} result(s), {sum(len(r.rows) for r in results)} rows to {out}")
    if len(runs) > 1:
        _write_stability(results, stability_out, top_k, min_count)


def _write_stability(results, path: Path, k: int, min_count: int) -> None:
    """The per-item intervals over seeds and the stability claims of a set's results."""
    from kge.bias import stability
    from kge.report import ITEM_MEASURES
    from wgbcore.atomicio import atomic_write_json

    try:
        doc = stability.summarize([r for r in results if r.measure in ITEM_MEASURES], k=k, min_count=min_count)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    atomic_write_json(path, doc, indent=1)
    n_models = sum(len(g["models"]) for g in doc["groups"])
    click.echo(f"wrote the intervals over seeds of {n_models} model(s) x measure(s) and {len(doc['claims'])} "
               f"claim(s) to {path}")
    for c in doc["claims"]:
        lo, hi = c["ci"]
        click.echo(f"  {c['claim']}: {c['agreement']:.3f} [{lo:.3f}, {hi:.3f}] -> {c['verdict']}")
    if not doc["claims"]:
        click.echo(f"  no claim across models (it needs two models with 3+ seeds each and more than {k} items)")

@click.command("report")
@click.argument("bias_json", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=OutputPath(directory=True, path_type=Path), default=Path("report"), show_default=True)
@click.option("--top", type=COUNT, default=20, show_default=True, help="Rows per top-k table.")
@click.option("--min-count", type=COUNT, default=5, show_default=True,
              help="Keep items held by at least this many persons of A and B (Fisher et al. use 20).")
def report_cmd(bias_json, out, top, min_count):
    """Render one or more bias.json files as markdown + HTML tables and PNG plots."""
    from kge.bias.result import load_results
    from kge.report import render

    results = []
    for p in bias_json:
        try:
            results.extend(load_results(p))
        except ValueError as e:
            raise click.ClickException(str(e)) from e
    paths = render(results, out, top=top, min_count=min_count)
    click.echo(f"wrote {paths['markdown']} and {paths['html']}")


def register(group: click.Group) -> None:
    """Add `bias` and `report` to the `wgb kge` group."""
    group.add_command(bias_cmd)
    group.add_command(report_cmd)
