"""`wgb kge bias` and `wgb kge report`: run the registered bias measures on an embedding dir and
render the results."""
from __future__ import annotations

from pathlib import Path

import click

from wgb.cli_types import COUNT
from wgb.errors import OutputPath, hold_lock


def _options(pairs: tuple[str, ...]) -> dict:
    """``--option KEY=VALUE`` settings: JSON values, ``a,b`` lists and JSON lists as tuples."""
    from wgbcore.config import parse_overrides

    try:
        out = parse_overrides(pairs, option="--option", commas=True)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--option") from None
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


def _prepare(emb_dir, graph, no_emb, sensitive, a, b, target, names, preds):
    """Load and check everything (names, values, shapes) before any long work starts."""
    from kge.bias import MEASURES, BiasSpec, GraphView

    kg = _graph(graph, None if no_emb else emb_dir)
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
    model = None
    if not no_emb:
        if not emb_dir.exists():
            raise click.BadParameter(f"{emb_dir} does not exist", param_hint="EMB_DIR")
        from kge.embeddings import load_model

        model = load_model(emb_dir, kg)
        view.check_model(model)
    elif any(MEASURES[n]().needs_model for n in names if not (preds and n.startswith("keidar_") and n != "keidar_tlb")):
        raise click.UsageError("EMB_DIR '-' only works with measures that need no embeddings (data) or --preds")
    return view, specs, model


@click.command("bias")
@click.argument("emb_dir", type=click.Path(path_type=Path))
@click.argument("graph", required=False)
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
@click.option("--model-label", default="", help="Name of the embeddings in the report (default: model name).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--out", type=OutputPath(directory=False, path_type=Path), default=Path("bias.json"), show_default=True)
def bias_cmd(emb_dir, graph, measures, sensitive, a, b, target, options, preds, model_label, seed, out):
    """Run bias measures on the embeddings in EMB_DIR over GRAPH (default: the graph recorded
    in EMB_DIR, else FB13). EMB_DIR may be '-' for measures that need no embeddings (data)."""
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
    no_emb = str(emb_dir) == "-"
    hold_lock(out, "result file")
    try:
        view, specs, model = _prepare(emb_dir, graph, no_emb, sensitive, a, b, target, names, preds)
    except (ValueError, FileNotFoundError) as e:
        raise click.ClickException(str(e)) from e
    given = None
    if preds is not None and any("preds" in (MEASURES.options(n) or {}) for n in names):
        from kge.bias.keidar import read_preds_csv

        given = read_preds_csv(preds)
    jobs = []
    for n in names:  # every measure's settings and preconditions, before the first one runs
        fields = MEASURES.options(n) or {}
        kw = {k: v for k, v in cfg.items() if k in fields}
        if given is not None and "preds" in fields:
            kw["preds"] = given
        for s in specs:
            try:
                check_measure(n, view, model, s, **kw)
            except (ValueError, TypeError) as e:
                raise click.ClickException(f"{n} on {s.sensitive_relation}: {e}") from e
            jobs.append((n, s, kw))
    results = []
    for n, s, kw in tqdm(jobs, desc="bias measures", disable=None):
        try:
            results.append(run_measure(n, view, model, s, seed=seed, model_label=model_label, **kw))
        except ValueError as e:
            raise click.ClickException(f"{n} on {s.sensitive_relation}: {e}") from e
    save_results(results, out)
    click.echo(f"wrote {len(results)} result(s), {sum(len(r.rows) for r in results)} rows to {out}")

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
