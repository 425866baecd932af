"""The power plan (wgbstudies.power): the projection of the entity part to a larger population
(known answers), the seed part, MDE / power arithmetic, run discovery, and the committed plan."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from wgbstats.design import Design
from relext.evaluation.study_counts import StudyCounts
from wgbstudies import power
from wgbstudies.claims import ClaimSpec, claim_specs, grid_claim_specs
from wikigenderbias.schema import RELATIONS

ROOT = Path(__file__).resolve().parents[2]
R = len(RELATIONS)
SPOUSE = RELATIONS.index("spouse")
N_POS = 1000
EO = ClaimSpec("eo gap", "eo gap spouse (v)", 1, ["v"], lambda m: m["v"]["eo_gap:spouse"])


def _study(rng, *, seeds=10, n_male=60, n_female=60, delta=0.02, sd_seed=0.01, sd_entity=0.05, sd_noise=0.01):
    """Recall rates x[s, e] = 0.5 + b_e + eps_se (+ delta + a_s for men), as counts with N_POS
    positives per entity: the recall gap's seed, entity and interaction variances are known."""
    e = n_male + n_female
    gender = np.array(["male"] * n_male + ["female"] * n_female)
    x = (0.5 + rng.normal(0, sd_entity, size=(1, e)) + rng.normal(0, sd_noise, size=(seeds, e))
         + (gender == "male") * (delta + rng.normal(0, sd_seed, size=(seeds, 1))))
    c = np.zeros((seeds, e, R, 3), dtype=np.int64)
    tp = np.clip(np.rint(x * N_POS), 0, N_POS).astype(np.int64)
    c[..., SPOUSE, 0], c[..., SPOUSE, 2] = tp, N_POS - tp
    return StudyCounts(np.array([f"e{i}" for i in range(e)]), gender, {"v": dict(enumerate(c))})


def _true_var(seeds, n_male, n_female, sd_seed=0.01, sd_entity=0.05, sd_noise=0.01):
    return sd_seed ** 2 / seeds + (sd_entity ** 2 + sd_noise ** 2 / seeds) * (1 / n_male + 1 / n_female)


def test_projection_at_the_test_size_is_the_entity_only_bootstrap():
    data = _study(np.random.default_rng(0))
    est = Design(data, n_resamples=2000, seed=0).metric("v", "eo_gap:spouse")
    se = power.projected_entity_se(data, EO, data.seeds("v"), {"male": 60, "female": 60}, seed=1)
    assert se == pytest.approx(est.se_entity, rel=0.1)


def test_projection_shrinks_as_one_over_sqrt_persons_within_gender():
    data = _study(np.random.default_rng(1))
    seeds = data.seeds("v")
    base = power.projected_entity_se(data, EO, seeds, {"male": 60, "female": 60})
    four = power.projected_entity_se(data, EO, seeds, {"male": 240, "female": 240})
    assert four / base == pytest.approx(0.5, rel=0.1)
    # only the women grow: the men's share of the variance stays
    women = power.projected_entity_se(data, EO, seeds, {"male": 60, "female": 6000})
    assert women / base == pytest.approx(math.sqrt(0.5), rel=0.1)


def test_projected_mde_matches_the_true_mde_of_the_larger_design():
    """Known answer: planned from 60 + 60 persons and 10 seeds, the MDE at 240 + 240 persons and
    20 seeds is z times the true standard error of that design (the simulation's variances)."""
    rng = np.random.default_rng(2)
    ratios = []
    for k in range(12):
        data = _study(rng)
        cp = power.claim_power(Design(data, n_resamples=1000, seed=k), EO, n_claims=1, seed_counts=(20,), planned=20,
                               population={"male": 240, "female": 240})
        ratios.append(cp.mde_crossfit[20] / (power.z_total(0.05) * math.sqrt(_true_var(20, 240, 240))))
    assert 0.85 < float(np.mean(ratios)) < 1.2, ratios


