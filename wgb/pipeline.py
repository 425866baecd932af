"""The end-to-end job behind `wgb run`: extraction bias -> knowledge graph -> embedding bias.

Stages (each writes files under ``out/`` and a marker in ``out/stages/`` when done, so an
interrupted run resumes where it stopped; the trainers themselves also resume mid-way):

1. ``extractors/<variant>``: train the baseline extractor and the debiased one(s) (relext).
2. ``extractors/<variant>/eval.json``: per-relation F1 by gender, F1 gap and equality of
   opportunity with bootstrap intervals.
3. ``triples/<graph>.jsonl``: knowledge-graph triples of the held-out articles (the test splits)
   from the gold labels and from each extractor (``wgb re extract``'s format).
4. ``embeddings/<graph>``: a KGE model trained on each graph (+ each person's gender, optionally
   FB13 as background knowledge).
5. ``bias/<graph>.json``: the kge bias measures on each graph (gender: male vs female; target:
   the hypernym relation, the benchmark's occupation-like relation).
6. ``report/``: ``report.html`` (self-contained), ``report.md``, ``report.json`` and charts.
"""
from __future__ import annotations

import base64
import json
import math
import os
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from wgb import __version__
from wikigenderbias.io import clean_json as _clean
from wikigenderbias.io import write_json_atomic, write_text_atomic

PROFILES: dict[str, dict[str, Any]] = {
    # seconds, for the test suite: tiny models on whatever (small) dataset is given
    "tiny": {"re_epochs": 1, "word_dim": 16, "hidden": 16, "w2v_epochs": 1, "kge_dim": 16, "kge_epochs": 5,
             "n_resamples": 50, "kge_batch_size": 256},
    # under 15 minutes on 2 cores
    "quick": {"re_epochs": 3, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 50, "kge_epochs": 200,
              "n_resamples": 1000, "kge_batch_size": 1024},
    # the documented full run
    "full": {"re_epochs": 15, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 100, "kge_epochs": 1000,
             "n_resamples": 1000, "kge_batch_size": 1024},
}
DEFAULT_MEASURES = ("data", "fisher", "bourli_projection")
TEST_SPLITS = ("male_test", "female_test")
GENDER_RELATION = "gender"
TARGET_RELATION = "hypernym"
FB13_RELATION_MAP = {"spouse": "spouse", "birthPlace": "place_of_birth", GENDER_RELATION: "gender"}


