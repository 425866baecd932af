"""The answer of a ``wgb run``: the run's questions as claims with verdicts (Holm across all
claims), each tested against what it would be without the effect it names (:mod:`wgb.pipeline.nulls`:
a gender-blind extractor on each person's own candidate pairs, so the graph claims test errors
gendered *beyond exposure*; retraining noise), and the item tables.

**Claims are declared, not composed.** Every claim is one entry of :data:`CLAIMS`: its sentence,
its statistic and its direction are fixed in code before any data is read, so no claim's direction
can be taken from an estimate (the old "the graph's recall gap is positive, like the extraction
recall gap" took its direction from the very number it tested). :meth:`ClaimBook.add` refuses a
claim whose estimate is one of the estimates it is built from (a tautology: the statistic equals
an input by construction), and a claim with premises is *not applicable* unless every premise is
supported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from wgbstats.design import Claim, Estimate, verdicts
from wgb.pipeline.nulls import DATA_PARTS, FACTS_KEYS, DataNull, FactsNull, embedding_excess, exposure
from wgb.pipeline.propagation import ENTITY_LEVEL, PARTS, SEED_LEVEL, Propagation, as_row

ITEM_LEVEL = "seeds × items"
NOT_APPLICABLE = "not applicable"
#: The verdicts of a run: wgbstats.design's three, and "not applicable" for a claim whose premise
#: is not supported.
VERDICTS = ("supported", "contradicted", "undecided", NOT_APPLICABLE)

#: The questions of a run, in the report's order.
QUESTIONS = {
    "facts": "Does extraction widen the gender difference in facts per person that the gold graph has, beyond "
             "what each person's candidate pairs (exposure) explain?",
    "graph_bias": "Does extraction add gendered bias to the graph's hypernym items, beyond a gender-blind "
                  "extractor on each person's own candidate pairs?",
    "embedding_bias": "Do the extracted graph's embeddings carry more bias than the gold graph's, beyond "
                      "retraining noise?",
    "debias": "Does a debiased extractor reduce the extraction gap, and does the reduction reach the graph "
              "and the embeddings?",
}


@dataclass(frozen=True)
class ClaimKind:
    question: str
    sentence: str              # formatted with the names given to ClaimBook.add
    statistic: str
    direction: int             # fixed here, never from data
    #: claims that must be supported for this one to apply: (kind, {name: template}) with templates
    #: formatted like the sentence
    premises: tuple[tuple[str, dict[str, str]], ...] = ()


def claim_id(kind: str, **names: str) -> str:
    """The id of a claim: its kind and names, e.g. ``reduces_extraction(base=baseline, d=cda)``."""
    return f"{kind}(" + ", ".join(f"{k}={names[k]}" for k in sorted(names)) + ")"


#: Every claim a run can make.
CLAIMS: dict[str, ClaimKind] = {
    "widening": ClaimKind(
        "facts", "{v}: extraction errors gendered beyond exposure move the men − women difference in facts per "
                 "person towards men (against a gender-blind extractor on each person's own candidate pairs)",
        "facts per person, men − women: extracted graph − expected under per-pair error rates pooled over "
        "genders (each person's own candidate pairs); summed over relations", 1),
    "data_excess": ClaimKind(
        "graph_bias", "{v}: extraction errors gendered beyond exposure add data bias mass to the graph (against "
                      "a gender-blind extractor on each person's own candidate pairs)",
        "mass added (data) − mean of the exposure-matched gender-blind null's", 1),
    "embedding_excess": ClaimKind(
        "embedding_bias", "{v}: the extracted graph's embeddings carry more {m} bias mass than the gold graph's, "
                          "beyond retraining noise",
        "mass({m}, extracted) − mass({m}, gold) − retraining control, total", 1),
    "reduces_extraction": ClaimKind(
        "debias", "{d} reduces the extraction gap (mean |F1 gap|)", "G({base}) − G({d}), G = mean over relations "
                                                                     "of |F1 gap|", 1),
    "survives_graph": ClaimKind(
        "debias", "{d}'s reduction survives into the graph: its errors gendered beyond exposure move the "
                  "facts-per-person difference less towards men than {base}'s",
        "widening({base}) − widening({d})", 1,
        (("reduces_extraction", {"d": "{d}", "base": "{base}"}), ("widening", {"v": "{base}"}))),
    "less_data_excess": ClaimKind(
        "debias", "{d}'s graph carries less data bias from errors gendered beyond exposure than {base}'s (each "
                  "against its own exposure-matched gender-blind null)",
        "(mass added − null) of {base} − of {d}", 1, (("data_excess", {"v": "{base}"}),)),
    "less_embedding": ClaimKind(
        "debias", "{d}'s embeddings carry less {m} bias mass than {base}'s, beyond retraining noise",
        "(mass added − control) of {base} − of {d}, {m}", 1,
        (("embedding_excess", {"v": "{base}", "m": "{m}"}),)),
}


class TautologyError(ValueError):
    """A claim whose statistic is one of its own inputs."""


def _same(a: Estimate, b: Estimate) -> bool:
    vals = [(a.value, b.value), (a.se, b.se), *zip(a.ci, b.ci)]
    return all((math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12 for x, y in vals)


class ClaimBook:
    """The claims of one run, added by kind (:data:`CLAIMS`); :meth:`resolve` gives the verdicts."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def add(self, kind: str, estimate: Estimate, over: str, *, inputs: Sequence[Estimate] = (), note: str = "",
            **names: str) -> str:
        """Add one claim of ``kind`` about ``estimate``; ``inputs``: the estimates the claim is
        built from or compared with (refused when ``estimate`` is one of them); ``note``: shown
        with its verdict (e.g. the parts of a total). Returns its id (:func:`claim_id`), by which
        other claims name it as a premise."""
        k = CLAIMS[kind]
        for i, e in enumerate(inputs):
            # equal replicate intervals of a quantity that varies: the same number by construction
            # (two constants, e.g. both 0 on a degenerate test set, are equal by accident)
            if _same(estimate, e) and e.ci[1] - e.ci[0] > 1e-12:
                raise TautologyError(f"claim {kind!r} ({k.sentence.format(**names)}): its estimate equals input "
                                     f"{i} ({e.value:+.6g}) by construction; it would test nothing")
        cid = claim_id(kind, **names)
        if any(x["id"] == cid for x in self.entries):
            raise ValueError(f"claim {cid!r} added twice")
        self.entries.append({"id": cid, "question": k.question, "over": over, "note": note,
                             "premises": [claim_id(pk, **{a: t.format(**names) for a, t in pn.items()})
                                          for pk, pn in k.premises],
                             "claim": Claim(k.sentence.format(**names), k.statistic.format(**names), k.direction,
                                            estimate)})
        return cid

    def resolve(self, *, alpha: float = 0.05) -> list[dict[str, Any]]:
        """Verdicts with Holm's correction across every claim; a claim whose premises are not all
        supported is "not applicable" (its test still counts in the correction: conservative)."""
        from wgbstudies.recheck import enrich

        vs = verdicts([x["claim"] for x in self.entries], alpha=alpha, method="holm")
        enrich(vs, [x["claim"] for x in self.entries])      # what re-deriving each verdict needs
        by_id = {x["id"]: v for x, v in zip(self.entries, vs)}
        rows = []
        for x, v in zip(self.entries, vs):
            row = {**v.to_dict(), "id": x["id"], "question": x["question"], "over": x["over"],
                   "premises": x["premises"]}
            if x["note"]:
                row["note"] = "; ".join(t for t in (x["note"], row.get("note", "")) if t)
            unknown = [p for p in x["premises"] if p not in by_id]
            if unknown:
                raise ValueError(f"claim {x['id']!r}: premise(s) {unknown} not among the run's claims")
            failed = [by_id[p] for p in x["premises"] if by_id[p].verdict != "supported"]
            if failed:
                row.update(verdict=NOT_APPLICABLE, seeds_to_decide=None, needs="",
                           note="premise not supported: " + "; ".join(f"{f.claim} ({f.verdict})" for f in failed))
            rows.append(row)
        return rows


