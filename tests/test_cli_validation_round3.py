"""Bad input, round 3 (issue 40, pattern 5): one validation path for the options commands share.

Table-driven like tests/test_hardening_round2.py: every row is one command line that must be
refused with exit code ``code`` and a one-line ``Error:`` holding ``words``, never a traceback,
before any work (the paths a row names must not exist afterwards: no run folder, no
``config.json`` that would block the corrected command). The same value given to another command
that shares the option is refused in the same words: the rows come in families (``alpha_*``,
``folds_*``, ``seeds_*``, ...). Beside the table: the same inputs accepted when they are right,
the walk over every command that keeps each option on its shared type, a full disk, and a
scheduler that does not answer.
"""
from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from support.hardening import kge_fixture, relext_fixture
from wgb.cli import cli


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    run = relext_fixture(root)
    return {**kge_fixture(root), "run": run, "data": Path(json.loads((run / "config.json").read_text())["dataset"])}


def _re_train(tmp, fx, *extra):
    """A tiny `re train` whose options are all valid but ``extra``."""
    return ["re", "train", str(tmp / "r"), "--dataset", str(fx["data"]), "--encoder", "cnn", "--epochs", "1",
            "--word-dim", "8", "--hidden", "8", "--max-length", "30", "--batch-size", "8",
            "--cache-dir", str(tmp / "w2v"), "--threads", "1", "--quiet", *extra]


def _grid(tmp, fx, *extra):
    return ["re", "grid", "--out", str(tmp / "g"), "--encoders", "cnn", "--selectors", "attention", *extra]


def _kge_train(tmp, fx, *extra):
    return ["kge", "train", str(fx["graph"]), "--out", str(tmp / "o"), "--dim", "4", "--epochs", "1",
            "--batch-size", "32", "--no-test", "--quiet", *extra]


def _run(tmp, fx, *extra):
    return ["run", "--out", str(tmp / "o"), "--profile", "tiny", "--quiet", *extra]


def _loop(tmp) -> Path:
    loop = tmp / "loop"
    loop.symlink_to(loop)
    return loop


def _bench_with_a_trained_test_person(tmp, fx) -> Path:
    """The fixture's benchmark with one male_test person's rows also in train."""
    from datasets import DatasetDict, concatenate_datasets, load_from_disk

    ds = load_from_disk(str(fx["data"]))
    person = ds["male_test"][0]["entity_id"]
    rows = ds["male_test"].filter(lambda r: r["entity_id"] == person)
    out = DatasetDict({**ds, "train": concatenate_datasets([ds["train"], rows.cast(ds["train"].features)])})
    out.save_to_disk(str(tmp / "bench"))
    return tmp / "bench"


