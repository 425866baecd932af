"""The power plan of a study, before compute: the minimum detectable effect (MDE) of every claim
under today's protocol and under person-level cross-fitting (issue #26).

**Today** every claim is judged on the 523 annotated test persons (255 men, 268 women) with one
model per seed. **Cross-fitting** holds every person of the release out once (K folds): all 5,169
persons (3,665 men, 1,504 women) are judged, each by a model that never saw them.

**Method.** From the committed per-entity counts of a study (``entity_counts.npz`` of each run):

1. :class:`wgbstats.design.Design` estimates each claim (its statistic, its variants paired on the
   seeds they share, exactly as the study's verdicts) with its combined (seeds x entities),
   entity-only (seeds fixed) and seed-only bootstrap standard errors: an *entity part*
   ``se_entity**2`` (the test persons' sampling noise) and a *seed part*
   ``se_seed**2`` (the seed-only bootstrap's, entities fixed: the models' noise). Both carry the
   seed x person interaction, so their sum is at least the design's combined variance ``se**2``
   (conservative); today's MDE is the design's own (``se``), as in the verdicts.
2. The entity part is **projected to the cross-fitted population** by resampling persons within
   gender *up to* the population's size: each bootstrap replicate draws 3,665 men from the 255 test
   men and 1,504 women from the 268 test women (multinomial weights), and the claim's statistic is
   recomputed on the replicate's totals (:func:`wgbstats.power.projected_unit_se`). This **assumes that the
   distant (train / validation) persons behave like the test persons**: the distant persons carry
   no crowd-checked labels, and their real per-person variability may differ; the plan is replaced
   by measured MDEs once the cross-fitted runs exist.
3. The seed part scales with the seed count: ``seed part(S) = seed part(S0) * S0 / S``. This is
   conservative: under cross-fitting one seed is K fold models, each judging 1/K of the persons,
   and if their noise averaged out the seed part would fall as 1 / (S * K)
   (``mde_fold_averaged`` shows that optimistic bound).
4. ``MDE = (z(1 - level / 2) + z(power)) * sqrt(entity part + seed part)`` at the level of Holm's
   first step (``alpha / m`` over the ``m`` claims of the study), 80% power, two-sided; the power
   at the observed effect ``d`` is ``Phi(|d| / se - z) + Phi(-|d| / se - z)``.

The generic parts (power at an effect, seeds for a target, the projection) are
:mod:`wgbstats.power`; this module is the relation-extraction study's plan. The committed plans are ``results/re_crossfit/plan.{json,md}``
(``scripts/study/power_plan.py``); :func:`plan_markdown` renders its tables for the docs page.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from wgbstudies.claims import ClaimSpec
from wgbstats.counts import StudyCounts
from wgbstats.design import Design
from wgbstats.power import power_at, projected_entity_se, projected_unit_se, seeds_needed  # noqa: F401 (re-exported)
from wgbstats.verdicts import z_total

_seeds_needed = seeds_needed

#: Persons of the release by gender (train + validation + male_test + female_test).
POPULATION = {"male": 3665, "female": 1504}
#: The annotated test persons (today's population).
TEST_POPULATION = {"male": 255, "female": 268}
FOLDS = 5
SEED_COUNTS = (3, 5, 10)
#: Seeds the cross-fitted reruns plan (issue #26: at least 5).
PLANNED_SEEDS = 5
#: The issue's goal for every F1-gap claim under cross-fitting: one F1 point.
GOAL_MDE = 0.01
ALPHA = 0.05
POWER = 0.8
_RUN = re.compile(r"^(?P<name>.+)-(?P<selector>attention|average|one)-seed(?P<seed>\d+)$")


#: The kinds of claim the goal (MDE <= GOAL_MDE under cross-fitting) is about: gender gaps.
GOAL_KINDS = ("f1_gap", "eo_gap")


def claim_kind(spec: ClaimSpec) -> str:
    """``micro_f1`` for a claim about micro F1, ``eo_gap`` for one about equality-of-opportunity
    (recall) gaps, ``f1_gap`` for one about F1 gaps; the goal is about the gap claims."""
    if "micro F1" in spec.statistic:
        return "micro_f1"
    return "eo_gap" if "EO gap" in spec.statistic else "f1_gap"


# --------------------------------------------------------------------------------------------
# Committed runs
# --------------------------------------------------------------------------------------------
def find_runs(runs_dir: str | Path, *, key: str = "variant",
              keep: Sequence[str] | None = None) -> dict[tuple[str, int], Path]:
    """``(name, seed) -> run dir`` of the finished runs (``entity_counts.npz``) under ``runs_dir``,
    named ``<name>-<selector>-seed<k>``; ``key="variant"``: name is the variant (the debiasing
    study), ``key="combo"``: ``<encoder>-<selector>`` (the grid). ``keep`` limits the names."""
    root = Path(runs_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no runs folder")
    if key not in ("variant", "combo"):
        raise ValueError(f"key must be 'variant' or 'combo', got {key!r}")
    out: dict[tuple[str, int], Path] = {}
    for d in sorted(root.iterdir()):
        m = _RUN.match(d.name)
        if not m or not (d / "entity_counts.npz").is_file():
            continue
        name = m["name"] if key == "variant" else f"{m['name']}-{m['selector']}"
        if keep is None or name in keep:
            out[(name, int(m["seed"]))] = d
    if not out:
        raise ValueError(f"{root}: no run folders <name>-<selector>-seed<k> with entity_counts.npz"
                         + (f" for {list(keep)}" if keep else ""))
    return out


@dataclass
class ClaimPower:
    claim: str
    statistic: str
    kind: str                      # f1_gap | micro_f1
    direction: int
    variants: list[str]
    seeds_today: int
    observed: float                # the effect on today's test persons (seed-averaged)
    se_today: float
    se_seed_today: float           # seed-only bootstrap SE (entities fixed), for reference
    se_entity_today: float
    var_seed_part: float           # se_seed**2 at seeds_today (falls as 1 / seeds)
    se_entity_crossfit: float      # the entity part projected to the cross-fitted population
    mde_today: float
    power_today: float
    mde_crossfit: dict[int, float]             # seeds -> MDE (all persons, K folds)
    power_crossfit: dict[int, float]           # seeds -> power at the observed effect
    mde_crossfit_test_population: dict[int, float]   # the test persons only, judged by fold models
    mde_entity_floor: float        # all persons, infinitely many seeds
    mde_fold_averaged: dict[int, float]        # folds -> MDE at the planned seeds if fold noise averages
    mde_alone: float               # the claim tested alone (level alpha), all persons, planned seeds
    seeds_for_goal: int | None     # seeds for MDE <= goal under cross-fitting (None: no seed count)
    seeds_to_decide: int | None    # seeds for 80% power at the observed effect under cross-fitting
    decide: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("mde_crossfit", "power_crossfit", "mde_crossfit_test_population", "mde_fold_averaged"):
            d[k] = {str(s): v for s, v in d[k].items()}
        return d


def _statistic_power(design: Design, name: str, statistic: str, kind: str, direction: int, variants: Sequence[str],
                     fn, *, n_claims: int, seed_counts: Sequence[int], planned: int, folds: int,
                     population: Mapping[str, int], alpha: float, power: float, goal: float,
                     n_resamples: int | None) -> ClaimPower:
    """The plan of one statistic ``fn`` of ``variants`` (a claim, or one part of one)."""
    data = design.data
    seeds = data.common_seeds(list(variants))
    if len(seeds) < 2:
        raise ValueError(f"claim {name!r}: its variants share {len(seeds)} seed(s); a seed part needs 2")
    est = design.estimate(fn, list(variants), seeds=seeds)
    level = alpha / max(n_claims, 1)
    z, z1 = z_total(level, power), z_total(alpha, power)
    s0 = len(seeds)
    var_e, var_s = est.se_entity ** 2, est.se_seed ** 2
    se_cf = projected_entity_se(data, _Stat(list(variants), fn), seeds, population,
                                n_resamples=n_resamples or design.n_resamples, seed=design.seed)
    var_cf = se_cf ** 2

    def sd(var_entity: float, n: float) -> float:
        return math.sqrt(var_entity + var_s * s0 / n)

    d = abs(est.value)
    return ClaimPower(
        claim=name, statistic=statistic, kind=kind, direction=direction, variants=list(variants), seeds_today=s0,
        observed=float(est.value), se_today=est.se, se_seed_today=est.se_seed, se_entity_today=est.se_entity,
        var_seed_part=var_s, se_entity_crossfit=se_cf, mde_today=z * est.se, power_today=power_at(d, est.se, level),
        mde_crossfit={n: z * sd(var_cf, n) for n in seed_counts},
        power_crossfit={n: power_at(d, sd(var_cf, n), level) for n in sorted({*seed_counts, planned})},
        mde_crossfit_test_population={n: z * sd(var_e, n) for n in seed_counts},
        mde_entity_floor=z * se_cf, mde_fold_averaged={k: z * sd(var_cf, planned * k) for k in (folds, 2 * folds)},
        mde_alone=z1 * sd(var_cf, planned), seeds_for_goal=_seeds_needed(var_cf, var_s, s0, goal / z),
        seeds_to_decide=_seeds_needed(var_cf, var_s, s0, d / z) if d > 0 else None)


@dataclass
class _Stat:
    variants: list[str]
    fn: object


def _worst(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else max(values)


def claim_power(design: Design, spec: ClaimSpec, *, n_claims: int, seed_counts: Sequence[int] = SEED_COUNTS,
                planned: int = PLANNED_SEEDS, folds: int = FOLDS, population: Mapping[str, int] = POPULATION,
                alpha: float = ALPHA, power: float = POWER, goal: float = GOAL_MDE,
                n_resamples: int | None = None) -> ClaimPower:
    """The power plan of one claim (module docstring), ``n_claims`` = the size of its Holm family.

    An intersection-union claim (``spec.parts``: every part must hold, each tested at the claim's
    level) is planned part by part: its MDEs are the largest of its parts', its power the smallest
    (an upper bound of the chance that every part is detected), its seed counts the largest; the
    row shows its weakest part (the least power under cross-fitting at the planned seeds)."""
    kw = dict(n_claims=n_claims, seed_counts=seed_counts, planned=planned, folds=folds, population=population,
              alpha=alpha, power=power, goal=goal, n_resamples=n_resamples)
    kind = claim_kind(spec)
    parts = getattr(spec, "parts", None)
    if not parts:
        cp = _statistic_power(design, spec.name, spec.statistic, kind, spec.direction, spec.variants, spec.fn, **kw)
    else:
        each = [_statistic_power(design, p.name, p.name, kind, p.direction, p.variants, p.fn, **kw) for p in parts]
        weak = min(each, key=lambda c: (c.power_crossfit[planned], -c.mde_crossfit.get(planned, 0.0)))
        worst = lambda key: {n: max(getattr(c, key)[n] for c in each) for n in getattr(weak, key)}  # noqa: E731
        cp = ClaimPower(**{**asdict(weak), "claim": spec.name, "statistic": f"{spec.statistic}; weakest: {weak.claim}",
                           "direction": spec.direction, "variants": list(spec.variants),
                           "mde_today": max(c.mde_today for c in each), "power_today": min(c.power_today for c in each),
                           "mde_crossfit": worst("mde_crossfit"),
                           "power_crossfit": {n: min(c.power_crossfit[n] for c in each) for n in weak.power_crossfit},
                           "mde_crossfit_test_population": worst("mde_crossfit_test_population"),
                           "mde_entity_floor": max(c.mde_entity_floor for c in each),
                           "mde_fold_averaged": worst("mde_fold_averaged"), "mde_alone": max(c.mde_alone for c in each),
                           "seeds_for_goal": _worst([c.seeds_for_goal for c in each]),
                           "seeds_to_decide": _worst([c.seeds_to_decide for c in each]),
                           "extra": {"test": "intersection-union", "weakest_part": weak.claim,
                                     "parts": [c.to_dict() for c in each]}})
    cp.decide = decide_text(cp, planned=planned, goal=goal, folds=folds, pw_planned=cp.power_crossfit[planned])
    if parts and len(parts) > 1:
        cp.decide += f"; every one of its {len(parts)} parts must be detected (weakest: {cp.extra['weakest_part']})"
    return cp


def decide_text(cp: ClaimPower, *, planned: int, goal: float, folds: int, pw_planned: float) -> str:
    """What would decide the claim (and reach the goal) under cross-fitting, in words."""
    parts = []
    if pw_planned >= POWER:
        parts.append(f"cross-fitting at {planned} seeds decides it (power {pw_planned:.2f})")
    elif cp.seeds_to_decide:
        parts.append(f"~{cp.seeds_to_decide} seeds under cross-fitting for 80% power at the observed effect")
    else:
        parts.append(f"no seed count detects the observed {abs(cp.observed):.4f}: the population's own noise "
                     f"(MDE floor {cp.mde_entity_floor:.4f}) exceeds it")
    if cp.kind in GOAL_KINDS:
        mde = cp.mde_crossfit.get(planned)
        if mde is not None and mde <= goal:
            parts.append(f"goal MDE <= {goal} met at {planned} seeds")
        elif cp.seeds_for_goal:
            parts.append(f"goal MDE <= {goal} needs ~{cp.seeds_for_goal} seeds")
        else:
            best = min(cp.mde_fold_averaged.values())
            tail = (f"; fewer claims: tested alone {cp.mde_alone:.4f}" if cp.mde_alone <= goal else
                    f"; tested alone {cp.mde_alone:.4f}")
            parts.append(f"goal MDE <= {goal} out of reach by seeds (floor {cp.mde_entity_floor:.4f}); if fold "
                         f"models' noise averages, {2 * folds} folds give {best:.4f}{tail}; the floor needs "
                         f"~{math.ceil(persons_factor(cp, goal) * 100) / 100:.2f}x the persons")
    return "; ".join(parts)


def persons_factor(cp: ClaimPower, goal: float = GOAL_MDE) -> float:
    """How many times the release's persons the entity floor alone would need to reach ``goal``
    (the entity part falls as 1 / persons)."""
    return (cp.mde_entity_floor / goal) ** 2


def study_plan(data: StudyCounts, specs: Sequence[ClaimSpec], *, n_resamples: int = 2000, seed: int = 0,
               **kw) -> list[ClaimPower]:
    """The plan of every claim of a study (Holm family = ``specs``), on one paired design."""
    design = Design(data, n_resamples=n_resamples, seed=seed)
    return [claim_power(design, s, n_claims=len(specs), **kw) for s in specs]


def assumptions(*, planned: int = PLANNED_SEEDS, folds: int = FOLDS) -> list[str]:
    return [
        f"today: the {sum(TEST_POPULATION.values())} annotated test persons ({TEST_POPULATION['male']} men, "
        f"{TEST_POPULATION['female']} women), the committed seeds, one model per seed",
        f"cross-fitting: all {sum(POPULATION.values())} persons ({POPULATION['male']} men, {POPULATION['female']} "
        f"women), {folds} folds; the entity part projected by resampling the test persons within gender up to "
        "that population",
        "the projection assumes the distant (train / validation) persons behave like the test persons; they carry "
        "no crowd-checked labels and the real distant population may differ: the plan is replaced by measured "
        "MDEs once the cross-fitted runs exist",
        "the entity part is the entity-only bootstrap variance (seeds fixed), the seed part the seed-only bootstrap "
        "variance (entities fixed) of the design layer; both carry the seed x person interaction, so their sum is at "
        "least the design's combined variance (conservative; plan.json keeps all three); the seed part falls as "
        "1 / seeds; if the K fold models' noise averaged, it would fall as "
        "1 / (seeds x K) (the optimistic bound, 'if fold models' noise averages')",
        f"MDE at {POWER:.0%} power, two-sided, at Holm's first step alpha / m ({ALPHA} over the m claims of the "
        f"study); the planned seed count is {planned}",
        "the observed effect is today's (test persons); a claim's effect on all persons may differ",
    ]


# --------------------------------------------------------------------------------------------
# The plan of a study, its summary and its table
# --------------------------------------------------------------------------------------------
def plan_section(data: StudyCounts, specs: Sequence[ClaimSpec], *, n_resamples: int = 2000, seed: int = 0,
                 planned: int = PLANNED_SEEDS, goal: float = GOAL_MDE, **kw) -> dict:
    """One study's plan as JSON: every claim's :class:`ClaimPower` and a summary against the goal."""
    if planned not in kw.get("seed_counts", SEED_COUNTS):
        raise ValueError(f"the planned seed count {planned} must be one of the seed counts "
                         f"{kw.get('seed_counts', SEED_COUNTS)}")
    plan = study_plan(data, specs, n_resamples=n_resamples, seed=seed, planned=planned, goal=goal, **kw)
    gap = [c for c in plan if c.kind in GOAL_KINDS]
    met = [c.claim for c in gap if c.mde_crossfit[planned] <= goal]
    return {
        "n_claims": len(specs), "level": ALPHA / max(len(specs), 1),
        "seeds_today": {v: data.seeds(v) for v in sorted(data.counts)},
        "test_persons": {g: int(np.sum(data.gender == g)) for g in ("male", "female")},
        "claims": [c.to_dict() for c in plan],
        "summary": {
            "gap_claims": len(gap),
            "goal_met_at_planned_seeds": met,
            "worst_gap_mde_at_planned_seeds": max((c.mde_crossfit[planned] for c in gap), default=None),
            "seeds_for_goal": {c.claim: c.seeds_for_goal for c in gap if c.claim not in met},
            "out_of_reach_by_seeds": [c.claim for c in gap if c.seeds_for_goal is None],
            "persons_factor_for_goal": {c.claim: math.ceil(persons_factor(c, goal) * 100) / 100 for c in gap
                                        if c.seeds_for_goal is None},
            "decided_at_planned_seeds": [c.claim for c in plan if c.power_crossfit[planned] >= POWER],
        },
    }


def _mde(x) -> str:
    return "–" if x is None else f"{x:.4f}"


def table_rows(section: dict, *, planned: int = PLANNED_SEEDS) -> tuple[list[str], list[list[str]]]:
    """The plan table of one study section (plan.json): claim, statistic, observed effect today,
    MDE today, MDE under cross-fitting at each seed count, power at the observed effect, what
    would decide it."""
    claims = section["claims"]
    counts = sorted({int(k) for c in claims for k in c["mde_crossfit"]})
    head = (["claim", "statistic", "observed today", "MDE today (seeds)"]
            + [f"MDE crossfit, {n} seeds" for n in counts]
            + [f"power at observed: today / crossfit {planned} seeds", "what would decide it"])
    rows = []
    for c in claims:
        pw_planned = c["power_crossfit"].get(str(planned))
        rows.append([c["claim"], c["statistic"], f"{c['observed']:+.4f}",
                     f"{c['mde_today']:.4f} ({c['seeds_today']})"]
                    + [_mde(c["mde_crossfit"].get(str(n))) for n in counts]
                    + [f"{c['power_today']:.2f} / " + ("–" if pw_planned is None else f"{pw_planned:.2f}"),
                       c["decide"]])
    return head, rows


STUDY_TITLES = {"debias": "Debiasing study (PCNN + attention; none, cda, duplicate, hard_debias, anonymize)",
                "grid": "CNN/PCNN x attention/average grid"}


def add_plan(doc, plan: dict, *, level: int = 2):
    """The plan's tables and summaries (from plan.json) added to a :class:`wgbcore.render.Document`."""
    meta = plan["meta"]
    planned, goal = meta["planned_seeds"], meta["goal_mde"]
    for name, section in plan["studies"].items():
        doc.heading(STUDY_TITLES.get(name, name), level)
        s = section["summary"]
        doc.para(f"{section['n_claims']} claims (Holm's first step at alpha/{section['n_claims']} = "
                 f"{section['level']:.4f}); test persons today: {section['test_persons']['male']} men, "
                 f"{section['test_persons']['female']} women.")
        head, rows = table_rows(section, planned=planned)
        doc.table(head, rows)
        doc.para(f"Gap claims (F1 and equality-of-opportunity gaps) meeting the goal (MDE <= {goal}) under "
                 f"cross-fitting at {planned} seeds: {len(s['goal_met_at_planned_seeds'])} of {s['gap_claims']}; "
                 f"the worst gap MDE at {planned} seeds is {_mde(s['worst_gap_mde_at_planned_seeds'])}. "
                 f"Decided at {planned} seeds (80% power at today's effect): "
                 f"{len(s['decided_at_planned_seeds'])} of {section['n_claims']}.")
        reach = [f"{c} (~{n} seeds)" for c, n in s["seeds_for_goal"].items() if n is not None]
        floor = {c["claim"]: c["mde_entity_floor"] for c in section["claims"]}
        out = [f"{c} (floor {floor[c]:.4f}, ~{f:.2f}x the persons)" for c, f in s["persons_factor_for_goal"].items()]
        if reach:
            doc.para("Goal reachable with more seeds: " + "; ".join(reach) + ".")
        if out:
            persons = sum(meta["population"].values())
            doc.para(f"Goal out of reach by seeds (the population's own noise, all {persons:,} persons, is above it): "
                     + "; ".join(out) + ".")
    return doc