def parse_overrides(items) -> dict[str, Any]:
    """``["kge_epochs=20", ...]`` -> ``{"kge_epochs": 20}`` (values parsed as JSON when they can be)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


@dataclass
class PipelineConfig:
    profile: str = "quick"
    seed: int = 0
    dataset: str | None = None            # benchmark folder; None = the embedded release
    encoder: str = "pcnn"
    selector: str = "attention"
    debias: list[str] = field(default_factory=lambda: ["cda"])
    kge_model: str = "transe"
    measures: list[str] = field(default_factory=lambda: list(DEFAULT_MEASURES))
    link_fb13: bool = False
    min_score: float = 0.0
    threads: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)   # profile values to change

    def settings(self) -> dict[str, Any]:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; expected one of {sorted(PROFILES)}")
        unknown = set(self.overrides) - set(PROFILES[self.profile])
        if unknown:
            raise ValueError(f"unknown profile setting(s) {sorted(unknown)}; known: {sorted(PROFILES[self.profile])}")
        return {**PROFILES[self.profile], **self.overrides}

    def variants(self) -> list[str]:
        return ["baseline", *["+".join(d.split("+")) for d in self.debias]]

    def validate(self) -> "PipelineConfig":
        """Everything that can be checked before any work starts."""
        from kge.bias import MEASURES
        from kge.models import MODELS
        from relext.debias import get_debiaser
        from relext.train import TrainConfig

        self.settings()
        for d in self.debias:
            if d in ("", "none", "baseline"):
                raise ValueError("--debias names a debiasing method (e.g. cda); the baseline always runs")
            get_debiaser(d)
        for m in self.measures:
            if m not in MEASURES:
                raise ValueError(f"unknown bias measure {m!r}; expected some of {sorted(MEASURES)}")
        if self.kge_model not in MODELS:
            raise ValueError(f"unknown KGE model {self.kge_model!r}; expected one of {sorted(MODELS)}")
        TrainConfig(encoder=self.encoder, selector=self.selector).validate()
        if self.dataset is not None:
            from wikigenderbias.release import check_folder

            check_folder(self.dataset)
        return self


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def _write_json(path: Path, obj: Any) -> None:
    write_json_atomic(path, obj)


def _write_text(path: Path, text: str) -> None:
    write_text_atomic(path, text)


class Stages:
    """Markers of finished stages: a finished stage is skipped when the run is resumed."""

    def __init__(self, out: Path, log: Callable[[str], None]):
        self.dir = out / "stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.timings: dict[str, float] = {}
        if (self.dir / "timings.json").exists():
            self.timings = json.loads((self.dir / "timings.json").read_text())

    def run(self, name: str, fn: Callable[[], Any]) -> None:
        marker = self.dir / f"{name.replace('/', '_')}.done"
        if marker.exists():
            self.log(f"[skip] {name} (done)")
            return
        self.log(f"[run ] {name}")
        t0 = time.perf_counter()
        fn()
        self.timings[name] = round(time.perf_counter() - t0, 2)
        _write_json(self.dir / "timings.json", self.timings)
        marker.write_text("done\n")


# ------------------------------------------------------------------------------------------
# stages
# ------------------------------------------------------------------------------------------
def _train_config(cfg: PipelineConfig, s: dict[str, Any], debias: str | None):
    from relext.train import TrainConfig

    return TrainConfig(
        encoder=cfg.encoder, selector=cfg.selector, seed=cfg.seed, epochs=s["re_epochs"], word_dim=s["word_dim"],
        hidden=s["hidden"], w2v_epochs=s["w2v_epochs"], dataset=cfg.dataset, threads=cfg.threads,
        dataset_transform=[debias] if debias else [], vectors_transform=[debias] if debias else [],
        patience=3,
    ).validate()


def gold_triples(dataset, splits=TEST_SPLITS) -> list[dict[str, Any]]:
    """Triples of the gold labels (distant supervision / annotation) of ``splits``."""
    from wikigenderbias.schema import GENDERS, RELATIONS

    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for split in splits:
        ds = dataset[split].select_columns(["head", "tail", "relation", "gender", "sentence_id"])
        for row in ds:
            rel = RELATIONS[row["relation"]]
            if rel == "NA" or not row["tail"]:
                continue
            key = (row["head"], rel, row["tail"])
            t = seen.setdefault(key, {"head": row["head"], "relation": rel, "tail": row["tail"], "score": 1.0,
                                      "head_gender": GENDERS[row["gender"]],
                                      "source": {"split": split, "sentence_ids": []}})
            t["source"]["sentence_ids"].append(row["sentence_id"])
    return list(seen.values())


def _norm_name(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = s.split("(")[0].strip()
    return "_".join("".join(c if c.isalnum() else " " for c in s).split())


def link_to_fb13(graph, fb13) -> tuple[Any, dict[str, Any]]:
    """Merge ``graph`` into FB13 by name: people and places whose normalised name (or, for a
    place, first comma component) is an FB13 entity become that entity; spouse/birthPlace/gender
    are renamed to FB13's relations. Returns the union graph and a link report."""
    import numpy as np

    from kge.graph import KnowledgeGraph

    fb_index = {n: i for i, n in enumerate(fb13.entities)}
    fb_rel = {n: i for i, n in enumerate(fb13.relations)}
    ent_map: dict[int, int] = {}
    names = list(fb13.entities)
    linked = {"people": 0, "places": 0, "other": 0}
    heads = set(graph.train[:, 0].tolist())
    if "spouse" in graph.relations:  # spouses are people too
        heads |= set(graph.train[graph.train[:, 1] == graph.relations.index("spouse"), 2].tolist())
    place_rel = graph.relations.index("birthPlace") if "birthPlace" in graph.relations else -1
    places = set(graph.train[graph.train[:, 1] == place_rel, 2].tolist()) if place_rel >= 0 else set()
    for i, name in enumerate(graph.entities):
        key = _norm_name(name)
        cand = fb_index.get(key)
        if cand is None and i in places and "," in name:
            cand = fb_index.get(_norm_name(name.split(",")[0]))
        if cand is not None and (i in heads or i in places or name in ("male", "female")):
            ent_map[i] = cand
            linked["people" if i in heads else "places" if i in places else "other"] += 1
        else:
            ent_map[i] = len(names)
            names.append(f"wgb:{name}")
    rel_names = list(fb13.relations)
    rel_map = {}
    for j, r in enumerate(graph.relations):
        target = FB13_RELATION_MAP.get(r)
        if target in fb_rel:
            rel_map[j] = fb_rel[target]
        else:
            rel_map[j] = len(rel_names)
            rel_names.append(r)
    t = graph.train
    mapped = np.stack([np.vectorize(ent_map.get)(t[:, 0]), np.vectorize(rel_map.get)(t[:, 1]),
                       np.vectorize(ent_map.get)(t[:, 2])], axis=1).astype(np.int64)
    union = KnowledgeGraph(names, rel_names, np.concatenate([fb13.train, mapped]), fb13.valid, fb13.test,
                           name=f"{graph.name}+fb13")
    report = {"entities": len(graph.entities), "linked": linked, "linked_total": sum(linked.values()),
              "relation_map": {graph.relations[j]: rel_names[k] for j, k in rel_map.items()}}
    return union, report


