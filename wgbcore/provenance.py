"""The package version, and the provenance record stamped on a result.

:func:`package_version` is the one version lookup of the toolkit (installed metadata, else
``0.0.0+local`` for a source tree that was never installed). :func:`provenance` is what a
result needs to be reproduced and compared: version, seed, config, time and machine.

Stored results are checked against the sha256 recorded when they were written, in one format
(``sha256sum``'s ``<sha256>  <name>`` lines): :func:`verify_checksums` for a shipped folder's
``SHA256SUMS``; :func:`record_outputs` / :func:`output_status` / :func:`changed_outputs` for what a
step writes for a later step to read (a run's ``eval.json`` and ``entity_counts.npz``, a study's
``timing.json``: the folder's :data:`OUTPUTS` record; a ``wgb run`` stage: its marker). A file the
record does not list was written before records existed: ``"unrecorded"``, used as it is.
"""
from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["LOCAL_VERSION", "OUTPUTS", "OutputChanged", "package_version", "machine", "provenance", "file_sha256",
           "verify_checksums", "record_outputs", "drop_outputs", "output_status", "changed_outputs"]

#: The version reported by a source tree that was never installed.
LOCAL_VERSION = "0.0.0+local"


def package_version(dist: str = "wgb") -> str:
    """Installed version of distribution ``dist``; :data:`LOCAL_VERSION` when it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return LOCAL_VERSION


def machine() -> dict[str, Any]:
    """The Python version, the platform and the CPU count of this machine."""
    return {"python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count()}


def provenance(*, seed: int | None = None, config: Any = None, dist: str = "wgb") -> dict[str, Any]:
    """``{"version", "seed", "config", "time", "machine"}`` for a result made now (``time`` in
    ISO 8601, local time with its UTC offset)."""
    return {"version": package_version(dist), "seed": seed, "config": config,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine()}


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 hex digest of a file, read in 1 MiB blocks (data files, models, exports)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_checksums(folder: str | os.PathLike, sums: str = "SHA256SUMS", *, hint: str = "") -> Path:
    """Check every file listed in ``folder/<sums>`` (``<sha256>  <name>`` lines, as ``sha256sum``
    writes them) against its bytes; a one-line ``ValueError`` naming the file (and ``hint``, what
    to do) when one differs or is missing, ``FileNotFoundError`` when ``sums`` is absent."""
    folder = Path(folder)
    path = folder / sums
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing{'; ' + hint if hint else ''}")
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        digest, _, fname = line.strip().partition("  ")
        target = folder / fname
        if not fname or "/" in fname or not target.is_file():
            raise ValueError(f"{path}:{lineno}: names no file of {folder}{'; ' + hint if hint else ''}")
        if file_sha256(target) != digest:
            raise ValueError(f"{target}: sha256 differs from {path} (the file was changed after the folder was "
                             f"written){'; ' + hint if hint else ''}")
    return folder


#: A folder's record of the sha256 of the results written into it (``sha256sum -c`` format).
OUTPUTS = "OUTPUTS.sha256"


class OutputChanged(ValueError):
    """A stored result whose bytes differ from the sha256 recorded when it was written."""

    def __init__(self, path: str | os.PathLike, record: str | os.PathLike, why: str):
        self.path, self.record = Path(path), Path(record)
        super().__init__(f"{path}: {why} ({record} recorded it when it was written)")


def _record_of(path: Path, record: str | os.PathLike | None) -> Path:
    return Path(record) if record is not None else path.parent / OUTPUTS


def _read_record(record: Path) -> dict[str, str]:
    """name -> sha256 of a record; lines of another form (a legacy marker's ``done``) are skipped."""
    out: dict[str, str] = {}
    if not record.is_file():
        return out
    for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
        digest, sep, name = line.strip().partition("  ")
        if sep and name and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest):
            out[name] = digest
    return out


