"""How the claims read: the labels that spell variants and encoders in claim names, and the
claims tables (verdicts, intervals at Holm's level, halves, other populations) added to a
:class:`wgbcore.render.Document`, with the paragraph above them that says what they are against
the study's plan (:func:`plan_paragraph`: final, interim or exploratory, from
:mod:`wgbstudies.status`). The claims themselves and their verdicts:
:mod:`wgbstudies.claims`, which re-exports these names.
"""
from __future__ import annotations

from typing import Sequence

from wgbstats.design import Verdict
from wgbstudies.status import BEFORE, INTERIM, label_of


#: how claim names spell variants and encoders
LABELS = {"none": "none", "cda": "CDA", "anonymize": "anonymization", "hard_debias": "hard-debiased embeddings",
          "duplicate": "duplicate", "cnn": "CNN", "pcnn": "PCNN", "rnn": "RNN", "birnn": "BiRNN",
          "transformer": "Transformer", "attention": "attention", "average": "average", "one": "one"}


def variant_label(variant: str) -> str:
    """``"anonymize+cda"`` -> ``"anonymization+CDA"`` (options kept)."""
    from relext.debias import split_outside_brackets

    out = []
    for p in split_outside_brackets(variant, "+"):
        name, br, opt = p.partition("[")
        out.append(LABELS.get(name, name) + br + opt)
    return "+".join(out)


def combo_label(combo: str) -> str:
    """``"cnn-attention"`` -> ``"CNN+attention"``."""
    enc, _, sel = combo.rpartition("-")
    return f"{LABELS.get(enc, enc)}+{LABELS.get(sel, sel)}"


