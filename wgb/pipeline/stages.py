"""Running the job: for each seed, resumable stages, each writing its files under
``out/seed-<s>/`` and a marker in ``out/seed-<s>/stages/`` when done (see :mod:`wgb.pipeline` for
the list); then the report pooled over the seeds in ``out/report/``."""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from wgb import __version__
from wgb.pipeline.config import (GENDER_RELATION, TARGET_RELATION, TEST_SPLITS, PipelineConfig,  # noqa: F401
                                 inputs_fingerprint, seed_dir)
from wgb.pipeline.gold import gold_triples
from wgb.pipeline.linking import link_to_fb13
from wgb.pipeline.report import write_report
from wgbcore.atomicio import atomic_write_json, atomic_write_text


class Stages:
    """Markers of finished stages: a finished stage is skipped when the run is resumed.

    A marker records the sha256 of every file its stage wrote (``wgbcore.provenance``'s format,
    names relative to the folder; a file written again by a later stage belongs to that stage's
    marker). A finished stage whose files are missing or changed since (an edited triples file), or
    whose marker is damaged, runs again from scratch (the files it recorded are removed first: a
    kept ``DONE`` would make it resume into nothing), saying which file; a marker of an older wgb
    (``done`` alone) is trusted."""

    def __init__(self, out: Path, log: Callable[[str], None]):
        self.root = out
        self.dir = out / "stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.timings: dict[str, float] = {}
        if (self.dir / "timings.json").exists():
            self.timings = json.loads((self.dir / "timings.json").read_text())

    def _files(self) -> dict[Path, tuple[int, int]]:
        """(mtime, size) of every file under the folder but the stage markers, locks and temp files."""
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != "stages"]
            for f in filenames:
                if f.endswith((".wgb.lock", ".tmp")):
                    continue
                p = Path(dirpath) / f
                try:
                    st = p.stat()
                except OSError:
                    continue
                out[p] = (st.st_mtime_ns, st.st_size)
        return out

    def run(self, name: str, fn: Callable[[], Any]) -> None:
        from wgbcore.provenance import changed_outputs, record_outputs, recorded_outputs

        marker = self.dir / f"{name.replace('/', '_')}.done"
        if marker.exists():
            changed = changed_outputs(marker, root=self.root)
            if not changed:
                self.log(f"[skip] {name} (done)")
                return
            path, why = sorted(changed.items())[0]
            more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
            self.log(f"[redo] {name}: {path}{more} {why}; running the stage again")
            for old in recorded_outputs(marker, root=self.root):
                old.unlink(missing_ok=True)
            marker.unlink()
        self.log(f"[run ] {name}")
        before = self._files()
        t0 = time.perf_counter()
        fn()
        self.timings[name] = round(time.perf_counter() - t0, 2)
        atomic_write_json(self.dir / "timings.json", self.timings)
        written = sorted(p for p, st in self._files().items() if before.get(p) != st)
        self._disown(written, marker)
        record_outputs(written, record=marker, root=self.root, replace=True)   # the marker: last

    def _disown(self, written: list[Path], marker: Path) -> None:
        """Files written again now leave the records of the stages that wrote them before."""
        from wgbcore.provenance import drop_outputs

        for other in self.dir.glob("*.done"):
            if other != marker:
                drop_outputs(other, written, root=self.root)


@dataclass
class RunResult:
    out_dir: str
    config: dict
    settings: dict
    version: str
    seconds: float
    report_html: str
    seeds: list[int] = field(default_factory=list)


#: Written into a seed's ``stages/`` when all its stages are done (the run executor's marker).
SEED_DONE = "stages/SEED.done"