def kg_coverage(gold: list[dict], extracted: list[dict]) -> dict[str, dict[str, Any]]:
    """Per relation and gender: share of gold triples the graph contains (recall) and share of
    the graph's triples that are gold (precision); gap = male − female."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    gold_set = {(t["head"], t["relation"], t["tail"]): t["head_gender"] for t in gold}
    ext_set = {(t["head"], t["relation"], t["tail"]): t.get("head_gender") for t in extracted}
    out: dict[str, dict[str, Any]] = {}
    for rel in POSITIVE_RELATIONS:
        row: dict[str, Any] = {}
        for g in ("male", "female"):
            gk = {k for k, v in gold_set.items() if k[1] == rel and v == g}
            ek = {k for k, v in ext_set.items() if k[1] == rel and v == g}
            hit = len(gk & ek)
            row[g] = {"gold": len(gk), "extracted": len(ek), "correct": hit,
                      "recall": hit / len(gk) if gk else float("nan"),
                      "precision": hit / len(ek) if ek else float("nan")}
        row["recall_gap"] = row["male"]["recall"] - row["female"]["recall"]
        row["precision_gap"] = row["male"]["precision"] - row["female"]["precision"]
        out[rel] = row
    return out


@dataclass
class RunResult:
    out_dir: str
    config: dict
    settings: dict
    version: str
    seconds: float
    report_html: str


def run_pipeline(cfg: PipelineConfig, out_dir: str | os.PathLike, *, log: Callable[[str], None] = print,
                 progress: bool = True) -> RunResult:
    """Run (or resume) the whole job into ``out_dir``; returns where the report is."""
    import wikigenderbias
    from kge.bias import BiasSpec, run_measure, save_results
    from kge.graph import load_fb13, load_triples_jsonl
    from kge.train import TrainConfig as KGETrainConfig
    from kge.train import train as kge_train
    from relext.evaluate import evaluate_run, load_eval
    from relext.extract import extract_split, write_triples
    from relext.train import train as re_train

    cfg.validate()
    s = cfg.settings()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "config.json"
    record = {"config": asdict(cfg), "settings": s, "version": __version__}
    if saved.exists():
        prev = json.loads(saved.read_text())
        if prev.get("config") != record["config"] or prev.get("settings") != record["settings"]:
            raise ValueError(f"{out} holds a run with another configuration ({saved}); "
                             "use another --out or delete it")
    else:
        _write_json(saved, record)
    t_start = time.perf_counter()
    stages = Stages(out, log)
    dataset = wikigenderbias.load(path=cfg.dataset)
    variants = cfg.variants()
    debias_of = {"baseline": None, **{d: d for d in cfg.debias}}

    # 1-2. extractors and their fairness evaluation
    for v in variants:
        run_dir = out / "extractors" / v
        stages.run(f"train/{v}", lambda v=v, run_dir=run_dir: re_train(
            _train_config(cfg, s, debias_of[v]), run_dir, dataset=dataset, progress=progress))
        stages.run(f"eval/{v}", lambda run_dir=run_dir: evaluate_run(
            run_dir, n_resamples=s["n_resamples"], bootstrap_seed=cfg.seed, dataset=dataset))

    # 3. triples of the held-out articles
    tdir = out / "triples"
    stages.run("triples/gold", lambda: write_triples(gold_triples(dataset), tdir / "gold.jsonl"))
    for v in variants:
        def extract(v=v):
            triples = []
            for split in TEST_SPLITS:
                triples += extract_split(out / "extractors" / v, split, min_score=cfg.min_score, dataset=dataset)
            write_triples(triples, tdir / f"{v}.jsonl")
        stages.run(f"triples/{v}", extract)
    graphs = ["gold", *variants]

    # 4-5. knowledge graphs, embeddings and bias measures
    spec = BiasSpec(sensitive_relation=GENDER_RELATION, a="male", b="female", target_relation=TARGET_RELATION)
    link_reports: dict[str, Any] = {}
    fb13 = load_fb13() if cfg.link_fb13 else None
    for gname in graphs:
        def build_graph(gname=gname):
            g = load_triples_jsonl(tdir / f"{gname}.jsonl", name=gname)
            if fb13 is not None:
                g, rep = link_to_fb13(g, fb13)
                link_reports[gname] = rep
                _write_json(out / "graphs" / f"{gname}.link.json", rep)
            return g

        emb_dir = out / "embeddings" / gname

        def embed(gname=gname, emb_dir=emb_dir):
            g = build_graph()
            kcfg = KGETrainConfig(model=cfg.kge_model, dim=s["kge_dim"], epochs=s["kge_epochs"],
                                  batch_size=s["kge_batch_size"], seed=cfg.seed, evaluate_test=False,
                                  num_threads=cfg.threads)
            kge_train(g, kcfg, emb_dir, progress=progress)

        stages.run(f"embed/{gname}", embed)

        def measure(gname=gname, emb_dir=emb_dir):
            from kge.embeddings import load_model

            g = build_graph()
            missing = [r for r in (GENDER_RELATION, TARGET_RELATION) if r not in g.relations]
            if missing:  # e.g. an extractor that extracted no hypernym triple at all
                log(f"       {gname}: no {' / '.join(missing)} triples; bias not measurable")
                save_results([], out / "bias" / f"{gname}.json")
                _write_json(out / "bias" / f"{gname}.skipped.json", {"missing_relations": missing})
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

    # 6. report
    def report():
        from kge.bias import load_results

        evals = {v: load_eval(out / "extractors" / v) for v in variants}
        gold = _read_jsonl(tdir / "gold.jsonl")
        coverage = {v: kg_coverage(gold, _read_jsonl(tdir / f"{v}.jsonl")) for v in variants}
        bias = {g: load_results(out / "bias" / f"{g}.json") for g in graphs}
        write_report(out / "report", cfg=cfg, settings=s, evals=evals, coverage=coverage, bias=bias,
                     link_reports=link_reports, timings=stages.timings)

    stages.run("report", report)
    seconds = time.perf_counter() - t_start
    return RunResult(str(out), asdict(cfg), s, __version__, round(seconds, 1), str(out / "report" / "report.html"))


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------
def _bias_items(result) -> dict[str, float]:
    return {r.item: r.score for r in result.rows if r.item and r.score is not None and math.isfinite(r.score)}


def propagation_table(evals, coverage, bias) -> dict[str, Any]:
    """Extraction gap vs graph coverage gap per relation, and embedding bias of each graph per
    occupation-like item compared with the gold graph's."""
    import numpy as np

    from wikigenderbias.schema import POSITIVE_RELATIONS

    rel_rows = []
    for v, ev in evals.items():
        gaps = {(g.relation, g.metric): g for g in ev.gaps["argmax"]}
        for rel in POSITIVE_RELATIONS:
            f1 = gaps.get((rel, "f1"))
            rel_rows.append({
                "extractor": v, "relation": rel,
                "f1_gap": f1.gap if f1 else None, "f1_gap_ci": [f1.ci_low, f1.ci_high] if f1 else None,
                "eo_gap": gaps[(rel, "recall")].gap if (rel, "recall") in gaps else None,
                "kg_recall_gap": coverage[v][rel]["recall_gap"],
                "kg_precision_gap": coverage[v][rel]["precision_gap"],
            })
    measure_rows = []
    gold = {r.measure: _bias_items(r) for r in bias["gold"]}
    for gname, results in bias.items():
        for r in results:
            items = _bias_items(r)
            ref = gold.get(r.measure, {})
            common = sorted(set(items) & set(ref))
            corr = None
            if len(common) >= 3:
                x = np.array([ref[k] for k in common])
                y = np.array([items[k] for k in common])
                if x.std() > 0 and y.std() > 0:
                    corr = float(np.corrcoef(x, y)[0, 1])
            vals = np.array(list(items.values())) if items else np.array([])
            measure_rows.append({
                "graph": gname, "measure": r.measure, "items": len(items),
                "mean_abs_score": float(np.mean(np.abs(vals))) if len(vals) else None,
                "mean_score": float(np.mean(vals)) if len(vals) else None,
                "items_shared_with_gold": len(common), "pearson_r_vs_gold": corr,
            })
    return {"relations": rel_rows, "measures": measure_rows}