def analyse(p: Propagation, *, alpha: float = 0.05, min_count: int = 5, top: int = 5,
            n_draws: int | None = None) -> dict[str, Any]:
    """Every estimate of the report, the claims and their verdicts (Holm across all claims)."""
    try:   # small products: one BLAS thread is many times faster than two on a busy machine
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        from contextlib import nullcontext as threadpool_limits
    with threadpool_limits(1):
        return _analyse(p, alpha=alpha, min_count=min_count, top=top, n_draws=n_draws)


def _analyse(p: Propagation, *, alpha: float, min_count: int, top: int, n_draws: int | None) -> dict[str, Any]:
    from wgb.pipeline.nulls import N_DRAWS

    st = p.study
    book = ClaimBook()
    null = DataNull(p, n_draws=n_draws or N_DRAWS)
    relations, facts = _facts_rows(p, book)
    exposure_rows = _exposure_rows(p)
    measures = ["data", *p.embedding_measures]
    added = _bias_added_rows(p, null, measures, book)
    comparisons = [_comparison(p, null, d, facts, book) for d in st.variants[1:]]
    verdict_rows = book.resolve(alpha=alpha)
    answer = []
    for q, text in QUESTIONS.items():
        rows = [v for v in verdict_rows if v["question"] == q]
        if rows:
            answer.append({"key": q, "question": text, "rows": rows,
                           "summary": {k: sum(1 for v in rows if v["verdict"] == k) for k in VERDICTS}})
    same = all(abs(r["graph_recall_gap"]["value"] - r["extraction_eo_gap"]["value"]) < 1e-12 for r in relations)
    return {"seeds": st.seeds, "alpha": alpha, "graph_equals_extraction": same, "correction": "holm",
            "n_claims": len(verdict_rows), "verdict_names": list(VERDICTS),
            "answer": answer, "verdicts": verdict_rows, "relations": relations, "facts": facts,
            "exposure": exposure_rows,
            "bias_added": added, "n_null_draws": null.n_draws,
            "comparisons": comparisons, "items": item_tables(p, measures, min_count=min_count, top=top),
            "min_count": min_count, "unmapped": st.unmapped,
            "n_entities": {"male": int(st.male.sum()), "female": int(st.female.sum())},
            "n_resamples": p.design.n_resamples, "embedding_measures": p.embedding_measures}


