"""The paper's claims as tests with verdicts (Gaut et al. 2020), on the study-design layer.

Every claim is a directional statement about a statistic of seed-averaged metrics, estimated with
the two-level (seed x test entity) bootstrap of :mod:`relext.design`, paired across variants, with
Holm's correction across the family of claims of one study. ``G(v)`` is the mean over the four
relations of ``|F1 gap|`` of variant ``v``, the absolute value taken of the seed-averaged gap.

:func:`claim_specs` lists the debiasing study's claims, :func:`grid_claim_specs` the encoder x
selector grid's; :func:`evaluate_claims` turns them into verdicts, and :func:`half_split` re-decides
them on each half of the seeds (a verdict that says supported or contradicted should survive it).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from relext.design import Claim, Design, Estimate, StudyCounts, Verdict, flags, verdicts
from wikigenderbias.schema import POSITIVE_RELATIONS

PAPER = "Gaut et al. 2020"
Metrics = Mapping[str, Mapping[str, np.ndarray]]


@dataclass
class ClaimSpec:
    name: str
    statistic: str
    direction: int
    variants: list[str]
    fn: Callable[[Metrics], np.ndarray]
    source: str = PAPER


def mean_abs_gap(m: Mapping[str, np.ndarray], metric: str = "f1_gap") -> np.ndarray:
    return np.mean([np.abs(m[f"{metric}:{r}"]) for r in POSITIVE_RELATIONS], axis=0)


def _largest(v: str, rel: str) -> Callable[[Metrics], np.ndarray]:
    others = [r for r in POSITIVE_RELATIONS if r != rel]
    return lambda m: np.abs(m[v][f"f1_gap:{rel}"]) - np.max([np.abs(m[v][f"f1_gap:{r}"]) for r in others], axis=0)


def _smallest(v: str, rel: str) -> Callable[[Metrics], np.ndarray]:
    others = [r for r in POSITIVE_RELATIONS if r != rel]
    return lambda m: np.abs(m[v][f"f1_gap:{rel}"]) - np.min([np.abs(m[v][f"f1_gap:{r}"]) for r in others], axis=0)


def _abs_diff(a: str, b: str, name: str) -> Callable[[Metrics], np.ndarray]:
    return lambda m: np.abs(m[a][name]) - np.abs(m[b][name])


def _diff(a: str, b: str, name: str) -> Callable[[Metrics], np.ndarray]:
    return lambda m: m[a][name] - m[b][name]


def _g_diff(a: str, b: str) -> Callable[[Metrics], np.ndarray]:
    return lambda m: mean_abs_gap(m[a]) - mean_abs_gap(m[b])


def claim_specs(variants: Sequence[str]) -> list[ClaimSpec]:
    """The debiasing study's claims that the given variants can test."""
    have = set(variants)
    out: list[ClaimSpec] = []
    if "none" not in have:
        return out
    out += [
        ClaimSpec("Spouse has the largest F1 gap (baseline)", "|gap spouse| - max |gap other| (none)", 1,
                  ["none"], _largest("none", "spouse")),
        ClaimSpec("birthDate has the smallest F1 gap (baseline)", "|gap birthDate| - min |gap other| (none)", -1,
                  ["none"], _smallest("none", "birthDate")),
        ClaimSpec("The spouse F1 gap favours male articles (baseline)", "gap spouse (none)", 1,
                  ["none"], lambda m: m["none"]["f1_gap:spouse"]),
    ]
    if "cda" in have:
        out += [
            ClaimSpec("CDA reduces the spouse F1 gap", "|gap spouse| cda - none", -1, ["cda", "none"],
                      _abs_diff("cda", "none", "f1_gap:spouse")),
            ClaimSpec("CDA reduces the mean |F1 gap|", "G(cda) - G(none)", -1, ["cda", "none"], _g_diff("cda", "none")),
            ClaimSpec("CDA raises micro F1", "micro F1 cda - none", 1, ["cda", "none"],
                      _diff("cda", "none", "micro_f1:pooled")),
        ]
        if "duplicate" in have:
            out += [
                ClaimSpec("CDA raises micro F1 beyond training as long (equal-budget control)",
                          "micro F1 cda - duplicate", 1, ["cda", "duplicate"],
                          _diff("cda", "duplicate", "micro_f1:pooled"), "this toolkit (#19)"),
                ClaimSpec("CDA reduces the spouse F1 gap beyond training as long (equal-budget control)",
                          "|gap spouse| cda - duplicate", -1, ["cda", "duplicate"],
                          _abs_diff("cda", "duplicate", "f1_gap:spouse"), "this toolkit (#19)"),
            ]
    if "hard_debias" in have:
        out.append(ClaimSpec("Hard-debiased embeddings reduce the mean |F1 gap|", "G(hard_debias) - G(none)", -1,
                             ["hard_debias", "none"], _g_diff("hard_debias", "none")))
    if "anonymize" in have:
        out.append(ClaimSpec("Anonymization increases the hypernym F1 gap", "|gap hypernym| anonymize - none", 1,
                             ["anonymize", "none"], _abs_diff("anonymize", "none", "f1_gap:hypernym")))
    singles = [v for v in ("anonymize", "hard_debias") if v in have]
    if "cda" in have and singles:
        def best(m, singles=tuple(singles)):
            return mean_abs_gap(m["cda"]) - np.min([mean_abs_gap(m[v]) for v in singles], axis=0)
        out.append(ClaimSpec("CDA alone is the best single option (smallest mean |F1 gap|)",
                             f"G(cda) - min G({', '.join(singles)})", -1, ["cda", *singles], best))
    debiased = [v for v in variants if v != "none"]
    if debiased:
        def all_male(m, vs=tuple(variants)):
            return np.min([m[v]["f1_gap:spouse"] for v in vs], axis=0)
        out.append(ClaimSpec("The spouse F1 gap favours male articles under every variant",
                             "min over variants of gap spouse", 1, list(variants), all_male))
    return out


