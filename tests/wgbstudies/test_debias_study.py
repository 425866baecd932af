"""The debiasing study and its CLI, with a fake fast trainer (synthetic predictions)."""
from __future__ import annotations

import json
import zlib

import pytest
from click.testing import CliRunner

from relext.debias import STUDY_VARIANTS
from wgbstudies.debias import DebiasStudyConfig, make_config_for, run_study, transforms_of
from support.relext_data import synthetic_predictions


class FakeTrainer:
    """Writes what relext.training.train.train writes (config, predictions, DONE) in milliseconds.

    Male accuracy is fixed; female accuracy rises with the number of debiasers in the run, so
    more debiasing gives a smaller gap (known by construction)."""

    def __init__(self):
        self.calls = []

    def __call__(self, config, run_dir):
        self.calls.append(run_dir.name)
        cfg = config.to_json()
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(cfg))
        n_deb = sum(len(x.split("+")) for x in cfg["dataset_transform"]) + len(cfg["vectors_transform"])
        seed = cfg["seed"] * 1000 + zlib.crc32(run_dir.name.encode()) % 997
        pred = run_dir / "predictions"
        pred.mkdir(exist_ok=True)
        for i, split in enumerate(("validation", "male_test", "female_test")):
            acc = 0.95 if split == "male_test" else 0.5 + 0.15 * n_deb
            rows = synthetic_predictions(split, n_entities=30, accuracy=acc, seed=seed + i,
                                         gender="mixed" if split == "validation" else None)
            (pred / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run_dir / "DONE").write_text("")


def test_variants_map_to_train_configs():
    assert transforms_of("none") == ([], [])
    assert transforms_of("cda+anonymize") == (["anonymize+cda"], [])
    assert transforms_of("all") == (["anonymize+cda"], ["hard_debias"])
    cfg = make_config_for(DebiasStudyConfig())(encoder="cda+hard_debias", selector="attention", seed=2,
                                                epochs=3, threads=1)
    assert (cfg.encoder, cfg.selector, cfg.seed, cfg.epochs) == ("pcnn", "attention", 2, 3)
    assert cfg.dataset_transform == ["cda"] and cfg.vectors_transform == ["hard_debias"]


def test_bad_study_configs_fail_early():
    with pytest.raises(ValueError, match="twice"):
        DebiasStudyConfig(variants=["cda", "CDA"])
    with pytest.raises(ValueError, match="unknown debiaser"):
        DebiasStudyConfig(variants=["cda", "magic"])
    with pytest.raises(ValueError, match="the study sets 'dataset_transform' for each run; use --variants"):
        DebiasStudyConfig(train_overrides={"dataset_transform": ["cda"]})


def test_study_runs_resumes_and_reports(tmp_path):
    variants = ["none", "all"]
    cfg = DebiasStudyConfig(variants=variants, seeds=[0, 1], n_resamples=20)
    trainer = FakeTrainer()
    summary = run_study(cfg, tmp_path, train_fn=trainer, plots=False, progress=False)
    assert len(trainer.calls) == 4 and (tmp_path / "DONE").exists()
    combos = summary["variants"]["argmax"]
    assert [c["encoder"] for c in combos] == [v if v != "all" else STUDY_VARIANTS[-1] for v in variants]
    by = {c["encoder"]: c for c in combos}
    gap = lambda v: by[v]["gaps"]["f1"]["spouse"]["mean"]  # noqa: E731
    assert gap("none") > gap("anonymize+cda+hard_debias")
    md = (tmp_path / "results.md").read_text()
    assert "Equality of opportunity" in md
    assert "fewer than 3 seeds" in md  # two seeds: every claim undecided, never a verdict
    info = json.loads((tmp_path / "variants.json").read_text())
    assert info["anonymize+cda+hard_debias"]["dataset_transform"] == ["anonymize+cda"]
    assert "ner_available" in info["anonymize+cda+hard_debias"]["debiaser"]
    run_cfg = json.loads((tmp_path / "runs" / "anonymize+cda+hard_debias-attention-seed1" / "config.json").read_text())
    assert run_cfg["vectors_transform"] == ["hard_debias"]
    # resume: nothing is trained again
    again = FakeTrainer()
    run_study(cfg, tmp_path, train_fn=again, plots=False, progress=False)
    assert again.calls == []