def plan_markdown(plan: dict, *, level: int = 3) -> str:
    """The plan's tables as markdown (no page title), for a docs page: generated from plan.json."""
    from wgbcore.render import Document

    doc = Document("plan")
    doc.para(f"From `{plan['meta']['command']}` (`results/re_crossfit/plan.json`). Assumptions:")
    doc.items(plan["assumptions"])
    text = add_plan(doc, plan, level=level).markdown()
    return text.split("\n", 1)[1].lstrip("\n")


def plan_document(plan: dict):
    """plan.md / plan.html: the assumptions, the tables, the check against the issue's figures."""
    from wgbcore.render import Document

    doc = Document("Power plan: cross-fitting (issue #26)")
    when = plan["meta"].get("timeline") or f"Written at {plan['meta'].get('time')}."
    doc.para(f"Written by `{plan['meta']['command']}` from the committed per-entity counts of the test protocol "
             f"(no cross-fitted run's counts are read). {when} Minimum detectable effects (MDE) at 80% power, "
             "two-sided, Holm's first step.")
    doc.heading("Assumptions")
    doc.items(plan["assumptions"])
    add_plan(doc, plan)
    if plan.get("issue_check"):
        doc.heading("Against the issue's figures")
        doc.table(["claim", "issue", "this plan, 5 seeds", "this plan, 10 seeds"],
                  [[r["claim"], f"{r['issue']:.2f}", f"{r['plan_5']:.2f}", f"{r['plan_10']:.2f}"]
                   for r in plan["issue_check"]])
        doc.para(plan.get("issue_check_note", ""))
    return doc