def grid_claim_specs(combos: Sequence[str]) -> list[ClaimSpec]:
    """Claims of the encoder x selector grid; ``combos`` are ``<encoder>-<selector>`` names."""
    out = []
    for c in combos:
        out.append(ClaimSpec(f"Spouse has the largest F1 gap ({c})", f"|gap spouse| - max |gap other| ({c})", 1,
                             [c], _largest(c, "spouse")))
        out.append(ClaimSpec(f"birthDate has the smallest F1 gap ({c})", f"|gap birthDate| - min |gap other| ({c})",
                             -1, [c], _smallest(c, "birthDate")))
    encoders = sorted({c.rsplit("-", 1)[0] for c in combos})
    for e in encoders:
        att, avg = f"{e}-attention", f"{e}-average"
        if att in combos and avg in combos:
            out.append(ClaimSpec(f"Average shows a smaller spouse gap than attention ({e})",
                                 f"|gap spouse| average - attention ({e})", -1, [avg, att],
                                 _abs_diff(avg, att, "f1_gap:spouse")))
            out.append(ClaimSpec(f"Average scores a higher micro F1 than attention ({e})",
                                 f"micro F1 average - attention ({e})", 1, [avg, att],
                                 _diff(avg, att, "micro_f1:pooled")))
    return out


def _seeds_for(design: Design, spec: ClaimSpec, half: int | None) -> list[int]:
    """The seeds a claim is decided on: those its variants share, or the first (``half=0``) or
    second (``half=1``) half of them."""
    common = design.data.common_seeds(spec.variants)
    if half is None:
        return common
    h = len(common) // 2
    return common[:h] if half == 0 else common[h:]


def _no_seeds(why: str) -> Estimate:
    nan = float("nan")
    return Estimate(value=nan, ci=[nan, nan], ci_seed=[nan, nan], ci_entity=[nan, nan], se=nan, se_seed=nan,
                    se_entity=nan, p_value=1.0, n_seeds=0, seeds=[], confidence=0.95, degenerate=why)


def evaluate_claims(design: Design, specs: Sequence[ClaimSpec], *, half: int | None = None,
                    alpha: float = 0.05) -> list[Verdict]:
    """Verdicts of ``specs`` (Holm across them), each on the seeds its variants share (or on one
    half of them, see :func:`half_split`)."""
    claims = []
    for s in specs:
        use = _seeds_for(design, s, half)
        est = (design.estimate(s.fn, s.variants, seeds=use) if use
               else _no_seeds("its variants share no seed" + ("" if half is None else " in this half")))
        claims.append(Claim(s.name, s.statistic, s.direction, est, s.source))
    return verdicts(claims, alpha=alpha, method="holm")


