"""The paper's claims as tests with verdicts (Gaut et al. 2020), on the study-design layer.

Every claim is a directional statement about a statistic of seed-averaged metrics, estimated with
the two-level (seed x entity) bootstrap of :mod:`wgbstats.design`, paired across variants, with
Holm's correction across the family of claims of one study. ``G(v)`` is the mean over the four
relations of ``|F1 gap|`` of variant ``v``, the absolute value taken of the seed-averaged gap.

Claims are worded as the paper words them, and each ``source`` quotes it (ACL 2020, section
"Experimental Setup"). A claim about every member of a set ("spouse has the largest gap": larger
than each other relation; "... throughout all combinations of debiasing options") is an
*intersection-union* test: each member's statistic at level alpha, p = the largest member p
(:func:`wgbstats.design.intersection_union`), never a test of the minimum over noisy gaps (biased
towards zero). "Every variant" ranges over the paper's variants only (none, cda, anonymize,
hard_debias and their combinations, :func:`is_paper_variant`); the toolkit's controls (e.g.
``duplicate``, hard_debias options) are reported beside such a claim (``extra["controls"]``),
not inside it. One name, one definition: a claim about every member of a set that a study tests
over fewer members than the paper names (a study of none and cda, a grid of CNN and PCNN) is
named by its members ("... under none and CDA") and records the paper's name in ``narrows``
(:func:`members_text`); the paper's name is kept for the paper's whole set. "Very little gap" is
an equivalence test: the gap within +-:data:`LITTLE` (one F1 point), two one-sided parts.

:func:`claim_specs` lists the debiasing study's claims, :func:`grid_claim_specs` the encoder x
selector grid's; :func:`evaluate_claims` turns them into verdicts, and :func:`half_split`
re-decides them on two disjoint halves of seeds *and* persons (under cross-fitting: disjoint fold
halves; without folds: a seeded split of the persons within gender); a half with fewer than
:data:`HALF_MIN_SEEDS` seeds is not checked. How claims read (labels of variants in claim names,
the claims tables): :mod:`wgbstudies.claims_text`, whose names this module re-exports.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from relext.evaluation.study_counts import StudyCounts
from wgbstats.design import (
    MIN_SEEDS, Claim, Design, Estimate, Verdict, flags, iut_claim, verdicts,
)
from wgbstudies.claims_text import (  # noqa: F401 - the tables' names, re-exported for callers
    LABELS, claims_table, combo_label, df_text, level_text, members_text, plan_paragraph, population_label,
    population_sections, variant_label, verdict_cell, verdict_text,
)
from wikigenderbias.schema import POSITIVE_RELATIONS

PAPER = "Gaut et al. 2020"
SETUP = f'{PAPER}, "Experimental Setup ::: Evaluating Bias Mitigation Methods"'
EOP = f'{PAPER}, "Experimental Setup ::: Evaluation of Equality of Opportunity"'
TOOLKIT = "this toolkit (#19, #27: equal training budget)"
#: "very little gap": |gap| below one F1 point
LITTLE = 0.01
#: fewest seeds in each half for the replication check
HALF_MIN_SEEDS = 3
PAPER_METHODS = ("anonymize", "cda", "hard_debias")
Metrics = Mapping[str, Mapping[str, np.ndarray]]
Fn = Callable[[Metrics], np.ndarray]


@dataclass
class Part:
    """One member of an intersection-union claim: ``fn`` in the ``direction`` (+1 / -1)."""

    name: str
    variants: list[str]
    fn: Fn
    direction: int


@dataclass
class ClaimSpec:
    name: str
    statistic: str
    direction: int
    variants: list[str]
    fn: Fn | None = None
    source: str = PAPER
    parts: list[Part] | None = None       # an intersection-union claim (``fn`` unused)
    controls: list[Part] = field(default_factory=list)   # reported beside, never tested inside
    #: the paper's claim this one tests over fewer members (its name); None: the paper's own set
    narrows: str | None = None


#: the paper's debiasing variants (every combination of its three methods) and its encoders
PAPER_VARIANTS = ("none", "anonymize", "cda", "hard_debias", "anonymize+cda", "anonymize+hard_debias",
                  "cda+hard_debias", "anonymize+cda+hard_debias")
PAPER_ENCODERS = ("cnn", "pcnn", "rnn", "birnn")


def _variant_order(v: str) -> tuple:
    """Members in the paper's order, whatever order a study lists them in (one name per set)."""
    base = next(iter(_bases([v])))
    return (PAPER_VARIANTS.index(base) if base in PAPER_VARIANTS else len(PAPER_VARIANTS), v)