# --------------------------------------------------------------------------------------------
# Facts per person
# --------------------------------------------------------------------------------------------
def facts_null(p: Propagation) -> FactsNull:
    """The run's :class:`wgb.pipeline.nulls.FactsNull` (one per :class:`Propagation`)."""
    from wikigenderbias.schema import POSITIVE_RELATIONS, RELATIONS

    if "_facts_null" not in p.__dict__:
        p.__dict__["_facts_null"] = FactsNull(p.study, [RELATIONS.index(r) for r in POSITIVE_RELATIONS])
    return p.__dict__["_facts_null"]


def facts_estimate(p: Propagation, variant: str, key: str, *, minus: str | None = None) -> Estimate:
    """A quantity of :meth:`wgb.pipeline.nulls.FactsNull.gap` (e.g. ``"widening:all"``,
    ``"spurious:hypernym"``) of the ``variant`` graph, seed x entity bootstrap (``minus``: paired
    difference)."""
    from wikigenderbias.schema import RELATIONS

    st = p.study
    null = facts_null(p)
    key = key if key.endswith(":all") else f"{key.split(':')[0]}:{RELATIONS.index(key.split(':')[1])}"

    cache = p.__dict__.setdefault("_facts_cache", {})

    def one(v, s, wm, wf):
        k = (v, s, wm.shape[0])
        if k not in cache:
            cache[k] = null.gap(s, v, wm, wf)
        return cache[k][key]

    return p.design.estimate_weighted(
        lambda s, wm, wf: one(variant, s, wm, wf) - (one(minus, s, wm, wf) if minus else 0.0), st.seeds)


