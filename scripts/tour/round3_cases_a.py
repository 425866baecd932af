"""Round-3 tour cases, patterns 1-3: the fold plan, run sets, stored results."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from round3_kit import (same_results, P1, P2, P3, Case, cfg_file, crossfit_re, edit_json, edit_lines, files, no, out_has,
                          score_json, small_re, write)


def _score(*paths, extra=()):
    return ["re", "score", *map(str, paths), "--resamples", "100", *extra]


def _copies(fx, w, *names):
    return [fx.copy(n, w / n) for n in names]


def _scored_two_runs(fx, w, o):
    d = score_json(w)
    n = d.get("runs") or d.get("n_runs") or len(d.get("run_names", [])) or None
    text = json.dumps(d)
    return None if ("run0" in text and "run1" in text) else f"silently wrong: the report does not name both runs ({n})"


# ---------------------------------------------------------------- pattern 1: the whole fold plan
def _bench_without(fx, w, split_gender):
    """The benchmark with every person of (split, gender) moved out: a copy saved with datasets."""
    from datasets import disable_progress_bars, load_dataset

    disable_progress_bars()
    ds = load_dataset(str(fx["bench"]))
    split, g = split_gender
    gid = 0 if g == "female" else 1
    ds[split] = ds[split].filter(lambda r: r["gender"] != gid)
    ds.save_to_disk(str(w / "b"))
    return w / "b"


def _on(args, bench):
    """``args`` with ``--dataset`` pointing at ``bench``."""
    i = args.index("--dataset")
    return [*args[:i + 1], str(bench), *args[i + 2:]]


def _person_twice(fx, w):
    """A benchmark where one female_test person's rows are also in train."""
    from datasets import concatenate_datasets, disable_progress_bars, load_dataset

    disable_progress_bars()
    ds = load_dataset(str(fx["bench"]))
    person = ds["female_test"][0]["entity_id"]
    rows = ds["female_test"].filter(lambda r: r["entity_id"] == person)
    ds["train"] = concatenate_datasets([ds["train"], rows.cast(ds["train"].features)])
    ds.save_to_disk(str(w / "b"))
    return w / "b"


def _first_fold_then(fx, w, *extra):
    from round3_fixtures import wgb

    wgb(crossfit_re(fx, w / "r", "--folds", "2", "--fold", "1"), fx.root, cwd=w)
    return crossfit_re(fx, w / "r", *extra)


def _fold_dirs_trained(*names):
    def check(fx, w, o):
        miss = [n for n in names if not (w / "r" / n / "DONE").exists()]
        return f"partial: {miss} not finished" if miss else None
    return check


