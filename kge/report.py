"""Render bias results (``kge.bias.result``) as markdown + HTML tables and PNG plots.

``write_report(results, out_dir)`` writes ``report.md``, ``report.html``, ``plots/*.png`` and a
``DONE`` marker last; every file goes through a temp file + rename.
"""
from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Iterable

from wgbcore.atomicio import atomic_savefig, atomic_write_text

from kge.bias.keidar import keidar_table
from kge.bias.result import BiasResult, BiasRow

ITEM_MEASURES = {"data", "fisher", "bourli_projection", "keidar_tlb", "du_group", "du_individual",
                 "du_individual_vanilla"}


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v)


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")[:80]


def _title(r: BiasResult) -> str:
    s = r.spec
    vs = f"{s.a} vs {s.b_label()}" if s.a else "all values"
    return f"{r.measure} · {r.model} · {s.sensitive_relation}: {vs} → {s.target_relation}"


def _doc(title: str):
    """The report as blocks (:class:`wgbcore.render.Document`), numbers formatted by :func:`_fmt`."""
    from wgbcore.render import Document

    return Document(title, fmt=_fmt)


def _save_fig(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    try:  # 9 inches at 100 dpi: about the page's text width
        atomic_savefig(path, fig, dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bar_top(r: BiasResult, k: int, min_count: int, path: Path) -> bool:
    if r.signed():
        rows_a = [x for x in r.top(k, min_count=min_count, towards="a") if x.item != "*"]
        rows_b = [x for x in r.top(k, min_count=min_count, towards="b") if x.item != "*"]
        rows = rows_a + list(reversed(rows_b))
    else:
        rows = [x for x in r.top(k, min_count=min_count) if x.item != "*"]
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.4))
    ys = range(len(rows))
    ax.barh(list(ys), [x.score for x in rows], color=["tab:blue" if x.score > 0 else "tab:orange" for x in rows])
    ax.set_yticks(list(ys))
    ax.set_yticklabels([f"{x.item} ({(x.count_a or 0) + (x.count_b or 0)})" for x in rows], fontsize=9)
    ax.invert_yaxis()
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel(f"score (+ = towards {r.spec.a}, − = towards {r.spec.b_label()}); in brackets: holders"
                  if r.signed() else "score; in brackets: holders")
    ax.set_title(f"{_title(r)} · items held by at least {min_count}", fontsize=10)
    _save_fig(fig, path)
    return True


def _section_items(doc, r: BiasResult, k: int, min_count: int, plots: Path, idx: int) -> None:
    rows = [x for x in r.rows if x.item != "*"]
    agg = [x for x in r.rows if x.item == "*"]
    if agg:
        doc.para(f"Aggregate score: {_fmt(agg[0].score)}")
    header = ["item", "score", f"C_{r.spec.a}", f"C_{r.spec.b_label()}"]
    extra_keys = [k_ for k_ in ("orientation", "data_phi", "label", "data_label") if rows and k_ in rows[0].extra]
    header += extra_keys

    def line(x: BiasRow):
        return [x.item, x.score, x.count_a, x.count_b] + [x.extra.get(k_) for k_ in extra_keys]

    if not r.signed():
        doc.heading(f"Top {k} by score (the scores of this measure are not signed)", 4)
        doc.table(header, [line(x) for x in r.top(k, min_count=min_count) if x.item != "*"])
    for side, label in (("a", r.spec.a), ("b", r.spec.b_label())):
        if not r.signed():
            break
        picked = [x for x in r.top(k, min_count=min_count, towards=side) if x.item != "*"]
        doc.heading(f"Top {k} towards {label} (score {'>' if side == 'a' else '<'} 0)", 4)
        if picked:
            doc.table(header, [line(x) for x in picked])
            unheld = [x.item for x in picked if not (x.count_a if side == "a" else x.count_b)]
            if unheld:  # an embedding measure scores every item, held or not: say so beside the list
                doc.para(f"{len(unheld)} of these {len(picked)} items are held by no {label} person "
                         f"({', '.join(map(str, unheld[:5]))}{', ...' if len(unheld) > 5 else ''}): `{r.measure}` "
                         "scores an item from the embeddings (its position relative to each group's persons), "
                         "not from who holds it.")
        else:
            doc.para(f"No item with at least {min_count} holders leans towards {label}.")
    name = f"{idx:02d}_{_slug(r.measure + '_' + r.model + '_' + r.spec.sensitive_relation)}.png"
    if _bar_top(r, min(k, 15), min_count, plots / name):
        doc.image(f"plots/{name}", _title(r))


