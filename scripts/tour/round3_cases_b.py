"""Round-3 tour cases, pattern 4 (study folders), pattern 5 (shared options, config files, the
executor) and what a newcomer hits first."""
from __future__ import annotations

import json
import os
from pathlib import Path

from round3_kit import (N, P4, P5, Case, cfg_file, crossfit_re, files, hold_lock, loop, no, out_has, small_re,
                          write)
from round3_kit import same_results

REPO = Path(__file__).resolve().parents[2]


def _unchanged(name, sub="g", ignore=("timing.json", "OUTPUTS.sha256")):
    def check(fx, w, o):
        a, b = files(w / sub), files(fx[name])
        a = {k: v for k, v in a.items() if Path(k).name not in ignore and ".wgb.lock" not in k}
        b = {k: v for k, v in b.items() if Path(k).name not in ignore and ".wgb.lock" not in k}
        diff = sorted(set(a) ^ set(b)) + sorted(k for k in set(a) & set(b) if a[k] != b[k])
        return f"partial: the study folder changed: {diff[:4]}" if diff else None
    return check


def _results_same(name, sub):
    def check(fx, w, o):
        return None if same_results(w / sub / "results.json", fx[name] / "results.json") else \
            "silently wrong: a rerun changed results.json"
    return check


# ---------------------------------------------------------------- pattern 4: study folders
P4_CASES = [
    Case("sf_grid_lock_held", P4, "re grid, OUT held by another writer", lambda fx, w: (
        hold_lock(fx, w / "g", True), fx.grid_args(w / "g"))[1], words=("in use by another wgb process", "pid"),
         gone=no("g")),
    Case("sf_debias_lock_held", P4, "re debias-grid, OUT held by another writer", lambda fx, w: (
        hold_lock(fx, w / "d", True), fx.debias_args(w / "d"))[1], words=("in use by another wgb process",),
         gone=no("d")),
    Case("sf_run_lock_held_in_grid", P4, "re grid, a run folder held by a re train for 15 s", lambda fx, w: (
        fx.copy("grid", w / "g"), hold_lock(fx, w / "g" / "runs" / "cnn-average-seed3", False, seconds=15),
        fx.grid_args(w / "g", "--amend-plan", "a third seed", seeds="1,2,3"))[2], expect="ok",
         check=lambda fx, w, o: None if "waiting" in (w / "g" / "logs" / "cnn-average-seed3.log").read_text() and (
             w / "g" / "runs" / "cnn-average-seed3" / "DONE").exists() else
         "silently wrong: no 'waiting' line in the run's log, or the run unfinished",
         note="the executor waits for the holder (its claim; said in the run's log and the bar), then trains it"),
    Case("sf_wgb_run_lock_held", P4, "wgb run, OUT held by another writer", lambda fx, w: (
        fx.copy("wr", w / "o"), hold_lock(fx, w / "o", True), fx.run_args(w / "o", "--seeds", "0"))[2],
         words=("in use by another wgb process",)),
    Case("sf_grid_out_is_a_file", P4, "re grid --out a file", lambda fx, w: fx.grid_args(write(w / "g", "x")),
         words=("g",)),
    Case("sf_debias_out_is_a_file", P4, "re debias-grid OUT a file", lambda fx, w: fx.debias_args(
        write(w / "d", "x")), words=("d",)),
    Case("sf_grid_out_is_a_run", P4, "re grid --out a run folder", lambda fx, w: fx.grid_args(
        fx.copy("run0", w / "g")), words=("g",)),
    Case("sf_debias_out_is_a_grid", P4, "re debias-grid OUT a finished re grid", lambda fx, w: fx.debias_args(
        fx.copy("grid", w / "g")), words=("g",), check=_unchanged("grid")),
    Case("sf_grid_out_is_a_debias_study", P4, "re grid --out a finished re debias-grid", lambda fx, w: fx.grid_args(
        fx.copy("dg", w / "g")), words=("g",), check=_unchanged("dg")),
    Case("sf_grid_other_protocol", P4, "re grid, a test-protocol OUT rerun --protocol crossfit",
         lambda fx, w: fx.grid_args(fx.copy("grid", w / "g"), "--protocol", "crossfit", "--folds", "2"),
         words=("protocol",), check=_unchanged("grid")),
    Case("sf_debias_other_protocol", P4, "re debias-grid, a test-protocol OUT rerun crossfit",
         lambda fx, w: fx.debias_args(fx.copy("dg", w / "d"), "--protocol", "crossfit", "--folds", "2"),
         words=("protocol",), check=_unchanged("dg", "d")),
    Case("sf_grid_more_seeds_no_amend", P4, "re grid, rerun with another --seeds, no --amend-plan",
         lambda fx, w: fx.grid_args(fx.copy("grid", w / "g"), seeds="1,2,3"), words=("plan",),
         check=_unchanged("grid")),
    Case("sf_grid_amend_empty_why", P4, "re grid --amend-plan ''", lambda fx, w: fx.grid_args(
        fx.copy("grid", w / "g"), "--amend-plan", "", seeds="1,2,3"), words=("--amend-plan",),
         check=_unchanged("grid")),
    Case("sf_grid_finished_rerun", P4, "re grid, a finished OUT rerun as it was", lambda fx, w: fx.grid_args(
        fx.copy("grid", w / "g")), expect="ok", check=_results_same("grid", "g")),
    Case("sf_debias_finished_rerun", P4, "re debias-grid, a finished OUT rerun as it was", lambda fx, w: fx.debias_args(
        fx.copy("dg", w / "d")), expect="ok", check=_results_same("dg", "d")),
    Case("sf_stale_lock_file", P4, "re grid, a lock file left by a killed writer", lambda fx, w: (
        fx.copy("grid", w / "g"), write(w / ".g.wgb.lock", json.dumps({"pid": 999999, "host": os.uname().nodename})),
        fx.grid_args(w / "g"))[2], expect="ok", check=_results_same("grid", "g")),
    Case("sf_debias_out_symlink_loop", P4, "re debias-grid OUT a symlink loop", lambda fx, w: fx.debias_args(
        loop(w)), words=("symlink loop",)),
    Case("sf_grid_runs_dir_symlink_loop", P4, "re grid --runs-dir a symlink loop", lambda fx, w: fx.grid_args(
        w / "g", "--runs-dir", str(loop(w))), words=("symlink loop",), gone=no("g")),
    Case("sf_plan_garbage", P4, "re grid, OUT/plan.json not JSON", lambda fx, w: (
        fx.copy("grid", w / "g"), write(w / "g" / "plan.json", "{oops"), fx.grid_args(w / "g"))[2],
         words=("plan.json",)),
    Case("sf_no_train_on_empty_out", P4, "re debias-grid --no-train on a new OUT", lambda fx, w: fx.debias_args(
        w / "d", "--no-train"), expect="ok", check=out_has("0/2 runs evaluated", "not finished"),
         note="registers the plan, evaluates nothing and says 0/2, not finished"),
]