P1_CASES = [
    Case("cf_folds_past_women_re_train", P1, "re train --protocol crossfit", lambda fx, w: crossfit_re(
        fx, w / "r", "--folds", "12"), words=("folds=12", "11 women", "folds must be <= 11"), gone=no("r")),
    Case("cf_fold_index_past_folds", P1, "re train --fold", lambda fx, w: crossfit_re(
        fx, w / "r", "--folds", "2", "--fold", "2"), words=("fold must be in 0..1", "got 2"), gone=no("r")),
    Case("cf_fold_without_crossfit", P1, "re train --fold under test", lambda fx, w: small_re(
        fx, w / "r", "--fold", "0"), words=("--fold",), gone=no("r")),
    Case("cf_fold_seed_under_test_protocol", P1, "re train --fold-seed under test", lambda fx, w: small_re(
        fx, w / "r", "--fold-seed", "3"), words=("--fold-seed",), gone=no("r")),
    Case("cf_folds_past_women_wgb_run", P1, "wgb run --protocol crossfit", lambda fx, w: fx.run_args(
        w / "o", "--protocol", "crossfit", "--folds", "12"), words=("folds=12", "11 women"), gone=no("o")),
    Case("cf_folds_past_women_re_grid", P1, "re grid --protocol crossfit", lambda fx, w: fx.grid_args(
        w / "g", "--protocol", "crossfit", "--folds", "12"), words=("folds=12",), gone=no("g")),
    Case("cf_folds_past_women_debias_grid", P1, "re debias-grid --protocol crossfit", lambda fx, w: fx.debias_args(
        w / "d", "--protocol", "crossfit", "--folds", "12"), words=("folds=12",), gone=no("d")),
    Case("cf_no_female_validation", P1, "re train crossfit, no woman in validation", lambda fx, w: _on(
        crossfit_re(fx, w / "r", "--folds", "2"), _bench_without(fx, w, ("validation", "female"))), expect="ok", check=_fold_dirs_trained("fold0", "fold1"),
        note="folds deal every split's persons, so a split without women is not a plan defect"),
    Case("cf_no_male_test", P1, "re train crossfit, male_test empty", lambda fx, w: _on(
        crossfit_re(fx, w / "r", "--folds", "2"), _bench_without(fx, w, ("male_test", "male"))), expect="ok",
        check=_fold_dirs_trained("fold0", "fold1"), note="every split's men are dealt into the folds' male_test"),
    Case("cf_person_in_two_splits", P1, "re train crossfit, person in train and female_test", lambda fx, w: _on(
        crossfit_re(fx, w / "r", "--folds", "2"), _person_twice(fx, w)), words=("two splits",), gone=no("r")),
    Case("cf_rerun_with_other_folds", P1, "re train crossfit, RUN_DIR of --folds 2 rerun with --folds 3",
         lambda fx, w: (fx.copy("cf0", w / "r"), crossfit_re(fx, w / "r", "--folds", "3", "--seed", "0"))[1],
         words=("fold",), gone=no("r/fold2"), check=lambda fx, w, o: None if files(w / "r") == files(fx["cf0"])
         else "partial: the existing run folder changed"),
    Case("cf_rerun_other_fold_seed", P1, "re train crossfit, rerun with another --fold-seed", lambda fx, w: (
        fx.copy("cf0", w / "r"), crossfit_re(fx, w / "r", "--folds", "2", "--seed", "0", "--fold-seed", "5"))[1],
         words=("fold_seed",)),
    Case("cf_one_fold_then_all", P1, "re train crossfit --fold 1, then every fold", lambda fx, w: _first_fold_then(
        fx, w, "--folds", "2"), expect="ok", check=_fold_dirs_trained("fold0", "fold1"),
         note="fold 1 kept, fold 0 trained"),
    Case("cf_folds_one_in_yaml", P1, "re train --config with folds: 1", lambda fx, w: crossfit_re(
        fx, w / "r", "--config", str(cfg_file(w, "folds: 1\n"))), words=("folds",), gone=no("r")),
    Case("cf_fold_past_folds_in_yaml", P1, "re train --config with fold: 7, folds: 2", lambda fx, w: crossfit_re(
        fx, w / "r", "--config", str(cfg_file(w, "folds: 2\nfold: 7\n"))), words=("fold",), gone=no("r")),
    Case("cf_fold_run_config_out_of_range", P1, "re train --config folds: 2, fold: 7 (test protocol)",
         lambda fx, w: small_re(fx, w / "r", "--config", str(cfg_file(w, "folds: 2\nfold: 7\n"))),
         words=("fold must be in 0..1", "got 7"), gone=no("r")),
    Case("cf_fold_run_config_past_women", P1, "re train --config a fold run of folds: 12 (test protocol)",
         lambda fx, w: small_re(fx, w / "r", "--config", str(cfg_file(w, "folds: 12\nfold: 0\n"))),
         words=("folds=12", "folds must be <= 11"), gone=no("r")),
    Case("cf_folds_one_set_re_grid", P1, "re grid --set folds=1", lambda fx, w: fx.grid_args(
        w / "g", "--set", "folds=1"), words=("folds",), gone=no("g")),
    Case("cf_fold_set_re_grid", P1, "re grid --protocol crossfit --set fold=0", lambda fx, w: fx.grid_args(
        w / "g", "--protocol", "crossfit", "--folds", "2", "--set", "fold=0"), words=("fold",), gone=no("g")),
    Case("cf_fold_seed_negative", P1, "re train crossfit --fold-seed -1", lambda fx, w: crossfit_re(
        fx, w / "r", "--folds", "2", "--fold-seed=-1"), words=("--fold-seed",), gone=no("r")),
    Case("cf_wgb_run_other_fold_seed", P1, "wgb run crossfit, OUT rerun with another --fold-seed",
         lambda fx, w: (write(w / "o" / "config.json", json.dumps({**json.loads(
             (fx["wr"] / "config.json").read_text()), "protocol": "crossfit", "folds": 2, "fold_seed": 0})),
             fx.run_args(w / "o", "--protocol", "crossfit", "--folds", "2", "--fold-seed", "1"))[1],
         words=("fold",)),
]