def test_seed_part_falls_with_seeds_and_no_seed_noise_gives_the_floor():
    data = _study(np.random.default_rng(3), sd_seed=0.05)
    cp = power.claim_power(Design(data, n_resamples=500), EO, n_claims=4)
    m = cp.mde_crossfit
    assert m[3] > m[5] > m[10] > cp.mde_entity_floor
    assert cp.mde_today == pytest.approx(power.z_total(0.05 / 4) * cp.se_today)
    assert cp.mde_alone < m[power.PLANNED_SEEDS]        # a lone test: alpha instead of alpha/4
    assert cp.mde_fold_averaged[10] < cp.mde_fold_averaged[5] < m[power.PLANNED_SEEDS]
    # identical seeds: no seed part; the MDE is the population's floor at any seed count
    same = _study(np.random.default_rng(3), seeds=1)
    same.counts["v"] = {s: same.counts["v"][0] for s in range(5)}
    flat = power.claim_power(Design(same, n_resamples=500), EO, n_claims=1)
    assert flat.se_seed_today == 0
    assert flat.mde_crossfit[3] == pytest.approx(flat.mde_crossfit[10]) == pytest.approx(flat.mde_entity_floor)


def test_power_and_seed_arithmetic_known_values():
    level = 0.05 / 12
    z = power.z_total(level)
    assert power.power_at(z * 0.01, 0.01, level) == pytest.approx(0.8, abs=1e-3)
    assert power.power_at(0.0, 0.01, level) == pytest.approx(level)
    assert power.power_at(-0.05, 0.01, level) == power.power_at(0.05, 0.01, level)
    assert math.isnan(power.power_at(0.1, 0.0, level))
    # var_e + var_s * s0 / S <= target**2: 1e-4 + 4e-4 * 10 / S <= 2e-4 -> S = 40
    assert power._seeds_needed(1e-4, 4e-4, 10, math.sqrt(2e-4)) == 40
    assert power._seeds_needed(3e-4, 4e-4, 10, math.sqrt(2e-4)) is None     # the floor is above it
    assert power._seeds_needed(1e-4, 0.0, 10, math.sqrt(2e-4)) == 2
    assert power._seeds_needed(1e-4, 1.0, 10, math.sqrt(2e-4), cap=100) is None


def test_claim_kind():
    kinds = {s.name: power.claim_kind(s) for s in claim_specs(["none", "cda", "duplicate"])}
    assert kinds["CDA raises micro F1"] == "micro_f1"
    assert kinds["CDA reduces the spouse F1 gap"] == "f1_gap"
    assert power.claim_kind(ClaimSpec("eo", "|EO gap birthDate| - |EO gap r|", -1, ["v"], EO.fn)) == "eo_gap"


def test_intersection_union_claim_is_planned_by_its_weakest_part():
    from wgbstudies.claims import Part

    data = _study(np.random.default_rng(5), delta=0.05)
    design = Design(data, n_resamples=500)
    strong = Part("strong", ["v"], lambda m: m["v"]["eo_gap:spouse"], 1)
    weak = Part("weak", ["v"], lambda m: m["v"]["eo_gap:spouse"] - 0.045, 1)
    iut = ClaimSpec("both", "both parts", 1, ["v"], parts=[strong, weak])
    cp = power.claim_power(design, iut, n_claims=1)
    each = [power.claim_power(design, ClaimSpec(p.name, p.name, 1, ["v"], p.fn), n_claims=1) for p in (strong, weak)]
    assert cp.extra["weakest_part"] == "weak" and cp.observed == pytest.approx(each[1].observed)
    for n in power.SEED_COUNTS:
        assert cp.power_crossfit[n] == min(c.power_crossfit[n] for c in each)
        assert cp.mde_crossfit[n] == max(c.mde_crossfit[n] for c in each)
    assert [p["claim"] for p in cp.extra["parts"]] == ["strong", "weak"]
    assert "every one of its 2 parts" in cp.decide