def _encoder_order(e: str) -> tuple:
    return (PAPER_ENCODERS.index(e) if e in PAPER_ENCODERS else len(PAPER_ENCODERS), e)


def _combo_order(c: str) -> tuple:
    enc, _, sel = c.rpartition("-")
    return (*_encoder_order(enc), sel)


def _bases(variants: Sequence[str]) -> set[str]:
    """The variants without their options (``anonymize[ner=spacy]+cda`` -> ``anonymize+cda``)."""
    from relext.debias import canonical_name, split_outside_brackets

    return {"+".join(p.split("[", 1)[0] for p in split_outside_brackets(canonical_name(v), "+"))
            if v != "none" else "none" for v in variants}


def is_paper_variant(variant: str) -> bool:
    """none, or a combination of anonymize, cda and hard_debias (anonymize's NER choice allowed);
    not the toolkit's controls (duplicate) nor its options of a method (hard_debias[freeze=true])."""
    from relext.debias import split_outside_brackets

    if variant == "none":
        return True
    for p in split_outside_brackets(variant, "+"):
        name, _, opt = p.partition("[")
        if name not in PAPER_METHODS or (opt and not (name == "anonymize" and opt.startswith("ner="))):
            return False
    return True


def mean_abs_gap(m: Mapping[str, np.ndarray], metric: str = "f1_gap") -> np.ndarray:
    return np.mean([np.abs(m[f"{metric}:{r}"]) for r in POSITIVE_RELATIONS], axis=0)


def _abs_vs(v: str, rel: str, other: str, metric: str = "f1_gap") -> Fn:
    return lambda m: np.abs(m[v][f"{metric}:{rel}"]) - np.abs(m[v][f"{metric}:{other}"])


def _abs_diff(a: str, b: str, name: str) -> Fn:
    return lambda m: np.abs(m[a][name]) - np.abs(m[b][name])


def _diff(a: str, b: str, name: str) -> Fn:
    return lambda m: m[a][name] - m[b][name]


def _g_diff(a: str, b: str) -> Fn:
    return lambda m: mean_abs_gap(m[a]) - mean_abs_gap(m[b])


def _metric(v: str, name: str, shift: float = 0.0) -> Fn:
    return lambda m: m[v][name] - shift


def _extreme(v: str, rel: str, direction: int, metric: str = "f1_gap") -> list[Part]:
    """``rel``'s |gap| above (+1) / below (-1) each other relation's, one part per relation."""
    return [Part(f"|{metric} {rel}| - |{metric} {r}| ({v})", [v], _abs_vs(v, rel, r, metric), direction)
            for r in POSITIVE_RELATIONS if r != rel]


def _little(v: str, rel: str) -> list[Part]:
    """|gap| < LITTLE as two one-sided parts (an equivalence test)."""
    name = f"f1_gap:{rel}"
    return [Part(f"gap {rel} + {LITTLE} ({v})", [v], _metric(v, name, -LITTLE), 1),
            Part(f"gap {rel} - {LITTLE} ({v})", [v], _metric(v, name, LITTLE), -1)]


Q_SPOUSE_HIGHEST = ('"We find that predictions on spouse typically exhibit the highest difference in F1 score, '
                    'as we predicted."')