def test_study_verdicts_from_the_design(tmp_path):
    """The fake trainer's female accuracy rises with debiasing: the gap shrinks by construction, so
    'CDA reduces the mean |F1 gap|' must be supported and its opposite never. Six seeds: with t(S - 1)
    at Holm's level, four seeds of this trainer's seed noise decide nothing."""
    cfg = DebiasStudyConfig(variants=["none", "cda", "duplicate"], seeds=[0, 1, 2, 3, 4, 5], n_resamples=20)
    summary = run_study(cfg, tmp_path, train_fn=FakeTrainer(), plots=False, progress=False)
    rep = summary["design_report"]
    claims = {c["claim"]: c for c in rep["claims"]}
    g = claims["CDA reduces the mean |F1 gap|"]
    assert g["n_seeds"] == 6 and g["value"] < 0 and g["verdict"] in ("supported", "undecided")
    assert all(c["verdict"] in ("supported", "contradicted", "undecided") for c in rep["claims"])
    assert claims["The spouse F1 gap favours male articles (baseline)"]["verdict"] == "supported"
    assert len(rep["half_split"]) == len(rep["claims"])
    assert {x["variant"] for x in rep["gaps"]} == {"none", "cda", "duplicate"}
    assert all(x["correction"] == "bh" for x in rep["gaps"])
    saved = json.loads((tmp_path / "claims.json").read_text())
    assert saved["claims"] == json.loads(json.dumps(rep["claims"]))
    md = (tmp_path / "results.md").read_text()
    assert "## The paper's claims: verdicts" in md and "halves" in md
    assert summary["findings"] and "seeds" in summary["findings"][0]


def test_cli_quick_profile_and_bad_variant(tmp_path, monkeypatch):
    from wgb.cli import cli

    seen = {}

    def fake_run_study(config, out, progress=True, train=True, executor=None, amend_plan=None):
        seen["config"] = config
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text("# report\n")
        return {"meta": {"runs_evaluated": 0, "n_runs": len(config.variants), "runs_failed": {}}}

    monkeypatch.setattr("wgbstudies.debias.run_study", fake_run_study)
    runner = CliRunner()
    res = runner.invoke(cli, ["re", "debias-grid", str(tmp_path / "q"), "--quick", "--threads", "2",
                              "--variants", "none,cda+anonymize"])
    assert res.exit_code == 0, res.output
    c = seen["config"]
    assert c.seeds == [0] and c.epochs == 1 and c.n_resamples == 200 and c.train_articles == 1000
    assert c.variants == ["none", "anonymize+cda"] and c.train_overrides["threads"] == 2
    res = runner.invoke(cli, ["re", "debias-grid", str(tmp_path / "q"), "--ner", "gazetteer",
                              "--variants", "none,anonymize[ner=spacy],cda"])
    assert res.exit_code == 0, res.output
    assert seen["config"].variants == ["none", "anonymize[ner=gazetteer]", "cda"]
    assert seen["config"].seeds == [0, 1, 2] and seen["config"].epochs is None
    res = runner.invoke(cli, ["re", "debias-grid", str(tmp_path / "q"), "--variants", "none,magic"])
    assert res.exit_code != 0 and "unknown debiaser 'magic'" in res.output


