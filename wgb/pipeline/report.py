"""The report of a `wgb run`: ``report.md``, ``report.html`` (self-contained), ``report.json``
and the propagation chart."""
from __future__ import annotations

import base64
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wgb import __version__
from wgb.pipeline.config import GENDER_RELATION, TARGET_RELATION
from wgb.pipeline.coverage import bias_items, propagation_table
from wgbcore.atomicio import atomic_savefig, atomic_write_json, atomic_write_text, clean_json


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
    emb_measure = next((r.measure for r in bias["gold"] if r.measure != "data" and bias_items(r)), None)
    for ax, measure, what in ((axes[1], graph_measure, "graph (data) bias"), (axes[2], emb_measure, "embedding bias")):
        if measure is None:
            ax.set_visible(False)
            continue
        gold = next(bias_items(r) for r in bias["gold"] if r.measure == measure)
        for k, (gname, results) in enumerate(bias.items()):
            if gname == "gold":
                continue
            items = next((bias_items(r) for r in results if r.measure == measure), {})
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
    try:
        return atomic_savefig(path, fig, dpi=110)
    finally:
        plt.close(fig)


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
            items = sorted(bias_items(res).items(), key=lambda kv: -abs(kv[1]))[:5]
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
    atomic_write_text(folder / "report.md", text)
    atomic_write_json(folder / "report.json", clean_json({
        "provenance": provenance, "config": asdict(cfg), "settings": settings,
        "extraction": {v: ev.to_dict() for v, ev in evals.items()},
        "coverage": coverage, "propagation": prop, "fb13_links": link_reports, "timings": timings,
        "bias": {g: [asdict(r) for r in results] for g, results in bias.items()},
    }))
    img = base64.b64encode(chart.read_bytes()).decode("ascii")
    atomic_write_text(folder / "report.html", _markdown_to_html(text, img))
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
