"""Reading files with errors that name them.

Third-party readers (pandas, gzip, numpy, pyarrow, torch, yaml, ``datasets``) raise errors that
often do not say which file they were reading (``EOFError: Compressed file ended before the
end-of-stream marker was reached``, ``ParserError: Error tokenizing data. C error: ...``). The
few places that read a user's file wrap the reading in :func:`reading`, which turns any such
error into a one-line :class:`FileReadError` (a ``ValueError``) that starts with the path::

    with reading(path, "predictions CSV"):
        df = pd.read_csv(path)
    # FileReadError: preds.csv: cannot read the predictions CSV (ParserError: Error tokenizing
    # data. C error: Expected 3 fields in line 4, saw 5)

An error whose text already names the file (our own checks, ``OSError`` with its file name) goes
through unchanged, as do ``KeyboardInterrupt``, ``SystemExit`` and ``MemoryError``.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

__all__ = ["FileReadError", "reading", "describe"]


class FileReadError(ValueError):
    """A file could not be read; the message starts with its path."""

    def __init__(self, path: str | os.PathLike, message: str):
        self.path = Path(path)
        super().__init__(message)


def describe(exc: BaseException, limit: int = 240) -> str:
    """``Type: first line of the message`` (the type alone when there is no message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = " ".join(lines[:2])[:limit] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _names(exc: BaseException, path: Path) -> bool:
    if isinstance(exc, OSError) and exc.filename is not None:
        return True
    text = str(exc)
    return str(path) in text or (len(path.name) > 3 and path.name in text and isinstance(exc, ValueError))


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str = "file") -> Iterator[Path]:
    """Re-raise any error of the block as a one-line :class:`FileReadError` naming ``path`` and
    ``what`` was being read (unless its text names the file already)."""
    p = Path(path)
    try:
        yield p
    except (MemoryError, FileReadError):
        raise
    except Exception as exc:  # noqa: BLE001 - third-party readers raise many types
        if _names(exc, p):
            raise
        raise FileReadError(p, f"{p}: cannot read the {what} ({describe(exc)})") from exc
