"""`relext.evaluation.score` / `wgb re score`: any extractor's predictions -> gender gaps with intervals."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from support.relext_data import synthetic_predictions
from wgb.cli import cli
from wikigenderbias.schema import RELATIONS


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run_dir(root, seed=0):
    """A run's predictions/ folder as `wgb re train` writes it (synthetic rows)."""
    pred = root / "predictions"
    pred.mkdir(parents=True)
    for i, split in enumerate(("validation", "male_test", "female_test")):
        rows = synthetic_predictions(split, n_entities=12, seed=seed * 10 + i,
                                     gender="mixed" if split == "validation" else None)
        _write(pred / f"{split}.jsonl", rows)
    return root


def _test_rows(seed=0, n=15, acc_f=0.6):
    """One run's test rows; the runs of every seed share their bags' gold labels."""
    return (synthetic_predictions("male_test", n_entities=n, seed=seed, label_seed=1)
            + synthetic_predictions("female_test", n_entities=n, seed=100 + seed, accuracy=acc_f, label_seed=2))


def _as_predicted(rows):
    out = []
    for r in rows:
        top = int(np.argmax(r["scores"]))
        out.append({"bag_id": r["bag_id"], "entity_id": r["entity_id"], "gender": r["gender"],
                    "labels": [RELATIONS[x] for x in r["labels"]],
                    "predicted": [] if top == 0 else [RELATIONS[top]]})
    return out


@pytest.mark.parametrize("rule", ["argmax", "threshold"])
def test_one_run_gives_exactly_the_numbers_of_wgb_re_eval(tmp_path, rule):
    from relext.evaluation.evaluate import EVAL_SPLITS, evaluate_predictions, prediction_path, read_predictions
    from relext.evaluation.score import score_files

    run = _run_dir(tmp_path / "run", seed=3)
    preds = {s: read_predictions(prediction_path(run, s)) for s in EVAL_SPLITS}
    ev = evaluate_predictions(preds, n_resamples=200, bootstrap_seed=4)
    rep = score_files([run], rule=rule, n_resamples=200, seed=4)
    assert rep.runs == [str(run)] and rep.alpha is None and rep.n_bags == 72
    eo = {"f1": "f1", "recall": "eo"}
    assert len(rep.gaps) == len(ev.gaps[rule]) == 9
    for g in ev.gaps[rule]:
        r = rep.gap(g.relation, eo[g.metric])
        assert (r.male, r.female, r.gap, r.ci_low, r.ci_high, r.flagged) == (
            g.male, g.female, g.gap, g.ci_low, g.ci_high, g.flagged)
    pooled = ev.scores[rule]["pooled"]
    assert rep.per_run[0]["micro_f1"] == pytest.approx(pooled.micro_f1, abs=1e-12)
    # the predictions folder itself, not the run folder, works as well
    assert score_files([run / "predictions"], rule=rule, n_resamples=200, seed=4).to_dict() == \
        {**rep.to_dict(), "runs": [str(run / "predictions")],
         "per_run": [{**rep.per_run[0], "run": str(run / "predictions")}]}


def test_predicted_labels_form_equals_scores_under_argmax(tmp_path):
    from relext.evaluation.score import score_files

    rows = _test_rows()
    a = score_files([_write(tmp_path / "scores.jsonl", rows)], n_resamples=150)
    b = score_files([_write(tmp_path / "labels.jsonl", _as_predicted(rows))], n_resamples=150)
    assert b.form == "predicted" and a.form == "scores"
    assert [(g.gap, g.ci_low, g.ci_high) for g in a.gaps] == [(g.gap, g.ci_low, g.ci_high) for g in b.gaps]


def test_several_runs_use_the_two_level_design(tmp_path):
    from wgbstats.design import Design
    from relext.evaluation.study_counts import StudyCounts
    from relext.evaluation.fairness import entity_counts
    from relext.evaluation.evaluate import argmax_decisions, PredictionTable
    from relext.evaluation.score import score_files

    files = [_write(tmp_path / f"seed{s}.jsonl", _test_rows(seed=s)) for s in range(4)]
    rep = score_files(files, n_resamples=300, seed=1)
    assert rep.alpha == 0.05 and "two-level" in rep.method and len(rep.per_run) == 4
    # the same estimate straight from the design layer
    counts = {}
    for i, f in enumerate(files):
        t = PredictionTable.from_rows([json.loads(x) for x in f.read_text().splitlines()])
        ids, c = entity_counts(t.y_true, argmax_decisions(t.scores), t.entity_ids)
        counts[i] = c
    gender = np.array(["female" if e.startswith("female") else "male" for e in ids])
    d = Design(StudyCounts(ids, gender, {"model": counts}), n_resamples=300, seed=1)
    e = d.metric("model", "f1_gap:spouse")
    g = rep.gap("spouse", "f1")
    assert (g.gap, g.ci_low, g.ci_high, g.n_runs) == (e.value, e.ci[0], e.ci[1], 4)
    assert all(g.p_adjusted is not None for g in rep.gaps)
    df = rep.to_df()
    assert list(df.columns[:5]) == ["relation", "metric", "male", "female", "gap"] and len(df) == 9
    # two runs: intervals, but no test (fewer than 3 seeds) and so no flag
    two = score_files(files[:2], n_resamples=200)
    assert not any(g.flagged for g in two.gaps) and all("fewer than 3" in g.note for g in two.gaps)