def _section_data_curve(doc, r: BiasResult, plots: Path, idx: int) -> None:
    curve = r.summary.get("neutral_curve")
    s = r.summary
    doc.para(f"Persons: {s.get('persons_a')} {r.spec.a} / {s.get('persons_b')} {r.spec.b_label()}; items "
             f"{s.get('items_a')} {r.spec.a}-biased, {s.get('items_b')} {r.spec.b_label()}-biased, "
             f"{s.get('items_neutral')} neutral at t = {_fmt(s.get('t'))} ({s.get('definition')}).")
    if not curve:
        return
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.semilogx(curve["t"], curve["neutral"], marker=".")
    ax.axvline(s["t"], color="r", ls="--", label=f"t = {s['t']:.3g}")
    ax.set_xlabel("neutral band t")
    ax.set_ylabel("neutral items")
    ax.legend()
    ax.set_title(_title(r), fontsize=10)
    name = f"{idx:02d}_neutral_{_slug(r.spec.sensitive_relation)}.png"
    _save_fig(fig, plots / name)
    doc.image(f"plots/{name}", "neutral-count curve")


def _section_generic(doc, r: BiasResult, plots: Path, idx: int) -> None:
    rows = r.rows
    keys: list[str] = []
    for x in rows:
        for k_ in x.extra:
            if k_ not in keys and not isinstance(x.extra[k_], (list, dict)):
                keys.append(k_)
    keys = keys[:16]
    doc.table(["item", "score", f"C_{r.spec.a}", f"C_{r.spec.b_label()}"] + keys,
              [[x.item, x.score, x.count_a, x.count_b] + [x.extra.get(k_) for k_ in keys] for x in rows[:60]])
    plt = _plt()
    name = f"{idx:02d}_{_slug(r.measure + '_' + r.model + '_' + r.spec.sensitive_relation)}.png"
    if r.measure == "bourli_debias" and rows:
        fig, ax = plt.subplots(figsize=(5, 3))
        lams = [x.extra.get("lambda") for x in rows]
        ax.plot(lams, [x.score for x in rows], marker="o", label=f"Hits@{r.summary.get('hits_k')}")
        for key in ("projection_a", "projection_b", "projection_neutral"):
            ys = [x.extra.get(key) for x in rows]
            if all(y is not None for y in ys):
                ax.plot(lams, ys, marker=".", ls="--", label=key)
        ax.set_xlabel("lambda")
        ax.legend(fontsize=7)
        ax.set_title(_title(r), fontsize=8)
        _save_fig(fig, plots / name)
        doc.image(f"plots/{name}", "debias")
    elif r.measure == "bourli_clustering" and rows:
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.bar([x.item for x in rows], [x.score for x in rows],
               color=["tab:blue" if x.score > 0 else "tab:orange" for x in rows])
        ax.set_ylabel(f"share of {r.spec.a} - overall share")
        ax.tick_params(axis="x", rotation=90, labelsize=6)
        ax.set_title(_title(r), fontsize=8)
        _save_fig(fig, plots / name)
        doc.image(f"plots/{name}", "clusters")
    elif r.measure == "bourli_topk" and rows:
        ks = sorted({x.extra.get("K") for x in rows})
        k0 = ks[0]
        sel = sorted([x for x in rows if x.extra.get("K") == k0], key=lambda x: -abs(x.extra.get("data_phi") or 0))[:12]
        fig, ax = plt.subplots(figsize=(7, 3))
        xs = range(len(sel))
        ax.bar([i - 0.2 for i in xs], [x.extra["predicted_a"] for x in sel], width=0.4, label=f"predicted {r.spec.a}")
        ax.bar([i + 0.2 for i in xs], [x.extra["expected_a"] for x in sel], width=0.4, label=f"expected {r.spec.a}")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([x.item for x in sel], rotation=90, fontsize=6)
        ax.set_ylabel(f"{r.spec.a} persons in top-{k0}")
        ax.legend(fontsize=7)
        ax.set_title(_title(r), fontsize=8)
        _save_fig(fig, plots / name)
        doc.image(f"plots/{name}", "top-K")


