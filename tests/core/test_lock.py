"""wgbcore.lock: one writer per folder, across processes; the kernel frees a dead holder's lock."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wgbcore.lock import LOCK_NAME, FolderLocked, folder_lock, holder, lock_path, try_lock

ROOT = Path(__file__).resolve().parents[2]


def _hold(folder: Path, beside: bool = False) -> subprocess.Popen:
    """Another process that takes ``folder``'s lock, says so on stdout and waits to be killed."""
    code = textwrap.dedent(f"""
        import sys, time
        from wgbcore.lock import folder_lock
        with folder_lock({str(folder)!r}, what="run", beside={beside}):
            print("locked", flush=True)
            time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("beside", [False, True])
def test_second_process_is_refused_naming_the_holder_and_a_killed_holder_leaves_no_stale_lock(tmp_path, beside):
    folder = tmp_path / "run"
    proc = _hold(folder, beside)
    try:
        with pytest.raises(FolderLocked) as info:
            with folder_lock(folder, what="run", beside=beside):
                pytest.fail("took a lock another process holds")
        msg = str(info.value)
        assert "\n" not in msg
        assert str(folder) in msg and f"pid {proc.pid}" in msg and "this run is in use" in msg
        assert holder(folder, beside=beside)["pid"] == proc.pid
        assert try_lock(folder, beside=beside) is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert lock_path(folder, beside=beside).exists()  # the dead holder's record stays ...
    with folder_lock(folder, what="run", beside=beside) as lock:  # ... but not its lock
        assert lock.held and holder(folder, beside=beside)["pid"] == os.getpid()
    assert lock_path(folder, beside=beside).exists() is (not beside)


def test_beside_lock_does_not_create_the_folder_and_is_removed_when_given_back(tmp_path):
    out = tmp_path / "sub" / "bench"
    with folder_lock(out, what="dataset folder", beside=True):
        assert not out.exists() and (tmp_path / "sub" / f".bench{LOCK_NAME}").is_file()
        with pytest.raises(FolderLocked, match="this folder is in use"):  # same process, second claim
            with folder_lock(out, beside=True):
                pass
    assert not out.exists() and not list((tmp_path / "sub").iterdir())


def test_inside_and_beside_locks_are_released_at_the_end_of_the_block(tmp_path):
    for beside in (False, True):
        with folder_lock(tmp_path / "x", beside=beside):
            pass
        lock = try_lock(tmp_path / "x", beside=beside)
        assert lock is not None
        lock.release()
