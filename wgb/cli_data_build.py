"""Commands of `wgb data` that build a benchmark from dumps and round-trip human annotations:
``build``, ``annotate-export``, ``annotate-import`` (thin: parse options, call the library)."""
from __future__ import annotations

import warnings

import click

from wgb.cli_types import NONNEG_FLOAT, SEED
from wgb.errors import OutputPath, check_writable, hold_lock

_CSV = click.Choice(["csv", "jsonl"])


def _split_list(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _load_config_file(path: str) -> dict:
    """The build options of a YAML (.yaml/.yml) or JSON file (:func:`wgbcore.config.read_config_file`)."""
    from wgbcore.config import read_config_file

    try:
        return read_config_file(path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("build")
@click.option("--dbpedia", "dbpedia", multiple=True, type=click.Path(exists=True),
              help="DBpedia N-Triples/Turtle file or folder (plain, .bz2, .gz); repeat for several.")
@click.option("--wikipedia", "wikipedia", multiple=True, type=click.Path(exists=True),
              help="Wikipedia pages-articles XML (.xml/.bz2, one file or the part files) or "
                   "WikiExtractor output; file or folder; repeat for several.")
@click.option("--out", "out", type=OutputPath(directory=True), help="Benchmark folder to write.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="YAML (.yaml/.yml) or JSON file with BuildConfig fields; command-line options override it.")
@click.option("--workers", type=int, default=None, help="Processes over dump parts (0 = one per CPU). [default: 1]")
@click.option("--executor", type=click.Choice(["processes", "dask"]), default=None,
              help="Run parts in local processes or on a Dask cluster. [default: processes]")
@click.option("--dask-address", default=None, help="Dask scheduler address (default: a local cluster).")
@click.option("--require", default=None,
              help="Facts a person must have (comma-separated). [default: spouse,hypernym,birthDate,birthPlace]")
@click.option("--relations", default=None, help="Positive relations to extract (comma-separated).")
@click.option("--na-facts", default=None, help="Facts whose tails give NA examples. [default: parent,deathDate,almaMater]")
@click.option("--pronouns/--no-pronouns", default=None, help="Count he/she pronouns as mentions of the person.")
@click.option("--require-head/--no-require-head", default=None,
              help="--require-head: a sentence must name the person too (stricter than the paper); "
                   "--no-require-head takes every sentence of the article that mentions the tail (the paper's "
                   "rule). [default: no, the paper's rule]")
@click.option("--year-mentions/--no-year-mentions", default=None,
              help="Count the year alone as a mention of a date. [default: no]")
@click.option("--train", type=NONNEG_FLOAT, default=None, help="Train share (fraction, or head count if >= 1). [default: 0.8]")
@click.option("--validation", type=NONNEG_FLOAT, default=None, help="Validation share. [default: 0.1]")
@click.option("--test", type=NONNEG_FLOAT, default=None, help="Test share, divided into male_test/female_test. [default: 0.1]")
@click.option("--balance-test/--no-balance-test", default=None, help="Equal female and male test heads. [default: yes]")
@click.option("--seed", type=SEED, default=None, help="Split seed. [default: 0]")
@click.option("--wikidata-genders", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Wikidata P21 file: one person a line, title (or DBpedia IRI) TAB value (QID or label); its values "
                   "replace DBpedia's (wikigenderbias.genders).")
@click.option("--overwrite", is_flag=True, default=False, help="Replace an existing --out folder.")
@click.option("--no-resume", is_flag=True, default=False, help="Ignore parts finished by an interrupted run.")
@click.option("--quiet", is_flag=True, default=False, help="No progress bars.")
def build_cmd(dbpedia, wikipedia, out, config_file, workers, executor, dask_address, require, relations,
              na_facts, pronouns, require_head, year_mentions, train, validation, test, balance_test, seed, overwrite,
              no_resume, quiet, wikidata_genders=None) -> None:
    """Build WikiGenderBias from DBpedia + Wikipedia dumps by distant supervision."""
    from wikigenderbias.build import BuildConfig, build
    from wikigenderbias.dbpedia import DumpError
    from wikigenderbias.distant import DistantConfig
    from wikigenderbias.schema import MATCH_KINDS
    from wikigenderbias.split import SplitConfig

    cfg = _load_config_file(config_file) if config_file else {}
    if dbpedia:
        cfg["dbpedia"] = list(dbpedia)
    if wikipedia:
        cfg["wikipedia"] = list(wikipedia)
    if out:
        cfg["out"] = out
    for key, val in (("workers", workers), ("executor", executor), ("dask_address", dask_address),
                     ("require", _split_list(require)), ("wikidata_genders", wikidata_genders)):
        if val is not None:
            cfg[key] = val
    if overwrite:
        cfg["overwrite"] = True
    for key in ("dbpedia", "wikipedia", "out"):
        if not cfg.get(key):
            raise click.UsageError(f"--{key} is required (on the command line or in --config)")
    problem = check_writable(str(cfg["out"]), directory=True)
    if problem:  # also when --out comes from the config file: before the dumps are read
        raise click.BadParameter(problem, param_hint="--out")
    hold_lock(cfg["out"], "dataset folder")  # one build per folder (and its .parts cache)
    distant = dict(cfg.get("distant", {}))
    for key, val in (("relations", _split_list(relations)), ("na_facts", _split_list(na_facts)),
                     ("pronouns", pronouns), ("require_head", require_head)):
        if val is not None:
            distant[key] = val
    if distant.get("pronouns") and not distant.get("require_head", False):
        click.echo("warning: --pronouns changes nothing without --require-head (the paper's rule, the default, "
                   "takes every sentence that mentions the tail)", err=True)
    if year_mentions is not None:
        distant["tail_kinds"] = tuple(k for k in MATCH_KINDS if k != "none" and (year_mentions or k != "year"))
    split = dict(cfg.get("split", {}))
    for key, val in (("train", train), ("validation", validation), ("test", test),
                     ("balance_test", balance_test), ("seed", seed)):
        if val is not None:
            split[key] = val
    cfg["progress"] = False if quiet else None
    cfg["resume"] = not no_resume
    try:
        cfg["distant"] = DistantConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in distant.items()})
        cfg["split"] = SplitConfig(**split)
        config = BuildConfig.from_dict(cfg)
        with warnings.catch_warnings():  # a build's warnings (e.g. one file, several workers), when they occur
            warnings.showwarning = lambda message, *a, **k: click.echo(f"warning: {message}", err=True)
            result = build(config)
    except (DumpError, ValueError, FileExistsError, RuntimeError, TypeError) as exc:
        raise click.ClickException(str(exc)) from None
    rep = result.report
    click.echo(f"wrote {result.folder}")
    click.echo(f"persons: {rep['persons']['indexed']} indexed, {rep['persons']['with_article']} with an article, "
               f"{rep['persons']['with_examples']} with examples")
    gen = rep.get("genders") or {}
    if gen:
        click.echo("genders (every value kept): " + ", ".join(f"{k} {v}" for k, v in gen["indexed"].items() if v)
                   + f" indexed; {gen['outside_binary_splits']} with examples outside the binary splits"
                   + (f" ({gen['outside_binary_splits_file']})" if gen["outside_binary_splits"] else ""))
    for split_name, c in rep.get("counts", {}).items():
        g = c.get("entities_by_gender", {})
        rel = c.get("sentences_by_relation", {})
        click.echo(f"  {split_name}: {c.get('entities')} entities ({', '.join(f'{k} {v}' for k, v in g.items())}), "
                   f"{c.get('sentences')} sentences ({', '.join(f'{k} {v}' for k, v in rel.items())})")
    skipped = {**{f"dbpedia.{k}": v["count"] for k, v in rep["dbpedia"]["skipped"].items()},
               **{f"wikipedia.{k}": v["count"] for k, v in rep["wikipedia"]["skipped"].items()}}
    if skipped:
        click.echo("skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items()))
                   + f" (details in {result.folder}/report.json)")
    t = rep["timings"]
    rate = (f"{t['person_articles_per_s']} person articles/s" if t.get("person_articles_per_s") is not None
            else "every part from an earlier run")
    click.echo(f"time: DBpedia {t['dbpedia_s']} s, Wikipedia {t['wikipedia_s']} s ({rate}), writing "
               f"{t.get('write_s')} s, total {t['total_s']} s" + (" (resumed: rates count this run's parts only)"
                                                                  if t.get("resumed") else ""))


@click.command("annotate-export")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", type=OutputPath(directory=False), required=True,
              help="Annotation task file (.csv or .jsonl) to write.")
