"""Parts of a study trained elsewhere (OUT/parts/<name>/timing.json) counted in its timing."""
import json

import pytest

from wgbstudies.grid import GridConfig, run_grid
from wgbstudies.parts import read_parts, with_parts


def _part(out, name, runs, seconds):
    d = out / "parts" / name
    d.mkdir(parents=True)
    (d / "timing.json").write_text(json.dumps({
        "runs": {r: {"train_seconds": 10.0, "eval_seconds": 1.0, "ran_on": name} for r in runs},
        "invocations": [{"seconds": s} for s in seconds]}))


def test_no_parts_leaves_the_timing_as_it_is(tmp_path):
    t = {"n_runs": 1, "per_run": {"a": {"train_seconds": 3.0}}, "train_seconds_total": 3.0}
    assert with_parts(t, tmp_path) is t


def test_a_folder_that_only_aggregates_takes_the_longest_part(tmp_path):
    _part(tmp_path, "device_x", ["r1", "r2"], [100.0, 20.0])
    _part(tmp_path, "local_y", ["r3"], [50.0])
    t = with_parts({"per_run": {}, "train_seconds_total": 0.0, "wall_seconds_total": 0.0, "notes": []}, tmp_path)
    assert t["n_runs"] == 3 and t["train_seconds_total"] == 30.0 and t["eval_seconds_total"] == 3.0
    assert t["parts_wall_seconds"] == {"device_x": 120.0, "local_y": 50.0}
    assert t["parts_runs"] == {"device_x": 2, "local_y": 1}
    assert t["wall_seconds_total"] == 120.0
    assert t["per_run"]["r1"]["part"] == "device_x"
    assert t["notes"] == ["trained by 2 parallel parts (device_x, local_y); wall time = the longest part"]


def test_a_folder_that_trained_keeps_its_own_wall_and_its_own_records(tmp_path):
    _part(tmp_path, "device_x", ["r1", "r2"], [100.0])
    own = {"per_run": {"r1": {"train_seconds": 99.0}}, "train_seconds_total": 99.0, "wall_seconds_total": 500.0}
    t = with_parts(own, tmp_path)
    assert t["per_run"]["r1"] == {"train_seconds": 99.0}      # this folder's record wins
    assert t["n_runs"] == 2 and t["train_seconds_total"] == 109.0
    assert t["wall_seconds_total"] == 500.0
    assert "device_x (2 runs, 100 s)" in t["notes"][0] and "not in this folder's" in t["notes"][0]
    timing = json.loads((tmp_path / "parts" / "device_x" / "timing.json").read_text())
    (tmp_path / "parts" / "device_x" / "timing.json").write_text(json.dumps({**timing, "brought_back_untimed": ["r9"]}))
    assert "device_x (2 runs + 1 untimed, 100 s)" in with_parts(own, tmp_path)["notes"][0]
    assert own["per_run"] == {"r1": {"train_seconds": 99.0}}   # the caller's dict is not changed


