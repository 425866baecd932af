"""Pre-registered studies (wgbstudies.plan) and verdicts re-derived from their committed numbers
(wgbstudies.recheck), on small grids trained by a fake trainer (synthetic predictions)."""
from __future__ import annotations

import json
import shutil
import zlib

import pytest

from wgbstudies.grid import GridConfig, run_grid
from support.relext_data import synthetic_predictions


class Trainer:
    """Writes what relext.training.train.train writes in milliseconds; men's articles are predicted better.
    ``fail_seeds``: seeds whose runs fail (an unfinished study)."""

    def __init__(self, fail_seeds=()):
        self.fail_seeds = set(fail_seeds)
        self.calls = []

    def __call__(self, config, run_dir):
        if config["seed"] in self.fail_seeds:
            raise RuntimeError("not trained in this test")
        self.calls.append(run_dir.name)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(config))
        seed = config["seed"] * 1000 + zlib.crc32(f"{config['encoder']}{config['selector']}".encode()) % 997
        pred = run_dir / "predictions"
        pred.mkdir(exist_ok=True)
        for i, split in enumerate(("validation", "male_test", "female_test")):
            rows = synthetic_predictions(split, n_entities=15, accuracy=0.9 if split == "male_test" else 0.6,
                                         seed=seed + i, gender="mixed" if split == "validation" else None)
            (pred / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run_dir / "DONE").write_text("")


def make_config(**kw):
    return dict(kw)


CFG = dict(encoders=["cnn"], selectors=["attention", "average"], seeds=[1, 2, 3], epochs=1, n_resamples=20)


