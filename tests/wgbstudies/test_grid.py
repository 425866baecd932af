"""Grid: resumable over run directories, aggregates across seeds (fake, fast trainer)."""
import json
import zlib

import pytest

from support.relext_data import synthetic_predictions
from wgbstudies.grid import GridConfig, run_grid


class FakeTrainer:
    """Writes what relext.training.train.train writes (config, predictions, DONE) in milliseconds."""

    def __init__(self, n_entities: int = 15, female_accuracy: float = 0.6):
        self.calls = []
        self.n_entities, self.female_accuracy = n_entities, female_accuracy

    def __call__(self, config, run_dir):
        self.calls.append(run_dir.name)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(config))
        seed = config["seed"] * 1000 + zlib.crc32(f"{config['encoder']}{config['selector']}".encode()) % 997
        pred = run_dir / "predictions"
        pred.mkdir(exist_ok=True)
        for i, split in enumerate(("validation", "male_test", "female_test")):
            acc = 0.9 if split == "male_test" else self.female_accuracy
            rows = synthetic_predictions(split, n_entities=self.n_entities, accuracy=acc, seed=seed + i,
                                         gender="mixed" if split == "validation" else None)
            (pred / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run_dir / "DONE").write_text("")


def make_config(**kw):
    return dict(kw)


CFG = dict(encoders=["cnn"], selectors=["attention", "average"], seeds=[1, 2],
           epochs=1, n_resamples=50)


def test_grid_trains_all_then_skips_done(tmp_path):
    trainer = FakeTrainer()
    summary = run_grid(GridConfig(**CFG), tmp_path, train_fn=trainer, make_config=make_config,
                       plots=False, progress=False)
    assert len(trainer.calls) == 4
    assert trainer.calls[:2] == ["cnn-attention-seed1", "cnn-average-seed1"]  # seed-major
    assert summary["meta"]["runs_evaluated"] == 4 and len(summary["meta"]["runs_done"]) == 4
    combos = summary["variants"]["argmax"]
    assert len(combos) == 2 and all(c["n_seeds"] == 2 for c in combos)
    spouse = combos[0]["gaps"]["f1"]["spouse"]
    assert spouse["n"] == 2 and spouse["ci_low"] <= spouse["mean"] <= spouse["ci_high"]
    assert combos[0]["micro_f1"]["male_test"]["mean"] > combos[0]["micro_f1"]["female_test"]["mean"]
    assert (tmp_path / "results.json").exists() and (tmp_path / "results.md").exists()
    assert "Spouse has the largest" in (tmp_path / "results.md").read_text()
    assert summary["timing"]["n_runs"] == 4

    # second invocation: nothing is trained again, the evaluations are reused
    evals = {p: p.stat().st_mtime_ns for p in tmp_path.glob("runs/*/eval.json")}
    trainer2 = FakeTrainer()
    run_grid(GridConfig(**CFG), tmp_path, train_fn=trainer2, make_config=make_config,
             plots=False, progress=False)
    assert trainer2.calls == []
    assert evals == {p: p.stat().st_mtime_ns for p in tmp_path.glob("runs/*/eval.json")}
    assert len(json.loads((tmp_path / "timing.json").read_text())["invocations"]) == 2


def test_grid_resumes_unfinished_runs_only(tmp_path):
    cfg = GridConfig(**{**CFG, "encoders": ["cnn"], "selectors": ["average"]})
    FakeTrainer()(make_config(encoder="cnn", selector="average", seed=1, epochs=1),
                  tmp_path / "runs" / "cnn-average-seed1")
    partial = tmp_path / "runs" / "cnn-average-seed2"
    partial.mkdir(parents=True)
    (partial / "checkpoint.pt").write_text("half-way")
    trainer = FakeTrainer()
    run_grid(cfg, tmp_path, train_fn=trainer, make_config=make_config, plots=False, progress=False)
    assert trainer.calls == ["cnn-average-seed2"]