# one row: (name, setup(tmp, fx) -> (args, paths that must not exist), exit code, words of the message)
CASES = [
    # --alpha / --confidence / --min-score: finite, in range (nan passes click.FloatRange's bounds)
    ("alpha_nan_re_score", lambda t, f: (["re", "score", str(f["run"] / "predictions"), "--alpha", "nan"], []), 2,
     ["--alpha", "'nan' is not a finite number", "0<x<1"]),
    ("alpha_inf_re_score", lambda t, f: (["re", "score", str(f["run"] / "predictions"), "--alpha", "inf"], []), 2,
     ["--alpha", "'inf' is not a finite number"]),
    ("alpha_one_re_score", lambda t, f: (["re", "score", str(f["run"] / "predictions"), "--alpha", "1"], []), 2,
     ["--alpha", "0<x<1"]),
    ("confidence_nan_re_score", lambda t, f: (["re", "score", str(f["run"] / "predictions"), "--confidence",
                                               "nan"], []), 2, ["--confidence", "'nan' is not a finite number"]),
    ("confidence_nan_re_eval", lambda t, f: (["re", "eval", str(f["run"]), "--confidence", "nan"], []), 2,
     ["--confidence", "'nan' is not a finite number"]),
    ("confidence_nan_re_grid", lambda t, f: (_grid(t, f, "--confidence", "nan"), [t / "g"]), 2,
     ["--confidence", "'nan' is not a finite number"]),
    ("min_score_nan_re_extract", lambda t, f: (["re", "extract", str(f["run"]), "--split", "male_test",
                                                "--min-score", "nan", "--out", str(t / "x.jsonl")], [t / "x.jsonl"]),
     2, ["--min-score", "'nan' is not a finite number"]),
    ("min_score_nan_kge_train", lambda t, f: (_kge_train(t, f, "--min-score", "nan"), [t / "o"]), 2,
     ["--min-score", "'nan' is not a finite number"]),
    # --top / --min-count: whole numbers >= 0
    ("top_negative_kge_report", lambda t, f: (["kge", "report", str(_bias(t)), "--top", "-5", "--out",
                                               str(t / "rep")], [t / "rep"]), 2, ["--top", "-5", "x>=0"]),
    ("min_count_negative_kge_report", lambda t, f: (["kge", "report", str(_bias(t)), "--min-count", "-1", "--out",
                                                     str(t / "rep")], [t / "rep"]), 2, ["--min-count", "-1", "x>=0"]),
    ("min_count_zero_wgb_run", lambda t, f: (_run(t, f, "--min-count", "0"), [t / "o"]), 2,
     ["--min-count", "x>=1"]),
    # --folds under the test protocol: refused by every command, in the same words
    ("folds_test_protocol_re_train", lambda t, f: (_re_train(t, f, "--protocol", "test", "--folds", "3"), [t / "r"]),
     2, ["--folds 3 applies to --protocol crossfit only"]),
    ("folds_test_protocol_wgb_run", lambda t, f: (_run(t, f, "--protocol", "test", "--folds", "3"), [t / "o"]), 2,
     ["--folds 3 applies to --protocol crossfit only"]),
    ("folds_default_protocol_wgb_run", lambda t, f: (_run(t, f, "--folds", "5"), [t / "o"]), 2,
     ["--folds 5 applies to --protocol crossfit only"]),
    ("folds_test_protocol_re_grid", lambda t, f: (_grid(t, f, "--protocol", "test", "--folds", "3"), [t / "g"]), 2,
     ["--folds 3 applies to --protocol crossfit only"]),
    ("folds_test_protocol_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--protocol", "test",
                                                       "--folds", "5"], [t / "d"]), 2,
     ["--folds 5 applies to --protocol crossfit only"]),
    # --seeds: the item refused is named
    ("seeds_empty_item_wgb_run", lambda t, f: (_run(t, f, "--seeds", "0,,1"), [t / "o"]), 2,
     ["--seeds", "item 2 of '0,,1' is empty"]),
    ("seeds_empty_item_re_grid", lambda t, f: (_grid(t, f, "--seeds", "0,,1"), [t / "g"]), 2,
     ["--seeds", "item 2 of '0,,1' is empty"]),
    ("seeds_empty_item_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--seeds", "0,,1"], [t / "d"]),
     2, ["--seeds", "item 2 of '0,,1' is empty"]),
    ("seeds_trailing_comma_re_grid", lambda t, f: (_grid(t, f, "--seeds", "0,1,"), [t / "g"]), 2,
     ["item 3 of '0,1,' is empty"]),
    ("seeds_half_range_wgb_run", lambda t, f: (_run(t, f, "--seeds", "1-"), [t / "o"]), 2,
     ["'1-' in '1-' is not a seed"]),
    ("seeds_half_range_re_grid", lambda t, f: (_grid(t, f, "--seeds", "0,1-"), [t / "g"]), 2,
     ["'1-' in '0,1-' is not a seed"]),
    ("seeds_negative_wgb_run", lambda t, f: (_run(t, f, "--seeds", "0,-1"), [t / "o"]), 2,
     ["'-1' in '0,-1' is a negative seed"]),
    ("seeds_negative_re_grid", lambda t, f: (_grid(t, f, "--seeds=-2"), [t / "g"]), 2,
     ["'-2' in '-2' is a negative seed"]),
    ("seeds_word_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--seeds", "0,x"], [t / "d"]), 2,
     ["'x' in '0,x' is not a seed"]),
    ("seeds_twice_wgb_run", lambda t, f: (_run(t, f, "--seeds", "0-2,1"), [t / "o"]), 2,
     ["seeds repeat: 1 twice in '0-2,1'"]),
    ("seeds_twice_re_grid", lambda t, f: (_grid(t, f, "--seeds", "3,3"), [t / "g"]), 2,
     ["seeds repeat: 3 twice in '3,3'"]),
    ("seeds_falling_range_re_grid", lambda t, f: (_grid(t, f, "--seeds", "4-2"), [t / "g"]), 2,
     ["empty seed range '4-2'"]),
    # --scheduler: checked while the command line is parsed
    ("scheduler_empty_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler", ""), [t / "g"]), 2,
     ["scheduler address is empty", "leave --scheduler out for a local cluster"]),
    ("scheduler_empty_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--executor", "dask",
                                                   "--scheduler", ""], [t / "d"]), 2, ["scheduler address is empty"]),
    ("scheduler_empty_wgb_run", lambda t, f: (_run(t, f, "--executor", "dask", "--scheduler", " "), [t / "o"]), 2,
     ["scheduler address is empty"]),
    ("scheduler_port_out_of_range_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler",
                                                               "tcp://127.0.0.1:99999"), [t / "g"]), 2,
     ["scheduler 'tcp://127.0.0.1:99999': port 99999 is not a port (1-65535)"]),
    ("scheduler_port_zero_wgb_run", lambda t, f: (_run(t, f, "--executor", "dask", "--scheduler", "localhost:0"),
                                                  [t / "o"]), 2, ["port 0 is not a port"]),
    ("scheduler_bad_scheme_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler", "http://h:8786"),
                                                   [t / "g"]), 2, ["unknown scheme 'http'"]),
    ("scheduler_missing_file_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler",
                                                          str(t / "s.json")), [t / "g"]), 2,
     ["neither an address", "nor an existing scheduler JSON file"]),
    ("scheduler_without_dask_re_grid", lambda t, f: (_grid(t, f, "--scheduler", "tcp://h:8786"), [t / "g"]), 2,
     ["needs the dask executor"]),
    # a key given twice in a config file
    ("yaml_key_twice_re_train", lambda t, f: (_re_train(t, f, "--config", str(_dup_yaml(t))), [t / "r"]), 2,
     ["dup.yaml:3: key 'epochs' given twice (first on line 1)"]),
    ("yaml_key_twice_kge_train", lambda t, f: (_kge_train(t, f, "--config", str(_dup_yaml(t))), [t / "o"]), 2,
     ["dup.yaml:3: key 'epochs' given twice"]),
    ("json_key_twice_re_train", lambda t, f: (_re_train(t, f, "--config", str(_dup_json(t))), [t / "r"]), 2,
     ["dup.json:3: key 'lr' given twice"]),
    # non-finite hyperparameters: refused before the run folder (and its config.json) exists
    ("lr_inf_re_train", lambda t, f: (_re_train(t, f, "--lr", "inf"), [t / "r"]), 2,
     ["--lr", "'inf' is not a finite number"]),
    ("lr_nan_re_train", lambda t, f: (_re_train(t, f, "--lr", "nan"), [t / "r"]), 2, ["'nan' is not a finite number"]),
    ("weight_decay_nan_re_train", lambda t, f: (_re_train(t, f, "--weight-decay", "nan"), [t / "r"]), 2,
     ["--weight-decay", "'nan' is not a finite number"]),
    ("dropout_inf_re_train", lambda t, f: (_re_train(t, f, "--dropout", "-inf"), [t / "r"]), 2,
     ["--dropout", "'-inf' is not a finite number"]),
    ("lr_inf_in_yaml_re_train", lambda t, f: (_re_train(t, f, "--config", str(_yaml(t, "lr: .inf\n"))), [t / "r"]),
     2, ["c.yaml: field 'lr' must be a finite number, got inf"]),
    ("lr_nan_in_json_re_train", lambda t, f: (_re_train(t, f, "--config", str(_yaml(t, '{"dropout": NaN}', "c.json"))),
                                              [t / "r"]), 2, ["field 'dropout' must be a finite number, got nan"]),
    ("lr_infinity_set_re_grid", lambda t, f: (_grid(t, f, "--set", "lr=Infinity", "--seeds", "0"), [t / "g"]), 1,
     ["'lr' must be a finite number"]),
    ("lr_inf_kge_train", lambda t, f: (_kge_train(t, f, "--lr", "inf"), [t / "o"]), 2,
     ["--lr", "'inf' is not a finite number"]),
    ("margin_nan_kge_train", lambda t, f: (_kge_train(t, f, "--margin", "nan"), [t / "o"]), 2,
     ["--margin", "'nan' is not a finite number"]),
    ("tol_nan_kge_du", lambda t, f: (["kge", "du-debias", str(f["emb"]), str(f["graph"]), "--occupation", "nurse",
                                      "--strategy", "to-target", "--tol", "nan", "--out", str(t / "du.json")],
                                     [t / "du.json"]), 2, ["--tol", "'nan' is not a finite number"]),
    ("train_share_nan_data_build", lambda t, f: (["data", "build", "--out", str(t / "b"), "--train", "nan"], [t / "b"]),
     2, ["--train", "'nan' is not a finite number"]),
    # a test person who is also a training person, under the test protocol
    ("test_person_in_train_re_train", lambda t, f: (_re_train(t, f, "--dataset", str(_bench_with_a_trained_test_person(
        t, f))), [t / "r"]), 1, ["is in two splits (train, male_test)",
                                 "under the test protocol a test person must not be a training person"]),
    # a symlink loop (or a link to nowhere) as the output
    ("out_symlink_loop_kge_train", lambda t, f: (["kge", "train", str(f["graph"]), "--out", str(_loop(t))],
                                                 []), 2, ["loop is a symlink loop"]),
    ("out_symlink_loop_re_train", lambda t, f: (["re", "train", str(_loop(t) / "r")], []), 2,
     ["loop is a symlink loop"]),
    ("out_symlink_loop_wgb_run", lambda t, f: (["run", "--out", str(_loop(t))], []), 2, ["loop is a symlink loop"]),
    ("out_symlink_loop_re_grid", lambda t, f: (["re", "grid", "--out", str(_loop(t))], []), 2,
     ["loop is a symlink loop"]),
    ("out_dangling_link_kge_bias", lambda t, f: (["kge", "bias", str(f["emb"]), str(f["graph"]), "--out",
                                                  str(_dangling(t))], []), 2, ["which does not exist"]),
    # kge bias --measure all: a wrong setting fails before the first measure runs
    ("bias_all_option_nan", lambda t, f: (["kge", "bias", str(f["emb"]), str(f["graph"]), "--measure", "all", "--a",
                                           "male", "--b", "female", "--option", "ks=nan", "--out",
                                           str(t / "b.json")], [t / "b.json"]), 1, ["ks must be whole numbers"]),
    # tour round 3: one type per kind of option, one check per shared rule
    ("fold_seed_test_protocol_re_train", lambda t, f: (_re_train(t, f, "--fold-seed", "3"), [t / "r"]), 2,
     ["--fold-seed 3 applies to --protocol crossfit only"]),
    ("fold_seed_test_protocol_wgb_run", lambda t, f: (_run(t, f, "--fold-seed", "1"), [t / "o"]), 2,
     ["--fold-seed 1 applies to --protocol crossfit only"]),
    ("fold_seed_negative_re_grid", lambda t, f: (_grid(t, f, "--protocol", "crossfit", "--fold-seed=-1"), [t / "g"]),
     2, ["--fold-seed", "-1 is not in the range 0<=x<=4294967295"]),
    ("seed_negative_re_train", lambda t, f: (_re_train(t, f, "--seed=-1"), [t / "r"]), 2,
     ["--seed", "-1 is not in the range 0<=x<=4294967295"]),
    ("bootstrap_seed_negative_re_eval", lambda t, f: (["re", "eval", str(f["run"]), "--bootstrap-seed=-2"], []), 2,
     ["--bootstrap-seed", "-2 is not in the range"]),
    ("seed_too_big_kge_train", lambda t, f: (_kge_train(t, f, "--seed", str(2**32)), [t / "o"]), 2, ["--seed"]),
    ("resamples_5_re_grid", lambda t, f: (_grid(t, f, "--resamples", "5"), [t / "g"]), 2,
     ["--resamples", "5 is not in the range x>=100"]),
    ("resamples_1_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--resamples", "1"], [t / "d"]), 2,
     ["--resamples", "x>=100"]),
    ("resamples_5_re_eval", lambda t, f: (["re", "eval", str(f["run"]), "--resamples", "5"], []), 2,
     ["--resamples", "x>=100"]),
    ("threads_and_threads_per_run_re_grid", lambda t, f: (_grid(t, f, "--threads", "1", "--threads-per-run", "2"),
                                                          [t / "g"]), 2,
     ["--threads 1 and --threads-per-run 2 both set each run's torch threads"]),
    ("set_epochs_re_grid", lambda t, f: (_grid(t, f, "--set", "epochs=0", "--seeds", "0"), [t / "g"]), 1,
     ["--set epochs=...: the study sets 'epochs' for each run; use --epochs"]),
    ("set_fold_re_grid", lambda t, f: (_grid(t, f, "--protocol", "crossfit", "--set", "fold=0", "--seeds", "0"),
                                       [t / "g"]), 1, ["the study sets 'fold' for each run"]),
    ("set_encoder_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--set", "encoder=\"cnn\"",
                                               "--seeds", "0"], [t / "d"]), 1,
     ["--set encoder=...", "use --encoder"]),
    ("set_unknown_field_re_grid", lambda t, f: (_grid(t, f, "--set", "lrr=0.1", "--seeds", "0"), [t / "g"]), 1,
     ["unknown training field 'lrr' (--set lrr=...)"]),
    ("fisher_step_negative_kge_bias", lambda t, f: (["kge", "bias", str(f["emb"]), str(f["graph"]), "--measure",
                                                     "fisher", "--option", "alpha=-1", "--out", str(t / "b.json")],
                                                    [t / "b.json"]), 1, ["alpha", "must be a number > 0, got -1"]),
    ("scheduler_nobody_listening_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler",
                                                              "tcp://127.0.0.1:1"), [t / "g"]), 1,
     ["no Dask scheduler answered at tcp://127.0.0.1:1"]),
    ("scheduler_file_without_address_re_grid", lambda t, f: (_grid(t, f, "--executor", "dask", "--scheduler", str(
        _yaml(t, '{"id": 1}', "s.json"))), [t / "g"]), 1, ["s.json: a scheduler JSON file names its 'address'"]),
    ("out_symlink_loop_debias_grid", lambda t, f: (["re", "debias-grid", str(_loop(t))], []), 2,
     ["loop is a symlink loop"]),
    ("runs_dir_symlink_loop_debias_grid", lambda t, f: (["re", "debias-grid", str(t / "d"), "--runs-dir",
                                                         str(_loop(t))], [t / "d"]), 2, ["loop is a symlink loop"]),
    ("out_symlink_loop_embedding_bias", lambda t, f: (["re", "embedding-bias", str(_loop(t))], []), 2,
     ["loop is a symlink loop"]),
    ("out_symlink_loop_debias_data", lambda t, f: (["re", "debias-data", "cda", str(_loop(t))], []), 2,
     ["loop is a symlink loop"]),
    ("bias_all_option_unknown", lambda t, f: (["kge", "bias", str(f["emb"]), str(f["graph"]), "--measure", "all",
                                               "--option", "kz=10", "--out", str(t / "b.json")], [t / "b.json"]), 2,
     ["['kz'] belong to none of the measures"]),
]


