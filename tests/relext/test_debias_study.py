"""The debiasing study and its CLI, with a fake fast trainer (synthetic predictions)."""
from __future__ import annotations

import json
import zlib

import pytest
from click.testing import CliRunner

from relext.debias import STUDY_VARIANTS
from relext.studies.debias import DebiasStudyConfig, make_config_for, run_study, transforms_of
from support.relext_data import synthetic_predictions


class FakeTrainer:
    """Writes what relext.train.train writes (config, predictions, DONE) in milliseconds.

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
    with pytest.raises(ValueError, match="may not set 'dataset_transform'"):
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
    'CDA reduces the mean |F1 gap|' must be supported and its opposite never."""
    cfg = DebiasStudyConfig(variants=["none", "cda", "duplicate"], seeds=[0, 1, 2, 3], n_resamples=20)
    summary = run_study(cfg, tmp_path, train_fn=FakeTrainer(), plots=False, progress=False)
    rep = summary["design_report"]
    claims = {c["claim"]: c for c in rep["claims"]}
    g = claims["CDA reduces the mean |F1 gap|"]
    assert g["n_seeds"] == 4 and g["value"] < 0 and g["verdict"] in ("supported", "undecided")
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

    def fake_run_study(config, out, progress=True, train=True, executor=None):
        seen["config"] = config
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text("# report\n")
        return {"meta": {"runs_evaluated": 0, "n_runs": len(config.variants), "runs_failed": {}}}

    monkeypatch.setattr("relext.studies.debias.run_study", fake_run_study)
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

    monkeypatch.setattr("relext.data.load_dataset_dict", lambda path=None, dataset=None: tiny_dsdict())
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
    from relext.studies.debias import base_name, with_ner

    assert with_ner("cda", "gazetteer") == "cda"
    v = with_ner("all", "gazetteer")
    assert v == "anonymize[ner=gazetteer]+cda+hard_debias" and base_name(v) == "anonymize+cda+hard_debias"
    assert transforms_of(v) == (["anonymize[ner=gazetteer]+cda"], ["hard_debias"])


def test_subsample_keeps_whole_articles_and_other_splits():
    from support.debias_data import tiny_dsdict
    from relext.studies.debias import subsample_train

    ds = tiny_dsdict()
    sub = subsample_train(ds, 1, seed=0)
    assert len(set(sub["train"]["entity_id"])) == 1 and len(sub["train"]) == 4
    assert sub["male_test"].to_list() == ds["male_test"].to_list()
    assert subsample_train(ds, 1, seed=0)["train"]["id"] == sub["train"]["id"]
    assert subsample_train(ds, 5) is ds


def test_claims_with_disjoint_seeds_are_undecided_and_halves_use_each_claims_seeds():
    import numpy as np

    from relext.design import Design, StudyCounts
    from relext.studies.claims import claim_specs, evaluate_claims, half_split
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