def _grid(out, trainer=None, amend_plan=None, **kw):
    return run_grid(GridConfig(**{**CFG, **kw}), out, train_fn=trainer or Trainer(), make_config=make_config,
                    plots=False, progress=False, amend_plan=amend_plan)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A finished, pre-registered grid under ``<root>/results/grid`` (as the repository lays them out)."""
    root = tmp_path_factory.mktemp("repo")
    _grid(root / "results" / "grid")
    return root


def test_the_plan_is_written_before_the_first_run_and_its_verdicts_are_final(study):
    from wgbstats.design import DESIGN_VERSION
    from wgbstudies.claims import grid_claim_specs
    from wgbstudies.plan import BEFORE, canonical_claims, claims_sha256

    out = study / "results" / "grid"
    plan = json.loads((out / "plan.json").read_text())
    assert plan["registered"] == BEFORE and plan["runs_finished_at_registration"] == "0 of 6"
    assert plan["design_version"] == DESIGN_VERSION and plan["seeds"] == {"cnn-attention": [1, 2, 3],
                                                                          "cnn-average": [1, 2, 3]}
    specs = grid_claim_specs(["cnn-attention", "cnn-average"])
    assert [c["name"] for c in plan["claims"]] == [s.name for s in specs]
    assert plan["claims_sha256"] == claims_sha256(canonical_claims(specs)) == claims_sha256(specs)
    assert [f["population"] for f in plan["families"]] == ["test"] and plan["stopping_rule"]["kind"] == "fixed sample"
    res = json.loads((out / "results.json").read_text())["design_report"]
    assert res["plan"]["interim"] is False and res["plan"]["exploratory"] is False
    assert res["design_version"] == DESIGN_VERSION and len(res["inputs"]["files"]) == 12    # 6 runs x 2 files
    assert all(c["verdict"] in ("supported", "contradicted", "undecided") for c in res["claims"])
    assert all({"se", "se_seed", "df_entity"} <= set(c["extra"]) and "df" in c for c in res["claims"])
    md = (out / "results.md").read_text()
    assert "**Pre-registered**" in md and "| df (plug-in) |" in md


def test_a_folder_with_another_plan_is_refused_naming_the_field(study, tmp_path):
    out = tmp_path / "grid"
    shutil.copytree(study / "results" / "grid", out)
    before = (out / "plan.json").read_text()
    for kw, field in (({"seeds": [1, 2, 3, 4]}, "seeds"), ({"encoders": ["pcnn"]}, "claims"),
                      ({"bootstrap_seed": 7}, "bootstrap_seed")):
        with pytest.raises(ValueError, match=rf"plan\.json: the study was registered \(before the runs\) with another "
                                             rf"plan: field {field}"):
            _grid(out, **kw)
        assert (out / "plan.json").read_text() == before
    plan = json.loads(before)
    plan["design_version"] = 1      # a plan made under other inference rules: resuming it is refused too
    (out / "plan.json").write_text(json.dumps(plan))
    with pytest.raises(ValueError, match=r"field design_version \(plan 1, today 2\) differs"):
        _grid(out)
    from wgb.cli import cli
    from click.testing import CliRunner

    fresh = tmp_path / "cli"          # the command line: one line naming the field, before any work
    fresh.mkdir()
    (fresh / "plan.json").write_text(before)
    r = CliRunner().invoke(cli, ["re", "grid", "--encoders", "cnn", "--seeds", "1-4", "--out", str(fresh),
                                 "--no-train"])
    assert r.exit_code != 0 and "another plan: field seeds differs" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and sorted(x.name for x in fresh.iterdir()) == ["plan.json"]


def test_an_amended_plan_keeps_its_history_and_counts_as_registered_after_the_runs(study, tmp_path):
    """More seeds after a look: --amend-plan replaces the plan, says why, keeps the old one; the
    amended plan was made with finished runs in view: exploratory."""
    from wgb.cli import cli
    from click.testing import CliRunner

    out = tmp_path / "grid"
    shutil.copytree(study / "results" / "grid", out)
    old = json.loads((out / "plan.json").read_text())
    summary = _grid(out, amend_plan="issue #39: more seeds", seeds=[1, 2, 3, 4])
    new = json.loads((out / "plan.json").read_text())
    assert new["seeds"]["cnn-attention"] == [1, 2, 3, 4] and new["registered"] == "after the runs"
    assert new["runs_finished_at_registration"] == "6 of 8"
    (h,) = new["history"]
    assert h["what"].startswith("plan amended (seeds differs): issue #39: more seeds; 6 of 8 runs finished")
    assert h["previous"]["registered"] == old["registered"] and h["previous"]["seeds"] == old["seeds"]
    assert summary["design_report"]["plan"]["exploratory"]
    r = CliRunner().invoke(cli, ["re", "grid", "--help"])
    assert "--amend-plan" in r.output


def test_a_plan_registered_after_the_runs_is_exploratory(study, tmp_path):
    out = tmp_path / "grid"
    shutil.copytree(study / "results" / "grid", out)
    (out / "plan.json").unlink()
    trainer = Trainer()
    summary = _grid(out, trainer)
    assert trainer.calls == []
    plan = json.loads((out / "plan.json").read_text())
    assert plan["registered"] == "after the runs" and plan["runs_finished_at_registration"] == "6 of 6"
    rep = summary["design_report"]
    assert rep["plan"]["exploratory"] and rep["plan"]["label"] == "exploratory (plan registered after the runs)"
    md = (out / "results.md").read_text()
    assert "**Exploratory (plan registered after the runs).**" in md and "(exploratory) |" in md


def test_an_interim_look_decides_nothing(tmp_path):
    """Seed 3 of 3 not finished: every claim 'interim: not decided', whatever its p-value; the
    table says how far the study is; the same folder finished later decides."""
    from wgbstudies.plan import INTERIM
    from wgbstudies.recheck import recheck_all

    out = tmp_path / "results" / "grid"
    summary = run_grid(GridConfig(**CFG), out, train_fn=Trainer(fail_seeds={3}), make_config=make_config,
                       plots=False, progress=False)
    rep = summary["design_report"]
    assert rep["plan"]["interim"] and rep["plan"]["label"] == "interim (2 of 3 seeds): not decided"
    assert rep["claims"] and {c["verdict"] for c in rep["claims"]} == {INTERIM}
    assert all(h["first_half"] is None and not h["checked"] for h in rep["half_split"])
    md = (out / "results.md").read_text()
    assert "| interim (2 of 3 seeds): not decided |" in md and "**supported**" not in md
    assert recheck_all(tmp_path) == {}      # the interim table is what today's rules say of it
    summary = _grid(out)                    # the planned seeds in: verdicts
    assert not summary["design_report"]["plan"]["interim"]
    assert INTERIM not in {c["verdict"] for c in summary["design_report"]["claims"]}


def test_a_fresh_study_is_not_stale_and_every_kind_of_staleness_is_named(study, tmp_path):
    from wgbstudies.recheck import committed_tables, recheck_all

    assert committed_tables(study) == [study / "results" / "grid" / "results.json"]
    assert recheck_all(study) == {}
    root = tmp_path / "repo"
    shutil.copytree(study, root)
    path = root / "results" / "grid" / "results.json"
    good = json.loads(path.read_text())

    def problems(mutate):
        d = json.loads(json.dumps(good))
        mutate(d["design_report"])
        path.write_text(json.dumps(d))
        return recheck_all(root).get("results/grid/results.json", [])

    assert problems(lambda r: r.pop("design_version"))[0].startswith("design version 1 (no design_version")
    assert problems(lambda r: r.update(design_version=3)) == ["design version 3 (today's rules are version 2)"]
    c0 = good["design_report"]["claims"][0]
    flipped = "undecided" if c0["verdict"] != "undecided" else "supported"
    got = problems(lambda r: r["claims"][0].update(verdict=flipped))
    assert got == [f"verdict differs: {c0['claim']!r}: committed {flipped}, today {c0['verdict']}"]
    part = "p-value differs: " + repr(c0["claim"])
    assert any(x.startswith(part) for x in problems(lambda r: r["claims"][0]["extra"]["parts"][0].update(se=1e-9)))
    assert problems(lambda r: r["claims"][0]["extra"]["parts"][0].pop("se")) == [
        f"part {c0['extra']['parts'][0]['part']!r} of {c0['claim']!r} without se: cannot be re-derived"]
    # a count file changed after the table was written
    path.write_text(json.dumps(good))
    npz = sorted((root / "results" / "grid" / "runs").glob("*/entity_counts.npz"))[0]
    npz.write_bytes(npz.read_bytes() + b"\0")
    got = recheck_all(root)["results/grid/results.json"]
    assert got == [f"counts changed: 1 of 12 files, e.g. runs/{npz.parent.name}/entity_counts.npz"]
    npz.unlink()
    assert recheck_all(root)["results/grid/results.json"][0].startswith("input files missing: 1 of 12")


def test_claim_definitions_hash_their_arithmetic_not_only_their_words():
    from wgbstudies.claims import ClaimSpec, _diff, claim_specs
    from wgbstudies.plan import claims_sha256

    specs = claim_specs(["none", "cda"])
    same = claim_specs(["none", "cda"])
    assert claims_sha256(specs) == claims_sha256(same)
    spec = next(s for s in specs if s.name == "CDA raises micro F1")
    other = ClaimSpec(spec.name, spec.statistic, spec.direction, spec.variants,
                      _diff("none", "cda", "micro_f1:pooled"), spec.source)        # the same words, reversed
    swapped = [other if s is spec else s for s in specs]
    assert claims_sha256(swapped) != claims_sha256(specs)


def test_a_narrowed_claim_has_its_own_name():
    """One name, one definition: 'every variant' over none and cda is not the 13-claim study's claim
    over four variants, nor the paper's over all eight."""
    from relext.debias import STUDY_VARIANTS
    from wgbstudies.claims import claim_specs

    every = "The spouse F1 gap favours male articles under every variant"

    def name(variants):
        return next(s for s in claim_specs(variants) if s.parts and s.name.startswith("The spouse F1 gap favours male "
                                                                                     "articles under")).name

    assert name(["none", "cda"]) == "The spouse F1 gap favours male articles under none and CDA"
    assert name(["none", "cda", "duplicate", "hard_debias", "anonymize"]) == name(
        ["anonymize", "hard_debias", "none", "duplicate", "cda"]) == (
        "The spouse F1 gap favours male articles under none, anonymization, CDA and hard-debiased embeddings")
    assert name(list(STUDY_VARIANTS)) == every
    assert next(s for s in claim_specs(["none", "cda"]) if s.parts and "under" in s.name).narrows == every
