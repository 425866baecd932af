"""wgb.pipeline.propagation: per-entity graph counts, pooled intervals with known answers, the
error-born item split, the analysis and its report (no training: synthetic studies)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from wgbstats.design import Design
from relext.evaluation.study_counts import StudyCounts
from support.propagation_data import BORN_ITEMS, SEEDS, synthetic_bias, synthetic_study
from wgb.pipeline.answer import analyse
from wgb.pipeline.propagation import (ENTITY_LEVEL, SEED_LEVEL, Propagation, data_scores, decompose,
                                      graph_entity_counts, holds_matrix, seed_level)
from wikigenderbias.schema import RELATIONS

SPOUSE = RELATIONS.index("spouse")


def _homogeneous(n_m: int, n_f: int, tp_m: int, fn_m: int, tp_f: int, fn_f: int) -> np.ndarray:
    c = np.zeros((n_m + n_f, len(RELATIONS), 3), dtype=np.int64)
    c[:n_m, SPOUSE] = [tp_m, 0, fn_m]
    c[n_m:, SPOUSE] = [tp_f, 0, fn_f]
    return c


def _ids(n_m, n_f):
    return [f"m{i}" for i in range(n_m)] + [f"f{i}" for i in range(n_f)], ["male"] * n_m + ["female"] * n_f


# ------------------------------------------------------------------ known answers
def test_seed_spread_only_known_answer():
    """Every entity alike within a gender: the entity bootstrap cannot move the gap; seed gaps of
    0.2, 0.3, 0.4 give the point 0.3, the standard error of a mean of three seeds (0.1 / sqrt(3)),
    the seed interval Student's t with 2 degrees of freedom (the seeds are all the variance) and a
    combined interval no narrower than it."""
    from scipy import stats

    ids, gender = _ids(50, 50)
    by_seed = {0: _homogeneous(50, 50, 8, 2, 6, 4), 1: _homogeneous(50, 50, 8, 2, 5, 5),
               2: _homogeneous(50, 50, 8, 2, 4, 6)}     # recall gaps 0.2, 0.3, 0.4
    d = Design(StudyCounts(ids, gender, {"graph:baseline": by_seed}), n_resamples=2000, seed=1)
    e = d.metric("graph:baseline", "eo_gap:spouse")
    assert e.value == pytest.approx(0.3)
    assert e.ci_entity == pytest.approx([0.3, 0.3])
    assert e.se == pytest.approx(0.1 / math.sqrt(3), rel=0.1) and e.df == pytest.approx(2)
    half = stats.t.ppf(0.975, 2) * e.se
    assert e.ci_seed == pytest.approx([0.3 - half, 0.3 + half], rel=1e-6)
    assert e.ci[0] <= 0.3 - half + 1e-9 and e.ci[1] >= 0.3 + half - 1e-9
    assert e.ci == pytest.approx(e.interval(0.95))


def test_entity_spread_only_known_answer():
    """One seed pattern repeated: half of the men recover their triple, no woman does: gap 0.5
    with the binomial standard error sqrt(0.25 / n_men) from the entity bootstrap."""
    n = 400
    ids, gender = _ids(n, n)
    c = _homogeneous(n, n, 0, 1, 0, 1)
    c[: n // 2, SPOUSE] = [1, 0, 0]
    d = Design(StudyCounts(ids, gender, {"graph:baseline": {s: c for s in SEEDS}}), n_resamples=2000, seed=2)
    e = d.metric("graph:baseline", "eo_gap:spouse")
    assert e.value == pytest.approx(0.5)
    assert e.se_entity == pytest.approx(math.sqrt(0.25 / n), rel=0.15)
    assert e.ci_seed == pytest.approx([0.5, 0.5])


def test_estimate_weighted_reproduces_the_design_on_counts():
    """A statistic computed outside the base metrics, from the same per-entity counts, gets the
    same point and the same three intervals (same entity resample, same seed draw)."""
    st = synthetic_study(n_male=80, n_female=70)
    d = Design(st.counts, n_resamples=500, seed=3)
    c = st.counts.counts["graph:baseline"]

    def recall_gap(s, wm, wf):
        cm, cf = c[s][st.male, SPOUSE], c[s][st.female, SPOUSE]
        rm = (wm @ cm[:, 0]) / (wm @ (cm[:, 0] + cm[:, 2]))
        rf = (wf @ cf[:, 0]) / (wf @ (cf[:, 0] + cf[:, 2]))
        return rm - rf

    mine = d.estimate_weighted(recall_gap, list(SEEDS))
    ref = d.metric("graph:baseline", "eo_gap:spouse")
    assert mine.value == pytest.approx(ref.value)
    for key in ("ci", "ci_seed", "ci_entity"):
        assert getattr(mine, key) == pytest.approx(getattr(ref, key))
    assert mine.p_value == pytest.approx(ref.p_value) and mine.degenerate is None


def test_seed_level_is_a_student_t_interval():
    e = seed_level({0: 1.0, 1: 2.0, 2: 3.0, 3: float("nan")})
    half = 4.302652729911275 / math.sqrt(3)
    assert e.value == 2.0 and e.n_seeds == 3 and e.seeds == [0, 1, 2]
    assert e.ci == pytest.approx([2 - half, 2 + half])
    assert e.degenerate is None and 0 < e.p_value < 0.1
    assert seed_level({0: 1.0, 1: 2.0}).degenerate.startswith("fewer than 3 seeds")
    assert seed_level({}).n_seeds == 0


# ------------------------------------------------------------------ per-entity arrays
def test_graph_counts_per_entity_and_relation():
    heads = {"Ann": "e1", "Bob": "e2"}
    def t(h, r, x):
        return {"head": h, "relation": r, "tail": x}

    gold = [t("Ann", "spouse", "X"), t("Ann", "hypernym", "Actress"), t("Bob", "spouse", "Y")]
    ext = [t("Ann", "spouse", "X"), t("Ann", "hypernym", "Kerala"), t("Nobody", "spouse", "Z")]
    c, unmapped = graph_entity_counts(gold, ext, ["e1", "e2"], heads)
    h = RELATIONS.index("hypernym")
    assert c[0, SPOUSE].tolist() == [1, 0, 0] and c[1, SPOUSE].tolist() == [0, 0, 1]
    assert c[0, h].tolist() == [0, 1, 1] and unmapped == 1
    m = holds_matrix(ext, ["e1", "e2"], heads, ["Actress", "Kerala"])
    assert m.tolist() == [[False, True], [False, False]]


def test_data_scores_match_the_kge_data_measure(tmp_path):
    """The data measure recomputed per entity equals kge's on the graph built from the triples."""
    import json

    from kge.bias import BiasSpec, run_measure
    from kge.graph import load_triples_jsonl

    rng = np.random.default_rng(0)
    people = [(f"P{i}", "male" if i % 2 else "female") for i in range(40)]
    items = ["Actor", "Nurse", "Pilot", "Cook"]
    def likely(o, g):  # men mostly Actor / Pilot, women mostly Nurse / Cook
        return 0.6 if (o in ("Actor", "Pilot")) == (g == "male") else 0.2

    triples = [{"head": p, "relation": "hypernym", "tail": o, "head_gender": g}
               for p, g in people for o in items if rng.random() < likely(o, g)]
    triples.append({"head": "P99", "relation": "spouse", "tail": "P1", "head_gender": "female"})  # no hypernym
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in triples))
    g = load_triples_jsonl(path)
    ref = {r.item: r.score for r in run_measure("data", g, None, BiasSpec("gender", "male", "female", "hypernym")).rows}
    ids = [p for p, _ in people] + ["P99"]
    gender = np.array([g_ for _, g_ in people] + ["female"])
    h = holds_matrix(triples, ids, {p: p for p in ids}, items)
    male, female = gender == "male", gender == "female"
    phi = data_scores(h, male, female, np.ones((1, male.sum())), np.ones((1, female.sum())))[0]
    assert {o: phi[j] for j, o in enumerate(items)} == pytest.approx(ref)