def _plot_propagation(prop: dict, bias: dict, path: Path, *, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    ax = axes[0]
    markers = ["o", "s", "^", "D", "v", "P"]
    extractors = sorted({r["extractor"] for r in prop["relations"]}, key=lambda v: (v != "baseline", v))
    colors = {"spouse": "#c0504d", "hypernym": "#9bbb59", "birthDate": "#8064a2", "birthPlace": "#4bacc6"}
    for k, v in enumerate(extractors):
        for r in (r for r in prop["relations"] if r["extractor"] == v):
            if r["f1_gap"] is None or r["kg_recall_gap"] is None or not math.isfinite(r["kg_recall_gap"]):
                continue
            lo, hi = r["f1_gap_ci"]
            ax.errorbar(r["f1_gap"], r["kg_recall_gap"], xerr=[[r["f1_gap"] - lo], [hi - r["f1_gap"]]],
                        fmt=markers[k % len(markers)], color=colors.get(r["relation"], "k"), capsize=3,
                        label=f"{v}: {r['relation']}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("extraction F1 gap, male − female (95% CI)")
    ax.set_ylabel("knowledge-graph recall gap, male − female")
    ax.set_title("Does the extraction gap survive into the graph?")
    ax.legend(fontsize=7, ncol=2)
    graph_measure = "data" if any(r.measure == "data" for r in bias["gold"]) else None
    emb_measure = next((r.measure for r in bias["gold"] if r.measure != "data" and _bias_items(r)), None)
    for ax, measure, what in ((axes[1], graph_measure, "graph (data) bias"), (axes[2], emb_measure, "embedding bias")):
        if measure is None:
            ax.set_visible(False)
            continue
        gold = next(_bias_items(r) for r in bias["gold"] if r.measure == measure)
        for k, (gname, results) in enumerate(bias.items()):
            if gname == "gold":
                continue
            items = next((_bias_items(r) for r in results if r.measure == measure), {})
            common = sorted(set(items) & set(gold))
            ax.scatter([gold[c] for c in common], [items[c] for c in common], s=14, alpha=0.7,
                       marker=markers[k % len(markers)], label=f"{gname} ({len(common)} shared items)")
        lim = [min(gold.values(), default=0), max(gold.values(), default=1)]
        ax.plot(lim, lim, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(f"{measure} score on the gold graph")
        ax.set_ylabel(f"{measure} score on the extracted graph")
        ax.set_title(f"{what} per {TARGET_RELATION} value")
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def _fmt(x: Any, nd: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:+.{nd}f}" if nd and abs(x) < 10 else f"{x:.{nd}f}"
    return str(x)


def _plain(x: Any) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.3f}"


def write_report(folder: Path, *, cfg, settings, evals, coverage, bias, link_reports, timings) -> Path:
    from wikigenderbias.schema import POSITIVE_RELATIONS

    prop = propagation_table(evals, coverage, bias)
    provenance = (f"data: {cfg.dataset or 'embedded WikiGenderBias release'}; extractor: "
                  f"{cfg.encoder}+{cfg.selector}, {settings['re_epochs']} epochs; KGE: {cfg.kge_model} "
                  f"dim {settings['kge_dim']}, {settings['kge_epochs']} epochs; seed {cfg.seed}; "
                  f"profile {cfg.profile}; wgb {__version__}")
    chart = _plot_propagation(prop, bias, folder / "propagation.png", title=provenance)
    md = ["# wgb run: from extraction bias to knowledge-graph-embedding bias\n", f"_{provenance}_\n"]
    md.append("## 1. Extraction gaps (held-out articles; bootstrap over entities, 95% CI)\n")
    md.append("| extractor | relation | F1 male | F1 female | F1 gap | 95% CI | EO gap | flagged |")
    md.append("|---|---|---|---|---|---|---|---|")
    for v, ev in evals.items():
        gaps = {(g.relation, g.metric): g for g in ev.gaps["argmax"]}
        for rel in (*POSITIVE_RELATIONS, "micro"):
            f1 = gaps.get((rel, "f1"))
            eo = gaps.get((rel, "recall"))
            if f1 is None:
                continue
            md.append(f"| {v} | {rel} | {f1.male:.3f} | {f1.female:.3f} | {f1.gap:+.3f} | "
                      f"[{f1.ci_low:+.3f}, {f1.ci_high:+.3f}] | {_fmt(eo.gap if eo else None)} | "
                      f"{'yes' if f1.flagged else 'no'} |")
    md.append("\n## 2. The knowledge graphs built from them (vs the gold graph of the same articles)\n")
    md.append("| graph | relation | recall male | recall female | recall gap | precision male | precision female |")
    md.append("|---|---|---|---|---|---|---|")
    for v, cov in coverage.items():
        for rel in POSITIVE_RELATIONS:
            c = cov[rel]
            md.append(f"| {v} | {rel} | {c['male']['recall']:.3f} ({c['male']['correct']}/{c['male']['gold']}) | "
                      f"{c['female']['recall']:.3f} ({c['female']['correct']}/{c['female']['gold']}) | "
                      f"{_fmt(c['recall_gap'])} | {_plain(c['male']['precision'])} | {_plain(c['female']['precision'])} |")
    if link_reports:
        md.append("\nFB13 background knowledge: " + "; ".join(
            f"{g}: {r['linked_total']} of {r['entities']} entities linked ({r['linked']})" for g, r in link_reports.items()))
    md.append(f"\n## 3. Embedding bias ({cfg.kge_model}; gender male vs female; target relation `{TARGET_RELATION}`)\n")
    md.append("| graph | measure | items | mean score | mean abs score | Pearson r vs gold graph (shared items) |")
    md.append("|---|---|---|---|---|---|")
    for r in prop["measures"]:
        md.append(f"| {r['graph']} | {r['measure']} | {r['items']} | {_fmt(r['mean_score'], 4)} | "
                  f"{_fmt(r['mean_abs_score'], 4)} | {_fmt(r['pearson_r_vs_gold'])} ({r['items_shared_with_gold']}) |")
    for gname, results in bias.items():
        if not results:
            md.append(f"\n{gname}: not measurable (the graph has no `{TARGET_RELATION}` or `{GENDER_RELATION}` triples).")
    md.append("\n### Most biased items per graph (top 5 by |score|)\n")
    for gname, results in bias.items():
        for res in results:
            items = sorted(_bias_items(res).items(), key=lambda kv: -abs(kv[1]))[:5]
            if items:
                md.append(f"- **{gname} / {res.measure}**: " + ", ".join(f"{k} {v:+.4f}" for k, v in items))
    md.append("\n## 4. Bias propagation\n")
    md.append("![propagation](propagation.png)\n")
    md.append("Left: each point is one relation of one extractor; x = its F1 gap on the held-out articles, "
              "y = how much more of the male than of the female gold triples the extracted graph contains. "
              "Middle and right: the graph's data bias and the embedding bias of each hypernym value in the graphs "
              "built by the extractors, against the same measure on the gold graph of the same articles; points off "
              "the diagonal are bias added or removed by extraction.")
    md.append("\n## Timings (seconds)\n")
    md += [f"- {k}: {v}" for k, v in timings.items()]
    text = "\n".join(md) + "\n"
    _write_text(folder / "report.md", text)
    _write_json(folder / "report.json", _clean({
        "provenance": provenance, "config": asdict(cfg), "settings": settings,
        "extraction": {v: ev.to_dict() for v, ev in evals.items()},
        "coverage": coverage, "propagation": prop, "fb13_links": link_reports, "timings": timings,
        "bias": {g: [asdict(r) for r in results] for g, results in bias.items()},
    }))
    img = base64.b64encode(chart.read_bytes()).decode("ascii")
    _write_text(folder / "report.html", _markdown_to_html(text, img))
    return folder


def _markdown_to_html(md: str, img_b64: str) -> str:
    """A small, dependency-free renderer for the report's own markdown (tables, headings, lists)."""
    import html

    out = ["<!doctype html><html><head><meta charset='utf-8'><title>wgb report</title><style>",
           "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}",
           "table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #ccc;padding:3px 8px}",
           "th{background:#f0f0f0}img{max-width:100%}</style></head><body>"]
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in rows[0]) + "</tr>")
            for r in rows[2:]:
                out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
            out.append("</table>")
            continue
        if ln.startswith("#"):
            level = len(ln) - len(ln.lstrip("#"))
            out.append(f"<h{level}>{html.escape(ln[level:].strip())}</h{level}>")
        elif ln.startswith("!["):
            out.append(f"<img alt='bias propagation' src='data:image/png;base64,{img_b64}'>")
        elif ln.startswith("- "):
            out.append(f"<li>{html.escape(ln[2:]).replace('**', '')}</li>")
        elif ln.startswith("_") and ln.endswith("_"):
            out.append(f"<p><em>{html.escape(ln.strip('_'))}</em></p>")
        elif ln.strip():
            out.append(f"<p>{html.escape(ln)}</p>")
        i += 1
    out.append("</body></html>")
    return "\n".join(out) + "\n"
