"""wgbcore.progress: a bar on a terminal, plain lines every so often elsewhere, nothing when quiet;
and the training commands that use it (`kge train`, `re train`) say something off a terminal."""
from __future__ import annotations

import io

from click.testing import CliRunner

from wgbcore import progress as prog


class Clock:
    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_plain_lines_every_so_often_with_the_time_left():
    out = io.StringIO()
    bar = prog.PlainProgress(range(10), total=10, desc="epoch 1/3", unit="batch", every=30, stream=out,
                             clock=Clock(10.0))
    bar.set_postfix(loss="0.5000")
    assert list(bar) == list(range(10))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3    # 10 s a batch: a line every third batch
    assert lines[0] == "epoch 1/3: 3/10 batch (30%), 30 s so far, ~70 s left (loss 0.5000)"


def test_quiet_prints_nothing_and_off_a_terminal_is_plain(monkeypatch):
    out = io.StringIO()
    quiet = prog.progress(range(5), desc="x", enabled=False, stream=out)
    assert list(quiet) == list(range(5)) and out.getvalue() == ""
    plain = prog.progress(range(5), desc="x", stream=out)      # StringIO is no terminal
    assert isinstance(plain, prog.PlainProgress)
    tty = io.StringIO()
    tty.isatty = lambda: True
    assert not isinstance(prog.progress(range(5), desc="x", stream=tty), prog.PlainProgress)


def test_kge_train_prints_progress_off_a_terminal_and_nothing_with_quiet(tmp_path, monkeypatch):
    from support.hardening import make_graph
    from wgb.cli import cli

    make_graph().save(tmp_path / "g")
    monkeypatch.setattr(prog, "EVERY_SECONDS", 0.0)
    args = ["kge", "train", str(tmp_path / "g"), "--dim", "4", "--epochs", "3", "--batch-size", "32", "--no-test"]
    res = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "transe g: 1/3 epoch (33%), " in res.output and "transe g: 3/3 epoch (100%)" in res.output
    res = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "q"), "--quiet"])
    assert res.exit_code == 0 and "epoch (" not in res.output


def test_re_train_prints_progress_within_an_epoch_off_a_terminal(tmp_path, tmp_path_factory, monkeypatch):
    import json

    from support.hardening import relext_fixture
    from wgb.cli import cli

    run = relext_fixture(tmp_path_factory.getbasetemp())
    data = json.loads((run / "config.json").read_text())["dataset"]
    monkeypatch.setattr(prog, "EVERY_SECONDS", 0.0)
    res = CliRunner().invoke(cli, ["re", "train", str(tmp_path / "r"), "--dataset", data, "--encoder", "cnn",
                                   "--epochs", "1", "--word-dim", "8", "--hidden", "8", "--max-length", "30",
                                   "--batch-size", "4", "--cache-dir", str(tmp_path / "w2v"), "--threads", "1",
                                   "--no-predict"])
    assert res.exit_code == 0, res.output
    assert "epoch 1/1: 1/13 batch (8%)" in res.output and "epoch 1/1: 13/13 batch (100%)" in res.output