@click.option("--format", "fmt", type=_CSV, default=None, help="Default: from the --out suffix.")
@click.option("--splits", default="male_test,female_test", show_default=True)
def annotate_export_cmd(folder, out, fmt, splits) -> None:
    """Write each test sentence with its highlighted pair and the question for annotators."""
    from wikigenderbias.annotate import export_tasks

    try:
        n = export_tasks(folder, out, fmt=fmt, splits=_split_list(splits))
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {n} annotation items to {out}")


@click.command("annotate-import")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.argument("answers", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out", type=OutputPath(directory=True), default=None,
              help="Benchmark folder to write (default: replace FOLDER, atomically).")
@click.option("--raters", type=int, default=3, show_default=True, help="Answers expected per sentence.")
@click.option("--overwrite", is_flag=True, default=False, help="Replace an existing --out folder.")
@click.option("--quiet", is_flag=True, default=False)
def annotate_import_cmd(folder, answers, out, raters, overwrite, quiet) -> None:
    """Relabel majority-"no" test sentences as NA; report Fleiss' kappa and pairwise agreement."""
    from wikigenderbias.annotate import import_answers

    hold_lock(out or folder, "dataset folder")
    try:
        res = import_answers(folder, list(answers), out=out, raters=raters, overwrite=overwrite,
                             progress=not quiet)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        raise click.ClickException(str(exc)) from None
    a = res.to_dict()
    click.echo(f"wrote {res.folder}")
    click.echo(f"items annotated: {a['items']} ({a['relabelled_na']} relabelled NA, {a['kept']} kept); "
               f"Fleiss' kappa {a['fleiss_kappa']:.3f}, pairwise agreement {a['pairwise_agreement']:.1%}")
    for split, s in a["per_split"].items():
        click.echo(f"  {split}: {s['items']} items, kappa {s['fleiss_kappa']:.3f}, "
                   f"agreement {s['pairwise_agreement']:.1%}, relabelled NA {s['relabelled_na']}")
    if a["skipped"]:
        click.echo("skipped: " + ", ".join(f"{k} {v['count']}" for k, v in a["skipped"].items()))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(build_cmd)
    group.add_command(annotate_export_cmd)
    group.add_command(annotate_import_cmd)