def _summary_table(doc, r: BiasResult) -> None:
    flat = [[k, v] for k, v in r.summary.items() if not isinstance(v, (dict, list))]
    nested = {k: v for k, v in r.summary.items() if isinstance(v, dict) and k in ("amplification_pct", "hits_cost",
                                                                                  "classifier")}
    for k, v in nested.items():
        for k2, v2 in v.items():
            flat.append([f"{k}.{k2}", v2 if not isinstance(v2, (dict, list)) else str(v2)])
    if flat:
        doc.table(["summary", "value"], flat)


#: Items held by fewer persons than this (C_a + C_b) are left out of top lists and bar plots.
MIN_COUNT = 5


def _ci(ci) -> str:
    return "" if ci is None or any(v is None or math.isnan(v) for v in ci) else f"[{ci[0]:.4g}, {ci[1]:.4g}]"


def _section_seeds(doc, results: list[BiasResult], k: int, min_count: int) -> None:
    """Each measure's per-item scores over embedding seeds (mean, interval, decided lean) and the
    stability of its top-k across models (:mod:`kge.bias.stability`); only for a measure/spec with
    a model at two or more seeds."""
    from kge.bias import stability as st

    grouped = {key: by for key, by in st.groups(r for r in results if r.measure in ITEM_MEASURES).items()
               if any(len(rs) >= 2 for rs in by.values())}
    if not grouped:
        return
    doc.heading("Over embedding seeds and models", 2)
    doc.para("Each item's score averaged over the embeddings' training seeds, with its 95% interval over the "
             "seeds (Student's t with seeds - 1 df at the seed reference of wgbstats; 3 seeds give wide "
             "intervals by design) and whether its lean is decided (Holm across the items, level 0.05). "
             "The mean |score| has its interval over seeds x items (two-level bootstrap).")
    for key, by_model in grouped.items():
        measure, sens, a, b, target = key
        for model, rs in sorted(by_model.items()):
            if len(rs) < 2:
                continue
            doc.heading(f"{measure} · {model} · {sens}: {a} vs {b or '<rest>'} → {target} · seeds "
                        f"{', '.join(str(r.seed) for r in rs)}", 3)
            if len(rs) >= 3:
                e = st.mean_abs_score(rs)
                doc.para(f"Mean |score| over items: {_fmt(e.value)} {_ci(e.ci)} (seeds x items).")
            rows = st.item_table(rs, min_count=min_count)
            head = ["item", "mean score", "95% CI over seeds", "lean decided (Holm)", f"C_{a}", f"C_{b or '<rest>'}",
                    "per seed"]
            for side, label in (("a", a), ("b", b or "<rest>")):
                picked = sorted((x for x in rows if (x["score"] > 0 if side == "a" else x["score"] < 0)),
                                key=lambda x: x["score"], reverse=side == "a")[:k]
                doc.heading(f"Top {k} towards {label}, with uncertainty", 4)
                if not picked:
                    doc.para(f"No item with at least {min_count} holders leans towards {label}.")
                    continue
                doc.table(head, [[x["item"], x["score"], _ci(x["ci"]),
                                  "no test (< 3 seeds)" if x["degenerate"] else ("yes" if x["decided"] else "no"),
                                  x["count_a"], x["count_b"], ", ".join(f"{v:.3g}" for v in x["seed_scores"])]
                                 for x in picked])
            agree = st.seed_agreement(rs, k=k)
            if agree:
                doc.para(f"Seed agreement (descriptive: seed i vs seed i + 1, pairs share runs): top-{k} towards {a} "
                         f"overlap {agree['agreement']:.3f} {_ci(agree['ci'])} over {agree['units']} items "
                         f"(chance {k / agree['units']:.3f}).")
    claims = st.stability_claims([r for r in results if r.measure in ITEM_MEASURES], k=k)
    if claims:
        doc.heading(f"Are the top-{k} items stable across embedding models?", 3)
        doc.para(f"Runs paired by seed order (each pair two independent trainings); agreement = share of one run's top "
                 f"{k} also in the paired run's top {k}; claim: agreement > {st.MARGIN}; verdicts at Holm's "
                 "levels over these claims (wgbstats.verdicts).")
        doc.table(["claim", "agreement", "95% CI (seeds x items)", "chance", "verdict", "p (Holm)"],
                  [[c["claim"], c["agreement"], _ci(c["ci"]), c["chance"], c["verdict"], c["p_adjusted"]]
                   for c in claims])