def _damaged(record: Path) -> int | None:
    """The first line of ``record`` that is neither a ``<sha256>  <name>`` entry, blank, nor a legacy
    marker's ``done`` (a record cut short or written over), or None."""
    if not record.is_file():
        return None
    for n, line in enumerate(record.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        digest, sep, name = line.strip().partition("  ")
        if line.strip() in ("", "done"):
            continue
        if not (sep and name and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            return n
    return None


def _damage(record: Path, n: int) -> str:
    return f"its record is damaged ({record.name}:{n} is not '<sha256>  <name>')"


def recorded_outputs(record: str | os.PathLike, *, root: str | os.PathLike | None = None) -> list[Path]:
    """The files ``record`` lists (its readable entries), as paths under ``root`` (default: its folder)."""
    rec = Path(record)
    base = Path(root) if root is not None else rec.parent
    return [base / name for name in _read_record(rec)]


def _name(path: Path, root: Path) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def record_outputs(paths, *, record: str | os.PathLike | None = None, root: str | os.PathLike | None = None,
                   replace: bool = False) -> Path:
    """Record the sha256 of each file of ``paths`` in ``record`` (default: :data:`OUTPUTS` beside
    the first file), names relative to ``root`` (default: the record's folder); the entries of
    other files are kept unless ``replace``. Written atomically; returns the record's path."""
    from wgbcore.atomicio import atomic_write_text

    paths = [Path(p) for p in paths]
    if not paths and record is None:
        raise ValueError("record_outputs: no files and no record given")
    rec = _record_of(paths[0], record) if paths else Path(record)
    base = Path(root) if root is not None else rec.parent
    entries = {} if replace else _read_record(rec)
    for p in paths:
        entries[_name(p, base)] = file_sha256(p)
    atomic_write_text(rec, "".join(f"{d}  {n}\n" for n, d in sorted(entries.items())))
    return rec


def drop_outputs(record: str | os.PathLike, paths, *, root: str | os.PathLike | None = None) -> None:
    """Take ``paths`` out of ``record`` (files another writer now answers for); other entries kept."""
    from wgbcore.atomicio import atomic_write_text

    rec = Path(record)
    base = Path(root) if root is not None else rec.parent
    entries = _read_record(rec)
    gone = {_name(Path(p), base) for p in paths} & set(entries)
    if gone:
        atomic_write_text(rec, "".join(f"{d}  {n}\n" for n, d in sorted(entries.items()) if n not in gone))


def output_status(path: str | os.PathLike, *, record: str | os.PathLike | None = None,
                  root: str | os.PathLike | None = None) -> str:
    """``"ok"`` (its bytes are those recorded) or ``"unrecorded"`` (no record lists it: written
    before records existed); :class:`OutputChanged` when they differ, naming the file and record."""
    path = Path(path)
    rec = _record_of(path, record)
    bad = _damaged(rec)
    if bad is not None:   # a record cut short or written over vouches for nothing: computed again
        raise OutputChanged(path, rec, _damage(rec, bad))
    digest = _read_record(rec).get(_name(path, Path(root) if root is not None else rec.parent))
    if digest is None:
        return "unrecorded"
    if not path.is_file():
        raise OutputChanged(path, rec, "missing")
    if file_sha256(path) != digest:
        raise OutputChanged(path, rec, "changed since it was written: its sha256 differs from the recorded one")
    return "ok"


def changed_outputs(record: str | os.PathLike, *, root: str | os.PathLike | None = None) -> dict[str, str]:
    """``{path: why}`` of every file ``record`` lists that is missing or whose bytes differ (an
    empty dict for a record that lists nothing, such as a legacy marker)."""
    rec = Path(record)
    base = Path(root) if root is not None else rec.parent
    bad = _damaged(rec)
    out = {str(rec): _damage(rec, bad)} if bad is not None else {}
    for name, digest in _read_record(rec).items():
        p = base / name
        if not p.is_file():
            out[str(p)] = "missing"
        elif file_sha256(p) != digest:
            out[str(p)] = "changed since it was written (its sha256 differs from the one in " + str(rec) + ")"
    return out