def half_split(design: Design, specs: Sequence[ClaimSpec], full: Sequence[Verdict], *,
               alpha: float = 0.05) -> list[dict]:
    """Each claim re-decided on the first and on the second half of its own seeds (10 seeds:
    0-4 and 5-9), Holm across the claims within each half. ``stable``: a supported or
    contradicted verdict that both halves repeat (None for undecided ones)."""
    halves = [evaluate_claims(design, specs, half=h, alpha=alpha) for h in (0, 1)]
    out = []
    for i, (v, spec) in enumerate(zip(full, specs)):
        hv = [h[i].verdict for h in halves]
        decided = v.verdict in ("supported", "contradicted")
        out.append({"claim": v.claim, "first_half": hv[0], "second_half": hv[1],
                    "seeds_per_half": [len(_seeds_for(design, spec, h)) for h in (0, 1)],
                    "stable": (all(h == v.verdict for h in hv) if decided else None)})
    return out


def gap_flags(design: Design, variants: Sequence[str], *, alpha: float = 0.05) -> list[dict]:
    """F1 and equality-of-opportunity gaps of every variant x relation with combined intervals,
    Benjamini-Hochberg across all of them; a flag needs the corrected p below ``alpha``."""
    rows, ests = [], []
    for v in variants:
        for metric in ("f1_gap", "eo_gap"):
            for rel in POSITIVE_RELATIONS:
                e = design.metric(v, f"{metric}:{rel}")
                rows.append({"variant": v, "metric": metric, "relation": rel})
                ests.append(e)
    for row, e, f in zip(rows, ests, flags(ests, alpha=alpha, method="bh")):
        row.update(e.to_dict())
        row.update(f)
    return rows


def design_for_runs(runs: Mapping[tuple[str, int], Path], *, rule: str = "argmax", n_resamples: int = 2000,
                    seed: int = 0) -> Design:
    return Design(StudyCounts.from_runs(runs, rule=rule), n_resamples=n_resamples, seed=seed)


def claims_table(doc, verdicts_: Sequence[Verdict], splits: Sequence[dict] | None = None):
    """The claims table (claim, verdict, effect, combined interval, seeds, power) added to a
    :class:`wgbcore.render.Document`."""
    head = ["claim", "verdict", "effect", "95% interval (seeds x entities)", "seed-only", "entity-only",
            "p (Holm)", "seeds", "MDE (80%)", "to decide"]
    if splits:
        head.append("halves")
    rows = []
    for i, v in enumerate(verdicts_):
        cells = [v.claim, f"**{v.verdict}**" if v.verdict != "undecided" else v.verdict, f"{v.value:+.4f}",
                 f"[{v.ci[0]:+.4f}, {v.ci[1]:+.4f}]", f"[{v.ci_seed[0]:+.4f}, {v.ci_seed[1]:+.4f}]",
                 f"[{v.ci_entity[0]:+.4f}, {v.ci_entity[1]:+.4f}]", f"{v.p_adjusted:.3g}", str(v.n_seeds),
                 "-" if v.mde is None else f"{v.mde:.4f}",
                 (f"~{v.seeds_to_decide} seeds" if v.seeds_to_decide else (v.note or "-")) if v.verdict == "undecided"
                 else "-"]
        if splits:
            s = splits[i]
            cells.append(f"{s['first_half'] or '-'} / {s['second_half'] or '-'}")
        rows.append(cells)
    return doc.table(head, rows)


def grid_design_report(runs: Mapping[tuple[str, int], Path], *, rules: Sequence[str] = ("argmax", "threshold"),
                       n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> dict:
    """Design report of a grid: ``runs`` maps (``<encoder>-<selector>``, seed) to run directories
    with per-entity counts. Gap flags for each decision rule; claims (Holm) and their half-split
    check for the first rule."""
    if not runs:
        return {}
    out: dict = {"design": {"unit": "seeds x test entities (crossed); entities resampled within gender",
                            "n_resamples": n_resamples, "alpha": alpha, "claims_correction": "holm",
                            "gap_flags_correction": "benjamini-hochberg", "bootstrap_seed": seed},
                 "gaps": {}}
    for i, rule in enumerate(rules):
        try:
            design = design_for_runs(runs, rule=rule, n_resamples=n_resamples, seed=seed)
        except ValueError:
            continue  # e.g. no threshold counts (no validation predictions)
        combos = sorted(design.data.counts)
        out["gaps"][rule] = gap_flags(design, combos, alpha=alpha)
        if "claims" not in out:
            specs = grid_claim_specs(combos)
            full = evaluate_claims(design, specs, alpha=alpha)
            out.update(rule=rule, claims=[v.to_dict() for v in full],
                       half_split=half_split(design, specs, full, alpha=alpha),
                       seeds={c: design.data.seeds(c) for c in combos})
    return out