Q_HYPERNYM_LEAST = ('"However, surprisingly, predictions on hypernym exhibit the least gender bias" / '
                    '"To our surprise, F1 score gap was lowest for hypernym"')
Q_BIRTHDATE = '"Predictions on birthDate exhibited very little gender bias, as predicted."'
Q_ALL_COMBOS = ('"throughout all combinations of debiasing options, the PCNN with Attention model attains better '
                'F1 score for the spouse relation when predicting on male sentences than for female sentences."')
Q_CDA_GAP = ('"Gender-Swapping substantially decreases F1 score gap for the spouse relation as well as for all '
             'other relations"')
Q_CDA_F1 = ('"the absolute F1 scores for both male and female sentences for all relations increased when '
            'Gender-Swapping was applied"')
Q_HARD = ('"Hard-Debiased Word Embeddings was also extremely effective at mitigating the difference in F1 '
          'scores for all relations."')
Q_ANON = '"Name Anonymization surprisingly substantially increases F1 score gap for the hypernym relation"'
Q_CDA_BEST = ('"the best combination for both bias mitigation and absolute model performance was using '
              'gender-swapping on its own." (the Conclusion names gender-swapping paired with debiased '
              'embeddings instead)')
Q_AVERAGE = ('"For every encoder except PCNN, architectures using the Average selector exhibited significantly '
             'less gender bias than models using the same encoder and the Attention selector."')
Q_AVERAGE_F1 = '"the average selector performed slightly better than the attention selector across the board"'
Q_EO = ('"Predictions on birthDate satisfy Equality of Opportunity the least in all case except in the case of '
        'RNN with Attention, when predictions on spouse were the most biased."')


def _src(section: str, quote: str) -> str:
    return f"{section}: {quote}"


