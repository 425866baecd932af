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
from typing import Any

__all__ = ["LOCAL_VERSION", "package_version", "machine", "provenance"]

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