def _facts_rows(p: Propagation, book: ClaimBook) -> tuple[list[dict], list[dict]]:
    """The extraction gaps per relation (evidence) and the facts-per-person rows; the widening claim."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    st = p.study
    base = st.variants[0]
    relations, facts = [], []
    for v in st.variants:
        rec = p.recall_by_gender(v)
        for r in POSITIVE_RELATIONS:
            relations.append({
                "extractor": v, "relation": r,
                "extraction_f1_gap": as_row(p.gap("extraction", v, f"f1_gap:{r}"), ENTITY_LEVEL),
                "extraction_eo_gap": as_row(p.gap("extraction", v, f"eo_gap:{r}"), ENTITY_LEVEL),
                "graph_recall_gap": as_row(p.gap("graph", v, f"eo_gap:{r}"), ENTITY_LEVEL),
                "graph_recall": rec[r],
            })
        for r in (*POSITIVE_RELATIONS, "all"):
            row = {"extractor": v, "relation": r}
            for k in FACTS_KEYS:
                row[k] = as_row(facts_estimate(p, v, f"{k}:{r}"), ENTITY_LEVEL)
            facts.append(row)
    w = facts_estimate(p, base, "widening:all")
    # compared with the difference the gold graph already has: a claim equal to it would test nothing
    book.add("widening", w, ENTITY_LEVEL, inputs=[facts_estimate(p, base, "gold:all")], v=base)
    return relations, facts


def _exposure_rows(p: Propagation) -> list[dict[str, Any]]:
    """Per extractor and gender: candidate pairs per person and the error rates on them (evidence
    beside the facts claim: what the exposure-matched null keeps and what it pools)."""
    from wikigenderbias.schema import POSITIVE_RELATIONS, RELATIONS

    rels = [RELATIONS.index(r) for r in POSITIVE_RELATIONS]
    return [{"extractor": v, **{g: x for g, x in exposure(p.study, v, rels).items()}} for v in p.study.variants]


# --------------------------------------------------------------------------------------------
# Bias added, against its null / control
# --------------------------------------------------------------------------------------------
def _bias_added_rows(p: Propagation, null: DataNull, measures: Sequence[str], book: ClaimBook) -> list[dict]:
    st = p.study
    base = st.variants[0]
    added: list[dict[str, Any]] = []
    for m in measures:
        for v in st.variants:
            counts = [p.item_counts(s, v) for s in st.seeds]
            row: dict[str, Any] = {"measure": m, "extractor": v,
                                   "items": {k: float(np.mean([c[k] for c in counts])) for k in counts[0]},
                                   "error_born_share": _share(p, v, m)}
            if m == "data":
                row["over"] = row["excess_over"] = ENTITY_LEVEL
                est = {part: p.data_estimate(v, part) for part in PARTS}
                row.update({part: as_row(e, ENTITY_LEVEL) for part, e in est.items()})
                row["control_kind"] = "exposure-matched gender-blind null"
                row["control"] = null.summary(v)
                excess = {part: null.excess(v, part) for part in DATA_PARTS}
                row["excess"] = {part: as_row(e, ENTITY_LEVEL) for part, e in excess.items()}
                if v == base:
                    book.add("data_excess", excess["added"], ENTITY_LEVEL, inputs=[est["added"]], v=v)
            else:
                row["over"] = SEED_LEVEL
                est = {part: p.embedding_estimate(v, m, part) for part in PARTS}
                row.update({part: as_row(e, SEED_LEVEL) for part, e in est.items()})
                row["control_kind"], row["excess_over"] = "retraining control", ITEM_LEVEL
                ex = embedding_excess(lambda s, g: _scores(p, s, g, m), st.seeds, v, n_resamples=p.design.n_resamples,
                                      confidence=p.confidence)
                row["control"] = {part: {"observed": x["observed"], "null_mean": x["control"],
                                         "null_ci": x["control_ci"]} for part, x in ex.items()}
                row["excess"] = {part: as_row(x["estimate"], ITEM_LEVEL) for part, x in ex.items()}
                if v == base:   # decided on the total; its parts against the same control beside it
                    book.add("embedding_excess", ex["added"]["estimate"], ITEM_LEVEL, v=v, m=m,
                             note=_parts_note(ex))
            added.append(row)
    return added


def _parts_note(ex: dict[str, dict]) -> str:
    def one(part, label):
        e = ex[part]["estimate"]
        if not math.isfinite(e.value):
            return f"{label} –"
        return f"{label} {e.value:+.4f} [{e.ci[0]:+.4f}, {e.ci[1]:+.4f}]"

    return "parts − control: " + ", ".join(one(p, lab) for p, lab in (("shared", "shared"), ("error_born", "error-born"),
                                                                    ("missed", "missed")))


def _scores(p: Propagation, seed: int, graph: str, measure: str) -> dict[str, float] | None:
    sc = p.scores(seed, graph, measure)
    return None if sc is None else {o: x[0] for o, x in sc.items()}


def _comparison(p: Propagation, null: DataNull, d: str, facts: list[dict], book: ClaimBook) -> dict[str, Any]:
    """Baseline vs the debiased extractor ``d`` at every level; its claims."""
    from wikigenderbias.schema import POSITIVE_RELATIONS

    base = p.study.variants[0]
    rows = []
    ext = p.mean_abs_gap_reduction("extraction", "f1_gap", base, d)
    rows.append({"level": "extraction", "statistic": "G = mean over relations of |F1 gap|", "over": ENTITY_LEVEL,
                 "estimate": as_row(ext, ENTITY_LEVEL)})
    book.add("reduces_extraction", ext, ENTITY_LEVEL, d=d, base=base)
    graph = facts_estimate(p, base, "widening:all", minus=d)
    rows.append({"level": "graph (facts per person)",
                 "statistic": "widening beyond a gender-blind extractor on each person's own candidate pairs",
                 "over": ENTITY_LEVEL, "estimate": as_row(graph, ENTITY_LEVEL)})
    book.add("survives_graph", graph, ENTITY_LEVEL, inputs=[ext], d=d, base=base)
    data = null.excess(base, "added", minus=d)
    rows.append({"level": "graph items (data)",
                 "statistic": "bias mass added beyond the exposure-matched gender-blind null",
                 "over": ENTITY_LEVEL, "estimate": as_row(data, ENTITY_LEVEL)})
    rows.append({"level": "graph items (data), not matched", "over": ENTITY_LEVEL,
                 "statistic": "bias mass added, errors not matched (evidence, not a claim: fewer errors alone "
                              "count as less bias)",
                 "estimate": as_row(p.data_estimate(base, "added", minus=d), ENTITY_LEVEL)})
    book.add("less_data_excess", data, ENTITY_LEVEL, d=d, base=base)
    for m in p.embedding_measures:
        e = embedding_excess(lambda s, g: _scores(p, s, g, m), p.study.seeds, base, minus=d,
                             n_resamples=p.design.n_resamples, confidence=p.confidence)["added"]["estimate"]
        rows.append({"level": f"embeddings ({m})", "statistic": "bias mass added beyond retraining noise",
                     "over": ITEM_LEVEL, "estimate": as_row(e, ITEM_LEVEL)})
        book.add("less_embedding", e, ITEM_LEVEL, d=d, base=base, m=m)
    per_relation = [{"relation": r,
                     "extraction": as_row(p.mean_abs_gap_reduction("extraction", "f1_gap", base, d, r), ENTITY_LEVEL),
                     "graph": as_row(facts_estimate(p, base, f"widening:{r}", minus=d), ENTITY_LEVEL)}
                    for r in POSITIVE_RELATIONS]
    return {"debiased": d, "baseline": base, "rows": rows, "per_relation": per_relation}


def _share(p: Propagation, variant: str, measure: str) -> float | None:
    """Share of the extracted graph's bias mass carried by error-born items (seed mean)."""
    vals = []
    for s in p.study.seeds:
        if measure == "data":
            one = np.ones((1, int(p.study.male.sum()))), np.ones((1, int(p.study.female.sum())))
            ext = np.abs(p.phi(s, variant, *one)[0])
            h = p.study.holds[s]
            born = h[variant].any(0) & ~h["gold"].any(0)
            total = ext.sum()
            vals.append(ext[born].sum() / total if total > 0 else float("nan"))
        else:
            parts = p.embedding_parts(s, variant, measure)
            sc = p.scores(s, variant, measure)
            total = sum(abs(x[0]) for x in sc.values()) if sc else 0.0
            vals.append(parts["error_born"] / total if parts and total > 0 else float("nan"))
    vals = [v for v in vals if math.isfinite(v)]
    return float(np.mean(vals)) if vals else None