def test_find_runs(tmp_path):
    for name in ("none-attention-seed0", "cda-attention-seed3", "pcnn-average-seed1", "junk", "none-attention-seed9"):
        (tmp_path / name).mkdir()
    for name in ("none-attention-seed0", "cda-attention-seed3", "pcnn-average-seed1"):
        (tmp_path / name / "entity_counts.npz").write_bytes(b"")
    assert set(power.find_runs(tmp_path, keep=["none", "cda"])) == {("none", 0), ("cda", 3)}
    assert ("pcnn-average", 1) in power.find_runs(tmp_path, key="combo")
    with pytest.raises(ValueError, match="no run folders"):
        power.find_runs(tmp_path, keep=["duplicate"])
    with pytest.raises(FileNotFoundError, match="no runs folder"):
        power.find_runs(tmp_path / "absent")


def test_plan_section_and_its_table():
    data = _study(np.random.default_rng(4))
    data.counts["w"] = data.counts["v"]
    specs = [EO, ClaimSpec("micro", "micro F1 w - v", 1, ["w", "v"],
                           lambda m: m["w"]["micro_f1:pooled"] - m["v"]["micro_f1:pooled"])]
    sec = power.plan_section(data, specs, n_resamples=300, population={"male": 600, "female": 600})
    assert sec["n_claims"] == 2 and sec["level"] == pytest.approx(0.025)
    assert sec["summary"]["gap_claims"] == 1
    head, rows = power.table_rows(sec)
    assert head[0] == "claim" and len(rows) == 2 and rows[0][0] == "eo gap"
    assert any("MDE crossfit, 5 seeds" == h for h in head)
    with pytest.raises(ValueError, match="planned seed count"):
        power.plan_section(data, specs, n_resamples=300, planned=7)


def test_committed_plan_covers_every_claim_and_renders():
    plan = json.loads((ROOT / "results/re_crossfit/plan.json").read_text())
    names = [c["claim"] for c in plan["studies"]["debias"]["claims"]]
    # the plan predates one name per definition (#38): a claim over fewer members than the paper's had its name
    assert names == [s.narrows or s.name for s in claim_specs(["none", "cda", "duplicate", "hard_debias", "anonymize"])]
    combos = [f"{e}-{s}" for e in ("cnn", "pcnn") for s in ("attention", "average")]
    assert [c["claim"] for c in plan["studies"]["grid"]["claims"]] == [s.narrows or s.name
                                                                        for s in grid_claim_specs(combos)]
    for sec in plan["studies"].values():
        for c in sec["claims"]:
            assert c["mde_crossfit"]["3"] >= c["mde_crossfit"]["5"] >= c["mde_crossfit"]["10"] >= c["mde_entity_floor"]
    # plan.md is plan_document(plan.json): regenerating it from the JSON changes nothing
    assert (ROOT / "results/re_crossfit/plan.md").read_text() == power.plan_document(plan).markdown()
    md = power.plan_markdown(plan)
    assert not md.startswith("# ") and "| claim | statistic |" in md


def test_docs_block_is_generated_from_the_plan():
    page = ROOT / "docs/guide/debiasing.md"
    text = page.read_text()
    plan = json.loads((ROOT / "results/re_crossfit/plan.json").read_text())
    start, end = "<!-- BEGIN generated:power-plan -->\n", "<!-- END generated:power-plan -->"
    assert start in text and end in text
    body = text.split(start, 1)[1].split(end, 1)[0]
    assert body == power.plan_markdown(plan).rstrip("\n") + "\n"


def test_population_constants_are_the_releases_persons():
    """Every person of the release has one spouse bag (the release lists the spouse relation for
    every item): the committed label-noise counts are the persons by gender and population."""
    rates = json.loads((ROOT / "results/re_crossfit/label_noise.json").read_text())["rates"]["marriage_words"]
    for g in ("male", "female"):
        assert rates["test"][g]["spouse_bags"] == power.TEST_POPULATION[g]
        assert rates["test"][g]["spouse_bags"] + rates["distant"][g]["spouse_bags"] == power.POPULATION[g]