def test_a_bad_part_file_is_named(tmp_path):
    (tmp_path / "parts" / "p").mkdir(parents=True)
    (tmp_path / "parts" / "p" / "timing.json").write_text("{not json")
    with pytest.raises(Exception, match=r"parts/p/timing\.json"):
        read_parts(tmp_path)
    (tmp_path / "parts" / "p" / "timing.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"parts/p/timing\.json: not a study timing file"):
        read_parts(tmp_path)


def test_the_grid_report_counts_its_parts(tmp_path):
    from tests.wgbstudies.test_grid import CFG, FakeTrainer, make_config

    run_grid(GridConfig(**CFG), tmp_path, train_fn=FakeTrainer(), make_config=make_config, plots=False, progress=False)
    _part(tmp_path, "device_h200_x", ["cnn-attention-seed9"], [42.0])
    summary = run_grid(GridConfig(**CFG), tmp_path, train_fn=FakeTrainer(), make_config=make_config, plots=False,
                       progress=False, train=False)
    t = summary["timing"]
    assert t["parts_runs"] == {"device_h200_x": 1} and t["per_run"]["cnn-attention-seed9"]["part"] == "device_h200_x"
    assert json.loads((tmp_path / "results.json").read_text())["timing"]["parts_wall_seconds"] == {"device_h200_x": 42.0}
    assert "device_h200_x (1 run, 42 s)" in (tmp_path / "results.md").read_text()


def _import_part():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "device" / "import_part.py"
    spec = importlib.util.spec_from_file_location("import_part", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _device_out(tmp_path, members):
    import io
    import tarfile

    out = tmp_path / "device"
    out.mkdir()
    with tarfile.open(out / "runs.tgz", "w:gz") as tf:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (out / "timing.json").write_text(json.dumps({
        "runs": {"a-seed1-fold0": {"train_seconds": 5.0}, "a-seed1-fold1": {"train_seconds": 6.0}},
        "invocations": [{"started": "t1", "seconds": 60.0}]}))
    (out / "machine.txt").write_text("nproc 16\n")
    return out


def test_import_part_keeps_what_came_back(tmp_path, monkeypatch):
    mod = _import_part()
    monkeypatch.setattr(mod, "ROOT", tmp_path / "repo")
    runs = "study/runs"
    out = _device_out(tmp_path, {f"{runs}/a-seed1-fold0/DONE": "", f"{runs}/a-seed1-fold0/eval.json": "{}",
                                 f"{runs}/a-seed2-fold0/DONE": ""})
    study = tmp_path / "repo" / "study"
    assert mod.main([str(study), "device_x", "--device-out", str(out), "--runs-dir", runs]) == 0
    part = json.loads((study / "parts" / "device_x" / "timing.json").read_text())
    assert set(part["runs"]) == {"a-seed1-fold0"}                 # timed and brought back
    assert part["not_brought_back"] == ["a-seed1-fold1"]         # killed at the deadline
    assert part["brought_back_untimed"] == ["a-seed2-fold0"]
    assert (study / "runs" / "a-seed1-fold0" / "eval.json").exists()
    assert (study / "parts" / "device_x" / "machine.txt").read_text() == "nproc 16\n"
    with pytest.raises(SystemExit, match="exists; a part is recorded once"):
        mod.main([str(study), "device_x", "--device-out", str(out), "--runs-dir", runs])


@pytest.mark.parametrize("member", ["../evil/DONE", "/abs/DONE", "other/x-fold0/DONE"])
def test_import_part_refuses_members_outside_the_run_store(tmp_path, monkeypatch, member):
    mod = _import_part()
    monkeypatch.setattr(mod, "ROOT", tmp_path / "repo")
    out = _device_out(tmp_path, {"study/runs/a-seed1-fold0/DONE": "", member: ""})
    with pytest.raises(SystemExit, match="member"):
        mod.main([str(tmp_path / "repo" / "study"), "p", "--device-out", str(out), "--runs-dir", "study/runs"])
    assert not (tmp_path / "repo" / "study" / "runs").exists()    # checked whole before anything is written


def test_import_part_of_a_local_invocation_keeps_what_it_added(tmp_path):
    mod = _import_part()
    base = {"runs": {"r1": {"train_seconds": 1.0}}, "invocations": [{"started": "t0", "seconds": 9.0}]}
    new = {"runs": {**base["runs"], "r2": {"train_seconds": 2.0}},
           "invocations": base["invocations"] + [{"started": "t1", "seconds": 30.0}]}
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "new.json").write_text(json.dumps(new))
    study = tmp_path / "study"
    assert mod.main([str(study), "local", "--timing", str(tmp_path / "new.json"), "--base", str(tmp_path / "base.json")]) == 0
    part = json.loads((study / "parts" / "local" / "timing.json").read_text())
    assert part == {"runs": {"r2": {"train_seconds": 2.0}}, "invocations": [{"started": "t1", "seconds": 30.0}]}
    assert mod.main([str(study), "scratch", "--timing", str(tmp_path / "new.json")]) == 0   # a scratch folder's: all of it
    assert json.loads((study / "parts" / "scratch" / "timing.json").read_text()) == new
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(SystemExit, match=r"bad\.json: not a study timing file"):
        mod.main([str(study), "bad", "--timing", str(tmp_path / "bad.json")])