def run_pipeline(cfg: PipelineConfig, out_dir: str | os.PathLike, *, log: Callable[[str], None] = print,
                 progress: bool = True, executor=None) -> RunResult:
    """Run (or resume) every seed's stages into ``out_dir/seed-<s>/``, then the pooled report into
    ``out_dir/report/``; returns where the report is. A folder's seeds share every other setting;
    seeds may be added to it later (the report pools the seeds asked for).

    ``executor`` (a :class:`wgbcore.executor.ExecutorConfig`): the seeds run as tasks of the run
    executor (local processes or Dask), each holding its seed folder's lock; the numbers are the
    serial run's."""
    import wikigenderbias

    cfg.validate()
    s = cfg.settings()
    out = Path(out_dir)
    t_start = time.perf_counter()
    dataset = wikigenderbias.load(path=cfg.dataset)
    if cfg.crossfit:   # every fold of the plan can train and be judged, before any folder is written
        from relext.protocols.crossfit import FoldSpec, check_plan

        check_plan(dataset, FoldSpec(folds=cfg.folds, fold_seed=cfg.fold_seed))
    if cfg.groups:   # every person has the attributes of the cells, before any folder is written
        from wikigenderbias.groups import EraBins, attribute_table

        attribute_table(eras=EraBins(tuple(cfg.groups["era_edges"])), dataset=cfg.dataset)
    _record_study(out, cfg, s)
    _check_data(out, cfg, dataset)  # finished stages are reused only over the same rows
    variants = cfg.variants()
    seeds = cfg.all_seeds()
    link_reports: dict[Any, Any] = {}
    if executor is not None and executor.kind != "serial":
        link_reports = _seeds_on_executor(cfg, out, seeds, executor, progress)
    else:
        for seed in seeds:
            link_reports[seed] = _seed_stages(cfg, s, out, seed, dataset, log, progress)
    top = Stages(out, log)
    name = f"report/seeds-{'-'.join(map(str, seeds))}"
    groups_file = None
    if cfg.groups:  # its own stage, named by its settings and the seeds; the report names it too
        from wgb.pipeline import groups as cell_groups
        from wikigenderbias.schema import SPLITS

        gkey = cell_groups.key(cfg.groups, seeds)
        if cell_groups.stale(out, cfg.groups, seeds):  # a seed's stage ran again since: cells and report anew
            log(f"[redo] groups/{gkey}: the seeds' stages changed since it ran; running it again")
            for m in (f"groups_{gkey}", f"report_seeds-{'-'.join(map(str, seeds))}+groups-{gkey}"):
                (out / "stages" / f"{m}.done").unlink(missing_ok=True)
        top.run(f"groups/{gkey}", lambda: cell_groups.compute(out, cfg, s, seeds, dataset,
                                                             SPLITS if cfg.crossfit else TEST_SPLITS))
        groups_file = cell_groups.folder(out, cfg.groups, seeds) / "cells.json"
        name += f"+groups-{gkey}"

    inputs = inputs_fingerprint(out, seeds)
    record, marker = out / "report" / "inputs.json", out / "stages" / f"{name.replace('/', '_')}.done"
    if marker.exists() and record.is_file() and json.loads(record.read_text()).get("inputs_sha256") != inputs:
        log(f"[redo] {name}: the seeds' stages changed since it ran; running it again")
        marker.unlink()      # (a report written before the record existed is left as it is)

    def report() -> None:
        # one report folder for every seed selection: a report written for these seeds replaces the
        # one another selection (`--seed S`) left, so that selection's marker no longer holds
        for other in (out / "stages").glob("report_seeds-*.done"):
            if other.name != f"{name.replace('/', '_')}.done":
                other.unlink()
        _report(out, cfg, s, variants, seeds, dataset, link_reports, groups_file=groups_file)
        atomic_write_json(record, {"seeds": list(seeds), "inputs_sha256": inputs})

    top.run(name, report)
    seconds = time.perf_counter() - t_start
    return RunResult(str(out), asdict(cfg), s, __version__, round(seconds, 1), str(out / "report" / "report.html"),
                     seeds)


def _seed_stages(cfg: PipelineConfig, s: dict[str, Any], out: Path, seed: int, dataset, log, progress: bool):
    """Every stage of one seed in ``out/seed-<s>/``; returns its FB13 link reports."""
    scfg, sout = cfg.for_seed(seed), seed_dir(out, seed)
    variants = cfg.variants()
    log(f"== seed {seed} ({sout})")
    _record_config(sout, scfg, s)
    stages = Stages(sout, log)
    if cfg.crossfit:  # every person, each extracted by a fold model that never saw them
        from wgb.pipeline import crossfit

        crossfit.extractor_stages(stages, scfg, s, sout, dataset, variants, progress, log)
        crossfit.triple_stages(stages, scfg, sout, dataset, variants)
    else:
        _extractor_stages(stages, scfg, s, sout, dataset, variants, progress)
        _triple_stages(stages, scfg, sout, dataset, variants)
    reports = _graph_stages(stages, scfg, s, sout, ["gold", *variants], log, progress)
    atomic_write_text(sout / SEED_DONE, "done\n")
    return reports