@pytest.mark.parametrize("edit, message, line", [
    (lambda rows: rows[3].update(labels=["wife"]), "unknown relation 'wife'", 4),
    (lambda rows: rows[3].update(predicted=[7]), "relation id 7", 4),
    (lambda rows: rows[3].update(bag_id=rows[2]["bag_id"]), "duplicate bag_id", 4),
    (lambda rows: rows[3].pop("entity_id"), "missing field 'entity_id'", 4),
    (lambda rows: rows[3].update(gender="x"), "field 'gender'", 4),
    (lambda rows: rows[4].update(gender="female"), "is 'female' here but 'male'", 5),
    (lambda rows: rows[3].update(scores=[0.5] * 5), "either 'scores'", 4),
])
def test_bad_rows_are_errors_naming_the_line(tmp_path, edit, message, line):
    from relext.evaluation.score import score_files

    rows = _as_predicted(_test_rows())
    edit(rows)
    path = _write(tmp_path / "p.jsonl", rows)
    with pytest.raises(ValueError, match=message) as err:
        score_files([path], n_resamples=100)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_runs_must_cover_the_same_bags_and_one_form(tmp_path):
    from relext.evaluation.score import score_files

    rows = _test_rows()
    a = _write(tmp_path / "a.jsonl", rows)
    b = _write(tmp_path / "b.jsonl", rows[:-1])
    with pytest.raises(ValueError, match=r"b.jsonl: lacks 1 bag\(s\)"):
        score_files([a, b], n_resamples=100)
    mixed = _write(tmp_path / "mixed.jsonl", rows[:3] + _as_predicted(rows[3:]))
    with pytest.raises(ValueError, match="mixed.jsonl:4: .*one run uses one form"):
        score_files([mixed], n_resamples=100)
    with pytest.raises(ValueError, match="threshold rule"):
        score_files([a], rule="threshold", n_resamples=100)  # no validation rows
    only_male = _write(tmp_path / "m.jsonl", [r for r in rows if r["gender"] == "male"])
    with pytest.raises(ValueError, match="no test bags of gender 'female'"):
        score_files([only_male], n_resamples=100)


def test_cli_score(tmp_path):
    files = [str(_write(tmp_path / f"s{s}.jsonl", _as_predicted(_test_rows(seed=s)))) for s in range(3)]
    out = tmp_path / "report.json"
    res = CliRunner().invoke(cli, ["re", "score", *files, "--resamples", "200", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "Gender gaps of 3 run(s)" in res.output and "| spouse | F1 |" in res.output
    d = json.loads(out.read_text())
    assert d["runs"] == files and len(d["gaps"]) == 9
    res = CliRunner().invoke(cli, ["re", "score", files[0], "--json", "--resamples", "100"])
    assert res.exit_code == 0 and json.loads(res.stdout)["alpha"] is None
    # synthetic persons are none of the release's: said, not silently taken as the whole test set
    assert "WARNING: coverage not checked" in res.stderr
    bad = _write(tmp_path / "bad.jsonl", [{"bag_id": "x"}])
    res = CliRunner().invoke(cli, ["re", "score", str(bad)])
    assert res.exit_code != 0 and "bad.jsonl:1: missing field 'entity_id'" in res.output


# --------------------------------------------------------------------------------------------
# Cross-fitted prediction sets: a folder of fold<k> sets, persons disjoint across folds
# --------------------------------------------------------------------------------------------
def _fold_set(root, seed, folds=3, acc=(0.9, 0.6)):
    import json as _json

    from support.relext_data import synthetic_predictions

    for k in range(folds):
        d = root / f"fold{k}"
        d.mkdir(parents=True)
        for split, a in (("male_test", acc[0]), ("female_test", acc[1])):
            rows = synthetic_predictions(split, n_entities=10, accuracy=a, seed=seed * 100 + k, label_seed=k)
            for r in rows:   # persons of fold k only
                r["entity_id"] = f"f{k}-{r['entity_id']}"
            (d / f"{split}.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in rows))
    return root


def test_cross_fitted_sets_join_their_folds(tmp_path):
    from relext.evaluation.score import fold_sets, read_run, score_files

    sets = [_fold_set(tmp_path / f"seed{s}", s) for s in range(3)]
    assert [k for k, _ in fold_sets(sets[0])] == [0, 1, 2]
    run = read_run(sets[0])
    assert set(run.folds.tolist()) == {0, 1, 2} and len(set(run.entity_ids.tolist())) == 60
    rep = score_files(sets, n_resamples=200)
    assert rep.n_entities == {"female": 30, "male": 30}
    micro = next(g for g in rep.gaps if g.relation == "micro")
    assert micro.gap > 0 and micro.n_runs == 3


def test_cross_fitted_sets_refuse_a_person_in_two_folds(tmp_path):
    import shutil

    from relext.evaluation.score import read_run

    root = _fold_set(tmp_path / "s", 0)
    shutil.copy(root / "fold0" / "male_test.jsonl", root / "fold1" / "male_test.jsonl")
    with pytest.raises(ValueError, match="predicted in fold 0 and fold 1"):
        read_run(root)
    (root / "fold7").mkdir()
    with pytest.raises(ValueError, match="fold0 .. fold<K-1>"):
        read_run(root)
