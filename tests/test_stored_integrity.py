"""Every stored result a later step reads is checked against the sha256 recorded when it was
written, or computed again with a line naming the file (issue 40, pattern 3): one mechanism,
``wgbcore.provenance`` (``record_outputs`` / ``output_status`` / ``changed_outputs``), used by a
run's ``eval.json`` and ``entity_counts.npz``, a study's ``timing.json``, ``wgb run``'s stage
markers; ``wgb data info`` checks the data fingerprint; ``wgb re score`` checks a run's
``provenance.json`` as ``wgb re eval`` does. Files written before records existed still load."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from wgbstudies.grid import GridConfig, run_grid, write_summary
from support import executor_tasks as T
from wgb.cli import cli

CFG = dict(encoders=["cnn"], selectors=["average"], seeds=[1, 2, 3], epochs=1, n_resamples=30)


def _grid(out: Path) -> dict:
    return run_grid(GridConfig(**CFG), out, train_fn=T.fake_train, make_config=T.fake_config,
                    predict_fn=T.keep_predictions, plots=False, progress=False)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("grid") / "g"
    _grid(out)
    return out


@pytest.fixture
def grid(finished, tmp_path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "g"))


# ---------------------------------------------------------------- the records themselves
def test_record_and_check_one_file(tmp_path):
    from wgbcore.provenance import OUTPUTS, OutputChanged, changed_outputs, output_status, record_outputs

    f = tmp_path / "eval.json"
    f.write_text("{}")
    assert output_status(f) == "unrecorded"           # written before records: used as it is
    rec = record_outputs([f])
    assert rec == tmp_path / OUTPUTS and output_status(f) == "ok"
    assert changed_outputs(rec) == {}
    f.write_text('{"edited": 1}')
    with pytest.raises(OutputChanged, match=r"eval.json: changed since it was written: its sha256 differs .*"
                                            r"OUTPUTS.sha256 recorded it"):
        output_status(f)
    assert list(changed_outputs(rec)) == [str(f)]


# ---------------------------------------------------------------- grid: what its runs stored
def _edit_eval(run: Path) -> Path:
    p = run / "eval.json"
    d = json.loads(p.read_text())
    d["scores"]["argmax"]["pooled"]["micro_f1"] = 0.999
    p.write_text(json.dumps(d))
    return p


def _copy_other_seeds_counts(run: Path) -> Path:
    p = run / "entity_counts.npz"
    shutil.copy(run.parent / "cnn-average-seed1" / "entity_counts.npz", p)
    return p


def _garbage_counts(run: Path) -> Path:
    p = run / "entity_counts.npz"
    p.write_bytes(b"PK\x03\x04 not really a zip")
    (run / "OUTPUTS.sha256").unlink()   # written before records existed: read, and found unreadable
    return p


def _damaged_record(run: Path) -> Path:
    """Tour round 3: a record written over was read as 'no entry' (the files trusted as legacy)."""
    (run / "OUTPUTS.sha256").write_text("not a checksum line\n")
    return run / "eval.json"     # the first file read: named, then evaluated again


STORED = [
    (_edit_eval, "changed since it was written"),
    (_damaged_record, "its record is damaged (OUTPUTS.sha256:1 is not '<sha256>  <name>')"),
    (_copy_other_seeds_counts, "changed since it was written"),
    (_garbage_counts, "unreadable (BadZipFile"),
]


@pytest.mark.parametrize("damage,words", STORED, ids=[s[0].__name__.strip("_") for s in STORED])
def test_a_damaged_stored_evaluation_is_named_then_evaluated_again(grid, damage, words):
    from wgb.errors import refuse_unusable_runs

    run = grid / "runs" / "cnn-average-seed3"
    good = (run / "eval.json").read_bytes(), (run / "entity_counts.npz").read_bytes()
    path = damage(run)
    summary = write_summary(GridConfig(**CFG), grid, plots=False, design=True)
    meta = summary["meta"]
    assert list(meta["runs_unreadable"]) == [str(path)] and words in meta["runs_unreadable"][str(path)]
    assert meta["runs_missing"] == ["cnn-average-seed3"]
    assert summary["design_report"]["seeds"] == {"cnn-average": [1, 2]}    # left out, said so
    assert [v["n"] for v in summary["variants"]["argmax"][0]["gaps"]["f1"].values()][0] == 2
    with pytest.raises(click.ClickException, match=r"1 stored evaluation file\(s\) unreadable or changed"):
        refuse_unusable_runs(meta)           # `wgb re grid` exits 1, not "3/3 runs done"
    again = _grid(grid)                      # the next invocation evaluates it again
    assert again["meta"]["runs_unreadable"] == {} and again["meta"]["runs_missing"] == []
    assert (run / "eval.json").read_bytes() != b"" and (run / "entity_counts.npz").read_bytes() == good[1]
    assert json.loads((run / "eval.json").read_text())["scores"] == json.loads(good[0])["scores"]


@pytest.mark.parametrize("reader", ["relext.evaluation.study_counts", "wgbstats.counts"])
def test_a_copied_count_file_is_refused_where_it_is_read(grid, reader):
    """Tour round 3 (a leftover of pattern 3): the count readers read without the hash check."""
    import importlib

    from wgbcore.provenance import OutputChanged

    path = _copy_other_seeds_counts(grid / "runs" / "cnn-average-seed2")
    read = importlib.import_module(reader).StudyCounts.read_counts
    with pytest.raises(OutputChanged, match=f"^{path}: changed since it was written"):
        read(path)
    assert set(read(grid / "runs" / "cnn-average-seed1" / "entity_counts.npz"))   # an intact one reads


def test_an_edited_eval_json_is_refused_where_it_is_loaded(grid):
    from relext.evaluation.evaluate import load_eval
    from wgbcore.provenance import OutputChanged

    path = _edit_eval(grid / "runs" / "cnn-average-seed2")
    with pytest.raises(OutputChanged, match=f"^{path}: changed since it was written"):
        load_eval(path.parent)


def test_an_edited_timing_json_is_refused_before_any_work(grid):
    t = grid / "timing.json"
    d = json.loads(t.read_text())
    d["runs"]["cnn-average-seed1"]["train_seconds"] = 0.001
    t.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=f"^{t}: changed since it was written"):
        _grid(grid)


def test_legacy_run_folders_without_records_still_load(grid):
    """Committed run folders were written before the records: read as they are."""
    for rec in grid.rglob("OUTPUTS.sha256"):
        rec.unlink()
    summary = write_summary(GridConfig(**CFG), grid, plots=False, design=True)
    assert summary["meta"]["runs_unreadable"] == {} and summary["design_report"]["seeds"] == {"cnn-average": [1, 2, 3]}
    assert _grid(grid)["meta"]["runs_missing"] == []


# ---------------------------------------------------------------- wgb run's stage markers
def test_a_stage_whose_output_changed_runs_again_naming_the_file(tmp_path):
    from wgb.pipeline.stages import Stages

    calls, lines = [], []

    def extract():
        calls.append(1)
        (tmp_path / "triples").mkdir(exist_ok=True)
        (tmp_path / "triples" / "cnn.jsonl").write_text('{"head": "A", "relation": "spouse", "tail": "B"}\n')

    stages = Stages(tmp_path, lines.append)
    stages.run("triples/cnn", extract)
    marker = tmp_path / "stages" / "triples_cnn.done"
    assert "  triples/cnn.jsonl" in marker.read_text()
    stages.run("triples/cnn", extract)
    assert len(calls) == 1 and lines[-1] == "[skip] triples/cnn (done)"
    (tmp_path / "triples" / "cnn.jsonl").write_text('{"head": "A", "relation": "spouse", "tail": "C"}\n')
    stages.run("triples/cnn", extract)
    assert len(calls) == 2
    assert lines[-2].startswith(f"[redo] triples/cnn: {tmp_path / 'triples' / 'cnn.jsonl'} changed since it was")
    assert "B" in (tmp_path / "triples" / "cnn.jsonl").read_text()
    marker.write_text("done\n")              # a marker of an older wgb: trusted
    stages.run("triples/cnn", extract)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["deleted", "marker"])
def test_a_stage_whose_output_is_gone_or_marker_damaged_runs_again_from_scratch(tmp_path, damage):
    """Tour round 3: a deleted embeddings file failed the run (the stage ran again into a folder
    whose DONE said finished); a marker written over was trusted as a legacy one."""
    from wgb.pipeline.stages import Stages

    lines = []
    emb = tmp_path / "embeddings" / "gold"

    def train():      # as kge train: a finished folder (DONE) is kept as it is
        emb.mkdir(parents=True, exist_ok=True)
        if (emb / "DONE").exists():
            return
        (emb / "entities.npy").write_bytes(b"vectors")
        (emb / "DONE").write_text("done\n")

    stages = Stages(tmp_path, lines.append)
    stages.run("embed/gold", train)
    marker = tmp_path / "stages" / "embed_gold.done"
    if damage == "deleted":
        (emb / "entities.npy").unlink()
    else:
        marker.write_text("garbage\x00\n")
    stages.run("embed/gold", train)
    assert lines[-2].startswith("[redo] embed/gold: ") and ("missing" in lines[-2] or "damaged" in lines[-2]), lines
    assert (emb / "entities.npy").read_bytes() == b"vectors"        # trained again, not resumed into nothing
    if damage == "deleted":      # (a damaged marker names no files: the stage's own resume decides)
        assert "  embeddings/gold/entities.npy" in marker.read_text()
    else:
        assert "stages/embed_gold.done" in lines[-2] and "damaged" in lines[-2]


def test_a_file_written_again_by_a_later_stage_belongs_to_it(tmp_path):
    from wgb.pipeline.stages import Stages

    shared = tmp_path / "report.json"
    stages = Stages(tmp_path, lambda _: None)
    stages.run("a", lambda: shared.write_text("a"))
    stages.run("b", lambda: shared.write_text("b"))
    assert "report.json" not in (tmp_path / "stages" / "a.done").read_text()
    runs = []
    stages.run("a", lambda: runs.append("a"))
    assert runs == []                        # not taken for a changed output of stage a


# ---------------------------------------------------------------- data folders and scored runs
def test_data_info_checks_the_fingerprint(tmp_path_factory, tmp_path):
    from support.hardening2 import bench_folder

    bench = Path(shutil.copytree(bench_folder(tmp_path_factory.getbasetemp()), tmp_path / "bench"))
    res = CliRunner().invoke(cli, ["data", "info", "--dataset", str(bench)])
    assert res.exit_code == 0 and "data fingerprint: sha256:" in res.output
    f = bench / "data" / "sentences" / "male_test-00000-of-00001.parquet"
    shutil.copy(bench / "data" / "sentences" / "female_test-00000-of-00001.parquet", f)
    res = CliRunner().invoke(cli, ["data", "info", "--dataset", str(bench)])
    assert res.exit_code == 1 and "sentences/male_test-00000-of-00001.parquet" in res.output
    assert "differ from the fingerprint in report.json" in res.output and "Traceback" not in res.output


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    from support.hardening import relext_fixture

    return relext_fixture(tmp_path_factory.getbasetemp())


def _no_provenance(run: Path) -> None:
    (run / "predictions" / "provenance.json").unlink()


def _edited_predictions(run: Path) -> None:
    p = run / "predictions" / "male_test.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines()]
    rows[0]["scores"] = [0.0, 1.0] + [0.0] * (len(rows[0]["scores"]) - 2)
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))


SCORED = [
    (_edited_predictions, ["current: ", "male_test.jsonl: changed since it was written", "provenance.json"]),
    (_no_provenance, ["current: ", "validation.jsonl: not the run's current predictions (no provenance record",
                      "wgb re eval"]),
]


@pytest.mark.parametrize("damage,words", SCORED, ids=[s[0].__name__.strip("_") for s in SCORED])
def test_re_score_checks_a_runs_provenance_as_re_eval_does(trained, tmp_path, damage, words):
    run = Path(shutil.copytree(trained, tmp_path / "run"))
    ok = CliRunner().invoke(cli, ["re", "score", str(run), "--resamples", "100"])
    assert ok.exit_code == 0, ok.output
    damage(run)
    res = CliRunner().invoke(cli, ["re", "score", str(run), "--resamples", "100"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    for w in words:
        assert w in res.output, (w, res.output)
