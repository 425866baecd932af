"""Caches are used only when what they were computed from can be checked (issue 30, pattern 1):
the predictions of a relext run record the content hash of the split they came from and their
own sha256; `wgb run` records the content hash of every split its stages ran on. Changed data is
predicted again (cached predictions) or refused (finished pipeline stages); what cannot be
checked is never used. The refusals are also cases of tests/test_hardening_round2.py."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from support.hardening2 import bench_folder, copy, train_on
from wgb.cli import cli


# ------------------------------------------------------------------------ content fingerprints
def test_split_fingerprint_follows_the_rows_not_how_they_were_loaded(tmp_path):
    import datasets

    import wikigenderbias
    from wikigenderbias.content import dataset_sha256, split_sha256

    bench = bench_folder(tmp_path)
    ds = wikigenderbias.load(path=bench)
    ds.save_to_disk(str(tmp_path / "saved"))
    again = datasets.load_from_disk(str(tmp_path / "saved"))
    assert dataset_sha256(ds) == dataset_sha256(again)
    relabelled = ds["male_test"].map(lambda r, i: {"relation": 0 if i == 0 else r["relation"]}, with_indices=True)
    assert split_sha256(relabelled) != split_sha256(ds["male_test"])
    with pytest.raises(ValueError, match="no split.*'test'"):
        dataset_sha256(ds, ["test"], source="bench")


# ------------------------------------------------- cached predictions after the data changed
@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    """A benchmark folder and a run trained on it (predictions written), copied by each test."""
    root = tmp_path_factory.mktemp("bench-run")
    bench = copy(bench_folder(root), root / "bench")
    return bench, train_on(bench, root / "run")


def _answers_relabelling_male_test(bench, path):
    """Answers saying "no" to every positive male_test sentence (they become NA)."""
    from wikigenderbias.annotate import export_tasks

    tasks = bench.parent / "tasks.jsonl"
    export_tasks(bench, tasks, splits=["male_test"])
    ids = [json.loads(line)["item_id"] for line in tasks.read_text().splitlines()]
    path.write_text("item_id,answer_1,answer_2,answer_3\n" + "".join(f"{i},no,no,no\n" for i in ids))
    return path


def test_annotate_import_in_place_then_eval_predicts_again(bench_run, tmp_path):
    bench, run = bench_run
    before = json.loads((run / "predictions" / "provenance.json").read_text())
    old_rows = [json.loads(x) for x in (run / "predictions" / "male_test.jsonl").read_text().splitlines()]
    assert any(r["labels"] != [0] for r in old_rows)
    answers = _answers_relabelling_male_test(bench, tmp_path / "a.csv")
    res = CliRunner().invoke(cli, ["data", "annotate-import", str(bench), str(answers), "--quiet"])
    assert res.exit_code == 0, res.output

    res = CliRunner().invoke(cli, ["re", "eval", str(run), "--no-plot", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "male_test.jsonl: not used (the male_test rows of" in warnings[0]
    assert "changed since it was written); predicting it again" in warnings[0]
    new_rows = [json.loads(x) for x in (run / "predictions" / "male_test.jsonl").read_text().splitlines()]
    assert all(r["labels"] == [0] for r in new_rows)  # the relabelled gold, not the old one
    after = json.loads((run / "predictions" / "provenance.json").read_text())
    assert after["male_test"]["dataset_sha256"] != before["male_test"]["dataset_sha256"]
    assert after["female_test"] == before["female_test"]  # an unchanged split keeps its cache
    ev = json.loads((run / "eval.json").read_text())
    assert ev["scores"]["argmax"]["male_test"]["n_bags"] == len(new_rows)

    # now current: used as they are, by eval and by extract alike
    for args in (["re", "eval", str(run), "--no-plot", "--resamples", "100"],
                 ["re", "extract", str(run), "--split", "male_test", "-o", str(tmp_path / "t.jsonl")]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0 and "warning" not in res.output, res.output


def test_extract_predicts_again_after_the_dataset_at_the_same_path_changed(bench_run, tmp_path):
    import pyarrow.parquet as pq

    from relext.extract import extract_split

    bench, run = bench_run
    f = bench / "data" / "sentences" / "female_test-00000-of-00001.parquet"
    t = pq.read_table(f)
    pq.write_table(t.slice(1), f)  # one row fewer, same path
    res = CliRunner().invoke(cli, ["data", "refresh-card", "--dataset", str(bench)])
    assert res.exit_code == 0, res.output
    notes: list = []
    extract_split(run, "female_test", notes=notes)
    assert len(notes) == 1 and "female_test.jsonl: not used" in notes[0]
    notes.clear()
    extract_split(run, "female_test", notes=notes)
    assert notes == []


# ----------------------------------------------------- wgb run: finished stages over other data
@pytest.fixture
def no_stages(monkeypatch):
    """`wgb run` with every stage replaced by a marker, so only the bookkeeping runs."""
    import wgb.pipeline.stages as stages

    def fake(st, *a, **k):
        st.run("train/baseline", lambda: None)

    monkeypatch.setattr(stages, "_extractor_stages", fake)
    monkeypatch.setattr(stages, "_triple_stages", lambda *a, **k: None)
    monkeypatch.setattr(stages, "_graph_stages", lambda *a, **k: {})
    monkeypatch.setattr(stages, "_report", lambda *a, **k: None)


def test_run_refuses_finished_stages_after_the_dataset_was_replaced(no_stages, tmp_path):
    import pyarrow.parquet as pq

    bench = copy(bench_folder(tmp_path), tmp_path / "bench")
    args = ["run", "--profile", "tiny", "--dataset", str(bench), "--out", str(tmp_path / "o"), "--quiet"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o" / "data.json").exists()
    res = CliRunner().invoke(cli, args)  # same data: resumes
    assert res.exit_code == 0, res.output

    f = bench / "data" / "sentences" / "train-00000-of-00001.parquet"
    pq.write_table(pq.read_table(f).slice(1), f)
    assert CliRunner().invoke(cli, ["data", "refresh-card", "--dataset", str(bench)]).exit_code == 0
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1
    assert "its stages ran on other data than" in res.output and "['train']" in res.output

    (tmp_path / "o" / "data.json").unlink()  # a folder of an older wgb: nothing to check against
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1 and "no record of the data they ran on" in res.output