def test_cli_debias_data_writes_parquet(tmp_path, monkeypatch):
    from datasets import load_dataset

    from support.debias_data import tiny_dsdict
    from wgb.cli import cli

    monkeypatch.setattr("relext.protocols.data.load_dataset_dict", lambda path=None, dataset=None: tiny_dsdict())
    res = CliRunner().invoke(cli, ["re", "debias-data", "anonymize+cda", str(tmp_path / "d"), "--ner", "gazetteer"])
    assert res.exit_code == 0, res.output
    folder = tmp_path / "d" / "data" / "sentences"
    ds = load_dataset("parquet", data_files={s: str(folder / f"{s}-00000-of-00001.parquet")
                                             for s in ("train", "male_test")})
    assert len(ds["train"]) == 16 and set(ds["male_test"]["head"]) == {"E1"}
    assert json.loads((tmp_path / "d" / "debias.json").read_text())["order"] == ["anonymize", "cda"]
    res = CliRunner().invoke(cli, ["re", "debias-data", "hard_debias", str(tmp_path / "e")])
    assert res.exit_code != 0 and "does not change the dataset" in res.output


def test_ner_choice_reaches_the_anonymizing_variants():
    from wgbstudies.debias import base_name, with_ner

    assert with_ner("cda", "gazetteer") == "cda"
    v = with_ner("all", "gazetteer")
    assert v == "anonymize[ner=gazetteer]+cda+hard_debias" and base_name(v) == "anonymize+cda+hard_debias"
    assert transforms_of(v) == (["anonymize[ner=gazetteer]+cda"], ["hard_debias"])


def test_subsample_keeps_whole_articles_and_other_splits():
    from support.debias_data import tiny_dsdict
    from wgbstudies.debias import subsample_train

    ds = tiny_dsdict()
    sub = subsample_train(ds, 1, seed=0)
    assert len(set(sub["train"]["entity_id"])) == 1 and len(sub["train"]) == 4
    assert sub["male_test"].to_list() == ds["male_test"].to_list()
    assert subsample_train(ds, 1, seed=0)["train"]["id"] == sub["train"]["id"]
    assert subsample_train(ds, 5) is ds


def test_claims_with_disjoint_seeds_are_undecided_and_halves_use_each_claims_seeds():
    import numpy as np

    from wgbstats.design import Design
    from relext.evaluation.study_counts import StudyCounts
    from wgbstudies.claims import claim_specs, evaluate_claims, half_split
    from wikigenderbias.schema import RELATIONS

    rng = np.random.default_rng(0)
    e = 40
    gender = np.array(["male"] * 20 + ["female"] * 20)

    def counts():
        c = np.zeros((e, len(RELATIONS), 3), dtype=np.int64)
        c[..., 0] = rng.integers(5, 10, size=(e, len(RELATIONS)))
        c[..., 2] = rng.integers(0, 5, size=(e, len(RELATIONS)))
        return c

    data = StudyCounts(np.array([f"e{i}" for i in range(e)]), gender,
                       {"none": {k: counts() for k in range(6)}, "cda": {k: counts() for k in range(6, 9)}})
    d = Design(data, n_resamples=200)
    specs = claim_specs(["none", "cda"])
    out = {v.claim: v for v in evaluate_claims(d, specs)}
    assert out["CDA raises micro F1"].verdict == "undecided"
    assert "share no seed" in out["CDA raises micro F1"].note
    assert out["Spouse has the largest F1 gap (baseline)"].n_seeds == 6
    halves = {h["claim"]: h for h in half_split(d, specs, list(out.values()))}
    assert halves["Spouse has the largest F1 gap (baseline)"]["seeds_per_half"] == [3, 3]
    assert halves["CDA raises micro F1"]["seeds_per_half"] == [0, 0]


# ------------------------------------------------------------------ the paper's claims (#27)
from support.claims_data import BASE, f1_study  # noqa: E402 - the builders of the claims tests