def test_failed_run_is_reported_and_others_continue(tmp_path):
    trainer = FakeTrainer()

    def flaky(config, run_dir):
        if config["seed"] == 2:
            raise RuntimeError("boom")
        trainer(config, run_dir)

    cfg = GridConfig(**{**CFG, "encoders": ["cnn"], "selectors": ["average"]})
    summary = run_grid(cfg, tmp_path, train_fn=flaky, make_config=make_config, plots=False,
                       progress=False)
    assert summary["meta"]["runs_failed"] == {"cnn-average-seed2": "RuntimeError: boom"}
    assert summary["meta"]["runs_evaluated"] == 1
    with pytest.raises(RuntimeError, match="boom"):
        run_grid(cfg, tmp_path / "b", train_fn=flaky, make_config=make_config, plots=False,
                 progress=False, keep_going=False)


@pytest.mark.slow  # matplotlib: ~4 s alone, much more on a shared machine
def test_grid_plots(tmp_path):
    cfg = GridConfig(**{**CFG, "selectors": ["average"]})
    run_grid(cfg, tmp_path, train_fn=FakeTrainer(), make_config=make_config, progress=False)
    for name in ("f1_by_gender_argmax.png", "gaps_argmax.png", "gaps_threshold.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    from relext.evaluation.evaluate import load_eval
    from relext.evaluation.plots import plot_run_gaps

    run = tmp_path / "runs" / "cnn-average-seed1"
    assert plot_run_gaps(load_eval(run), run / "gaps.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("bad", [dict(encoders=[]), dict(seeds=[1, 1])])
def test_bad_grid_config(bad):
    with pytest.raises(ValueError):
        GridConfig(**{**CFG, **bad})


def test_runs_dir_and_no_train(tmp_path):
    cfg = GridConfig(**{**CFG, "selectors": ["average"], "runs_dir": str(tmp_path / "runs_elsewhere")})
    FakeTrainer()(make_config(encoder="cnn", selector="average", seed=1, epochs=1),
                  tmp_path / "runs_elsewhere" / "cnn-average-seed1")
    trainer = FakeTrainer()
    summary = run_grid(cfg, tmp_path / "out", train_fn=trainer, make_config=make_config,
                       plots=False, progress=False, train=False)
    assert trainer.calls == [] and summary["meta"]["runs_evaluated"] == 1
    assert (tmp_path / "runs_elsewhere" / "cnn-average-seed1" / "eval.json").exists()
    assert not (tmp_path / "out" / "runs").exists()


@pytest.mark.slow  # trains real (tiny) models
def test_grid_with_the_real_trainer_on_a_tiny_benchmark(tmp_path):
    from relext.extract import extract_split, extract_text
    from support.relext_data import tiny_dataset
    from relext.training.train import TrainConfig

    ds = tiny_dataset(n_train=16, n_eval=4)

    def tiny_config(**kw):
        return TrainConfig(**kw, batch_size=8, word_dim=8, hidden=8, max_length=30, w2v_epochs=1,
                           threads=1, cache_dir=str(tmp_path / "w2v"))

    cfg = GridConfig(encoders=["cnn"], selectors=["average"], seeds=[1, 2], epochs=1, n_resamples=50)
    summary = run_grid(cfg, tmp_path / "g", make_config=tiny_config, dataset=ds, progress=False,
                       plots=False)
    assert summary["meta"]["runs_evaluated"] == 2 and not summary["meta"]["runs_failed"]
    run = tmp_path / "g" / "runs" / "cnn-average-seed1"
    assert (run / "predictions" / "female_test.jsonl").exists()
    assert summary["runs"]["cnn-average-seed1"]["epochs_run"] == 1
    triples = extract_split(run, "male_test", dataset=ds)
    assert all(t["relation"] != "NA" and t["head_gender"] == "male" for t in triples)
    text = tmp_path / "t.jsonl"
    text.write_text(json.dumps({"head": "Ann Lee", "tail": "Bob Ray", "gender": "female",
                                "text": "Ann Lee married Bob Ray in a quiet ceremony ."}) + "\n")
    out = extract_text(run, text)
    assert all(t["head"] == "Ann Lee" and t["source"]["split"] == "text" for t in out)


def test_grid_flags_come_from_the_combined_design(tmp_path):
    """Male accuracy 0.9 vs female 0.5 by construction, 40 persons a gender: with 4 seeds the combined
    interval of the micro/relation gaps excludes 0 (BH-corrected; the seed reference at 3 seeds, or
    with 15 persons a gender, is too wide for these gaps); the seed t-interval never flags by itself."""
    cfg = GridConfig(**{**CFG, "seeds": [1, 2, 3, 4]})
    summary = run_grid(cfg, tmp_path, train_fn=FakeTrainer(n_entities=40, female_accuracy=0.5), make_config=make_config,
                       plots=False, progress=False)
    rep = summary["design_report"]
    assert rep["design"]["gap_flags_correction"] == "benjamini-hochberg"
    rows = rep["gaps"]["argmax"]
    assert {r["variant"] for r in rows} == {"cnn-attention", "cnn-average"}
    assert any(r["flagged"] for r in rows)
    for c in summary["variants"]["argmax"]:
        for metric, per_rel in c["gaps"].items():
            for rel, d in per_rel.items():
                if rel == "micro":
                    continue
                assert d["flagged"] == (d["combined"]["p_adjusted"] < 0.05)
    names = [c["claim"] for c in rep["claims"]]
    # a grid of CNN alone: the paper's claims over every encoder are named by the members tested
    assert "Average shows less bias than attention for CNN" in names
    assert "birthDate satisfies equality of opportunity the least (CNN+attention and CNN+average)" in names
    md = (tmp_path / "results.md").read_text()
    assert "## The paper's claims: verdicts" in md
    # one seed fewer than 3: nothing flags
    two = run_grid(GridConfig(**CFG), tmp_path / "two", train_fn=FakeTrainer(), make_config=make_config,
                   plots=False, progress=False)
    assert not any(r["flagged"] for r in two["design_report"]["gaps"]["argmax"])
    assert all(c["verdict"] == "undecided" for c in two["design_report"]["claims"])


# ------------------------------------------------------------------ the paper's grid claims (#27)
def test_grid_claims_worded_as_the_paper():
    """Average has less bias than attention for CNN and RNN but more for PCNN (the paper's
    exception: reported beside, not tested); birthDate has the largest EO gap everywhere but
    RNN+attention, where spouse has; hypernym the smallest F1 gap."""
    import numpy as np

    from wgbstats.design import Design
    from wgbstudies.claims import evaluate_claims, grid_claim_specs
    from support.claims_data import BASE, f1_study

    eo = {**BASE, "birthDate": (0.95, 0.85)}                  # birthDate: largest gap
    small = {r: (m, m - (m - w) / 3) for r, (m, w) in eo.items()}   # a third of each gap
    f1 = {"cnn-attention": eo, "cnn-average": small, "rnn-average": small,
          "rnn-attention": {**eo, "spouse": (0.90, 0.70)},   # spouse: largest gap
          "pcnn-attention": small, "pcnn-average": eo}        # PCNN: average is the more biased
    d = Design(f1_study(np.random.default_rng(0), f1, noise=0.005), n_resamples=2000)
    combos = sorted(f1)
    specs = grid_claim_specs(combos)
    out = {v.claim: v for v in evaluate_claims(d, specs)}
    assert not any("birthDate has the smallest" in c for c in out)
    avg = out["Average shows less bias than attention for CNN and RNN"]      # BiRNN not in this grid
    assert avg.extra["narrows"] == "Average shows less bias than attention for every encoder except PCNN"
    assert avg.verdict == "supported"
    assert {p["part"] for p in avg.extra["parts"]} == {"G avg - G att (cnn)", "G avg - G att (rnn)"}
    assert [c["part"] for c in avg.extra["controls"]] == ["G avg - G att (pcnn)"]
    assert avg.extra["controls"][0]["value"] > 0
    from wgbstudies.claims import claims_table
    from wgbcore.render import Document

    md = claims_table(Document("t"), list(out.values())).markdown()
    assert "beside it, not tested: G avg - G att (pcnn) = +0." in md
    assert "(weakest: G avg - G att (" in md and "%) |" in md     # each interval says its level
    v_eo = out["birthDate satisfies equality of opportunity the least (CNN+attention, CNN+average, "
               "PCNN+attention, PCNN+average and RNN+average)"]
    assert v_eo.verdict == "supported" and not any("rnn-attention" in p["part"] for p in v_eo.extra["parts"])
    assert out["Spouse satisfies equality of opportunity the least (RNN+attention)"].verdict == "supported"
    # without RNN+attention in the grid there is no exception to state
    names = [s.name for s in grid_claim_specs(["cnn-attention", "cnn-average"])]
    assert not any("RNN+attention)" in n and n.startswith("Spouse satisfies") for n in names)
    assert "Average scores a higher micro F1 than attention for CNN" in names
    # the paper's eight combinations: the paper's names
    eight = [f"{e}-{s}" for e in ("cnn", "pcnn", "rnn", "birnn") for s in ("attention", "average")]
    full = {s.name: s for s in grid_claim_specs(eight)}
    for name in ("Average shows less bias than attention for every encoder except PCNN",
                 "Average scores a higher micro F1 than attention across the board",
                 "birthDate satisfies equality of opportunity the least (every combination but RNN+attention)"):
        assert name in full and full[name].narrows is None


# --------------------------------------------------------------------------------------------
# Cross-fitted grids: one run per seed and fold; the design joins a seed's folds
# --------------------------------------------------------------------------------------------
class FoldTrainer(FakeTrainer):
    """Each fold predicts the persons its fold view holds out (of a tiny real dataset)."""

    def __init__(self, dataset):
        super().__init__()
        self.dataset = dataset

    def __call__(self, config, run_dir):
        from relext.protocols.crossfit import FoldSpec, fold_view

        super().__call__(config, run_dir)
        view = fold_view(self.dataset, config["fold"], FoldSpec(folds=config["folds"]))
        for split in ("male_test", "female_test"):
            f = run_dir / "predictions" / f"{split}.jsonl"
            rows = [json.loads(x) for x in f.read_text().splitlines()]
            persons = sorted(set(view[split]["entity_id"]))
            rows = [{**r, "entity_id": persons[i % len(persons)]} for i, r in enumerate(rows)]
            f.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_crossfit_grid_trains_every_fold_and_joins_them(tmp_path):
    from wgbstudies.grid import design_runs

    from support.relext_data import tiny_dataset

    ds = tiny_dataset(n_train=20, n_eval=6)
    trainer = FoldTrainer(ds)
    cfg = GridConfig(encoders=["cnn"], selectors=["attention"], seeds=[1, 2, 3], epochs=1, n_resamples=100,
                     folds=2)
    summary = run_grid(cfg, tmp_path, train_fn=trainer, make_config=make_config, plots=False, dataset=ds)
    assert not summary["meta"]["runs_failed"], summary["meta"]["runs_failed"]
    assert sorted(trainer.calls) == sorted(f"cnn-attention-seed{s}-fold{k}" for s in (1, 2, 3) for k in (0, 1))
    assert summary["meta"]["runs_evaluated"] == 6 and summary["meta"]["protocol"] == "crossfit"
    runs = design_runs(cfg, tmp_path)
    assert sorted(runs) == [("cnn-attention", s) for s in (1, 2, 3)]
    assert all(len(v) == 2 for v in runs.values())
    # an unfinished fold keeps its seed out of the design (never half a seed)
    (tmp_path / "runs" / "cnn-attention-seed3-fold1" / "DONE").unlink()
    assert sorted(design_runs(cfg, tmp_path)) == [("cnn-attention", 1), ("cnn-attention", 2)]


def test_a_finished_run_of_another_config_is_refused_before_any_work(tmp_path):
    """A DONE run folder whose config is not the one the grid would train (e.g. a link to a run of
    another selector) is an error naming it; one with the same identity (runtime fields aside) is
    reused."""
    import pytest

    from wgbstudies.grid_exec import refuse_other_finished_runs
    from relext.training.train import ExtractorConfig
    from wgbcore.atomicio import atomic_write_json

    have = ExtractorConfig(encoder="pcnn", selector="attention", seed=0, threads=1)
    d = tmp_path / "pcnn-average-seed0"
    d.mkdir()
    atomic_write_json(d / "config.json", have.to_json())
    (d / "DONE").write_text("")
    same = ExtractorConfig(encoder="pcnn", selector="attention", seed=0, threads=2)   # runtime field only
    refuse_other_finished_runs({"r": d}, {"r": same})
    other = ExtractorConfig(encoder="pcnn", selector="average", seed=0)
    with pytest.raises(ValueError, match=r"pcnn-average-seed0: a finished run of another config \(fields \['selector'\]"):
        refuse_other_finished_runs({"r": d}, {"r": other})
    (d / "DONE").unlink()      # an unfinished run is the trainer's to check (it refuses or resumes)
    refuse_other_finished_runs({"r": d}, {"r": other})