# ---------------------------------------------------------------- pattern 5: one validation path
def _train(fx, w, *extra):
    return small_re(fx, w / "r", *extra)


def _grid(fx, w, *extra):
    return fx.grid_args(w / "g", *extra)


P5_CASES = [
    Case("op_workers_zero", P5, "re grid --workers 0", lambda fx, w: _grid(fx, w, "--executor", "processes",
                                                                         "--workers", "0"),
         words=("--workers",), gone=no("g")),
    Case("op_workers_with_serial", P5, "re grid --workers 2 under --executor serial", lambda fx, w: _grid(
        fx, w, "--workers", "2"), words=("workers 2",), gone=no("g")),
    Case("op_threads_per_run_serial", P5, "re grid --threads-per-run 2 under serial", lambda fx, w: _grid(
        fx, w, "--threads-per-run", "2", "--threads", "1"), words=("--threads 1 and --threads-per-run 2",), gone=no("g")),
    Case("op_scheduler_with_processes", P5, "re grid --scheduler with --executor processes", lambda fx, w: _grid(
        fx, w, "--executor", "processes", "--scheduler", "tcp://127.0.0.1:8786"), words=("dask",), gone=no("g")),
    Case("op_scheduler_no_port", P5, "re grid --scheduler tcp://127.0.0.1 (nobody listening)", lambda fx, w: _grid(
        fx, w, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"), words=("scheduler",), gone=no("g"),
         timeout=60),
    Case("op_scheduler_garbage_json", P5, "re grid --scheduler a JSON file without an address", lambda fx, w: _grid(
        fx, w, "--executor", "dask", "--scheduler", str(write(w / "s.json", '{"id": 1}'))), words=("s.json",),
         gone=no("g"), timeout=60),
    Case("op_bootstrap_seed_negative", P5, "re grid --bootstrap-seed -1", lambda fx, w: _grid(
        fx, w, "--bootstrap-seed=-1"), words=("--bootstrap-seed",), gone=no("g")),
    Case("op_bias_option_nan", P5, "kge bias --option alpha=NaN", lambda fx, w: [
        "kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "fisher", "--option", "alpha=NaN", "--out",
        str(w / "b.json")], words=("alpha",), gone=no("b.json")),
    Case("op_debias_set_epochs", P5, "re debias-grid --set epochs=3", lambda fx, w: fx.debias_args(
        w / "d", "--set", "epochs=3"), words=("--set epochs", "--epochs"), gone=no("d")),
    Case("op_retries_negative", P5, "re debias-grid --retries -1", lambda fx, w: fx.debias_args(
        w / "d", "--retries", "-1"), words=("--retries",), gone=no("d")),
    Case("op_resamples_one_grid", P5, "re grid --resamples 1", lambda fx, w: _grid(fx, w, "--resamples", "1"),
         words=("--resamples",), gone=no("g")),
    Case("op_resamples_one_debias", P5, "re debias-grid --resamples 1", lambda fx, w: fx.debias_args(
        w / "d", "--resamples", "1"), words=("--resamples",), gone=no("d")),
    Case("op_seed_negative_re_train", P5, "re train --seed -1", lambda fx, w: _train(fx, w, "--seed=-1"),
         words=("--seed",), gone=no("r")),
    Case("op_seeds_spaces", P5, "re grid --seeds ' 1, 2'", lambda fx, w: fx.grid_args(
        fx.copy("grid", w / "g"), seeds=" 1, 2"), expect="ok", check=_results_same("grid", "g"),
         note="spaces around items read as the same seeds"),
    Case("op_set_unknown_field", P5, "re grid --set lrr=0.1", lambda fx, w: _grid(fx, w, "--set", "lrr=0.1"),
         words=("lrr",), gone=no("g")),
    Case("op_set_no_equals", P5, "re grid --set lr", lambda fx, w: _grid(fx, w, "--set", "lr"), words=("--set",),
         gone=no("g")),
    Case("op_set_epochs_zero", P5, "re grid --set epochs=0", lambda fx, w: _grid(fx, w, "--set", "epochs=0"),
         words=("epochs",), gone=no("g")),
    Case("op_set_encoder_conflict", P5, "re grid --set encoder=pcnn (beside --encoders)", lambda fx, w: _grid(
        fx, w, "--set", "encoder=\"pcnn\""), words=("encoder",), gone=no("g")),
    Case("op_set_wrong_type", P5, "re debias-grid --set hidden=\"8\"", lambda fx, w: fx.debias_args(
        w / "d", "--set", "hidden=\"8\""), words=("hidden",), gone=no("d")),
    Case("op_kge_dim_zero", P5, "kge train --dim 0", lambda fx, w: ["kge", "train", str(fx["graph"]), "--out",
                                                                  str(w / "e"), "--dim", "0"],
         words=("--dim",), gone=no("e")),
    Case("op_bias_alpha_negative", P5, "kge bias --option alpha=-1 (Fisher's step)", lambda fx, w: [
        "kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "fisher", "--option", "alpha=-1", "--out",
        str(w / "b.json")], words=("alpha", "> 0"), gone=no("b.json")),
    Case("op_bias_unknown_value", P5, "kge bias --a nobody", lambda fx, w: [
        "kge", "bias", str(fx["emb"]), str(fx["graph"]), "--measure", "fisher", "--a", "nobody", "--out",
        str(w / "b.json")], words=("nobody",), gone=no("b.json")),
    Case("op_report_top_fraction", P5, "kge report --top 1.5", lambda fx, w: [
        "kge", "report", str(fx["bias"]), "--top", "1.5", "--out", str(w / "rep")], words=("--top",),
         gone=no("rep")),
    Case("op_groups_edges_falling", P5, "data groups --era-edges 1900,1850", lambda fx, w: [
        "data", "groups", "--dataset", str(fx["bench"]), "--era-edges", "1900,1850"], words=("--era-edges",)),
    Case("op_groups_edges_nan", P5, "data groups --era-edges 1850,nan", lambda fx, w: [
        "data", "groups", "--dataset", str(fx["bench"]), "--era-edges", "1850,nan"], words=("nan",)),
    Case("op_build_shares_over_one", P5, "data build --train 0.9 --validation 0.2", lambda fx, w: [
        "data", "build", "--dbpedia", str(write(w / "x.nt", "")), "--wikipedia", str(write(w / "x.xml", "")),
        "--out", str(w / "b"), "--train", "0.9", "--validation", "0.2", "--test", "0.1"],
         words=("sum to 1.200",), gone=no("b")),
    Case("op_build_missing_dump", P5, "data build --dbpedia missing", lambda fx, w: [
        "data", "build", "--dbpedia", str(w / "none.nt"), "--wikipedia", str(w / "none.xml"), "--out", str(w / "b")],
         words=("none.nt",), gone=no("b")),
    Case("op_info_not_a_benchmark", P5, "data info --dataset an empty folder", lambda fx, w: (
        (w / "e").mkdir(), ["data", "info", "--dataset", str(w / "e")])[1], words=("e",)),
    # config files
    Case("cfg_yaml_bool_epochs", P5, "re train --config epochs: yes", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "epochs: yes\n"))), words=("epochs",), gone=no("r")),
    Case("cfg_yaml_huge_float", P5, "re train --config lr: 1e400", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "lr: 1e400\n"))), words=("lr",), gone=no("r")),
    Case("cfg_yaml_list_top", P5, "re train --config a YAML list", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "- epochs: 1\n"))), words=("c.yaml",), gone=no("r")),
    Case("cfg_yaml_empty", P5, "re train --config an empty YAML file", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "# all defaults\n"))), expect="ok",
         check=lambda fx, w, o: None if (w / "r" / "DONE").exists() else "partial: no DONE",
         note="a file of comments sets no field (documented: an empty mapping)"),
    Case("cfg_yaml_tab", P5, "re train --config with a tab indent", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "epochs:\n\t1\n"))), words=("c.yaml",), gone=no("r")),
    Case("cfg_yaml_unknown_key", P5, "kge train --config unknown key", lambda fx, w: [
        "kge", "train", str(fx["graph"]), "--out", str(w / "e"), "--config", str(cfg_file(w, "dimm: 4\n"))],
         words=("dimm",), gone=no("e")),
    Case("cfg_yaml_null_field", P5, "re train --config epochs: null", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "epochs: null\n"))), words=("epochs",), gone=no("r")),
    Case("cfg_yaml_anchor_merge_twice", P5, "re train --config a merge key overriding a key", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "base: &b {epochs: 1}\n<<: *b\n"))), words=("base",), gone=no("r")),
    Case("cfg_json_trailing_comma", P5, "re train --config JSON with a trailing comma", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, '{"epochs": 1,}', "c.json"))), words=("c.json",), gone=no("r")),
    Case("cfg_json_bom", P5, "re train --config JSON with a byte-order mark", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, '\ufeff{"epochs": 1}', "c.json"))), expect="ok",
         check=lambda fx, w, o: None if (w / "r" / "DONE").exists() else "partial: no DONE"),
    Case("cfg_txt_extension", P5, "re train --config c.txt", lambda fx, w: _train(
        fx, w, "--config", str(cfg_file(w, "epochs: 1\n", "c.txt"))), words=("c.txt",), gone=no("r")),
    Case("cfg_directory", P5, "re train --config a folder", lambda fx, w: _train(fx, w, "--config", str(w)),
         words=("--config",), gone=no("r")),
    Case("cfg_yaml_string_number", P5, "kge train --config dim: '4'", lambda fx, w: [
        "kge", "train", str(fx["graph"]), "--out", str(w / "e"), "--config", str(cfg_file(w, "dim: '4'\n"))],
         words=("dim",), gone=no("e")),
    Case("cfg_data_build_dup_key", P5, "data build --config a key twice", lambda fx, w: [
        "data", "build", "--config", str(cfg_file(w, "seed: 1\nseed: 2\n")), "--out", str(w / "b")],
         words=("seed", "twice"), gone=no("b")),
    Case("cfg_run_config_wrong_version", P5, "re train --config a run's config.json", lambda fx, w: [
        "re", "train", str(w / "r"), "--config", str(fx["run0"] / "config.json"), "--quiet", "--threads", "1"],
         expect="ok", check=lambda fx, w, o: None if (w / "r" / "DONE").exists() else "partial: no DONE",
         note="a run's own config.json trains the same run again"),
    # the executor
    Case("ex_processes_two_workers", P5, "re grid --executor processes --workers 2", lambda fx, w: _no_threads(
        fx.grid_args(w / "g", "--executor", "processes", "--workers", "2", "--threads-per-run", "1")), expect="ok",
         timeout=240, check=lambda fx, w, o: _same_runs(fx, w)),
]


