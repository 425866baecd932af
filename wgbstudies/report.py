"""The debiasing study's report (results.md and results.html) as a :class:`wgbcore.render.Document`."""
from __future__ import annotations

from typing import Any

from relext.evaluation.report import fmt, timing_where
from wgbstudies.grid_report import _mean_ci
from wgbstudies.claims_text import plan_paragraph

__all__ = ["study_document", "embedding_bias_table", "plan_paragraph"]


def embedding_bias_table(doc, rep: dict[str, Any]):
    """Direct bias and WEAT before -> after training, one row per variant."""
    def f(x, digits):   # a figure no run has (saved as null) shows as missing, never as a number
        return "missing" if x is None else f"{x:.{digits}f}"

    rows, notes = [], []
    for v, r in rep.items():
        t = next(iter(r["weat_effect_size"]), None)
        w = r["weat_effect_size"][t] if t else None
        rows.append([v, str(r["n_runs"]),
                     f"{f(r['initial_direct_bias_removed_direction'], 3)} -> {f(r['trained_direct_bias_removed_direction'], 3)}",
                     f"{f(r['initial_direct_bias_own_direction'], 3)} -> {f(r['trained_direct_bias_own_direction'], 3)}",
                     f"{t}: {f(w['initial'], 2)} -> {f(w['trained'], 2)}" if w else "-"])
        notes += [f"{v}: {n}" for n in r.get("missing", [])]
    table = doc.table(["variant", "runs", "direct bias, removed direction: initial -> trained",
                       "own direction: initial -> trained", "WEAT d (first test): initial -> trained"], rows)
    if notes:
        doc.para("Missing figures (saved as null, left out of the means): " + "; ".join(notes) + ".")
    return table