def claim_specs(variants: Sequence[str]) -> list[ClaimSpec]:
    """The debiasing study's claims that the given variants can test."""
    have = set(variants)
    out: list[ClaimSpec] = []
    if "none" not in have:
        return out
    out += [
        ClaimSpec("Spouse has the largest F1 gap (baseline)", "|gap spouse| - |gap r| (none), every other r", 1,
                  ["none"], parts=_extreme("none", "spouse", 1), source=_src(SETUP, Q_SPOUSE_HIGHEST)),
        ClaimSpec("Hypernym has the smallest F1 gap (baseline)", "|gap hypernym| - |gap r| (none), every other r",
                  -1, ["none"], parts=_extreme("none", "hypernym", -1), source=_src(SETUP, Q_HYPERNYM_LEAST)),
        ClaimSpec("birthDate shows very little F1 gap (baseline)",
                  f"gap birthDate (none) within +-{LITTLE} (two one-sided parts)", -1, ["none"],
                  parts=_little("none", "birthDate"), source=_src(SETUP, Q_BIRTHDATE)),
        ClaimSpec("The spouse F1 gap favours male articles (baseline)", "gap spouse (none)", 1,
                  ["none"], lambda m: m["none"]["f1_gap:spouse"], source=_src(SETUP, Q_ALL_COMBOS)),
    ]
    if "cda" in have:
        dup = ([Part("micro F1 duplicate - none (training budget alone)", ["duplicate", "none"],
                     _diff("duplicate", "none", "micro_f1:pooled"), 1)] if "duplicate" in have else [])
        out += [
            ClaimSpec("CDA reduces the spouse F1 gap", "|gap spouse| cda - none", -1, ["cda", "none"],
                      _abs_diff("cda", "none", "f1_gap:spouse"), source=_src(SETUP, Q_CDA_GAP)),
            ClaimSpec("CDA reduces the mean |F1 gap|", "G(cda) - G(none)", -1, ["cda", "none"], _g_diff("cda", "none"),
                      source=_src(SETUP, Q_CDA_GAP)),
            ClaimSpec("CDA raises micro F1", "micro F1 cda - none", 1, ["cda", "none"],
                      _diff("cda", "none", "micro_f1:pooled"), source=_src(SETUP, Q_CDA_F1), controls=dup),
        ]
        if "duplicate" in have:
            out += [
                ClaimSpec("CDA raises micro F1 beyond training as long (equal-budget control)",
                          "micro F1 cda - duplicate", 1, ["cda", "duplicate"],
                          _diff("cda", "duplicate", "micro_f1:pooled"), TOOLKIT),
                ClaimSpec("CDA reduces the spouse F1 gap beyond training as long (equal-budget control)",
                          "|gap spouse| cda - duplicate", -1, ["cda", "duplicate"],
                          _abs_diff("cda", "duplicate", "f1_gap:spouse"), TOOLKIT),
            ]
    if "hard_debias" in have:
        out.append(ClaimSpec("Hard-debiased embeddings reduce the mean |F1 gap|", "G(hard_debias) - G(none)", -1,
                             ["hard_debias", "none"], _g_diff("hard_debias", "none"), source=_src(SETUP, Q_HARD)))
    if "anonymize" in have:
        out.append(ClaimSpec("Anonymization increases the hypernym F1 gap", "|gap hypernym| anonymize - none", 1,
                             ["anonymize", "none"], _abs_diff("anonymize", "none", "f1_gap:hypernym"),
                             source=_src(SETUP, Q_ANON)))
    rivals = [v for v in variants if is_paper_variant(v) and v not in ("none", "cda")]
    if "cda" in have and rivals:
        best = "CDA on its own has the smallest mean |F1 gap| of the debiasing options"
        whole = _bases(rivals) == set(PAPER_VARIANTS) - {"none", "cda"} and len(rivals) == len(PAPER_VARIANTS) - 2
        out.append(ClaimSpec(best if whole else "CDA on its own has the smallest mean |F1 gap| of "
                             + members_text([variant_label(v) for v in sorted(["cda", *rivals], key=_variant_order)]),
                             f"G(cda) - G(v), every other paper variant v ({len(rivals)})", -1, ["cda", *rivals],
                             narrows=None if whole else best,
                             parts=[Part(f"G(cda) - G({v})", ["cda", v], _g_diff("cda", v), -1) for v in rivals],
                             source=_src(SETUP, Q_CDA_BEST)))
    paper = [v for v in variants if is_paper_variant(v)]
    if len(paper) > 1:
        controls = [v for v in variants if not is_paper_variant(v)]
        every = "The spouse F1 gap favours male articles under every variant"
        whole = _bases(paper) == set(PAPER_VARIANTS) and len(paper) == len(PAPER_VARIANTS)
        out.append(ClaimSpec(every if whole else "The spouse F1 gap favours male articles under "
                             + members_text([variant_label(v) for v in sorted(paper, key=_variant_order)]),
                             f"gap spouse of every paper variant ({len(paper)})", 1, paper,
                             narrows=None if whole else every,
                             parts=[Part(f"gap spouse ({v})", [v], _metric(v, "f1_gap:spouse"), 1) for v in paper],
                             controls=[Part(f"gap spouse ({v})", [v], _metric(v, "f1_gap:spouse"), 1)
                                       for v in controls],
                             source=_src(SETUP, Q_ALL_COMBOS)))
    return out