# --------------------------------------------------------------------------------------------
# Item tables
# --------------------------------------------------------------------------------------------
def pooled_items(p: Propagation, graph: str, measure: str) -> dict[str, dict[str, Any]]:
    """Item -> mean score over the seeds where the graph has it, mean holders (men, women), the
    number of those seeds, and whether the gold graph has the item."""
    acc: dict[str, list] = {}
    for s in p.study.seeds:
        gold_items = set(np.asarray(p.study.items[s])[p.study.holds[s]["gold"].any(0)].tolist())
        if measure == "data":
            h = p.study.holds[s][graph]
            one = np.ones((1, int(p.study.male.sum()))), np.ones((1, int(p.study.female.sum())))
            phi = p.phi(s, graph, *one)[0]
            cm, cf = h[p.study.male].sum(0), h[p.study.female].sum(0)
            sc = {o: (float(phi[j]), int(cm[j]), int(cf[j])) for j, o in enumerate(p.study.items[s]) if h[:, j].any()}
        else:
            sc = p.scores(s, graph, measure) or {}
        for o, (score, ca, cb) in sc.items():
            acc.setdefault(o, []).append((score, ca, cb, o in gold_items))
    return {o: {"item": o, "score": float(np.mean([x[0] for x in v])), "men": float(np.mean([x[1] for x in v])),
                "women": float(np.mean([x[2] for x in v])), "support": float(np.mean([x[1] + x[2] for x in v])),
                "seeds": len(v), "in_gold": any(x[3] for x in v)} for o, v in acc.items()}


def item_tables(p: Propagation, measures: Sequence[str], *, min_count: int, top: int) -> list[dict[str, Any]]:
    """Per measure and graph: the items leaning most towards men and towards women among those
    held by at least ``min_count`` persons (seed mean), error-born items apart."""
    out = []
    for m in measures:
        for g in ("gold", *p.study.variants):
            items = pooled_items(p, g, m)
            if not items:
                out.append({"measure": m, "graph": g, "measured": False})
                continue
            kept = [x for x in items.values() if x["support"] >= min_count]
            real = [x for x in kept if x["in_gold"]]
            born_all = [x for x in items.values() if not x["in_gold"]]
            born = sorted((x for x in born_all if x["support"] >= min_count), key=lambda x: -abs(x["score"]))
            out.append({
                "measure": m, "graph": g, "measured": True, "n_items": len(items), "n_kept": len(kept),
                "male": sorted((x for x in real if x["score"] > 0), key=lambda x: -x["score"])[:top],
                "female": sorted((x for x in real if x["score"] < 0), key=lambda x: x["score"])[:top],
                "error_born": born[:top * 2], "n_error_born": len(born_all),
                "n_error_born_below_min": len(born_all) - len(born),
            })
    return out