def seed_task(record: dict[str, Any], out: str, seed: int) -> None:
    """One seed of a run as a task of the run executor (picklable: plain data in, files out)."""
    import wikigenderbias
    from wgbcore.lock import folder_lock

    cfg = PipelineConfig(**record)
    with folder_lock(seed_dir(out, seed), what="seed folder"):
        _seed_stages(cfg, cfg.settings(), Path(out), seed, wikigenderbias.load(path=cfg.dataset), print, False)


def _seeds_on_executor(cfg: PipelineConfig, out: Path, seeds: list[int], executor, progress: bool) -> dict:
    from dataclasses import replace

    from wgbcore.executor import Task, run_tasks

    record = asdict(replace(cfg, threads=cfg.threads or executor.threads_per_run))
    tasks = [Task(key=f"seed-{k}", folder=str(seed_dir(out, k)), fn=seed_task, args=(record, str(out), k),
                  marker=SEED_DONE, log=str(seed_dir(out, k) / "seed.log")) for k in seeds]
    outcomes = run_tasks(tasks, executor, progress=progress, desc="seeds")
    failed = {k: o for k, o in outcomes.items() if o.status != "done"}
    if failed:
        raise ValueError("; ".join(f"{k} failed: {o.error} (log: {o.log})" for k, o in failed.items()))
    reports: dict[int, dict[str, Any]] = {}
    for k in seeds:
        reports[k] = {p.name.removesuffix(".link.json"): json.loads(p.read_text())
                      for p in sorted((seed_dir(out, k) / "graphs").glob("*.link.json"))}
    return reports


def _record_study(out: Path, cfg: PipelineConfig, s: dict[str, Any]) -> None:
    """``out/config.json``: what every seed of the folder shares; another configuration is refused."""
    from wgbcore.provenance import provenance

    out.mkdir(parents=True, exist_ok=True)
    saved = out / "config.json"
    record = {"study": cfg.study_record(), "settings": s, "version": __version__}
    if saved.exists():
        prev = json.loads(saved.read_text())
        if prev.get("study") != record["study"] or prev.get("settings") != record["settings"]:
            raise ValueError(f"{out} holds a run with another configuration ({saved}); "
                             "use another --out or delete it")
    else:
        atomic_write_json(saved, {**record, "provenance": provenance(seed=cfg.all_seeds()[0])})


def _check_data(out: Path, cfg: PipelineConfig, dataset) -> None:
    """``out/data.json``: the content hash of every split the folder's stages ran on
    (:mod:`wikigenderbias.content`). Finished stages over other rows (the dataset at the same path
    replaced or relabelled) are refused, as are finished stages with no such record."""
    from wikigenderbias.content import dataset_sha256

    name = str(cfg.dataset) if cfg.dataset else "the embedded release"
    saved = out / "data.json"
    now = {"dataset": name, "splits": dataset_sha256(dataset, source=name)}
    if saved.exists():
        prev = json.loads(saved.read_text()).get("splits") or {}
        changed = sorted(k for k in set(prev) | set(now["splits"]) if prev.get(k) != now["splits"].get(k))
        if changed:
            raise ValueError(f"{out}: its stages ran on other data than {name} holds now (split(s) {changed} "
                             f"differ from {saved}); use another --out or delete {out}")
    elif any(out.glob("**/stages/*.done")):
        raise ValueError(f"{out}: finished stages but no record of the data they ran on ({saved} missing, an "
                         f"older wgb), so they cannot be checked against {name}; use another --out or delete {out}")
    else:
        atomic_write_json(saved, now)


def _record_config(out: Path, cfg: PipelineConfig, s: dict[str, Any]) -> None:
    """Write ``out/config.json``, or refuse a folder that holds a run of another configuration."""
    from wgbcore.provenance import provenance

    out.mkdir(parents=True, exist_ok=True)
    saved = out / "config.json"
    record = {"config": cfg.record(), "settings": s, "version": __version__}
    if saved.exists():
        prev = json.loads(saved.read_text())
        if prev.get("config") != record["config"] or prev.get("settings") != record["settings"]:
            raise ValueError(f"{out} holds a run with another configuration ({saved}); "
                             "use another --out or delete it")
    else:
        atomic_write_json(saved, {**record, "provenance": provenance(seed=cfg.seed)})