# ---------------------------------------------------------------- pattern 2: runs of one study
def _flip_gender(fx, w):
    r1 = fx.copy("run1", w / "run1")
    edit_lines(r1 / "predictions" / "male_test.jsonl", lambda rows: [{**rows[0], "gender": "female"}, *rows[1:]])
    (r1 / "predictions" / "provenance.json").unlink()
    return _score(fx["run0"], r1, extra=["-o", str(w / "s.json")])


def _as_plain_files(fx, w, n, fn=None):
    """Run ``n``'s test predictions as one JSON-lines file (no run folder), rows changed by ``fn``."""
    rows = [json.loads(ln) for s in ("male_test", "female_test") for ln in
            (fx[n] / "predictions" / f"{s}.jsonl").read_text().splitlines()]
    rows = fn(rows) if fn else rows
    return write(w / f"{n}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def _bag_twice_new_id(rows):
    return [*rows, {**rows[0], "bag_id": rows[0]["bag_id"] + "-copy"}]


def _labels(rows, labels):
    return [{**rows[0], "labels": labels}, *rows[1:]]


P2_CASES = [
    Case("rs_symlink_of_a_run", P2, "re score, a run and a symlink to it", lambda fx, w: (
        (w / "again").symlink_to(fx["run0"]), _score(fx["run0"], w / "again"))[1], words=("distinct",)),
    Case("rs_copied_run_folder", P2, "re score, a run and its copy", lambda fx, w: _score(
        fx["run0"], fx.copy("run0", w / "copy")), words=("distinct", "same config")),
    Case("rs_run_and_its_predictions", P2, "re score, RUN and RUN/predictions", lambda fx, w: _score(
        fx["run0"], fx["run0"] / "predictions"), words=("distinct",)),
    Case("rs_plain_files_identical", P2, "re score, one run's rows as two plain files", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0"), shutil.copy(w / "run0.jsonl", w / "again.jsonl"),
        extra=["--allow-subset"]), words=("distinct",)),
    Case("rs_one_fold_of_two", P2, "re score, fold0 of a cross-fitted run alone", lambda fx, w: (
        fx.copy("cf0", w / "cf"), shutil.rmtree(w / "cf" / "fold1"), _score(w / "cf"))[2], words=("complete",)),
    Case("rs_fold_runs_as_seeds", P2, "re score, cf/fold0 and cf/fold1 as two plain runs", lambda fx, w: _score(
        fx["cf0"] / "fold0", fx["cf0"] / "fold1"), words=("complete", "fold")),
    Case("rs_mixed_protocols", P2, "re score, a test-protocol run with a cross-fitted one", lambda fx, w: _score(
        fx["run0"], fx["cf0"]), words=("cross-fitted",)),
    Case("rs_fold_seeds_differ", P2, "re score, cross-fitted runs of fold seeds 0 and 1", lambda fx, w: _score(
        fx["cf0"], fx["cf_fs1"]), words=("fold-seed",)),
    Case("rs_edited_prediction", P2, "re score, a run whose predictions were edited", lambda fx, w: (
        edit_lines(fx.copy("run0", w / "r") / "predictions" / "female_test.jsonl",
                   lambda rows: [{**rows[0], "scores": rows[0]["scores"][::-1]}, *rows[1:]]),
        _score(w / "r"))[1], words=("current", "female_test.jsonl")),
    Case("rs_gender_flipped_in_one_run", P2, "re score, a bag's gender differs between runs", _flip_gender,
         words=("gender",)),
    Case("rs_gold_disagrees", P2, "re score, gold labels differ between two plain files", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0"), _as_plain_files(fx, w, "run1", lambda r: _labels(r, [3])),
        extra=["--allow-subset"]), words=("gold-agree",)),
    Case("rs_na_with_relation", P2, "re score, gold ['NA', 'spouse'] as numbers", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", lambda r: _labels(r, [0, 1])), extra=["--allow-subset"]),
        words=("gold-valid",)),
    Case("rs_empty_gold", P2, "re score, gold []", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", lambda r: _labels(r, [])), extra=["--allow-subset"]), words=("gold-valid",)),
    Case("rs_bag_twice_new_id", P2, "re score, a bag repeated under a new id", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", _bag_twice_new_id), extra=["--allow-subset"]), words=("duplicate-bags",)),
    Case("rs_subset_without_flag", P2, "re score, male_test rows only", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", lambda r: [x for x in r if x["split"] == "male_test"])),
        words=("coverage",)),
    Case("rs_other_data", P2, "re score --data another benchmark", lambda fx, w: _score(
        fx["run0"], extra=["--data", str(_other_bench(fx, w))]), words=("coverage",)),
    Case("rs_two_seeds", P2, "re score, seeds 0 and 1", lambda fx, w: _score(
        fx["run0"], fx["run1"], extra=["-o", str(w / "s.json")]), expect="ok", check=_scored_two_runs),
    Case("rs_two_crossfit_seeds", P2, "re score, cross-fitted seeds 0 and 1", lambda fx, w: _score(
        fx["cf0"], fx["cf1"], extra=["-o", str(w / "s.json")]), expect="ok",
         check=lambda fx, w, o: None if "cf0" in json.dumps(score_json(w)) else "silently wrong: cf0 not named"),
    Case("rs_unknown_relation_name", P2, "re score, predicted 'spouze'", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", lambda r: [{k: v for k, v in x.items() if k != "scores"} | {
            "predicted": ["spouze"]} for x in r]), extra=["--allow-subset"]), words=("spouze",)),
    Case("rs_malformed_line", P2, "re score, a line that is not JSON", lambda fx, w: _score(write(
        w / "x.jsonl", _as_plain_files(fx, w, "run0").read_text() + "{not json\n"), extra=["--allow-subset"]),
        words=("x.jsonl:",)),
    Case("rs_scores_too_short", P2, "re score, 3 scores where 5 relations", lambda fx, w: _score(
        _as_plain_files(fx, w, "run0", lambda r: [{**r[0], "scores": r[0]["scores"][:3]}, *r[1:]]),
        extra=["--allow-subset"]), words=("scores",)),
    Case("rs_nan_score", P2, "re score, a NaN score", lambda fx, w: _score(write(
        w / "n.jsonl", _as_plain_files(fx, w, "run0").read_text().replace("[0.", "[NaN, 0.", 1).replace(
            ", 0.", ", ", 1)), extra=["--allow-subset"]), words=("n.jsonl",)),
]