def render(results: Iterable[BiasResult], out_dir: str | os.PathLike, *, top: int = 20, min_count: int = MIN_COUNT,
           title: str = "Knowledge graph embedding bias report") -> dict[str, Path]:
    results = list(results)
    out = Path(out_dir)
    plots = out / "plots"
    created = [p for p in (out, plots) if not p.exists()]
    plots.mkdir(parents=True, exist_ok=True)
    done = out / "DONE"
    if done.exists():
        done.unlink()
    try:
        return _render(results, out, plots, done, top, min_count, title)
    except BaseException:
        for p in reversed(created):  # no empty plots/ (or report folder) left by a failed render
            if p.is_dir() and not any(p.iterdir()):
                p.rmdir()
        raise


def _render(results: list[BiasResult], out: Path, plots: Path, done: Path, top: int, min_count: int,
            title: str) -> dict[str, Path]:
    doc = _doc(title)
    doc.para(f"{len(results)} result(s); top-{top} tables keep items with C_a + C_b >= {min_count} "
             "(C_a, C_b: holders of the item with the first and the second attribute value). Signed scores "
             "are first value minus second: + leans towards the first value (e.g. male), - towards the second.")
    table = keidar_table(results)
    if len(table):
        doc.heading("Bias scores per relation x model (Keidar et al.)", 2)
        cols = [f"{m} / {mod}" for m, mod in table.columns]
        doc.table(["relation"] + cols, [[idx] + [table.loc[idx, c] for c in table.columns] for idx in table.index])
    _section_seeds(doc, results, min(top, 20), min_count)
    for i, r in enumerate(results):
        doc.heading(_title(r), 2)
        doc.para(f"seed {r.seed} · version {r.version} · {r.seconds:.2f} s · config {r.config}")
        _summary_table(doc, r)
        if r.measure == "data":
            _section_data_curve(doc, r, plots, i)
        if r.measure in ITEM_MEASURES:
            _section_items(doc, r, top, min_count, plots, i)
        elif r.measure not in ("keidar_dpd", "keidar_ppd"):
            _section_generic(doc, r, plots, i)
        else:
            doc.table(["value", "score"], [[x.item, x.score] for x in r.rows])
    md, page = doc.markdown(), doc.html()
    atomic_write_text(out / "report.md", md)
    atomic_write_text(out / "report.html", page)
    atomic_write_text(done, "ok\n")
    return {"markdown": out / "report.md", "html": out / "report.html", "plots": plots}


write_report = render