def test_paper_wording_hypernym_smallest_birthdate_little():
    """The paper: hypernym has the least gap, birthDate 'very little' (near ceiling); the old claim
    'birthDate has the smallest F1 gap' is gone."""
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.claims import claim_specs, evaluate_claims

    d = Design(f1_study(np.random.default_rng(0), {"none": BASE}, noise=0.005), n_resamples=300)
    out = {v.claim: v for v in evaluate_claims(d, claim_specs(["none"]))}
    assert "birthDate has the smallest F1 gap (baseline)" not in out
    assert out["Hypernym has the smallest F1 gap (baseline)"].verdict == "supported"
    assert out["birthDate shows very little F1 gap (baseline)"].verdict == "supported"
    assert out["Spouse has the largest F1 gap (baseline)"].verdict == "supported"
    assert all('"' in v.source and "Gaut et al. 2020" in v.source for v in out.values())
    assert out["Hypernym has the smallest F1 gap (baseline)"].extra["test"] == "intersection-union"
    # a birthDate gap of 3 F1 points is not 'very little'
    d2 = Design(f1_study(np.random.default_rng(1), {"none": {**BASE, "birthDate": (0.99, 0.96)}}, noise=0.005),
                n_resamples=300)
    v2 = {v.claim: v for v in evaluate_claims(d2, claim_specs(["none"]))}
    assert v2["birthDate shows very little F1 gap (baseline)"].verdict == "contradicted"


def test_every_variant_ranges_over_the_paper_variants_with_an_intersection_union_test():
    """duplicate (a toolkit control) favours women: reported beside the claim, not inside it; the
    paper's four variants each favour men by 6 points: supported (the old minimum over all
    variants, duplicate included, was negative)."""
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.claims import claim_specs, evaluate_claims, is_paper_variant

    assert is_paper_variant("anonymize[ner=gazetteer]+cda") and not is_paper_variant("hard_debias[freeze=true]")
    assert not is_paper_variant("duplicate") and is_paper_variant("none")
    f1 = {v: BASE for v in ("none", "cda", "anonymize", "hard_debias")}
    f1["duplicate"] = {**BASE, "spouse": (0.74, 0.80)}
    d = Design(f1_study(np.random.default_rng(2), f1), n_resamples=1000)   # Holm over 9 claims
    variants = list(f1)
    out = {v.claim: v for v in evaluate_claims(d, claim_specs(variants))}
    # four of the paper's eight variants: the claim is named by its members (one name, one definition)
    every = out["The spouse F1 gap favours male articles under none, anonymization, CDA and hard-debiased embeddings"]
    assert every.extra["narrows"] == "The spouse F1 gap favours male articles under every variant"
    assert every.verdict == "supported"
    assert {p["part"] for p in every.extra["parts"]} == {f"gap spouse ({v})" for v in variants if v != "duplicate"}
    assert [c["part"] for c in every.extra["controls"]] == ["gap spouse (duplicate)"]
    assert every.extra["controls"][0]["value"] < 0
    assert every.p_value == max(p["p_value"] for p in every.extra["parts"])


def test_every_variant_claim_holds_its_level_when_one_variant_has_no_gap():
    """Known answer under the null of the intersection-union test: one paper variant has no spouse
    gap, so 'every variant favours men' is false; it is supported in at most ~alpha of studies."""
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.claims import claim_specs, evaluate_claims

    rng = np.random.default_rng(3)
    supported = 0
    for k in range(20):
        f1 = {v: BASE for v in ("none", "cda", "anonymize")}
        f1["hard_debias"] = {**BASE, "spouse": (0.77, 0.77)}
        d = Design(f1_study(rng, f1, seeds=4, n=40, noise=0.05), n_resamples=200, seed=k)
        specs = [s for s in claim_specs(list(f1)) if s.narrows == "The spouse F1 gap favours male articles under every variant"]
        supported += evaluate_claims(d, specs)[0].verdict == "supported"
    assert supported <= 3, supported


