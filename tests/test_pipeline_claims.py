"""The main job's claims test what they say (issue #27, items 1-5): a gender-blind null for the
graph's bias mass, a retraining control for the embeddings, no tautological claim, "not applicable"
for a claim whose premise is not supported, no untested sentence in the report. Known answers by
simulation; no training."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from relext.design import Estimate
from support.propagation_data import SEEDS, extractor_study, synthetic_study
from wgb.pipeline.answer import CLAIMS, NOT_APPLICABLE, ClaimBook, TautologyError, facts_estimate
from wgb.pipeline.nulls import DataNull, blind_holds, embedding_excess
from wgb.pipeline.propagation import ENTITY_LEVEL, Propagation, data_scores, decompose
from wikigenderbias.schema import RELATIONS


def _prop(st, seed=0):
    """A Propagation with 400 bootstrap replicates: enough for a 95% interval, fast enough to
    repeat a whole study many times."""
    return Propagation(st, {}, measures=["data"], n_resamples=400, bootstrap_seed=seed, min_resamples=400)


# ------------------------------------------------------------------ 1. gender-blind null
def test_blind_holds_keep_every_items_error_counts():
    rng = np.random.default_rng(0)
    gold = rng.random((60, 8)) < 0.3
    ext = (gold & (rng.random(gold.shape) < 0.7)) | (rng.random(gold.shape) < 0.05)
    null = blind_holds(gold, ext, rng)
    assert ((gold & ~null).sum(0) == (gold & ~ext).sum(0)).all()          # missed, per item
    assert ((null & ~gold).sum(0) == (ext & ~gold).sum(0)).all()          # spurious, per item
    assert null.sum() == ext.sum()
    assert (null != ext).any(), "the errors moved to other persons"


def test_null_parts_equal_the_decomposition_of_each_null_graph():
    st = extractor_study(n_male=40, n_female=50, seeds=(0,))
    p = _prop(st)
    null = DataNull(p, n_draws=20)
    rng = np.random.default_rng(1)
    wm, wf = rng.random((3, 40)), rng.random((3, 50))
    parts = null.parts(0, "baseline", wm, wf)
    h = st.holds[0]
    for j in (0, 7, 19):
        ref = decompose(data_scores(h["gold"], st.male, st.female, wm, wf),
                        data_scores(null.draws(0, "baseline")[j], st.male, st.female, wm, wf),
                        h["gold"].any(0), null.draws(0, "baseline")[j].any(0))
        for k in ("added", "shared", "error_born", "missed", "shift"):
            assert parts[k][:, j] == pytest.approx(ref[k])


def test_a_gender_blind_extractor_is_not_called_gendered():
    """Known answer: an extractor whose errors do not depend on the person's gender adds bias
    mass (rare error-born items), so the old claim ("more bias than the gold graph") is supported
    every time; against the gender-blind null the claim is supported at most at the nominal rate
    (two-sided 5%: 2.5% in the claimed direction; 12 studies: at most 1)."""
    old, new, values = 0, 0, []
    for r in range(12):
        st = extractor_study(seed=100 + r)
        p = _prop(st, r)
        e = DataNull(p, n_draws=20, seed=r).excess("baseline")
        raw = p.data_estimate("baseline", "added")
        old += raw.ci[0] > 0
        new += e.ci[0] > 0
        values.append(e.value)
    assert old >= 10, "the simulation must reproduce the issue: errors alone add mass"
    assert new <= 1
    assert abs(np.mean(values)) < 0.05     # the null is centred on what the extractor does


def test_a_gendered_extractor_is_detected():
    for r in range(3):
        st = extractor_study(seed=200 + r, gendered=True)
        p = _prop(st, r)
        null = DataNull(p, n_draws=20, seed=r)
        e = null.excess("baseline")
        assert e.ci[0] > 0 and e.degenerate is None
        s = null.summary("baseline")["added"]
        assert s["observed"] > s["null_ci"][1] and s["p_permutation"] < 0.05
        assert s["null_ci"][0] <= s["null_mean"] <= s["null_ci"][1]


def test_matched_error_counts_compare_debiased_extractors_fairly():
    """CDA's "less data bias": an extractor with fewer errors but the same (gender-blind) kind
    has less raw bias added, not less than its own null."""
    st = extractor_study(seed=300, gold_seed=7)
    few = extractor_study(seed=301, gold_seed=7, rare=0.003)
    assert all((few.holds[s]["gold"] == st.holds[s]["gold"]).all() for s in st.seeds)
    for s in st.seeds:
        st.holds[s]["cda"] = few.holds[s]["baseline"]
    st.variants.append("cda")
    for k in ("extraction", "graph"):
        st.counts.counts[f"{k}:cda"] = st.counts.counts[f"{k}:baseline"]
    p = _prop(st)
    null = DataNull(p, n_draws=20)
    raw = p.data_estimate("baseline", "added", minus="cda")
    matched = null.excess("baseline", minus="cda")
    assert raw.ci[0] > 0, "fewer errors: less raw mass"
    assert matched.ci[0] < 0 < matched.ci[1]


# ------------------------------------------------------------------ 2. embeddings against retraining
def _embedding_scores(amplify: float, n_items: int = 40, seeds=(0, 1, 2, 3), noise: float = 0.05, seed: int = 0):
    """Item scores of the gold graph's and an extracted graph's embeddings per seed: the same items,
    the extracted graph's leans ``amplify`` times the gold's, independent noise per training."""
    rng = np.random.default_rng(seed)
    lean = rng.normal(0, 0.3, n_items)
    items = [f"o{i}" for i in range(n_items)]
    table = {}
    for s in seeds:
        table[(s, "gold")] = dict(zip(items, lean + rng.normal(0, noise, n_items)))
        table[(s, "baseline")] = dict(zip(items, amplify * lean + rng.normal(0, noise, n_items)))
    return lambda s, g: table.get((s, g)), list(seeds)


def test_embedding_claim_needs_more_than_retraining_noise():
    seeds = (0, 1, 2, 3)
    supported = 0
    for r in range(10):
        scores, seeds = _embedding_scores(1.0, seed=r)
        e = embedding_excess(scores, seeds, "baseline", n_resamples=400, seed=r)
        supported += e["added"]["estimate"].ci[0] > 0
        # the control of the total is 0 by symmetry; the shared part has one
        assert e["added"]["control"] == pytest.approx(0.0, abs=1e-12)
        assert e["added"]["control_ci"][0] < 0 < e["added"]["control_ci"][1]
    assert supported <= 1
    scores, seeds = _embedding_scores(1.5)
    e = embedding_excess(scores, seeds, "baseline", n_resamples=400)
    assert e["added"]["estimate"].ci[0] > 0 and e["shared"]["estimate"].ci[0] > 0
    # items are resampled: the interval over items alone is not a point
    assert e["added"]["estimate"].ci_entity[1] > e["added"]["estimate"].ci_entity[0]


def test_no_claim_rests_on_the_shared_items_alone():
    for kind in CLAIMS.values():
        assert "shared" not in kind.statistic and "kept" not in kind.sentence


# ------------------------------------------------------------------ 3. no tautology
def _estimate(value, lo, hi, se=0.01, seeds=SEEDS, p=0.001):
    return Estimate(value=value, ci=[lo, hi], ci_seed=[lo, hi], ci_entity=[lo, hi], se=se, se_seed=se, se_entity=se,
                    p_value=p, n_seeds=len(seeds), seeds=list(seeds), confidence=0.95)


def test_a_claim_cannot_take_its_direction_from_data():
    params = inspect.signature(ClaimBook.add).parameters
    assert "direction" not in params
    assert all(k.direction in (1, -1) for k in CLAIMS.values())


def test_a_claim_equal_to_its_input_is_refused():
    """The old "the graph's recall gap is positive, like the extraction recall gap": the graph
    gap is the extraction gap by construction (each gold triple is one bag)."""
    st = synthetic_study(n_male=60, n_female=60)
    p = _prop(st)
    graph, extraction = p.gap("graph", "baseline", "eo_gap:spouse"), p.gap("extraction", "baseline", "eo_gap:spouse")
    book = ClaimBook()
    with pytest.raises(TautologyError, match="by construction"):
        book.add("widening", graph, ENTITY_LEVEL, inputs=[extraction], v="baseline")
    zero = _estimate(0.0, 0.0, 0.0, se=0.0)     # two constants are equal by accident, not by construction
    book.add("survives_graph", zero, ENTITY_LEVEL, inputs=[zero], d="cda", base="baseline")
    w = facts_estimate(p, "baseline", "widening:all")
    book.add("widening", w, ENTITY_LEVEL, inputs=[facts_estimate(p, "baseline", "gold:all")], v="baseline")
    assert len(book.entries) == 2


def test_widening_is_zero_for_a_gender_blind_extractor_and_found_for_a_gendered_one():
    from relext.design import StudyCounts
    from wgb.pipeline.propagation import Study

    rng = np.random.default_rng(0)
    n = 400
    gender = np.array(["male"] * n + ["female"] * n)
    male = gender == "male"
    spouse = RELATIONS.index("spouse")

    def counts(recall_m, recall_f):
        gold = rng.poisson(np.where(male, 2.0, 1.5))              # men have more facts in gold
        c = np.zeros((2 * n, len(RELATIONS), 3), dtype=np.int64)
        tp = rng.binomial(gold, np.where(male, recall_m, recall_f))
        c[:, spouse] = np.stack([tp, rng.poisson(0.2, 2 * n), gold - tp], axis=1)
        return c

    for (rm, rf), expect in (((0.7, 0.7), "zero"), ((0.8, 0.5), "positive")):
        cs = {s: counts(rm, rf) for s in SEEDS}
        st = Study(StudyCounts(np.array([f"e{i}" for i in range(2 * n)]), gender,
                               {"extraction:baseline": cs, "graph:baseline": cs}),
                   ["baseline"], list(SEEDS), {s: [] for s in SEEDS}, {s: {} for s in SEEDS})
        p = _prop(st)
        w = facts_estimate(p, "baseline", "widening:all")
        gold = facts_estimate(p, "baseline", "gold:all")
        assert gold.ci[0] > 0
        if expect == "zero":
            assert w.ci[0] < 0 < w.ci[1]
        else:
            assert w.ci[0] > 0


# ------------------------------------------------------------------ 4. not applicable
def test_a_claim_whose_premise_is_not_supported_is_not_applicable():
    def book(premise_p):
        b = ClaimBook()
        b.add("reduces_extraction", _estimate(0.01, -0.01, 0.03, p=premise_p), ENTITY_LEVEL, d="cda", base="baseline")
        b.add("widening", _estimate(0.2, 0.1, 0.3), ENTITY_LEVEL, v="baseline")
        b.add("survives_graph", _estimate(0.1, 0.05, 0.15), ENTITY_LEVEL, d="cda", base="baseline")
        return {r["id"].split("(")[0]: r for r in b.resolve()}

    rows = book(premise_p=0.6)                     # no reduction to survive
    assert rows["reduces_extraction"]["verdict"] == "undecided"
    assert rows["survives_graph"]["verdict"] == NOT_APPLICABLE
    assert "premise not supported" in rows["survives_graph"]["note"]
    rows = book(premise_p=0.001)
    assert rows["survives_graph"]["verdict"] == "supported"


def test_the_run_reports_not_applicable(tmp_path):
    from wgb.pipeline import PipelineConfig
    from wgb.pipeline.answer import analyse
    from wgb.pipeline.report import write_report
    from support.propagation_data import synthetic_bias

    st = synthetic_study(n_male=80, n_female=80)
    p = Propagation(st, synthetic_bias(st), measures=["data", "fisher", "bourli_projection"], n_resamples=400)
    a = analyse(p, min_count=5, n_draws=20)
    na = [v for v in a["verdicts"] if v["verdict"] == NOT_APPLICABLE]
    assert na and all(v["premises"] for v in na)
    cfg = PipelineConfig(profile="tiny", seeds=list(SEEDS), measures=["data", "fisher", "bourli_projection"])
    out = write_report(tmp_path / "rep", cfg=cfg, settings=cfg.settings(), analysis=a, link_reports={},
                       extraction={"baseline": {"spouse": {"male": 0.9, "female": 0.6}}}, timings={})
    html, md = (out / "report.html").read_text(), (out / "report.md").read_text()
    assert '<span class="verdict not-applicable">not applicable</span>' in html
    assert "| **not applicable** |" in md and "not applicable" in md.split("## How to read it")[0]
    # 5. no sentence the claims do not test
    for text in (html, md):
        low = text.lower()
        for untested in ("smooths", "errors add bias", "errors add data bias", "reaches the graph unchanged",
                         "like the extraction recall gap"):
            assert untested not in low
    assert "gender-blind" in html and "retraining" in html


def test_intervals_at_holms_level_agree_with_the_p_values():
    """Beside a Holm verdict the report shows the interval at the level Holm tested it at: it must
    come from the same replicates (embedding excess) or the same t distribution (seed level) as
    the p-value, never the 95% one relabelled."""
    from wgb.pipeline.propagation import seed_level

    scores, seeds = _embedding_scores(1.5)
    est = embedding_excess(scores, seeds, "baseline", n_resamples=400)["added"]["estimate"]
    assert est.replicates is not None
    wide = est.interval(0.99)
    assert wide[0] < est.ci[0] and wide[1] > est.ci[1]
    for level in (0.9, 0.99):
        lo, hi = est.interval(level)
        assert (lo > 0 or hi < 0) == (est.p_value < 1 - level) or abs(est.p_value - (1 - level)) < 0.01
    e = seed_level({0: 1.0, 1: 1.4, 2: 1.1, 3: 0.9}, confidence=0.95)
    assert e.df == 3 and e.interval(0.95) == pytest.approx(e.ci)
    for level in (0.95, 0.99, 0.999):
        lo, hi = e.interval(level)
        assert (lo > 0) == (e.p_value < 1 - level)
