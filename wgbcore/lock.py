"""Exclusive locks on output folders: one writer per run, embedding, study or dataset folder.

A command that writes a folder holds ``<folder>/.wgb.lock`` with an OS file lock (``fcntl.flock``)
for as long as it writes. The kernel releases the lock when the process dies (kill -9 included),
so a killed run never leaves a stale lock; the file itself stays, holding the last holder's record
(pid, host, start time, command), which a second writer's error names::

    with folder_lock(run_dir, what="run"):
        ...  # write run_dir

    # a second process, while the first holds it:
    FolderLocked: runs/x is in use by another wgb process (pid 4242 on host-a since
    2026-11-25T10:01:02+0000: wgb re train runs/x); wait for it or choose another folder

``beside=True`` keeps the lock file next to the folder (or file) instead of inside it,
``<parent>/.<name>.wgb.lock``: for outputs that are replaced whole (a dataset folder renamed into
place, a run folder emptied by ``--overwrite``, a single result file) and for commands that must
not create their output before they have checked their input. Such a lock file is removed when
the lock is given back; an acquirer that finds it was removed meanwhile simply tries again.

``try_lock`` is the non-raising form used by schedulers that claim many folders (a claim that
fails means "someone else is on it"). Locks are per open file description: the same process
taking the same folder twice through two ``folder_lock`` calls also conflicts, which is what a
thread pool of runs wants.

On a network file system ``flock`` is only as good as the file system's lock support (NFSv4 and
Lustre/BeeGFS with ``flock`` mounts support it; see the scale-out guide); the holder record is
written either way.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, Iterator

try:  # POSIX; on other systems locking degrades to the holder record only
    import fcntl
except ImportError:  # pragma: no cover - not on the platforms we support
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "FolderLocked", "FolderLock", "folder_lock", "try_lock", "holder", "lock_path"]

LOCK_NAME = ".wgb.lock"


class FolderLocked(RuntimeError):
    """Another live process holds the folder's lock."""

    def __init__(self, folder: Path, info: dict[str, Any] | None, what: str = "folder"):
        self.folder, self.info = folder, info or {}
        who = describe_holder(self.info)
        super().__init__(f"{folder}: this {what} is in use by another wgb process ({who}); "
                         "wait for it to finish or choose another folder")


def describe_holder(info: dict[str, Any]) -> str:
    if not info:
        return "holder unknown"
    parts = [f"pid {info.get('pid', '?')} on {info.get('host', '?')}"]
    if info.get("started"):
        parts.append(f"since {info['started']}")
    text = " ".join(parts)
    if info.get("command"):
        text += f": {info['command']}"
    return text


def lock_path(folder: str | os.PathLike, *, beside: bool = False) -> Path:
    """Where ``folder``'s lock file is: inside it, or (``beside``) next to it."""
    folder = Path(folder)
    return folder.parent / f".{folder.name}{LOCK_NAME}" if beside else folder / LOCK_NAME


def holder(folder: str | os.PathLike, *, beside: bool = False) -> dict[str, Any]:
    """The last holder's record of ``folder``'s lock ({} when none was ever written)."""
    path = lock_path(folder, beside=beside)
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}


class FolderLock:
    """An exclusive lock on a folder, taken with :meth:`acquire` and given back with :meth:`release`
    (or by the process's death)."""

    def __init__(self, folder: str | os.PathLike, *, what: str = "folder", beside: bool = False):
        self.folder, self.what, self.beside = Path(folder), what, beside
        self.path = lock_path(folder, beside=beside)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, *, blocking: bool = False, timeout: float | None = None) -> "FolderLock":
        """Take the lock or raise :class:`FolderLocked` (``blocking``: wait, up to ``timeout`` s)."""
        if self._fd is not None:
            return self
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                if not blocking or (deadline is not None and time.monotonic() >= deadline):
                    raise FolderLocked(self.folder, holder(self.folder, beside=self.beside), self.what) from None
                time.sleep(0.1)
                continue
            if self.beside and not _same_file(fd, path):  # removed by its last holder meanwhile
                os.close(fd)
                continue
            break
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300] if sys.argv else ""}
        data = json.dumps(record).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self.beside:  # removed while still held, so no one locks a file about to vanish
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, *, what: str = "folder", blocking: bool = False,
                timeout: float | None = None, beside: bool = False) -> Iterator[FolderLock]:
    """``with folder_lock(path): ...`` holds ``path``'s exclusive lock for the block; raises
    :class:`FolderLocked` (naming the holder) at once when another process holds it."""
    lock = FolderLock(folder, what=what, beside=beside).acquire(blocking=blocking, timeout=timeout)
    try:
        yield lock
    finally:
        lock.release()


def try_lock(folder: str | os.PathLike, *, what: str = "folder", beside: bool = False) -> FolderLock | None:
    """The lock if it is free now, else None (a scheduler's claim)."""
    try:
        return FolderLock(folder, what=what, beside=beside).acquire()
    except FolderLocked:
        return None