def grid_claim_specs(combos: Sequence[str]) -> list[ClaimSpec]:
    """Claims of the encoder x selector grid; ``combos`` are ``<encoder>-<selector>`` names."""
    out = []
    for c in combos:
        out.append(ClaimSpec(f"Spouse has the largest F1 gap ({c})", f"|gap spouse| - |gap r| ({c}), every other r",
                             1, [c], parts=_extreme(c, "spouse", 1), source=_src(SETUP, Q_SPOUSE_HIGHEST)))
        out.append(ClaimSpec(f"Hypernym has the smallest F1 gap ({c})",
                             f"|gap hypernym| - |gap r| ({c}), every other r", -1, [c],
                             parts=_extreme(c, "hypernym", -1), source=_src(SETUP, Q_HYPERNYM_LEAST)))
        out.append(ClaimSpec(f"birthDate shows very little F1 gap ({c})",
                             f"gap birthDate ({c}) within +-{LITTLE} (two one-sided parts)", -1, [c],
                             parts=_little(c, "birthDate"), source=_src(SETUP, Q_BIRTHDATE)))
    encoders = sorted({c.rsplit("-", 1)[0] for c in combos})
    pairs = [e for e in encoders if f"{e}-attention" in combos and f"{e}-average" in combos]

    def avg_part(e: str, fn, name: str, direction: int) -> Part:
        return Part(f"{name} ({e})", [f"{e}-average", f"{e}-attention"], fn, direction)

    less = [e for e in pairs if e != "pcnn"]
    paper_less = [e for e in PAPER_ENCODERS if e != "pcnn"]
    if less:
        name = "Average shows less bias than attention for every encoder except PCNN"
        whole = sorted(less) == sorted(paper_less)
        out.append(ClaimSpec(name if whole else "Average shows less bias than attention for "
                             + members_text([LABELS.get(e, e) for e in sorted(less, key=_encoder_order)]),
                             f"G(average) - G(attention), every encoder but PCNN ({', '.join(less)})", -1,
                             [f"{e}-{s}" for e in less for s in ("average", "attention")],
                             parts=[avg_part(e, _g_diff(f"{e}-average", f"{e}-attention"), "G avg - G att", -1)
                                    for e in less],
                             controls=[avg_part("pcnn", _g_diff("pcnn-average", "pcnn-attention"), "G avg - G att",
                                                -1)] if "pcnn" in pairs else [],
                             source=_src(EOP, Q_AVERAGE), narrows=None if whole else name))
    if pairs:
        name = "Average scores a higher micro F1 than attention across the board"
        whole = sorted(pairs) == sorted(PAPER_ENCODERS)
        out.append(ClaimSpec(name if whole else "Average scores a higher micro F1 than attention for "
                             + members_text([LABELS.get(e, e) for e in sorted(pairs, key=_encoder_order)]),
                             f"micro F1 average - attention, every encoder ({', '.join(pairs)})", 1,
                             [f"{e}-{s}" for e in pairs for s in ("average", "attention")],
                             parts=[avg_part(e, _diff(f"{e}-average", f"{e}-attention", "micro_f1:pooled"),
                                             "micro F1 avg - att", 1) for e in pairs],
                             source=_src(EOP, Q_AVERAGE_F1), narrows=None if whole else name))
    rnn_att = "rnn-attention"
    eo = [c for c in combos if c != rnn_att]
    if eo:
        name = "birthDate satisfies equality of opportunity the least (every combination but RNN+attention)"
        paper_eo = [f"{e}-{s}" for e in PAPER_ENCODERS for s in ("attention", "average") if f"{e}-{s}" != rnn_att]
        whole = sorted(eo) == sorted(paper_eo)
        out.append(ClaimSpec(name if whole else "birthDate satisfies equality of opportunity the least ("
                             + members_text([combo_label(c) for c in sorted(eo, key=_combo_order)]) + ")",
                             f"|EO gap birthDate| - |EO gap r|, every other r and combination ({len(eo)})", 1, eo,
                             parts=[p for c in eo for p in _extreme(c, "birthDate", 1, "eo_gap")],
                             source=_src(EOP, Q_EO), narrows=None if whole else name))
    if rnn_att in combos:
        out.append(ClaimSpec("Spouse satisfies equality of opportunity the least (RNN+attention)",
                             "|EO gap spouse| - |EO gap r| (rnn-attention), every other r", 1, [rnn_att],
                             parts=_extreme(rnn_att, "spouse", 1, "eo_gap"), source=_src(EOP, Q_EO)))
    return out


def _seeds(design: Design, variants: Sequence[str], half: int | None) -> list[int]:
    """The seeds ``variants`` share, or the first (``half=0``) or second (``half=1``) half."""
    common = design.data.common_seeds(list(variants))
    if half is None:
        return common
    h = len(common) // 2
    return common[:h] if half == 0 else common[h:]