def _bias(tmp: Path) -> Path:
    row = {"measure": "fisher", "model": "transe", "sensitive_relation": "gender", "a": "male", "b": "female",
           "target_relation": "profession", "item": "nurse", "score": 0.25, "count_a": 3, "count_b": 9, "extra": {}}
    (tmp / "b.json").write_text(json.dumps({"results": [{"measure": "fisher", "rows": [row]}]}))
    return tmp / "b.json"


def _yaml(tmp: Path, text: str, name: str = "c.yaml") -> Path:
    (tmp / name).write_text(text)
    return tmp / name


def _dup_yaml(tmp: Path) -> Path:
    return _yaml(tmp, "epochs: 1\nlr: 0.1\nepochs: 5\n", "dup.yaml")


def _dup_json(tmp: Path) -> Path:
    return _yaml(tmp, '{"lr": 0.1,\n "epochs": 1,\n "lr": 0.5}\n', "dup.json")


def _dangling(tmp: Path) -> Path:
    (tmp / "nowhere").symlink_to(tmp / "missing" / "b.json")
    return tmp / "nowhere"


@pytest.mark.parametrize("name,setup,code,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, setup, code, words, fx, tmp_path, monkeypatch):
    monkeypatch.delenv("WGB_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)    # a default output lands here, never in the checkout
    args, gone = setup(tmp_path, fx)
    res = CliRunner().invoke(cli, args)
    out = res.output
    assert res.exit_code == code, out
    assert isinstance(res.exception, SystemExit), f"uncaught {res.exception!r}"
    assert "Traceback" not in out
    message = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert len(message) == 1, out
    for w in words:
        assert w in message[0], f"{w!r} not in {message[0]!r}"
    for p in gone:
        assert not Path(p).exists(), f"{p} was left behind"


def test_the_shared_options_give_the_same_message_in_every_command(fx, tmp_path, monkeypatch):
    """One family, one message: the words after the option name are identical across commands."""
    monkeypatch.chdir(tmp_path)

    def message(args):
        res = CliRunner().invoke(cli, args)
        line = [ln for ln in res.output.splitlines() if ln.startswith("Error:")][0]
        return res.exit_code, line.split(":", 2)[-1].strip()

    folds = {message(_re_train(tmp_path, fx, "--protocol", "test", "--folds", "3")),
             message(_grid(tmp_path, fx, "--protocol", "test", "--folds", "3")),
             message(_run(tmp_path, fx, "--protocol", "test", "--folds", "3")),
             message(["re", "debias-grid", str(tmp_path / "d"), "--protocol", "test", "--folds", "3"])}
    assert len(folds) == 1, folds
    seeds = {message(_run(tmp_path, fx, "--seeds", "0,,1")), message(_grid(tmp_path, fx, "--seeds", "0,,1")),
             message(["re", "debias-grid", str(tmp_path / "d"), "--seeds", "0,,1"])}
    assert len(seeds) == 1, seeds
    sched = {message(_run(tmp_path, fx, "--executor", "dask", "--scheduler", "")),
             message(_grid(tmp_path, fx, "--executor", "dask", "--scheduler", "")),
             message(["re", "debias-grid", str(tmp_path / "d"), "--executor", "dask", "--scheduler", ""])}
    assert len(sched) == 1, sched


def _commands(group: click.Group, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))
        else:
            yield " ".join(prefix + (name,)), cmd


def test_every_float_option_of_every_command_refuses_nan_and_inf():
    """The walk that keeps the path single: a float option on plain ``float`` or
    ``click.FloatRange`` (which lets nan through) fails here, whichever command adds it."""
    from wgb.cli_types import ALPHA, COUNT, RESAMPLES, SEED, SEEDS, FiniteFloat
    from wgb.cli_protocol import seeds_option

    seen = {"float": 0, "alpha": 0, "seeds": 0, "counts": 0, "seed": 0, "resamples": 0}
    for name, cmd in _commands(cli):
        for p in cmd.params:
            where = f"wgb {name} {p.opts[0]}"
            if isinstance(p.type, (click.types.FloatParamType, click.FloatRange)):
                assert isinstance(p.type, FiniteFloat), f"{where}: {p.type!r} lets nan/inf through"
                seen["float"] += 1
            if p.opts[0] in ("--alpha", "--confidence"):
                assert p.type is ALPHA, where
                seen["alpha"] += 1
            if p.opts[0] == "--seeds":
                assert p.type is SEEDS or p.callback is seeds_option, where
                seen["seeds"] += 1
            if p.opts[0] in ("--top", "--min-count"):
                assert isinstance(p.type, click.IntRange) and p.type.min is not None and p.type.min >= 0, where
                seen["counts"] += 1
            if p.opts[0] in ("--seed", "--fold-seed", "--bootstrap-seed"):
                assert p.type is SEED, f"{where}: {p.type!r} (a negative seed was numpy's error, naming no option)"
                seen["seed"] += 1
            if p.opts[0] == "--resamples":
                assert p.type is RESAMPLES, f"{where}: {p.type!r} (re score asked for 100, the grids for 1)"
                seen["resamples"] += 1
    assert seen["float"] >= 15 and seen["alpha"] >= 4 and seen["seeds"] >= 3 and seen["counts"] >= 3, seen
    assert seen["seed"] >= 10 and seen["resamples"] >= 4, seen
    assert COUNT.min == 0


@pytest.mark.parametrize("value,seeds", [("0,1,2", [0, 1, 2]), ("0-4", [0, 1, 2, 3, 4]), ("3, 0-1", [3, 0, 1]),
                                         ("7", [7]), ("0-0", [0])])
def test_good_seeds_still_parse(value, seeds):
    from wgb.cli_protocol import parse_seeds

    assert parse_seeds(value) == seeds


def test_good_values_pass_the_shared_types():
    from wgb.cli_types import ALPHA, FINITE, NONNEG_FLOAT

    assert ALPHA.convert("0.05", None, None) == 0.05
    assert FINITE.convert("-1e300", None, None) == -1e300
    assert NONNEG_FLOAT.convert(0, None, None) == 0.0


def test_a_byte_order_mark_and_yaml_merge_keys_read(tmp_path):
    """Tour round 3: a JSON file saved with a BOM was 'malformed JSON'; a YAML merge key ('<<: *a')
    was 'malformed YAML' (the repeated-key loader constructed the merge key itself)."""
    from wgbcore.config import read_config_file

    (tmp_path / "c.json").write_text('\ufeff{"epochs": 2}', encoding="utf-8")
    assert read_config_file(tmp_path / "c.json") == {"epochs": 2}
    (tmp_path / "m.yaml").write_text("base: &b {epochs: 1, lr: 0.5}\nrun:\n  <<: *b\n  epochs: 3\n")
    assert read_config_file(tmp_path / "m.yaml")["run"] == {"epochs": 3, "lr": 0.5}
    (tmp_path / "d.yaml").write_text("run:\n  <<: {lr: 0.5}\n  epochs: 1\n  epochs: 2\n")
    with pytest.raises(ValueError, match=r"d.yaml:4: key 'epochs' given twice"):
        read_config_file(tmp_path / "d.yaml")


def test_a_config_file_without_repeated_keys_still_reads(tmp_path):
    from wgbcore.config import read_config_file

    (tmp_path / "c.yaml").write_text("epochs: 1\nmodel_kwargs: {p_norm: 1}\nother: {epochs: 2}\n")
    assert read_config_file(tmp_path / "c.yaml") == {"epochs": 1, "model_kwargs": {"p_norm": 1},
                                                     "other": {"epochs": 2}}
    (tmp_path / "c.json").write_text('{"a": {"x": 1}, "b": {"x": 2}}')
    assert read_config_file(tmp_path / "c.json") == {"a": {"x": 1}, "b": {"x": 2}}


def test_a_test_person_in_train_trains_under_crossfit_no_more_than_before():
    """The check is the one cross-fitting makes: the same dataset is refused there, naming the
    person, so the test protocol is now no more lenient than cross-fitting."""
    from relext.protocols.crossfit import check_test_persons_unseen, persons
    from support.relext_data import tiny_dataset
    from datasets import DatasetDict, concatenate_datasets

    ds = tiny_dataset(n_train=6, n_eval=3)
    check_test_persons_unseen(ds)    # the fixture's own benchmark passes
    person = ds["female_test"][0]["entity_id"]
    rows = ds["female_test"].filter(lambda r: r["entity_id"] == person)
    bad = DatasetDict({**ds, "validation": concatenate_datasets([ds["validation"], rows])})
    for check in (check_test_persons_unseen, persons):
        with pytest.raises(ValueError, match=f"person '{person}' is in two splits \\(validation, female_test\\)"):
            check(bad)


# ------------------------------------------------------------------------------ a full disk
def _full_disk_after(monkeypatch, name_part: str):
    """``os.fdopen`` files whose name holds ``name_part`` raise ENOSPC on write (what a full disk does)."""
    import wgbcore.atomicio as aio

    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, k):
            return getattr(self.fh, k)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    def fdopen(fd, *a, **k):
        fh = real(fd, *a, **k)
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        return Full(fh) if name_part in os.path.basename(name) else fh

    monkeypatch.setattr(aio.os, "fdopen", fdopen)


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc to name the open file")
@pytest.mark.parametrize("command,target", [("re", ".config.json."), ("re", ".checkpoint.pt."),
                                            ("kge", ".config.json."), ("kge", ".checkpoint.pt.")])
