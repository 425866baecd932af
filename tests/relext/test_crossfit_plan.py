"""The whole cross-fitting plan is checked before any work (issue 40, pattern 1): every command
that runs fold runs (``re train``, ``re grid``, ``re debias-grid``, ``wgb run`` under
``--protocol crossfit``) refuses a plan some fold of which could not train or be judged (fewer women
or men than folds, a fold without training or validation persons) with one line naming the field
and value, before any run folder is written or any run queued."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from relext.protocols.crossfit import FoldSpec, check_fold_plans, check_plan
from support.fold_plans import benchmark_folder, persons_dataset
from wgb.cli import cli

FULL = dict(train=(6, 6), validation=(2, 2))

PLANS = [  # (name, dataset splits as (women, men), folds, error or None)
    ("one woman", dict(train=(0, 6), validation=(0, 2), male_test=(0, 2), female_test=(1, 0)), 2,
     r"^folds=2: the benchmark has 1 woman of 11 persons; every fold's female_test needs at least one, "
     r"so folds must be <= 1$"),
    ("one man", dict(train=(6, 0), validation=(2, 0), male_test=(0, 1), female_test=(2, 0)), 2,
     r"^folds=2: the benchmark has 1 man of 11 persons; .*male_test.*folds must be <= 1$"),
    ("folds past the persons", dict(**FULL, male_test=(0, 2), female_test=(2, 0)), 10000,
     r"^folds=10000: the benchmark has 10 women of 20 persons; .*folds must be <= 10$"),
    ("no validation person", dict(male_test=(0, 2), female_test=(2, 0)), 2,
     r"^folds=2: fold 0 would have no validation person \(4 persons in all\)"),
    ("a plan that works", dict(**FULL, male_test=(0, 2), female_test=(2, 0)), 4, None),
    ("as many folds as women", dict(train=(3, 8), validation=(1, 2), male_test=(0, 2), female_test=(1, 0)), 5, None),
]


@pytest.mark.parametrize("name,splits,folds,error", PLANS, ids=[p[0] for p in PLANS])
def test_check_plan_refuses_a_plan_some_fold_cannot_train_or_be_judged(name, splits, folds, error):
    ds = persons_dataset(**splits)
    if error is None:
        plan = check_plan(ds, FoldSpec(folds=folds))
        for k in range(folds):   # the promise: every fold's view builds, each of its splits non-empty
            role = plan.role(k)
            test = plan.fold == k
            assert {"train", "validation"} <= set(role.tolist())
            assert {"female", "male"} <= set(plan.persons.gender[test].tolist())
    else:
        with pytest.raises(ValueError, match=error):
            check_plan(ds, FoldSpec(folds=folds))


def test_check_fold_plans_skips_test_protocol_configs_and_checks_each_spec_once():
    ds = persons_dataset(train=(0, 6), validation=(0, 2), male_test=(0, 2), female_test=(1, 0))
    check_fold_plans([{"folds": None}, {"encoder": "cnn"}], ds)       # test protocol: nothing to check
    with pytest.raises(ValueError, match="folds=3: the benchmark has 1 woman"):
        check_fold_plans([{"folds": 3, "fold": k, "fold_seed": 0} for k in range(3)], lambda: ds)


# --------------------------------------------------------------------------------------------
# Every command: refused before any run folder is written
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def benches(tmp_path_factory):
    root = tmp_path_factory.mktemp("plans")
    one_woman = benchmark_folder(root / "one_woman", women={"female_test": 1},
                                 men={"train": 6, "validation": 2, "male_test": 2})
    forty_two = benchmark_folder(root / "forty_two", women={"train": 15, "validation": 2, "female_test": 4},
                                 men={"train": 15, "validation": 2, "male_test": 4})
    return {"one_woman": one_woman, "forty_two": forty_two}


def _re_train(bench, out):
    return ["re", "train", str(out), "--protocol", "crossfit", "--folds", "2", "--dataset", str(bench),
            "--epochs", "1", "--quiet"]


def _re_train_one_fold(bench, out):
    return _re_train(bench, out) + ["--fold", "0"]


def _re_grid(bench, out):
    return ["re", "grid", "--out", str(out), "--encoders", "cnn", "--selectors", "attention", "--seeds", "0",
            "--epochs", "1", "--set", f"dataset={bench}", "--protocol", "crossfit", "--folds", "2", "--no-plots"]


def _debias_grid(bench, out):
    return ["re", "debias-grid", str(out), "--variants", "none", "--seeds", "0", "--dataset", str(bench),
            "--epochs", "1", "--quiet", "--protocol", "crossfit", "--folds", "2"]


def _debias_grid_10000(bench, out):
    return _debias_grid(bench, out)[:-1] + ["10000"]


def _wgb_run(bench, out):
    return ["run", "--profile", "tiny", "--protocol", "crossfit", "--folds", "2", "--dataset", str(bench),
            "--out", str(out), "--quiet", "--threads", "1", "--seeds", "0"]


COMMANDS = [  # (command, benchmark, what the one line must say)
    (_re_train, "one_woman", "folds=2: the benchmark has 1 woman of 11 persons"),
    (_re_train_one_fold, "one_woman", "folds=2: the benchmark has 1 woman of 11 persons"),
    (_re_grid, "one_woman", "folds=2: the benchmark has 1 woman of 11 persons"),
    (_debias_grid, "one_woman", "folds=2: the benchmark has 1 woman of 11 persons"),
    (_debias_grid_10000, "forty_two", "folds=10000: the benchmark has 21 women of 42 persons"),
    (_wgb_run, "one_woman", "folds=2: the benchmark has 1 woman of 11 persons"),
]


@pytest.mark.parametrize("make,bench,message", COMMANDS, ids=[c[0].__name__.strip("_") for c in COMMANDS])
def test_every_fold_command_refuses_the_plan_before_any_run_folder(make, bench, message, benches, tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, make(benches[bench], out))
    assert r.exit_code == 1, r.output
    assert message in r.output and "folds must be <=" in r.output
    assert r.output.strip().count("\n") == 0, r.output          # one line
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))   # nothing written, nothing queued


def test_a_loader_whose_plan_passed_is_not_loaded_again():
    """A study checks its plan, then its grid does: the data of a worker's loader is loaded once."""
    ds = persons_dataset(**FULL, male_test=(0, 2), female_test=(2, 0))
    calls = []

    def loader():
        calls.append(1)
        return ds

    configs = [{"folds": 2, "fold": k, "fold_seed": 0} for k in range(2)]
    check_fold_plans(configs, loader)
    check_fold_plans(configs, loader)
    assert len(calls) == 1
    check_fold_plans([{**c, "folds": 3} for c in configs[:1]], loader)    # another spec: checked anew
    assert len(calls) == 2


