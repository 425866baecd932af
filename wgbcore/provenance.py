"""The package version, and the provenance record stamped on a result.

:func:`package_version` is the one version lookup of the toolkit (installed metadata, else
``0.0.0+local`` for a source tree that was never installed). :func:`provenance` is what a
result needs to be reproduced and compared: version, seed, config, time and machine.
"""
from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["LOCAL_VERSION", "package_version", "machine", "provenance", "file_sha256", "verify_checksums"]

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
