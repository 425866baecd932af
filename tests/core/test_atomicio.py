"""wgbcore.atomicio: every writer replaces the file whole, or leaves it (and no temp file) alone."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from wgbcore import atomicio


class Boom(Exception):
    pass


def _only(path):
    return sorted(p.name for p in path.parent.iterdir())


def test_text_bytes_json_and_jsonl_round_trip(tmp_path):
    atomicio.atomic_write_text(tmp_path / "a" / "x.txt", "héllo\n")
    assert (tmp_path / "a" / "x.txt").read_text(encoding="utf-8") == "héllo\n"
    atomicio.atomic_write_bytes(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    obj = {"n": np.int64(3), "v": np.arange(2), "nan": float("nan"), "p": tmp_path, "é": [1.5, math.inf]}
    atomicio.atomic_write_json(tmp_path / "c.json", obj)
    text = (tmp_path / "c.json").read_text(encoding="utf-8")
    assert text.endswith("\n") and "é" in text
    assert json.loads(text) == {"n": 3, "v": [0, 1], "nan": None, "p": str(tmp_path), "é": [1.5, None]}
    atomicio.atomic_write_json(tmp_path / "d.json", {"x": float("nan")}, clean=False)
    assert math.isnan(json.loads((tmp_path / "d.json").read_text())["x"])
    atomicio.atomic_write_jsonl(tmp_path / "e.jsonl", [{"a": 1}, {"a": np.float32(0.5)}])
    assert atomicio.read_jsonl(tmp_path / "e.jsonl") == [{"a": 1}, {"a": 0.5}]
    assert (tmp_path / "e.jsonl").read_text().count("\n") == 2


def test_files_get_a_plain_files_mode(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = atomicio.atomic_write_text(tmp_path / "m.txt", "x")
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("write", [
    lambda p: atomicio.atomic_write_json(p, {"bad": object()}),
    lambda p: atomicio.atomic_write_jsonl(p, ({"a": 1} if i == 0 else 1 / 0 for i in range(2))),
])
def test_a_failing_writer_leaves_the_old_file_and_no_temp_file(tmp_path, write):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises((TypeError, ZeroDivisionError)):
        write(path)
    assert path.read_text() == "old" and _only(path) == ["out.json"]


def test_atomic_open_removes_the_temp_file_when_the_block_raises(tmp_path):
    path = tmp_path / "new.txt"
    with pytest.raises(Boom):
        with atomicio.atomic_open(path, "w") as fh:
            fh.write("partial")
            raise Boom
    assert not path.exists() and _only(path) == []
    with pytest.raises(ValueError, match="mode"):
        with atomicio.atomic_open(path, "a"):
            pass


def test_torch_state_and_parquet(tmp_path):
    torch = pytest.importorskip("torch")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    state = {"w": torch.arange(3.0)}
    atomicio.atomic_torch_save(tmp_path / "m.pt", state)
    assert torch.equal(torch.load(tmp_path / "m.pt")["w"], state["w"])
    table = pa.table({"a": [1, 2], "b": ["x", "y"]})
    atomicio.atomic_write_parquet(tmp_path / "t.parquet", table)
    assert pq.read_table(tmp_path / "t.parquet").equals(table)
    assert _only(tmp_path / "m.pt") == ["m.pt", "t.parquet"]


def test_malformed_jsonl_names_file_and_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{oops\n')
    with pytest.raises(ValueError, match=r"x.jsonl:3: malformed JSON"):
        atomicio.read_jsonl(p)


def test_replace_dir_swaps_whole_folders(tmp_path):
    from wgbcore.atomicio import replace_dir

    folder, tmp = tmp_path / "out", tmp_path / ".out.tmp"
    tmp.mkdir()
    (tmp / "a.txt").write_text("new")
    replace_dir(tmp, folder)
    assert (folder / "a.txt").read_text() == "new" and not tmp.exists()
    tmp.mkdir()
    (tmp / "b.txt").write_text("newer")
    (folder / "stale.txt").write_text("old")
    replace_dir(tmp, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # the old folder is gone too
