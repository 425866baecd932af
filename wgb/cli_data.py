"""`wgb data ...`: the WikiGenderBias benchmark (package `wikigenderbias`)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from wgb import cli_data_build, cli_data_groups
from wgb.errors import OutputPath

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


@click.command("info")
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
def info(dataset: str | None) -> None:
    """Where the benchmark is, its splits and sizes, and how many mentions were located."""
    from wikigenderbias.release import check_folder, data_dir, expected_data
    from wikigenderbias.schema import CONFIGS

    folder = Path(dataset) if dataset else data_dir()
    try:
        check_folder(folder)
        for config in CONFIGS:   # the data files against the fingerprint recorded when they were written
            expected_data(folder, config)
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
    fp = report.get("fingerprint", {}).get("sha256")
    click.echo(f"  data fingerprint: sha256:{fp}" if fp else
               "  data fingerprint: none (older folder; add one with `wgb data refresh-card`)")


@click.command("stats")
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
@click.option("--out", "out_dir", type=OutputPath(directory=True), default="wgb-output/stats", show_default=True,
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


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(["opennre"]), default="opennre", show_default=True)
@click.option("--dataset", type=click.Path(file_okay=False), default=None, help=_DATASET_HELP)
@click.option("--out", "out_dir", type=OutputPath(directory=True), default="wgb-output/opennre", show_default=True)
@click.option("--unlocated", type=click.Choice(["start", "skip"]), default="start", show_default=True,
              help="Rows whose head or tail was not located: 'start' keeps them with the mention at token 0 "
                   "(relext's rule in training and evaluation); 'skip' drops them and reports the drop rates "
                   "per split and gender.")
@click.option("--overwrite", is_flag=True, help="Replace an existing, non-empty output folder.")
def export(fmt: str, dataset: str | None, out_dir: str, unlocated: str, overwrite: bool) -> None:
    """Export the benchmark for other extractors (OpenNRE JSON lines + rel2id.json + manifest.json)."""
    import warnings

    from wikigenderbias.opennre import export_opennre
    from wikigenderbias.release import data_dir

    ds = _load(dataset)
    folder = Path(dataset) if dataset else data_dir()
    report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").is_file() else {}
    source = {"dataset": dataset or "embedded release",
              "fingerprint": report.get("fingerprint", {}).get("sha256")}
    try:
        with warnings.catch_warnings():  # the manifest's warnings are printed below
            warnings.simplefilter("ignore")
            manifest = export_opennre(ds, out_dir, overwrite=overwrite, unlocated=unlocated, source=source)
    except FileExistsError as err:
        raise click.ClickException(str(err)) from err
    for split, m in manifest["splits"].items():
        by = ", ".join(f"{g} {b['skipped_unlocated']}/{b['rows']}" for g, b in m["by_gender"].items())
        click.echo(f"{split:12s} {m['sentences']:6d} sentences -> {m['file']} "
                   f"({m['unlocated_kept']} with an unlocated mention kept, {m['skipped_unlocated']} dropped: {by})")
    for w in manifest["warnings"]:
        click.echo(f"warning: drop rates differ between genders: {w}", err=True)
    click.echo(f"wrote {out_dir}")


@click.command("refresh-card")
@click.option("--dataset", type=click.Path(file_okay=False), required=True, help="Benchmark folder.")
def refresh_card_cmd(dataset: str) -> None:
    """Record the current data fingerprint of a benchmark folder in its README.md and report.json
    (for folders written by an older wgb, or whose data files were replaced). The data files are
    not changed; the `datasets` cache key follows the new fingerprint."""
    from wikigenderbias.card import refresh_card
    from wikigenderbias.release import check_folder

    try:
        folder = check_folder(dataset)
        fp = refresh_card(folder)
    except (FileNotFoundError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"{folder}: data fingerprint sha256:{fp['sha256']}")


@click.command("convert-release")
@click.argument("release", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=OutputPath(directory=True), required=True,
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


for _cmd in (info, stats, export, refresh_card_cmd, convert_release_cmd):
    data.add_command(_cmd)
cli_data_build.register(data)
cli_data_groups.register(data)