# ------------------------------------------------------------------ error-born items
def test_decomposition_splits_shared_error_born_and_missed_items():
    #               a (gold only)  b      c      d (born)  e (born)
    s_gold = np.array([0.5, 0.2, -0.3, 0.0, 0.0])
    s_ext = np.array([0.0, 0.4, -0.1, 0.7, -0.2])
    in_gold = np.array([True, True, True, False, False])
    in_ext = np.array([False, True, True, True, True])
    p = decompose(s_gold, s_ext, in_gold, in_ext)
    assert p["shared"] == pytest.approx((0.4 - 0.2) + (0.1 - 0.3))
    assert p["error_born"] == pytest.approx(0.9) and p["missed"] == pytest.approx(0.5)
    assert p["added"] == pytest.approx(p["shared"] + p["error_born"] - p["missed"])
    assert p["shift"] == pytest.approx(((0.4 - 0.2) + (-0.1 + 0.3)) / 2)
    # replicated along leading axes
    q = decompose(np.stack([s_gold] * 3), np.stack([s_ext] * 3), in_gold, in_ext)
    assert q["added"].shape == (3,) and q["added"] == pytest.approx([p["added"]] * 3)


#: Seeds of the analysed synthetic study: with three, the seed reference of the tests (close to
#: Student's t with 2 df at Holm's levels) decides nothing short of a huge effect
FIVE = (0, 1, 2, 3, 4)


@pytest.fixture(scope="module")
def analysis():
    st = synthetic_study(seeds=FIVE)
    p = Propagation(st, synthetic_bias(st), measures=["data", "fisher", "bourli_projection"], n_resamples=400)
    return p, analyse(p, min_count=5, n_draws=40)


