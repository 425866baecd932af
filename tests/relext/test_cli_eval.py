"""`wgb re eval`, `wgb re grid`, `wgb re extract` through click's CliRunner."""
import json

import pytest
from click.testing import CliRunner

from support.relext_data import synthetic_predictions
from wgb.cli import cli


def write_run(run_dir, seed=0, encoder="cnn", selector="average"):
    pred = run_dir / "predictions"
    pred.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"encoder": encoder, "selector": selector, "seed": seed}))
    for i, split in enumerate(("validation", "male_test", "female_test")):
        rows = synthetic_predictions(split, n_entities=12, seed=seed * 10 + i,
                                     gender="mixed" if split == "validation" else None)
        (pred / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run_dir / "DONE").write_text("")
    return run_dir


def test_eval_writes_json_and_markdown(tmp_path):
    run = write_run(tmp_path / "run", seed=5)
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--resamples", "100", "--no-plot"])
    assert res.exit_code == 0, res.output
    assert "Gender gaps" in res.output
    d = json.loads((run / "eval.json").read_text())
    assert d["seed"] == 5 and d["bootstrap"]["n_resamples"] == 100 and d["version"]
    assert set(d["scores"]) == {"argmax", "threshold"}
    assert (run / "eval.md").read_text().startswith("# Evaluation")


def test_eval_bad_predictions_is_a_clear_error(tmp_path):
    run = write_run(tmp_path / "run")
    with open(run / "predictions" / "male_test.jsonl", "a") as fh:
        fh.write('{"bag_id": 1}\n')
    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot"])
    assert res.exit_code != 0
    assert "male_test.jsonl:37" in res.output and "missing field" in res.output


def test_extract_split_drops_na_and_low_scores(tmp_path):
    run = write_run(tmp_path / "run")
    out = tmp_path / "triples.jsonl"
    res = CliRunner().invoke(cli, ["re", "extract", str(run), "--split", "female_test", "-o", str(out),
                                   "--min-score", "0.5"])
    assert res.exit_code == 0, res.output
    triples = [json.loads(line) for line in out.read_text().splitlines()]
    rows = [json.loads(line) for line in (run / "predictions" / "female_test.jsonl").read_text().splitlines()]
    expected = sum(1 for r in rows if max(r["scores"]) >= 0.5 and r["scores"].index(max(r["scores"])) != 0)
    assert len(triples) == expected > 0
    t = triples[0]
    assert set(t) == {"head", "relation", "tail", "score", "head_gender", "source"}
    assert t["relation"] != "NA" and t["score"] >= 0.5 and t["head_gender"] == "female"
    assert t["source"]["split"] == "female_test" and t["source"]["sentence_ids"]
    assert [x["score"] for x in triples] == sorted((x["score"] for x in triples), reverse=True)


def test_extract_needs_split_or_text(tmp_path):
    run = write_run(tmp_path / "run")
    res = CliRunner().invoke(cli, ["re", "extract", str(run)])
    assert res.exit_code != 0 and "exactly one of --split or --text" in res.output


def test_grid_command_uses_the_library(tmp_path, monkeypatch):
    import wgbstudies.grid as grid

    calls = []

    def fake_train(config, run_dir):
        calls.append(run_dir.name)
        write_run(run_dir, seed=config["seed"], encoder=config.get("encoder", "cnn"),
                  selector=config.get("selector", "average"))

    monkeypatch.setattr(grid, "_default_train", fake_train)
    monkeypatch.setattr(grid, "_default_make_config", lambda **kw: kw)
    args = ["re", "grid", "--encoders", "cnn", "--selectors", "attention,average", "--seeds", "1,2",
            "--epochs", "1", "--out", str(tmp_path / "g"), "--resamples", "100", "--no-plots"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "4/4 runs done" in res.output and len(calls) == 4
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and len(calls) == 4  # resumed: nothing retrained
    assert json.loads((tmp_path / "g" / "results.json").read_text())["meta"]["runs_evaluated"] == 4


def test_grid_encoders_may_carry_their_own_seeds(tmp_path, monkeypatch):
    """`--encoders cnn,pcnn@1`: cnn at every --seeds, pcnn at seed 1 only; cnn's seeds first."""
    import wgbstudies.grid as grid

    calls = []

    def fake_train(config, run_dir):
        calls.append(run_dir.name)
        write_run(run_dir, seed=config["seed"], encoder=config.get("encoder", "cnn"),
                  selector=config.get("selector", "average"))

    monkeypatch.setattr(grid, "_default_train", fake_train)
    monkeypatch.setattr(grid, "_default_make_config", lambda **kw: kw)
    args = ["re", "grid", "--encoders", "cnn,pcnn@1", "--selectors", "attention", "--seeds", "1-3",
            "--epochs", "1", "--out", str(tmp_path / "g"), "--resamples", "100", "--no-plots"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert calls == ["cnn-attention-seed1", "cnn-attention-seed2", "cnn-attention-seed3", "pcnn-attention-seed1"]
    saved = json.loads((tmp_path / "g" / "grid.json").read_text())
    assert saved["encoders"] == ["cnn", "pcnn"] and saved["seeds_by_encoder"] == {"pcnn": [1]}
    # the report's header says which encoder ran at which seeds
    assert "Encoders cnn, pcnn × selectors attention × seeds 1-3; pcnn: 1," in (tmp_path / "g" / "results.md").read_text()


def test_seed_list_is_the_form_seeds_take():
    from wgbstudies.grid_report import seed_list

    assert seed_list([4, 0, 1, 2]) == "0-2, 4" and seed_list([3]) == "3" and seed_list([]) == "none"


def test_a_grid_stopped_early_has_verdicts_for_the_seeds_it_finished(tmp_path, monkeypatch):
    """The summary written after a run that completes a seed carries the design report (before,
    only the last write did: a long grid stopped early had none)."""
    import wgbstudies.grid as grid

    seen = []

    def fake_train(config, run_dir):
        res = run_dir.parent.parent / "results.json"
        seen.append(bool(json.loads(res.read_text()).get("design_report")) if res.exists() else None)
        write_run(run_dir, seed=config["seed"], encoder=config.get("encoder", "cnn"),
                  selector=config.get("selector", "average"))

    monkeypatch.setattr(grid, "_default_train", fake_train)
    monkeypatch.setattr(grid, "_default_make_config", lambda **kw: kw)
    args = ["re", "grid", "--encoders", "cnn", "--selectors", "average", "--seeds", "1-3",
            "--epochs", "1", "--out", str(tmp_path / "g"), "--resamples", "100", "--no-plots"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert seen == [None, True, True]


@pytest.mark.parametrize("args,msg", [
    (["--seeds", "1,x"], "'x' in '1,x' is not a seed"),
    (["--set", "novalue"], "FIELD=VALUE"),
    (["--encoders", "cnn,lstm@0-2"], "unknown encoder 'lstm'"),
    (["--encoders", "cnn,cnn@0"], "'cnn' named twice"),
    (["--encoders", "cnn,pcnn@2-1"], "empty seed range"),
])
def test_grid_bad_options(tmp_path, args, msg):
    res = CliRunner().invoke(cli, ["re", "grid", "--out", str(tmp_path), *args])
    assert res.exit_code != 0 and msg in res.output