def test_a_full_disk_is_one_line_naming_the_file(command, target, fx, tmp_path, monkeypatch):
    monkeypatch.delenv("WGB_DEBUG", raising=False)
    _full_disk_after(monkeypatch, target)
    args = _re_train(tmp_path, fx) if command == "re" else _kge_train(tmp_path, fx)
    res = CliRunner().invoke(cli, args)
    message = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    assert res.exit_code == 1 and len(message) == 1, res.output
    name = target.strip(".")
    assert f"{name}: no space left on device" in message[0] and "MiB free in" in message[0], message[0]
    assert "unexpected pos" not in message[0] and "Traceback" not in res.output
    assert not list(tmp_path.rglob(f"{target}*tmp"))   # no half-written temporary file


def test_torch_short_write_on_a_full_disk_is_named_too(tmp_path, monkeypatch):
    """torch.save turns the failed write into RuntimeError('... unexpected pos ...'): with little
    space left that is a full disk, said so."""
    import wgbcore.atomicio as aio

    def save(obj, fh):
        raise RuntimeError("[enforce fail at inline_container.cc:595] . unexpected pos 64 vs 0")

    class St:
        f_bavail, f_frsize = 10, 4096

    monkeypatch.setattr("torch.save", save)
    monkeypatch.setattr(aio.os, "statvfs", lambda p: St())
    with pytest.raises(aio.NoSpaceLeft, match=r"m.pt: no space left on device \(0.0 MiB free in"):
        aio.atomic_torch_save(tmp_path / "m.pt", {"x": 1})
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ a scheduler that does not answer
def test_an_unreachable_scheduler_fails_in_seconds():
    pytest.importorskip("distributed")
    from wgbcore.executor import SCHEDULER_TIMEOUT, ExecutorConfig
    from wgbcore.executor_backends import _Dask

    t0 = time.monotonic()
    with pytest.raises(ConnectionError, match=r"no Dask scheduler answered at tcp://127.0.0.1:9 within 5 s"):
        _Dask(ExecutorConfig(kind="dask", scheduler="tcp://127.0.0.1:9"))
    assert time.monotonic() - t0 < SCHEDULER_TIMEOUT + 10


def test_a_yaml_config_cannot_run_code(tmp_path):
    """A python tag in a config file is malformed YAML to the safe loader: nothing is built or run."""
    from wgbcore.config import read_config_file

    marker = tmp_path / "ran"
    (tmp_path / "evil.yaml").write_text(f"epochs: !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(ValueError, match=r"evil.yaml:1: malformed YAML"):
        read_config_file(tmp_path / "evil.yaml")
    assert not marker.exists()