def members_text(labels: Sequence[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    labels = list(labels)
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def population_label(name: str, n_persons: int) -> str:
    return {"test": f"the annotated test persons ({n_persons})",
            "all": f"all persons, test and distantly supervised ({n_persons})"}.get(name, f"{name} ({n_persons})")


def population_sections(doc, rep: dict) -> None:
    """The claims tables of the other populations of a cross-fitted study (after the main one)."""
    for name, r in (rep.get("populations") or {}).items():
        doc.heading(f"The same claims on {population_label(name, r['n_persons'])}", 3)
        doc.para("Distant labels are not crowd-checked: absolute gap claims may differ from the test persons' "
                 "through label noise; paired variant comparisons are robust to noise both variants see.")
        claims_table(doc, [Verdict(**c) for c in r["claims"]], r.get("half_split"), plan=rep.get("plan"))


def plan_paragraph(doc, rep: dict) -> None:
    """What the claims below are against the study's plan (``plan.json``): pre-registered and final,
    interim (no verdict), exploratory (registered after the runs, or no plan at all)."""
    st = rep.get("plan") or {}
    label = label_of(rep)
    if label is None:
        doc.para(f"**Pre-registered**: `plan.json` (claims, families, seeds, folds, stopping rule; claims sha256 "
                 f"`{str(st.get('claims_sha256'))[:12]}`) was written {BEFORE} ({st.get('registered_at')}); the "
                 "planned sample is complete: these are the plan's verdicts.")
        return
    text = [f"**{label[0].upper() + label[1:]}.**"]
    if st.get("interim"):
        text.append(f"The plan decides at {st['planned']} {st['unit']} (a fixed sample, `plan.json`); until then "
                    f"every claim is '{INTERIM}': the estimates and intervals below are an interim look, "
                    "not verdicts.")
    if st.get("exploratory") or not st:
        text.append("No plan was registered before the runs: the claims, their family and the seeds were "
                    "chosen with results in view, so the verdicts below are exploratory: they suggest, they "
                    "do not confirm.")
    elif not st.get("interim"):
        text.append("The plan (`plan.json`, its history) was fixed after the first runs started but before any "
                    "claim could be estimated; the planned sample is complete: these are the plan's verdicts.")
    doc.para(" ".join(text))


def level_text(level: float) -> str:
    """A confidence level with the digits it needs: 0.95 -> "95%", 0.99966 -> "99.97%"."""
    return f"{100 * level:.4g}%" if level < 0.9995 else f"{100 * level:.5g}%"


def _decide_cell(v: Verdict) -> str:
    if v.verdict == INTERIM:
        return "the planned sample"
    if v.verdict != "undecided":
        return "-"
    if v.seeds_to_decide:
        return f"~{v.seeds_to_decide} seeds" + (f" or ~{v.articles_factor:.1f}x articles"
                                                 if v.articles_factor is not None else "")
    if v.needs:
        return f"more {v.needs}" + (f" (~{v.articles_factor:.1f}x articles)" if v.articles_factor is not None else "")
    return v.note or "-"


def df_text(df: float | None) -> str:
    """A plug-in degrees of freedom as the tables show them ("normal" beyond DF_MAX)."""
    from wgbstats.verdicts import DF_MAX

    if df is None:
        return "-"
    return "normal" if df >= DF_MAX else (f"{df:.0f}" if df >= 10 else f"{df:.1f}")


def verdict_text(verdict: str, plan: dict | None = None) -> str:
    """A verdict as the tables show it: bold when decided; an interim look's "interim (k of n
    seeds): not decided"; "(exploratory)" after a verdict of a study registered after its runs
    (``plan``: the look's status, :func:`wgbstudies.status.status`)."""
    st = plan or {}
    if verdict == INTERIM:
        return st.get("cell") or st.get("label") or INTERIM
    cell = f"**{verdict}**" if verdict in ("supported", "contradicted") else verdict
    if plan is not None and (st.get("exploratory") or not st.get("registered")):
        cell += " (exploratory)"
    return cell


def verdict_cell(v: Verdict, plan: dict | None = None) -> str:
    return verdict_text(v.verdict, plan)


def claims_table(doc, verdicts_: Sequence[Verdict], splits: Sequence[dict] | None = None, plan: dict | None = None):
    """The claims table (claim, verdict, effect, the interval at the level Holm tested the claim at,
    seed-only and entity-only intervals, p, the plug-in Welch-Satterthwaite df of the seed part
    (display: the test's reference bounds the seed share instead), seeds, power, what would decide
    it, halves) added to a :class:`wgbcore.render.Document`. An intersection-union claim shows its
    weakest part, and a claim's controls (95% intervals) are named beside it. ``plan``: the look's
    status (:func:`wgbstudies.plan.status`): interim claims say so, exploratory verdicts too."""
    head = ["claim", "verdict", "effect", "interval at Holm's level (seeds x entities)", "seed-only (95%)",
            "entity-only (95%)", "p (Holm)", "df (plug-in)", "seeds", "MDE (80%)", "to decide"]
    show_halves = bool(splits) and any(s.get("checked", True) or s.get("interim") for s in splits)
    if show_halves:
        head.append("halves (seeds and persons)")
    rows = []
    for i, v in enumerate(verdicts_):
        ci, level = (v.ci_adjusted, v.ci_adjusted_level) if v.ci_adjusted else (v.ci, None)
        weakest = v.extra.get("weakest_part") if v.extra else None
        beside = "; ".join(f"{x['part']} = {x['value']:+.4f} [{x['ci'][0]:+.4f}, {x['ci'][1]:+.4f}]"
                           for x in (v.extra or {}).get("controls", []))
        cells = [v.claim + (f" (weakest: {weakest})" if weakest and len(v.extra.get("parts", [])) > 1 else "")
                 + (f"; beside it, not tested: {beside}" if beside else ""),
                 verdict_cell(v, plan), f"{v.value:+.4f}",
                 f"[{ci[0]:+.4f}, {ci[1]:+.4f}] " + (f"({level_text(level)})" if level else "(95%, unadjusted)"),
                 f"[{v.ci_seed[0]:+.4f}, {v.ci_seed[1]:+.4f}]", f"[{v.ci_entity[0]:+.4f}, {v.ci_entity[1]:+.4f}]",
                 f"{v.p_adjusted:.3g}", df_text(v.df), str(v.n_seeds), "-" if v.mde is None else f"{v.mde:.4f}",
                 _decide_cell(v)]
        if show_halves:
            s = splits[i]
            cells.append(f"{s['first_half'] or '-'} / {s['second_half'] or '-'}" if s.get("checked", True)
                         else "interim: not checked" if s.get("interim")
                         else f"not checked ({min(s['seeds_per_half'])} seeds in a half)")
        rows.append(cells)
    return doc.table(head, rows)