def _no_seeds(why: str) -> Estimate:
    nan = float("nan")
    return Estimate(value=nan, ci=[nan, nan], ci_seed=[nan, nan], ci_entity=[nan, nan], se=nan, se_seed=nan,
                    se_entity=nan, p_value=1.0, n_seeds=0, seeds=[], confidence=0.95, degenerate=why)


def _estimate(design: Design, variants: Sequence[str], fn: Fn, half: int | None) -> Estimate:
    use = _seeds(design, variants, half)
    if not use:
        return _no_seeds("its variants share no seed" + ("" if half is None else " in this half"))
    return design.estimate(fn, list(variants), seeds=use)


def _claim(design: Design, s: ClaimSpec, half: int | None) -> Claim:
    controls = [{"part": c.name, **{k: v for k, v in _estimate(design, c.variants, c.fn, half).to_dict().items()
                                    if k in ("value", "ci", "p_value", "n_seeds", "degenerate")}}
                for c in s.controls if all(v in design.data.counts for v in c.variants)]
    extra = {"controls": controls} if controls else {}
    if s.narrows:
        extra["narrows"] = s.narrows
    if s.parts:
        parts = [(p.name, _estimate(design, p.variants, p.fn, half), p.direction) for p in s.parts]
        return iut_claim(s.name, s.statistic, s.direction, parts, s.source, extra)
    return Claim(s.name, s.statistic, s.direction, _estimate(design, s.variants, s.fn, half), s.source, extra=extra)


def evaluate_claims(design: Design, specs: Sequence[ClaimSpec], *, half: int | None = None,
                    alpha: float = 0.05) -> list[Verdict]:
    """Verdicts of ``specs`` (Holm across them), each on the seeds its variants share (an
    intersection-union claim: each part on its own variants' seeds), or on one half of them. Each
    verdict records what re-deriving it from its numbers needs (:func:`wgbstudies.recheck.enrich`:
    its standard error, each part's standard error, t df and seeds)."""
    from wgbstudies.recheck import enrich

    claims = [_claim(design, s, half) for s in specs]
    out = verdicts(claims, alpha=alpha, method="holm")
    enrich(out, claims)
    return out


def _spec_seeds(design: Design, spec: ClaimSpec, half: int) -> int:
    groups = [p.variants for p in spec.parts] if spec.parts else [spec.variants]
    return min(len(_seeds(design, g, half)) for g in groups)


