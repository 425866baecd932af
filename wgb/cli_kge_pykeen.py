"""`wgb kge pykeen import|export`: trained models to and from PyKEEN (package `kge`, module
`kge.pykeen_io`; needs the optional package pykeen)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from wgb.errors import OutputPath, hold_lock


@click.group(name="pykeen")
def pykeen_group() -> None:
    """Move trained embeddings between wgb and PyKEEN (TransE, TransH, DistMult, ComplEx, RotatE)."""


def _names_of(emb_dir: Path) -> tuple[list[str], list[str]] | None:
    ent, rel = emb_dir / "entities.tsv", emb_dir / "relations.tsv"
    if not (ent.is_file() and rel.is_file()):
        return None
    return ([x for x in ent.read_text(encoding="utf-8").split("\n")[:-1]],
            [x for x in rel.read_text(encoding="utf-8").split("\n")[:-1]])


@pykeen_group.command(name="export")
@click.argument("emb_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=OutputPath(directory=True, path_type=Path))
@click.option("--graph", default=None, help="The graph the embeddings were trained on (any format of "
              "`wgb kge train`), to write PyKEEN's training_triples/ with its triples.")
def export_cmd(emb_dir: Path, out: Path, graph: str | None) -> None:
    """Write the embedding dir EMB_DIR as a PyKEEN model into OUT: trained_model.pkl (PyKEEN's own
    pickled form, for PyKEEN to load), state_dict.pt + pykeen_model.json (tensors only), and
    training_triples/ (id maps; the triples with --graph)."""
    from kge.embeddings import load_model
    from kge.pykeen_io import export_pykeen, max_score_difference, model_to_pykeen, require_pykeen

    try:
        require_pykeen()
    except ImportError as e:
        raise click.ClickException(str(e)) from None
    g = None
    if graph is not None:
        from kge.graph import load_graph

        g = load_graph(graph)
    model = load_model(emb_dir, g)
    names = None if g is not None else _names_of(emb_dir)
    export_pykeen(model, out, graph=g, names=names)
    diff = max_score_difference(model, model_to_pykeen(model))
    click.echo(json.dumps({"out": str(out), "model": model.name, "entities": model.num_entities,
                           "relations": model.num_relations, "max_score_difference": diff}, indent=2))


@pykeen_group.command(name="import")
@click.argument("pykeen_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=OutputPath(directory=True, path_type=Path))
@click.option("--normalize-normals", is_flag=True, help="TransH: normalise PyKEEN's hyperplane normals "
              "(PyKEEN 1.11 leaves them unnormalised; the imported scores then differ).")
@click.option("--overwrite", is_flag=True, help="Empty an OUT that holds files (e.g. another run) first.")
def import_cmd(pykeen_dir: Path, out: Path, normalize_normals: bool, overwrite: bool) -> None:
    """Read a PyKEEN model folder (a pipeline's save_to_directory, or `wgb kge pykeen export`'s)
    and write it as an embedding dir OUT that every `wgb kge` command reads (an OUT holding files
    is refused unless --overwrite)."""
    from kge.pykeen_io import import_pykeen

    hold_lock(out, "embedding folder")
    model, entities, _ = import_pykeen(pykeen_dir, out, normalize_normals=normalize_normals, overwrite=overwrite)
    click.echo(json.dumps({"out": str(out), "model": model.name, "entities": model.num_entities,
                           "relations": model.num_relations, "names": entities is not None}, indent=2))
    if entities is None:
        click.echo(f"note: {pykeen_dir} has no training_triples/ id maps; {out} holds no entity names",
                   err=True)


def register(group: click.Group) -> None:
    """Add this module's commands to group."""
    group.add_command(pykeen_group)