def issue_check(section: dict, figures: Mapping[str, float], *, tolerance: float = 0.05) -> tuple[list[dict], str]:
    """This plan's power at the observed effect (cross-fitting, 5 and 10 seeds) next to figures
    quoted elsewhere (claim -> power), and a sentence on where they agree within ``tolerance``."""
    by_name = {c["claim"]: c for c in section["claims"]}
    rows = []
    for claim, fig in figures.items():
        if claim not in by_name:
            raise ValueError(f"issue figure for unknown claim {claim!r}; claims: {sorted(by_name)}")
        pw = by_name[claim]["power_crossfit"]
        rows.append({"claim": claim, "issue": fig, "plan_5": pw["5"], "plan_10": pw["10"]})
    agree = [r["claim"] for r in rows
             if min(abs(r["plan_5"] - r["issue"]), abs(r["plan_10"] - r["issue"])) <= tolerance]
    lower = [r["claim"] for r in rows if r["claim"] not in agree and max(r["plan_5"], r["plan_10"]) < r["issue"]]
    note = (f"{len(agree)} of {len(rows)} figures agree within {tolerance} at 5 or 10 seeds"
            + (f" ({'; '.join(agree)})" if agree else "")
            + (f"; this plan gives less power than the issue for {'; '.join(lower)}" if lower else "")
            + ". The issue does not state its seed count or how it split seed and entity noise; this plan counts "
              "the seed part as the seed-only bootstrap variance falling as 1 / seeds, not 1 / (seeds x folds).")
    return rows, note
