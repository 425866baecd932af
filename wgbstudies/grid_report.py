"""The report of a grid (:mod:`wgbstudies.grid`): its summary (``results.json``) as a
:class:`wgbcore.render.Document`, written as results.md and results.html, the claims' verdicts
first when the grid was pre-registered."""
from __future__ import annotations

import math

from relext.evaluation.report import fmt, fmt_signed, timing_where
from wikigenderbias.schema import POSITIVE_RELATIONS


def seed_list(seeds) -> str:
    """``[0, 1, 2, 4]`` -> ``"0-2, 4"`` (the form ``--seeds`` takes)."""
    seeds, out = sorted(set(seeds)), []
    for s in seeds:
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out) or "none"


def grid_document(summary: dict, *, images: bool = True):
    """The report of a grid summary (the dict written to results.json) as a
    :class:`wgbcore.render.Document` (rendered to results.md and results.html)."""
    from wgbcore.render import Document

    doc = Document("Relation extraction gender-gap grid")
    meta = summary.get("meta", {})
    own = meta.get("seeds_by_encoder") or {}
    others = "".join(f"; {enc}: {seed_list(ss)}" for enc, ss in own.items())
    folds = f" × {meta['folds']} person-level folds (cross-fitting)" if meta.get("folds") else ""
    doc.para(f"Encoders {', '.join(meta.get('encoders') or [])} × selectors {', '.join(meta.get('selectors') or [])} "
             f"× seeds {seed_list(meta.get('seeds') or [])}{others}{folds}, "
             f"{meta.get('epochs') or 'the trainer default number of'} epoch(s) max; "
             f"{meta.get('runs_evaluated')} of {meta.get('n_runs')} runs evaluated; "
             f"wgb {meta.get('version')}.")
    t = summary.get("timing", {})
    if t:
        doc.para(f"Time: {fmt(t.get('train_seconds_total'), 0)} s training + "
                 f"{fmt(t.get('eval_seconds_total'), 0)} s evaluation, measured by the grid for "
                 f"{t.get('n_runs')} runs "
                 f"(wall time of the grid invocations: {fmt(t.get('wall_seconds_total'), 0)} s; "
                 f"load average at the end {t.get('loadavg')}; {t.get('cpu_count')} CPUs shared)"
                 + timing_where(t) + ".")
    rep = summary.get("design_report") or {}
    doc.para("Values are means over seeds with a Student-t 95% interval across seeds in brackets (seed "
             "variance only). Gaps are male − female; `b k/n` = in k of n runs the entity-bootstrap "
             "interval of that run excludes 0. **Bold**: the combined seed x entity interval excludes 0 "
             "after Benjamini-Hochberg correction across all gaps of the rule "
             + ("(the verdicts come first, below)." if rep.get("gaps") else
                "(needs runs with per-entity counts; none here, so nothing is bold).")
             + " Fewer than 3 seeds never flag.")
    if rep.get("claims"):
        from wgbstats.design import Verdict
        from wgbstudies.claims import claims_table, plan_paragraph, population_sections

        doc.heading("The paper's claims: verdicts")
        plan_paragraph(doc, rep)
        doc.para(f"Decision rule {rep['rule']}; two-level bootstrap ({rep['design']['n_resamples']} replicates, "
                 "seeds x test entities, paired across combinations, the interaction counted once); Holm's "
                 "correction across the claims, each interval at the level Holm tested its claim at. Claims are "
                 "worded as the paper (see each claim's source in results.json); a claim about every member of a "
                 "set is an intersection-union test (the table shows its weakest member). 'halves': the verdict "
                 "on two disjoint halves of the seeds and the persons (not checked with fewer than 3 seeds in a "
                 "half).")
        claims_table(doc, [Verdict(**c) for c in rep["claims"]], rep.get("half_split"), plan=rep.get("plan"))
        population_sections(doc, rep)   # cross-fitted: the same claims on all persons
    for variant, combos in summary.get("variants", {}).items():
        doc.heading(f"Decision rule: {variant}")
        doc.heading("Overall", 3)
        doc.table(["encoder", "selector", "seeds", "micro F1 male", "micro F1 female", "PR-AUC pooled"],
                  [[c["encoder"], c["selector"], str(c["n_seeds"]), _mean_ci(c["micro_f1"]["male_test"]),
                    _mean_ci(c["micro_f1"]["female_test"]), _mean_ci(c["pr_auc"]["pooled"])] for c in combos])
        for metric, title in (("f1", "F1 gap = F1(male) − F1(female)"),
                              ("recall", "Equality of opportunity gap = TPR(male) − TPR(female)")):
            rows = []
            for c in combos:
                row = [c["encoder"], c["selector"]]
                for rel in POSITIVE_RELATIONS:
                    g = c["gaps"][metric][rel]
                    row.append(_mean_ci(g, signed=True, bold=g.get("flagged", False))
                               + f" b {g['bootstrap_flagged']}/{g['n']}")
                rows.append(row)
            doc.heading(title, 3)
            doc.table(["encoder", "selector", *POSITIVE_RELATIONS], rows)
        doc.heading("F1 per relation (male / female)", 3)
        doc.table(["encoder", "selector", *POSITIVE_RELATIONS],
                  [[c["encoder"], c["selector"],
                    *[f"{fmt(c['f1'][rel]['male']['mean'])} / {fmt(c['f1'][rel]['female']['mean'])}"
                      for rel in POSITIVE_RELATIONS]] for c in combos])
        for name, alt in ((f"gaps_{variant}.png", "gender gaps per relation"),
                          (f"f1_by_gender_{variant}.png", "F1 by gender")):
            if images:
                doc.image(name, f"{alt} ({variant})")
    runs = summary.get("runs") or {}
    if runs:
        per = (summary.get("timing") or {}).get("per_run", {})
        doc.heading("Runs")
        doc.table(["run", "epochs", "best epoch", "validation score", "s / epoch", "train s (grid)"],
                  [[name, str(r.get("epochs_run")), str(r.get("best_epoch")), fmt(r.get("best_validation")),
                    fmt(r.get("mean_epoch_train_seconds"), 1), fmt(per.get(name, {}).get("train_seconds"), 0)]
                   for name, r in sorted(runs.items())])
    findings = summary.get("findings")
    if findings:
        doc.heading("Comparison with the paper's findings (point estimates)")
        doc.items(findings)
    return doc


def grid_markdown(summary: dict, *, images: bool = True) -> str:
    """Markdown report of a grid summary (see :func:`grid_document`)."""
    return grid_document(summary, images=images).markdown()


def _mean_ci(d: dict, *, signed: bool = False, bold: bool = False) -> str:
    f = fmt_signed if signed else fmt
    s = f(d.get("mean"))
    if bold:
        s = f"**{s}**"
    lo, hi = d.get("ci_low"), d.get("ci_high")
    if lo is not None and hi is not None and all(isinstance(x, float) and math.isfinite(x)
                                                 for x in (lo, hi)):
        s += f" [{f(lo)}, {f(hi)}]"
    return s
