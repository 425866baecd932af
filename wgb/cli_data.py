"""`wgb data ...`: the WikiGenderBias benchmark (package `wikigenderbias`)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from wgb import cli_data_build

_DATASET_HELP = "Benchmark folder (default: the embedded WikiGenderBias release)."


def _load(dataset: str | None, config: str = "sentences"):
    import wikigenderbias

    try:
        return wikigenderbias.load(config, path=dataset)
    except (FileNotFoundError, ValueError) as err:
        raise click.ClickException(str(err)) from err


@click.group()
def data() -> None:
    """Load, describe, export and build the WikiGenderBias benchmark."""


@data.command()
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
def info(dataset: str | None) -> None:
    """Where the benchmark is, its splits and sizes, and how many mentions were located."""
    from wikigenderbias.release import check_folder, data_dir

    folder = Path(dataset) if dataset else data_dir()
    try:
        check_folder(folder)
    except (FileNotFoundError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").is_file() else {}
    click.echo(f"benchmark: {folder}")
    from wikigenderbias.schema import SPLITS

    counts = report.get("counts", {})
    for split in (s for s in SPLITS if s in counts):
        c = counts[split]
        click.echo(f"  {split:12s} {c['entities']:5d} entities ({c['entities_by_gender']['female']} F / "
                   f"{c['entities_by_gender']['male']} M), {c['sentences']:6d} sentences")
    total = report.get("spans", {}).get("total")
    if total:
        click.echo(f"  mentions located: head {total['head_rate']:.1%}, tail {total['tail_rate']:.1%}, "
                   f"both {total['both_rate']:.1%} of {total['rows']} rows")


@data.command()
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="wgb-output/stats", show_default=True,
              help="Folder for stats.json, stats.md and stats.png.")
def stats(dataset: str | None, out_dir: str) -> None:
    """Counts per split x gender x relation, and spouse/hypernym mentions by gender (JSON + PNG)."""
    from wgbcore.atomicio import atomic_write_text
    from wikigenderbias.stats import compute_stats, plot_stats

    ds = _load(dataset)
    result = compute_stats(ds, source=dataset or "embedded release")
    out = Path(out_dir)
    atomic_write_text(out / "stats.json", result.to_json())
    atomic_write_text(out / "stats.md", result.to_markdown())
    plot_stats(result, out / "stats.png")
    fa = result.further_analysis["per_relation"]
    for rel in fa:
        f, m = fa[rel]["female"], fa[rel]["male"]
        click.echo(f"{rel:9s} sentences per article: female {f['sentences_per_article']['mean']:.2f}, "
                   f"male {m['sentences_per_article']['mean']:.2f} "
                   f"(share of article: {f['share_of_sentences']['mean']:.1%} vs {m['share_of_sentences']['mean']:.1%})")
    click.echo(f"wrote {out / 'stats.json'}, {out / 'stats.md'}, {out / 'stats.png'}")


@data.command()
@click.option("--format", "fmt", type=click.Choice(["opennre"]), default="opennre", show_default=True)
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="wgb-output/opennre", show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing, non-empty output folder.")
def export(fmt: str, dataset: str | None, out_dir: str, overwrite: bool) -> None:
    """Export the benchmark for other extractors (OpenNRE JSON lines + rel2id.json)."""
    from wikigenderbias.opennre import export_opennre

    ds = _load(dataset)
    try:
        manifest = export_opennre(ds, out_dir, overwrite=overwrite)
    except FileExistsError as err:
        raise click.ClickException(str(err)) from err
    for split, m in manifest["splits"].items():
        click.echo(f"{split:12s} {m['sentences']:6d} sentences -> {m['file']} "
                   f"({m['skipped_unlocated']} skipped: mention not located)")
    click.echo(f"wrote {out_dir}")


@data.command("convert-release")
@click.argument("release", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Benchmark folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace an existing folder.")
def convert_release_cmd(release: str, out_dir: str, overwrite: bool) -> None:
    """Convert the authors' Wikigender.json[.gz] into a canonical benchmark folder."""
    from wikigenderbias.release import convert_release

    try:
        folder = convert_release(release, out_dir, overwrite=overwrite)
    except (FileNotFoundError, FileExistsError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"wrote {folder}")


cli_data_build.register(data)