def person_halves(data: StudyCounts, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """Two disjoint person masks: the first and second half of the folds (under cross-fitting),
    else a seeded split of each gender's persons in two."""
    if data.fold is not None and len(np.unique(data.fold)) >= 2:
        folds = np.unique(data.fold)
        first = np.isin(data.fold, folds[: len(folds) // 2])
        return first, ~first, (f"folds {folds[: len(folds) // 2].tolist()} / {folds[len(folds) // 2:].tolist()}")
    rng = np.random.default_rng(seed)
    first = np.zeros(len(data.entity_ids), dtype=bool)
    for g in ("male", "female"):
        idx = np.flatnonzero(data.gender == g)
        first[rng.permutation(idx)[: len(idx) // 2]] = True
    return first, ~first, f"persons split in two within gender (seed {seed})"


def half_split(design: Design, specs: Sequence[ClaimSpec], full: Sequence[Verdict], *,
               alpha: float = 0.05) -> list[dict]:
    """Each claim re-decided on two disjoint halves of seeds and persons (first seeds with the
    first persons, second with second; Holm across the claims within each half). A claim with fewer
    than :data:`HALF_MIN_SEEDS` seeds in a half is not checked (``checked`` False, halves None).
    ``stable``: a supported or contradicted verdict that both halves repeat (None otherwise)."""
    a, b, how = person_halves(design.data, seed=design.seed)
    halves = []
    for h, mask in ((0, a), (1, b)):
        sub = Design(design.data.take(mask), n_resamples=design.n_resamples, seed=design.seed,
                     confidence=design.confidence)
        halves.append(evaluate_claims(sub, specs, half=h, alpha=alpha))
    out = []
    for i, (v, spec) in enumerate(zip(full, specs)):
        per_half = [_spec_seeds(design, spec, h) for h in (0, 1)]
        checked = min(per_half) >= max(HALF_MIN_SEEDS, MIN_SEEDS)
        hv = [h[i].verdict if checked else None for h in halves]
        decided = v.verdict in ("supported", "contradicted")
        out.append({"claim": v.claim, "first_half": hv[0], "second_half": hv[1], "seeds_per_half": per_half,
                    "persons_per_half": [int(a.sum()), int(b.sum())], "persons_split": how, "checked": checked,
                    "stable": (all(h == v.verdict for h in hv) if decided and checked else None)})
    return out


def population_views(design: Design) -> list[tuple[str, Design]]:
    """The populations a study reports side by side, never pooled silently: ``("test", ...)`` (the
    annotated test persons: the paper's population) first, then ``("all", ...)`` (test and
    distantly supervised persons) when a cross-fitted study has distant persons."""
    data = design.data
    if data.populations() == ["test"]:
        return [("test", design)]
    views = []
    if "test" in data.populations():
        views.append(("test", Design(data.subset("test"), n_resamples=design.n_resamples, seed=design.seed,
                                     confidence=design.confidence)))
    return views + [("all", design)]


def claims_by_population(design: Design, specs: Sequence[ClaimSpec], *, alpha: float = 0.05) -> dict:
    """{"population": the first view's name, "claims", "half_split" of the first view, and
    "populations": the other views' claims and half splits} (:func:`population_views`)."""
    out: dict = {}
    for k, (name, d) in enumerate(population_views(design)):
        full = evaluate_claims(d, specs, alpha=alpha)
        rep = {"population": name, "n_persons": int(len(d.data.entity_ids)),
               "claims": [v.to_dict() for v in full], "half_split": half_split(d, specs, full, alpha=alpha)}
        if k == 0:
            out.update(rep)
        else:
            out.setdefault("populations", {})[name] = rep
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


def grid_design_report(runs: Mapping[tuple[str, int], Path], *, rules: Sequence[str] = ("argmax", "threshold"),
                       n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> dict:
    """Design report of a grid: ``runs`` maps (``<encoder>-<selector>``, seed) to run directories
    with per-entity counts. Gap flags for each decision rule; claims (Holm) and their half-split
    check for the first rule."""
    if not runs:
        return {}
    out: dict = {"design": {"unit": "seeds x test entities (crossed); entities resampled within gender "
                                    "(and fold); interaction counted once",
                            "n_resamples": n_resamples, "alpha": alpha, "claims_correction": "holm",
                            "claims_reference": ("studentized: value / se against the seed reference (Student's t(S - 1) "
                                "where the seeds may dominate, t with the persons' df where they cannot, "
                                "a Berger-Boos bound on the seed share between; design version 2)"),
                            "claims_test": "intersection-union for claims about every member of a set",
                            "gap_flags_correction": "benjamini-hochberg", "bootstrap_seed": seed},
                 "gaps": {}}
    combos = sorted({c for c, _ in runs})
    for rule in rules:
        try:
            design = design_for_runs(runs, rule=rule, n_resamples=n_resamples, seed=seed)
        except ValueError:
            continue  # e.g. no threshold counts (no validation predictions)
        combos = sorted(design.data.counts)
        out["gaps"][rule] = gap_flags(population_views(design)[0][1], combos, alpha=alpha)  # the main population
        if "claims" not in out:
            out.update(rule=rule, **claims_by_population(design, grid_claim_specs(combos), alpha=alpha),
                       seeds={c: design.data.seeds(c) for c in combos})
    return out