def test_halves_split_persons_and_need_three_seeds_per_half():
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.claims import claim_specs, evaluate_claims, half_split, person_halves

    data = f1_study(np.random.default_rng(4), {"none": BASE, "cda": BASE}, seeds=6, n=30, folds=4)
    a, b, how = person_halves(data)
    assert not np.any(a & b) and np.all(a | b) and how.startswith("folds [0, 1]")
    assert set(data.fold[a]) == {0, 1} and set(data.fold[b]) == {2, 3}
    d = Design(data, n_resamples=200)
    specs = claim_specs(["none", "cda"])
    full = evaluate_claims(d, specs)
    halves = {h["claim"]: h for h in half_split(d, specs, full)}
    h = halves["CDA raises micro F1"]
    assert h["seeds_per_half"] == [3, 3] and h["checked"] and h["persons_per_half"] == [int(a.sum()), int(b.sum())]
    # without folds: a seeded split within gender; 4 seeds = 2 per half: not checked
    flat = f1_study(np.random.default_rng(5), {"none": BASE, "cda": BASE}, seeds=4, n=30)
    a2, b2, how2 = person_halves(flat, seed=0)
    assert "within gender" in how2 and a2.sum() == b2.sum() == 30
    assert np.sum(a2 & (flat.gender == "male")) == 15
    d2 = Design(flat, n_resamples=200)
    full2 = evaluate_claims(d2, specs)
    for h2 in half_split(d2, specs, full2):
        assert not h2["checked"] and h2["first_half"] is None and h2["stable"] is None
    from wgbstudies.claims import claims_table
    from wgbcore.render import Document

    doc = Document("t")
    claims_table(doc, full2, half_split(d2, specs, full2))
    md = doc.markdown()
    assert "| claim | verdict |" in md and "halves" not in md      # nothing checked: no halves column
    doc2 = Document("t")
    claims_table(doc2, full, half_split(d, specs, full))
    assert "halves (seeds and persons)" in doc2.markdown() and "not checked (2 seeds" not in doc2.markdown()


def test_cda_gain_reported_against_duplicate():
    """duplicate - none is most of CDA's micro-F1 gain: the report says so and names CDA vs
    duplicate as the claim about counterfactual data."""
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.debias import training_budget
    from wgbstudies.report import budget_sentence

    up = lambda f: {r: (m + f, w + f) for r, (m, w) in BASE.items()}  # noqa: E731
    d = Design(f1_study(np.random.default_rng(6), {"none": BASE, "duplicate": up(0.015), "cda": up(0.018)}),
               n_resamples=200)
    b = training_budget(d, ["none", "cda", "duplicate"])
    assert b["duplicate_minus_none"]["value"] == pytest.approx(0.015, abs=0.002)
    assert b["budget_share"] > 0.7
    text = budget_sentence(b)
    assert "duplicate - none" in text and "CDA vs duplicate" in text


def test_two_populations_side_by_side_never_pooled():
    """A cross-fitted study with test and distant persons: the claims on the test persons first,
    the same claims on all persons beside them; the resample keeps each gender x fold x population
    stratum's size."""
    import numpy as np

    from wgbstats.design import Design, entity_weights
    from relext.evaluation.study_counts import StudyCounts
    from wgbstudies.claims import claim_specs, claims_by_population, population_sections
    from wgbcore.render import Document

    base = f1_study(np.random.default_rng(7), {"none": BASE, "cda": BASE}, seeds=4, n=40, folds=4)
    pop = np.where(np.arange(80) % 5 == 0, "test", "distant")
    data = StudyCounts(base.entity_ids, base.gender, base.counts, fold=base.fold, population=pop)
    w = entity_weights(data, 30, seed=0)
    for g in ("male", "female"):
        m = data.gender == g
        for f in range(4):
            for p in ("test", "distant"):
                cols = (data.fold[m] == f) & (data.population[m] == p)
                assert np.all(w[g][:, cols].sum(axis=1) == cols.sum())
    rep = claims_by_population(Design(data, n_resamples=200), claim_specs(["none", "cda"]))
    assert rep["population"] == "test" and rep["n_persons"] == 16
    assert list(rep["populations"]) == ["all"] and rep["populations"]["all"]["n_persons"] == 80
    assert [c["claim"] for c in rep["claims"]] == [c["claim"] for c in rep["populations"]["all"]["claims"]]
    doc = Document("t")
    population_sections(doc, rep)
    assert "all persons, test and distantly supervised (80)" in doc.markdown()
    old = claims_by_population(Design(base, n_resamples=200), claim_specs(["none", "cda"]))
    assert old["population"] == "test" and "populations" not in old and old["n_persons"] == 80