def _other_bench(fx, w):
    import sys

    import wikigenderbias  # noqa: F401  (the package, before tests/ joins the path: tests/wikigenderbias is not it)

    sys.path.append(str(F_REPO / "tests"))
    from support.fold_plans import benchmark_folder

    return benchmark_folder(w / "other", women={"train": 4, "validation": 1, "female_test": 5},
                            men={"train": 4, "validation": 1, "male_test": 5})


F_REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- pattern 3: stored results
def _grid_copy(fx, w):
    g = fx.copy("grid", w / "g")
    for run in (g / "runs").iterdir():   # the runs' configs name the fixture's runs folder only through OUT
        pass
    return g


def _rerun_grid(fx, w, edit, *extra):
    g = _grid_copy(fx, w)
    edit(g)
    return fx.grid_args(g, "--no-train", *extra)


def _eval_edit(g):
    edit_json(g / "runs" / "cnn-average-seed1" / "eval.json",
              lambda d: d["scores"]["argmax"]["pooled"].update(micro_f1=0.999))


def _counts_swap(g):
    shutil.copy(g / "runs" / "cnn-average-seed1" / "entity_counts.npz", g / "runs" / "cnn-average-seed2" /
                "entity_counts.npz")


def _counts_truncate(g):
    p = g / "runs" / "cnn-average-seed2" / "entity_counts.npz"
    p.write_bytes(p.read_bytes()[:100])


def _record_garbage(g):
    write(g / "runs" / "cnn-average-seed1" / "OUTPUTS.sha256", "not a checksum line\n")


def _pred_edit(g):
    edit_lines(g / "runs" / "cnn-average-seed1" / "predictions" / "male_test.jsonl",
               lambda rows: [{**rows[0], "scores": rows[0]["scores"][::-1]}, *rows[1:]])


def _grid_not_999(fx, w, o):
    text = (w / "g" / "results.json").read_text()
    return "silently wrong: the edited 0.999 reached results.json" if "0.999" in text else None




def _results_equal_fixture(fx, w, o):
    return None if same_results(w / "g" / "results.json", fx["grid"] / "results.json") else \
        "silently wrong: results.json differs from the untouched grid's"


def _again(name):
    """Evaluated again with a line naming the file ``name``, results as the untouched grid's."""
    def check(fx, w, o):
        said = [ln for ln in o.output.splitlines() if name in ln and "evaluating" in ln and "again" in ln]
        return _results_equal_fixture(fx, w, o) or (None if said else f"silently wrong: {name} replaced unnamed")
    return check


def _wr(fx, w, edit):
    o = fx.copy("wr", w / "o")
    edit(o)
    return fx.run_args(o, "--seeds", "0")