# --------------------------------------------------------------------------------------------
# A config file's fold fields: the plan they make is checked too, never silently replaced (tour round 3)
# --------------------------------------------------------------------------------------------
CONFIG_FOLDS = [  # (config file text, extra options, benchmark, words of the one line)
    ("folds: 2\nfold: 7\n", ["--protocol", "crossfit"], "forty_two",
     ["c.yaml: folds 2 (the command line's: 5); fold 7 (the command line's: every fold)", "--folds"]),
    ("folds: 1\n", ["--protocol", "crossfit", "--folds", "2"], "forty_two", ["c.yaml: folds 1 (the command line's: 2)"]),
    ("fold_seed: 3\n", ["--protocol", "crossfit", "--folds", "2"], "forty_two",
     ["c.yaml: fold_seed 3 (the command line's: 0)"]),
    # no --protocol: the file makes the run a fold run, and that fold plan is checked like any other
    ("folds: 2\nfold: 0\n", [], "one_woman", ["folds=2: the benchmark has 1 woman of 11 persons", "folds must be <="]),
    ("folds: 2\nfold: 7\n", [], "forty_two", ["fold must be in 0..1, got 7"]),
]


@pytest.mark.parametrize("text,extra,bench,words", CONFIG_FOLDS, ids=[f"{c[0]!r}{c[1]}" for c in CONFIG_FOLDS])
def test_a_config_files_fold_fields_are_checked_not_replaced(text, extra, bench, words, benches, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["re", "train", str(out), "--dataset", str(benches[bench]), "--config", str(cfg),
                                 "--epochs", "1", "--quiet", *extra])
    assert r.exit_code in (1, 2), r.output
    line = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert len(line) == 1, r.output
    for w in words:
        assert w in line[0], (w, line[0])
    assert not out.exists()