def _train_config(cfg: PipelineConfig, s: dict[str, Any], debias: str | None):
    from relext.training.train import ExtractorConfig

    return ExtractorConfig(
        encoder=cfg.encoder, selector=cfg.selector, seed=cfg.seed, epochs=s["re_epochs"], word_dim=s["word_dim"],
        hidden=s["hidden"], w2v_epochs=s["w2v_epochs"], dataset=cfg.dataset, threads=cfg.threads,
        dataset_transform=[debias] if debias else [], vectors_transform=[debias] if debias else [],
        patience=3,
    ).validate()


def _extractor_stages(stages: Stages, cfg: PipelineConfig, s: dict[str, Any], out: Path, dataset,
                      variants: list[str], progress: bool) -> None:
    """Stages 1-2: train the baseline and debiased extractors, and evaluate their fairness."""
    from relext.evaluation.evaluate import evaluate_run
    from relext.training.train import train_extractor

    debias_of = {"baseline": None, **{d: d for d in cfg.debias}}
    for v in variants:
        run_dir = out / "extractors" / v
        stages.run(f"train/{v}", lambda v=v, run_dir=run_dir: train_extractor(
            _train_config(cfg, s, debias_of[v]), run_dir, dataset=dataset, progress=progress))
        stages.run(f"eval/{v}", lambda run_dir=run_dir: evaluate_run(
            run_dir, n_resamples=s["n_resamples"], bootstrap_seed=cfg.seed, dataset=dataset))


def _triple_stages(stages: Stages, cfg: PipelineConfig, out: Path, dataset, variants: list[str]) -> None:
    """Stage 3: triples of the held-out articles, from the gold labels and from each extractor."""
    from relext.extract import extract_split, write_triples

    tdir = out / "triples"
    stages.run("triples/gold", lambda: write_triples(gold_triples(dataset), tdir / "gold.jsonl"))
    for v in variants:
        def extract(v=v):
            triples = []
            for split in TEST_SPLITS:
                triples += extract_split(out / "extractors" / v, split, min_score=cfg.min_score, dataset=dataset)
            write_triples(triples, tdir / f"{v}.jsonl")
        stages.run(f"triples/{v}", extract)


def _graph_stages(stages: Stages, cfg: PipelineConfig, s: dict[str, Any], out: Path, graphs: list[str],
                  log: Callable[[str], None], progress: bool) -> dict[str, Any]:
    """Stages 4-5: a graph from each triple file (optionally linked to FB13), its embeddings and
    their bias measures. Returns the FB13 link reports by graph."""
    from kge.bias import BiasSpec, run_measure, save_results
    from kge.graph import load_fb13, load_triples_jsonl
    from kge.train import EmbeddingConfig, train_embeddings

    tdir = out / "triples"
    spec = BiasSpec(sensitive_relation=GENDER_RELATION, a="male", b="female", target_relation=TARGET_RELATION)
    link_reports: dict[str, Any] = {}
    fb13 = load_fb13() if cfg.link_fb13 else None
    for gname in graphs:
        def build_graph(gname=gname):
            g = load_triples_jsonl(tdir / f"{gname}.jsonl", name=gname)
            if fb13 is not None:
                g, rep = link_to_fb13(g, fb13)
                link_reports[gname] = rep
                atomic_write_json(out / "graphs" / f"{gname}.link.json", rep)
            return g

        emb_dir = out / "embeddings" / gname

        def embed(emb_dir=emb_dir, build_graph=build_graph):
            g = build_graph()
            if cfg.kge_engine == "pbg":  # PyTorch-BigGraph, one partition: these graphs are small
                from kge.pbg import PBGConfig, train_pbg

                train_pbg(g, PBGConfig(model=cfg.kge_model, dim=s["kge_dim"], epochs=s["kge_epochs"], seed=cfg.seed),
                          emb_dir, log=log)
                return
            kcfg = EmbeddingConfig(model=cfg.kge_model, dim=s["kge_dim"], epochs=s["kge_epochs"],
                                  batch_size=s["kge_batch_size"], seed=cfg.seed, evaluate_test=False,
                                  num_threads=cfg.threads)
            train_embeddings(g, kcfg, emb_dir, progress=progress)

        stages.run(f"embed/{gname}", embed)

        def measure(gname=gname, emb_dir=emb_dir, build_graph=build_graph):
            from kge.embeddings import load_model

            g = build_graph()
            missing = [r for r in (GENDER_RELATION, TARGET_RELATION) if r not in g.relations]
            if missing:  # e.g. an extractor that extracted no hypernym triple at all
                log(f"       {gname}: no {' / '.join(missing)} triples; bias not measurable")
                save_results([], out / "bias" / f"{gname}.json")
                atomic_write_json(out / "bias" / f"{gname}.skipped.json", {"missing_relations": missing})
                return
            model = load_model(emb_dir, g)
            results = [run_measure(m, g, model, spec, seed=cfg.seed, model_label=f"{cfg.kge_model}:{gname}")
                       for m in cfg.measures]
            save_results(results, out / "bias" / f"{gname}.json")

        stages.run(f"bias/{gname}", measure)
    for gname in graphs:
        p = out / "graphs" / f"{gname}.link.json"
        if p.exists():
            link_reports[gname] = json.loads(p.read_text())
    return link_reports