def test_error_born_items_are_counted_and_listed_apart(analysis):
    p, a = analysis
    for r in a["bias_added"]:
        assert r["items"]["error_born"] == len(BORN_ITEMS) and r["items"]["shared"] == 5
        if r["measure"] == "bourli_projection":   # asked for, never measured: no number, no seeds
            assert math.isnan(r["added"]["value"]) and r["added"]["n_seeds"] == 0 and r["error_born_share"] is None
            continue
        assert r["added"]["value"] == pytest.approx(r["shared"]["value"] + r["error_born"]["value"]
                                                    - r["missed"]["value"])
        assert 0 < r["error_born_share"] < 1
    fisher = next(r for r in a["bias_added"] if r["measure"] == "fisher" and r["extractor"] == "baseline")
    parts = [p.embedding_parts(s, "baseline", "fisher") for s in FIVE]
    assert fisher["error_born"]["value"] == pytest.approx(np.mean([x["error_born"] for x in parts]))
    assert fisher["error_born"]["value"] == pytest.approx(1.5 * (0.3 + 0.2), abs=0.05)   # planted
    assert fisher["over"] == SEED_LEVEL and fisher["error_born"]["ci"][0] < fisher["error_born"]["value"]
    for t in a["items"]:
        if t["graph"] == "gold" or not t["measured"]:
            continue
        listed = {x["item"] for x in t["male"] + t["female"]}
        assert not listed & set(BORN_ITEMS), "error-born items are never in the main lists"
        assert {x["item"] for x in t["error_born"]} <= set(BORN_ITEMS)
        assert all(x["support"] >= 5 for x in t["male"] + t["female"] + t["error_born"])


def test_planted_effects_get_their_verdicts(analysis):
    _, a = analysis
    by = {v["id"].split("(")[0] + ":" + v["id"].split("m=")[-1].rstrip(")"): v for v in a["verdicts"]}
    widening = next(v for k, v in by.items() if k.startswith("widening"))
    # the planted spouse recall gap of 0.3 with one gold fact per person: facts per person widen by ~0.3
    assert widening["verdict"] == "supported" and widening["over"] == ENTITY_LEVEL and widening["n_seeds"] == 5
    assert widening["ci"][0] < 0.3 < widening["ci"][1]
    # error-born Kerala goes to men only, Johnny Depp to women only: gendered errors beyond the null
    assert by["data_excess:data_excess(v=baseline"]["verdict"] == "supported"
    fisher = next(v for k, v in by.items() if k.startswith("embedding_excess") and "fisher" in v["claim"])
    assert fisher["verdict"] == "supported" and fisher["over"] == "seeds × items"   # items amplified 1.5x
    bourli = next(v for v in a["verdicts"] if v["id"].startswith("less_embedding") and "bourli" in v["id"])
    assert bourli["verdict"] == "not applicable"    # never measured: its premise is undecided
    assert a["n_claims"] == len(a["verdicts"]) == 9 and [q["key"] for q in a["answer"]] == [
        "facts", "graph_bias", "embedding_bias", "debias"]
    added = next(r for r in a["bias_added"] if r["measure"] == "data" and r["extractor"] == "baseline")
    c = added["control"]["added"]
    assert c["null_ci"][0] <= c["null_mean"] <= c["null_ci"][1] < c["observed"]
    assert added["excess"]["added"]["value"] == pytest.approx(c["observed"] - c["null_mean"])


def test_run_report_renders_verdicts_first_and_escapes_names(analysis, tmp_path):
    from wgb.pipeline import PipelineConfig
    from wgb.pipeline.report import write_report

    _, a = analysis
    cfg = PipelineConfig(profile="tiny", seeds=list(FIVE), measures=["data", "fisher", "bourli_projection"])
    extraction = {"baseline": {"spouse": {"male": 0.9, "female": 0.6}}}
    out = write_report(tmp_path / "rep", cfg=cfg, settings=cfg.settings(), analysis=a, extraction=extraction,
                       link_reports={}, timings={0: {"train/baseline": 1.5}})
    html = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    assert html.index('id="answer"') < html.index('id="read"') < html.index('id="graph"') < html.index('id="items"')
    assert "<b>Fish" not in html and "&lt;b&gt;Fish &amp; Chips&lt;/b&gt;" in html
    assert '<span class="verdict supported">supported</span>' in html
    assert html.count("<ul>") == html.count("</ul>") >= 1 and html.count("<li>") == html.count("</li>")
    assert "`" not in html.split("<body>")[1], "no literal markdown backticks in the page"
    assert md.startswith("\n# Does gender bias") or md.startswith("# Does gender bias")
    assert md.index("## Answer") < md.index("| verdict |") < md.index("## How to read it")
    assert "\\<b>Fish & Chips\\</b>" in md
    assert (out / "propagation.png").stat().st_size > 10_000 and (out / "bias_added.png").exists()