def _wr_redo(stage_word):
    def check(fx, w, o):
        lines = [ln for ln in o.output.splitlines() if ln.startswith("[redo]")]
        if not any(stage_word in ln for ln in lines):
            return f"silently wrong: no [redo] line of the {stage_word} stage"
        return None if (w / "o" / "report" / "report.html").exists() else "partial: no report"
    return check


def _triples_edit(o):
    p = o / "seed-0" / "triples" / "baseline.jsonl"
    p.write_text(p.read_text().splitlines()[0] + "\n")


def _data_edit(b, config="sentences"):
    """One value of a validation data file changed (a valid parquet file: only the fingerprint can tell)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = sorted((b / "data" / config).glob("validation-*.parquet"))[0]
    t = pq.read_table(p)
    d = t.to_pydict()
    key = "text" if "text" in d else "entity"
    d[key][0] = d[key][0] + " edited"
    pq.write_table(pa.Table.from_pydict(d, schema=t.schema), p)


P3_CASES = [
    Case("st_eval_edited_grid", P3, "re grid --no-train, a run's eval.json edited", lambda fx, w: _rerun_grid(
        fx, w, _eval_edit), expect="ok", check=lambda fx, w, o: _grid_not_999(fx, w, o) or _again("eval.json")(fx, w, o),
         note="evaluated again, the line names eval.json"),
    Case("st_counts_copied_grid", P3, "re grid --no-train, seed1's entity_counts.npz over seed2's",
         lambda fx, w: _rerun_grid(fx, w, _counts_swap), expect="ok", check=_again("entity_counts.npz"),
         note="named, evaluated again; results as before the copy"),
    Case("st_counts_truncated_grid", P3, "re grid --no-train, entity_counts.npz truncated", lambda fx, w: _rerun_grid(
        fx, w, _counts_truncate), expect="ok", check=_again("entity_counts.npz"), note="named, evaluated again"),
    Case("st_record_garbage_grid", P3, "re grid --no-train, a run's OUTPUTS.sha256 garbage", lambda fx, w: _rerun_grid(
        fx, w, _record_garbage), expect="ok", check=_again("its record is damaged"),
         note="named (its record is damaged), evaluated again; results as before"),
    Case("st_timing_edited_grid", P3, "re grid --no-train, timing.json edited", lambda fx, w: _rerun_grid(
        fx, w, lambda g: edit_json(g / "timing.json", lambda d: d.update(tampered=1))), words=("timing.json",)),
    Case("st_eval_deleted_grid", P3, "re grid --no-train, a run's eval.json deleted", lambda fx, w: _rerun_grid(
        fx, w, lambda g: (g / "runs" / "cnn-average-seed1" / "eval.json").unlink()), expect="ok",
         check=_again("eval.json"), note="named (missing), evaluated again"),
    Case("st_prediction_edited_grid", P3, "re grid --no-train, a run's predictions edited", lambda fx, w: _rerun_grid(
        fx, w, _pred_edit), expect="ok", check=_results_equal_fixture,
         note="the grid reads the run's recorded evaluation (intact), not its predictions: results unchanged"),
    Case("st_results_edited_grid", P3, "re grid --no-train, results.json edited", lambda fx, w: _rerun_grid(
        fx, w, lambda g: edit_json(g / "results.json", lambda d: d.update(edited=True))), expect="ok",
         check=lambda fx, w, o: "silently wrong: kept" if "edited" in (w / "g" / "results.json").read_text() else None,
         note="results.json is an output: rewritten"),
    Case("st_plan_edited_grid", P3, "re grid --no-train, plan.json's seeds edited", lambda fx, w: _rerun_grid(
        fx, w, lambda g: edit_json(g / "plan.json", lambda d: d.update(seeds=[1, 2, 3]) if "seeds" in d else
                                   d.setdefault("edited", 1))), words=("plan",)),
    Case("st_eval_edited_re_eval", P3, "re eval, a run's eval.json edited then re eval", lambda fx, w: (
        _eval_edit(_grid_copy(fx, w)), ["re", "eval", str(w / "g" / "runs" / "cnn-average-seed1"), "--resamples",
                                        "100"])[1], expect="ok",
         check=lambda fx, w, o: "silently wrong: 0.999 kept" if "0.999" in (
             w / "g" / "runs" / "cnn-average-seed1" / "eval.json").read_text() else None),
    Case("st_model_swapped_re_eval", P3, "re eval, model.pt of another seed copied in", lambda fx, w: (
        fx.copy("run0", w / "r"), shutil.copy(fx["run1"] / "model.pt", w / "r" / "model.pt"),
        ["re", "eval", str(w / "r"), "--resamples", "100"])[2], words=("model",)),
    Case("st_triples_edited_wgb_run", P3, "wgb run rerun, a stage's triples edited", lambda fx, w: _wr(
        fx, w, _triples_edit), expect="ok", check=_wr_redo("triples")),
    Case("st_bias_edited_wgb_run", P3, "wgb run rerun, bias/gold.json edited", lambda fx, w: _wr(
        fx, w, lambda o: edit_json(o / "seed-0" / "bias" / "gold.json", lambda d: d.update(edited=1))),
         expect="ok", check=_wr_redo("bias")),
    Case("st_embedding_deleted_wgb_run", P3, "wgb run rerun, an embeddings file deleted", lambda fx, w: _wr(
        fx, w, lambda o: (o / "seed-0" / "embeddings" / "gold" / "entities.npy").unlink()), expect="ok",
         check=_wr_redo("embed"), note="the stage's recorded files removed, the stage run again"),
    Case("st_stage_marker_garbage", P3, "wgb run rerun, a stage marker garbage", lambda fx, w: _wr(
        fx, w, lambda o: write(o / "seed-0" / "stages" / "bias_gold.done", "garbage\x00\n")), expect="ok",
         check=_wr_redo("bias")),
    Case("st_data_fingerprint_info", P3, "data info, a data file changed", lambda fx, w: (
        _data_edit(fx.copy("bench", w / "b")), ["data", "info", "--dataset", str(w / "b")])[1],
         words=("fingerprint",)),
    Case("st_data_file_missing_info", P3, "data info, a data file deleted", lambda fx, w: (
        fx.copy("bench", w / "b"), sorted((w / "b").rglob("*.parquet"))[0].unlink(),
        ["data", "info", "--dataset", str(w / "b")])[2], words=("b",)),
    Case("st_data_fingerprint_groups", P3, "data groups, a data file changed", lambda fx, w: (
        _data_edit(fx.copy("bench", w / "b"), "entities"), ["data", "groups", "--dataset", str(w / "b")])[1],
         words=("fingerprint",)),
    Case("st_data_fingerprint_re_train", P3, "re train on a benchmark whose data changed", lambda fx, w: (
        _data_edit(fx.copy("bench", w / "b")), ["re", "train", str(w / "r"), "--dataset", str(w / "b"),
                                                *fx.small()])[1], words=("fingerprint",), gone=no("r")),
    Case("st_emb_rows_short_kge_bias", P3, "kge bias, entities.tsv one name short", lambda fx, w: (
        fx.copy("emb", w / "e"), write(w / "e" / "entities.tsv", "".join(
            (w / "e" / "entities.tsv").read_text().splitlines(True)[:-1])),
        ["kge", "bias", str(w / "e"), str(fx["graph"]), "--measure", "fisher", "--a", "male", "--b", "female",
         "--out", str(w / "b.json")])[2], expect="ok", check=lambda fx, w, o: None if json.loads(
            (w / "b.json").read_text())["results"][0]["rows"] == json.loads(fx["bias"].read_text())["results"][0][
            "rows"] else "silently wrong: other rows than the intact embeddings'",
         note="with GRAPH given, EMB_DIR's entities.tsv is not read: ids are checked by the graph's names hash"),
    Case("st_bias_score_string_kge_report", P3, "kge report, a score saved as a string", lambda fx, w: (
        edit_json(fx.copy("bias", w / "b.json"), lambda d: d["results"][0]["rows"][0].update(score="0.3")),
        ["kge", "report", str(w / "b.json"), "--out", str(w / "rep")])[1], words=("score",), gone=no("rep")),
    Case("st_debias_eval_edited", P3, "re debias-grid --no-train, a run's eval.json edited", lambda fx, w: (
        fx.copy("dg", w / "d"), [edit_json(p, lambda d: d["scores"]["argmax"]["pooled"].update(micro_f1=0.999))
                                 for p in sorted((w / "d" / "runs").glob("*/eval.json"))[:1]],
        fx.debias_args(w / "d", "--no-train"))[2], expect="ok",
         check=lambda fx, w, o: "silently wrong: 0.999 reached results.json" if "0.999" in (
             w / "d" / "results.json").read_text() else None),
]

CASES_A = P1_CASES + P2_CASES + P3_CASES