def _report(out: Path, cfg: PipelineConfig, s: dict[str, Any], variants: list[str], seeds: list[int], dataset,
            link_reports: dict[int, dict[str, Any]], groups_file: Path | None = None) -> None:
    """The pooled report of the seeds' runs (with ``groups_file``: the per-cell part of
    :mod:`wgb.pipeline.groups`, its ``cells.json``)."""
    from kge.bias import load_results
    from wgb.pipeline.answer import analyse
    from wgb.pipeline.pairs import candidate_pairs
    from wgb.pipeline.propagation import Propagation, build_study, head_entities
    from wikigenderbias.schema import POSITIVE_RELATIONS

    dirs = {seed: seed_dir(out, seed) for seed in seeds}
    from wikigenderbias.schema import SPLITS

    splits = SPLITS if cfg.crossfit else TEST_SPLITS
    # the candidate pairs the extractors scored: the exposure the graph claims' nulls keep
    study = build_study(dirs, variants, head_entities(dataset, splits), candidates=candidate_pairs(dataset, splits))
    graphs = ["gold", *variants]
    bias = {seed: {g: load_results(d / "bias" / f"{g}.json") for g in graphs} for seed, d in dirs.items()}
    prop = Propagation(study, bias, measures=cfg.measures, n_resamples=s["n_resamples"], bootstrap_seed=0)
    analysis = analyse(prop, min_count=cfg.min_count)
    from wgb.pipeline.seed_stability import embedding_seeds

    analysis["embedding_seeds"] = embedding_seeds(bias, cfg.measures, min_count=cfg.min_count)
    if cfg.crossfit and len(set(study.counts.population.tolist())) > 1:
        # the two scales side by side: the same claims on the annotated test persons only
        from wgb.pipeline.scales import scales

        prop_test = Propagation(study.subset("test"), bias, measures=cfg.measures, n_resamples=s["n_resamples"],
                                bootstrap_seed=0)
        analysis["scales"] = scales(study, analysis, analyse(prop_test, min_count=cfg.min_count), cfg.min_count)
    analysis["protocol"] = cfg.resolved_protocol()
    from wgbstats.design import DESIGN_VERSION

    analysis["design_version"] = DESIGN_VERSION      # the inference rules its verdicts were made under
    extraction = {}
    for v in variants:
        point = prop.design.point(f"extraction:{v}", seeds)
        extraction[v] = {r: {"male": point[f"f1_male:{r}"], "female": point[f"f1_female:{r}"]}
                         for r in POSITIVE_RELATIONS}
    timings = {}
    for seed, d in dirs.items():
        t = d / "stages" / "timings.json"
        timings[seed] = json.loads(t.read_text()) if t.exists() else {}
    links = {f"seed {seed} / {g}": r for seed, reps in link_reports.items() for g, r in reps.items()}
    write_report(out / "report", cfg=cfg, settings=s, analysis=analysis, extraction=extraction,
                 link_reports=links, timings=timings,
                 groups=json.loads(groups_file.read_text()) if groups_file else None)