def _scored_docs_bags(fx, w):
    """The scoring guide's recipe (bags from the release's rows), run with an oracle for 'your system'."""
    text = (REPO / "docs" / "guide" / "scoring.md").read_text()
    code = text.split("## Bags from the dataset's rows")[1].split("```python")[1].split("```")[0]
    code = code.replace('my_system([r["text"] for r in rows], head, tail)', '[RELATIONS[rows[0]["relation"]]]')
    (w / "mine").mkdir()
    cwd = os.getcwd()
    os.chdir(w)
    try:
        exec(compile(code, "scoring.md", "exec"), {})   # noqa: S102 - our own docs' example
    finally:
        os.chdir(cwd)
    return ["re", "score", str(w / "mine"), "--resamples", "100"]


def _no_threads(args):
    i = args.index("--threads")
    return args[:i] + args[i + 2:]


def _same_runs(fx, w):
    """A grid on processes holds the same numbers as the serial fixture."""
    return None if same_results(w / "g" / "results.json", fx["grid"] / "results.json") else \
        "silently wrong: results differ from the serial grid"


# ---------------------------------------------------------------- newcomer
N_CASES = [
    Case("nc_version", N, "wgb --version", lambda fx, w: ["--version"], expect="ok", check=out_has("wgb")),
    Case("nc_score_run_folder", N, "re score RUN (not RUN/predictions)", lambda fx, w: [
        "re", "score", str(fx["run0"]), "--resamples", "100"], expect="ok", check=out_has("micro F1")),
    Case("nc_score_docs_bags", N, "the scoring guide's recipe: bags from the release's rows, scored", _scored_docs_bags,
         expect="ok", check=out_has("mine", "1.0000"), note="the guide's code runs; every test bag scored"),
    Case("nc_info_default", N, "data info (the embedded release)", lambda fx, w: ["data", "info"], expect="ok",
         check=out_has("female_test")),
    Case("nc_train_typo_encoder", N, "re train --encoder cnnn", lambda fx, w: _train(fx, w, "--encoder", "cnnn"),
         words=("cnnn",), gone=no("r")),
    Case("nc_kge_report_md", N, "kge report on the fixture's bias.json", lambda fx, w: [
        "kge", "report", str(fx["bias"]), "--out", str(w / "rep")], expect="ok",
         check=lambda fx, w, o: None if any((w / "rep").glob("*.md")) else "partial: no markdown"),
    Case("nc_crossfit_train_all_folds", N, "re train --protocol crossfit --folds 2 (the guide's command)",
         lambda fx, w: crossfit_re(fx, w / "r", "--folds", "2"), expect="ok",
         check=lambda fx, w, o: None if all((w / "r" / f"fold{k}" / "DONE").exists() for k in (0, 1)) else
         "partial: a fold unfinished"),
]

CASES_B = P4_CASES + P5_CASES + N_CASES
