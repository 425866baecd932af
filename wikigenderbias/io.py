"""Atomic file writes: write to a temporary file in the same folder, then rename.

A reader (or an interrupted run) never sees a half-written file. Shared by the toolkit's
packages that may import ``wikigenderbias`` (``relext`` and the ``wgb`` command line).
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):      # numpy arrays and scalars
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def clean_json(o: Any) -> Any:
    """NaN/inf -> None, recursively, so the JSON is standard."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: clean_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean_json(v) for v in o]
    return o


def write_json_atomic(path: str | os.PathLike, obj: Any, *, indent: int = 2) -> Path:
    plain = json.loads(json.dumps(obj, default=_json_default))
    return write_text_atomic(path, json.dumps(clean_json(plain), indent=indent, ensure_ascii=False,
                                              allow_nan=False) + "\n")


def iter_jsonl(path: str | os.PathLike):
    """``(where, object)`` for every non-blank line of a JSON-lines file; ``where`` is
    ``"file:line"``, and a malformed line is a ``ValueError`` naming it."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg})") from None