def _mean_abs_gap(c: dict, metric: str = "f1") -> float:
    """Mean |gap| over the positive relations of one summary row (its seed means)."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    vals = [abs(d["mean"]) for r in POSITIVE_RELATIONS if (d := c["gaps"].get(metric, {}).get(r)) is not None]
    return sum(vals) / len(vals) if vals else float("nan")


def study_document(config, summary: dict, variants_info: dict, *, images: bool = True):
    from wgbcore.render import Document
    from wikigenderbias.schema import POSITIVE_RELATIONS

    meta, t = summary.get("meta", {}), summary.get("timing", {})
    sub = ("" if config.train_articles is None else
           f" **Trained on {config.train_articles} sampled training articles only (quick profile): "
           "not comparable with the paper.**")
    doc = Document("Debiasing study (Gaut et al. 2020, section 5)")
    doc.para(f"{config.encoder.upper()} + {config.selector} under {len(config.variants)} debiasing variants x "
             f"seeds {config.seeds}; {config.epochs or 'default'} epoch(s) max; wgb {meta.get('version')}.{sub} "
             f"{meta.get('runs_evaluated')} of {meta.get('n_runs')} runs evaluated"
             + (f"; failed: {meta.get('runs_failed')}" if meta.get("runs_failed") else "") + ".")
    if t:
        doc.para(f"Time: {fmt(t.get('train_seconds_total'), 0)} s training + {fmt(t.get('eval_seconds_total'), 0)} s "
                 f"evaluation (wall time of all invocations {fmt(t.get('wall_seconds_total'), 0)} s; load average "
                 f"at the end {t.get('loadavg')} on {t.get('cpu_count')} shared CPUs)" + timing_where(t) + ".")
    ner = {v: i["debiaser"].get("ner_available", {}).get("auto_uses") for v, i in variants_info.items()
           if "ner_available" in i["debiaser"]}
    if ner:
        doc.para(f"Anonymization NER: {sorted(set(ner.values()))} (see variants.json and each run's "
                 "metrics.json).")
    rep = summary.get("design_report") or {}
    if rep.get("claims"):
        _claims(doc, rep)
    doc.heading("Per-variant tables")
    if summary.get("meta", {}).get("folds"):
        doc.para("Cross-fitted: no per-run tables (a fold run predicts a fifth of the persons); every number "
                 "of this study comes from the seed x person design above, which joins each seed's fold runs.")
    doc.para("Gaps are male − female, seed mean with a Student-t 95% interval across seeds (seed variance "
             "only); `b k/n`: in k of n runs the entity-bootstrap interval excludes 0. These intervals each "
             "leave out one source of variance: flags and verdicts come from the combined seed x entity "
             "design (above).")
    for rule, combos in summary.get("variants", {}).items():
        doc.heading(f"Decision rule: {rule}", 3)
        doc.table(["variant", "seeds", "micro F1 pooled", "micro F1 male", "micro F1 female", "mean abs F1 gap"],
                  [[c["encoder"], str(c["n_seeds"]), _mean_ci(c["micro_f1"]["pooled"]),
                    _mean_ci(c["micro_f1"]["male_test"]), _mean_ci(c["micro_f1"]["female_test"]),
                    fmt(_mean_abs_gap(c))] for c in combos])
        for metric, title in (("f1", "F1 gap per relation"),
                              ("recall", "Equality of opportunity gap (TPR) per relation")):
            rows = []
            for c in combos:
                row = [c["encoder"]]
                for rel in POSITIVE_RELATIONS:
                    g = c["gaps"].get(metric, {}).get(rel)
                    row.append("-" if g is None else _mean_ci(g, signed=True, bold=False)
                               + f" b {g['bootstrap_flagged']}/{g['n']}")
                rows.append(row)
            doc.heading(f"{title} ({rule})", 4)
            doc.table(["variant", *POSITIVE_RELATIONS], rows)
        doc.heading(f"Absolute F1 per relation, male / female ({rule})", 4)
        doc.table(["variant", *POSITIVE_RELATIONS],
                  [[c["encoder"], *[f"{fmt(c['f1'][r]['male']['mean'])} / {fmt(c['f1'][r]['female']['mean'])}"
                                    for r in POSITIVE_RELATIONS]] for c in combos])
        if images:
            doc.image(f"gaps_{rule}.png", f"gender gaps per relation ({rule})")
            doc.image(f"f1_by_gender_{rule}.png", f"F1 by gender ({rule})")
    emb = summary.get("embedding_bias_trained") or {}
    if emb:
        doc.heading("Word embeddings before and after training")
        doc.para("Direct bias (mean |cos(profession, g)|, Bolukbasi et al.) of the run's word embedding rows at "
                 "initialisation (Word2Vec after the run's vectors transforms) and after training (the selected "
                 "epoch), along the direction hard debiasing removed and along the direction found again in the "
                 "vectors; WEAT effect size d (Caliskan et al.), means over runs (per run: "
                 "`runs/<run>/embedding_bias.json`).")
        embedding_bias_table(doc, emb)
    return doc


def budget_sentence(budget: dict) -> str:
    """CDA's micro-F1 gain and how much of it training as long gives (from
    :func:`wgbstudies.debias.training_budget`)."""
    if not budget:
        return ""
    c, d, x = budget["cda_minus_none"], budget["duplicate_minus_none"], budget["cda_minus_duplicate"]
    share = budget.get("budget_share")
    return (f"CDA raises micro F1 by {c['value']:+.4f} over none, but training as long on duplicated data "
            f"(duplicate - none) gives {d['value']:+.4f} of it" + (f" ({share:.0%})" if share is not None else "")
            + f"; the gain due to counterfactual data itself is CDA vs duplicate, {x['value']:+.4f} "
            f"[{x['ci'][0]:+.4f}, {x['ci'][1]:+.4f}] ({c['n_seeds']} seeds): the claim about CDA's F1 gain "
            "is that comparison.")


def _claims(doc, rep: dict) -> None:
    from wgbstats.design import Verdict
    from wgbstudies.claims import claims_table, population_label, population_sections

    d = rep["design"]
    doc.heading("The paper's claims: verdicts")
    plan_paragraph(doc, rep)
    doc.para(f"Decision rule {rep['rule']}. Each claim is a directional test of a statistic of seed-averaged "
             f"metrics, worded and quoted as the paper (the claim's source); intervals from a two-level bootstrap "
             f"({d['n_resamples']} replicates: seeds with replacement, then test entities within gender, crossed "
             "and paired across variants), the seed x entity interaction counted once; "
             f"Holm's correction across the {len(rep['claims'])} claims at alpha {d['alpha']}, and each interval "
             "at the level Holm tested its claim at (it excludes 0 exactly when the claim is decided). "
             "**supported** / **contradicted**: significant after correction, in / against the claimed direction; "
             "undecided otherwise, with the minimum detectable effect (MDE, 80% power) at the seeds used and what "
             "would decide it (more seeds, more articles, either or both). A claim about every member of a set "
             "(every other relation, every variant) is an intersection-union test: each member at level alpha, "
             "the claim's p the largest member p; the table shows its weakest member.")
    if d.get("paper_variants"):
        doc.para("'Every variant' ranges over the paper's variants (" + ", ".join(f"`{v}`" for v in d["paper_variants"])
                 + "); the toolkit's controls (" + (", ".join(f"`{v}`" for v in d.get("controls", [])) or "none")
                 + ") are reported beside the claims, not inside them.")
    if rep.get("budget"):
        doc.para(budget_sentence(rep["budget"]))
    halves = rep.get("half_split") or []
    if halves:
        h0 = halves[0]
        doc.para("'halves': each claim re-decided on two disjoint halves of the seeds *and* the persons "
                 f"({h0.get('persons_split', 'seeds only')}; {h0.get('persons_per_half', ['?', '?'])[0]} / "
                 f"{h0.get('persons_per_half', ['?', '?'])[1]} persons); not checked with fewer than "
                 f"{d.get('half_min_seeds', 3)} seeds in a half.")
    if rep.get("populations"):
        doc.para(f"Cross-fitted: the table is on {population_label(rep['population'], rep['n_persons'])}; the same "
                 "claims on the other population follow it, never pooled silently.")
    claims_table(doc, [Verdict(**c) for c in rep["claims"]], rep.get("half_split"), plan=rep.get("plan"))
    population_sections(doc, rep)
    flagged = [g for g in rep["gaps"] if g["flagged"]]
    doc.heading(f"Gaps whose combined interval excludes 0 (Benjamini-Hochberg over {len(rep['gaps'])} "
                "variant x metric x relation gaps)", 3)
    doc.items([f"{g['variant']} {g['metric']} {g['relation']}: {g['value']:+.4f} [{g['ci'][0]:+.4f}, "
               f"{g['ci'][1]:+.4f}], {g['n_seeds']} seeds, adjusted p {g['p_adjusted']:.3g}" for g in flagged])
