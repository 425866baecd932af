"""Atomic file writes: write to a temporary file in the same folder, then ``os.replace`` it.

A reader (or an interrupted run) never sees a half-written file: when the writer raises, the
temporary file is removed and the old file, if any, is left as it was. Every writer takes
``(path, obj)``, creates the parent folders and returns the path written.

- :func:`atomic_open`: the context manager the others are built on (stream into it);
- :func:`atomic_write_bytes`, :func:`atomic_write_text`;
- :func:`atomic_write_json` (standard JSON: NaN/inf become null unless ``clean=False``),
  :func:`atomic_write_jsonl`;
- :func:`atomic_write_parquet` (a pyarrow table), :func:`atomic_torch_save` (``torch.save``),
  :func:`atomic_savefig` (a matplotlib figure);
- :func:`iter_jsonl` / :func:`read_jsonl`: the matching reader, with ``file:line`` in errors.

A full disk (``ENOSPC``, a quota's ``EDQUOT``, or the ``unexpected pos`` / ``file write failed``
that ``torch.save`` makes of it) is one :class:`NoSpaceLeft` naming the file and the free space,
never a third party's text; nothing is left behind.
"""
from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

__all__ = ["NoSpaceLeft", "atomic_open", "atomic_write_bytes", "atomic_write_text", "atomic_write_json", "atomic_write_jsonl",
           "atomic_write_parquet", "atomic_torch_save", "atomic_savefig", "clean_json", "json_text",
           "iter_jsonl", "read_jsonl"]


_UMASK: int | None = None


def _umask() -> int:
    """The process's umask (read once: reading it means setting it)."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return _UMASK


class NoSpaceLeft(OSError):
    """Writing ``path`` failed for want of space (``errno`` ENOSPC); its text is one line naming the
    file, the space left and what to do."""

    def __init__(self, path: str | os.PathLike, detail: str = ""):
        super().__init__(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        self.message = (f"{path}: no space left on device ({_free_words(Path(path).parent)}); nothing was "
                        f"written, the old file (if any) is as it was: free some space and rerun"
                        + (f" [{detail}]" if detail else ""))

    def __str__(self) -> str:
        return self.message


def _free_words(folder: Path) -> str:
    try:
        st = os.statvfs(folder)
    except OSError:
        return "free space unknown"
    return f"{st.f_bavail * st.f_frsize / 2**20:,.1f} MiB free in {folder}"


_TORCH_WRITE_FAILED = ("unexpected pos", "file write failed", "PytorchStreamWriter failed")


def _no_space(exc: BaseException, path: Path) -> NoSpaceLeft | None:
    """``exc`` as a :class:`NoSpaceLeft` when it says the disk was full, else None."""
    if isinstance(exc, NoSpaceLeft):
        return None
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return NoSpaceLeft(path)
    if isinstance(exc, RuntimeError) and any(w in str(exc) for w in _TORCH_WRITE_FAILED):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
            return NoSpaceLeft(path)
        try:  # torch drops the OSError: a full disk is what its short write means when little is left
            st = os.statvfs(path.parent)
            if st.f_bavail * st.f_frsize < 64 * 2**20:
                return NoSpaceLeft(path, "torch: " + " ".join(str(exc).split())[:120])
        except OSError:
            pass
    return None


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None,
                newline: str | None = None) -> Iterator[IO]:
    """``with atomic_open(path, "w") as fh: ...``: ``fh`` is a temporary file beside ``path`` that
    replaces ``path`` when the block ends without an exception, and is removed otherwise."""
    if mode not in ("w", "wb", "wt"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as fh:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600: give it a plain file's mode
            yield fh
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        full = _no_space(exc, path)
        if full is not None:
            raise full from None
        raise


def replace_dir(tmp: str | os.PathLike, folder: str | os.PathLike) -> Path:
    """Put the finished temporary folder ``tmp`` in the place of ``folder``: an existing folder is
    first moved aside (renamed), then removed, so ``folder`` is always either the old or the new
    complete folder."""
    import shutil

    tmp, folder = Path(tmp), Path(folder)
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
        os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, folder)
    return folder


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """UTF-8, line endings written as given."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):      # numpy arrays and scalars, torch tensors
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def clean_json(o: Any) -> Any:
    """A JSON-safe copy: NaN/inf -> None, numpy scalars and arrays -> Python, recursively."""
    if hasattr(o, "tolist") and not isinstance(o, (str, bytes)):
        o = o.tolist()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: clean_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean_json(v) for v in o]
    return o


def json_text(obj: Any, *, indent: int | None = 2, clean: bool = True, sort_keys: bool = False) -> str:
    """The text :func:`atomic_write_json` writes: ``clean=True`` gives standard JSON (NaN/inf as
    null), ``clean=False`` keeps them as ``NaN``/``Infinity``; numpy values and paths are
    converted; UTF-8 kept as is; a final newline."""
    if clean:
        plain = clean_json(json.loads(json.dumps(obj, default=_json_default)))
        text = json.dumps(plain, indent=indent, ensure_ascii=False, allow_nan=False, sort_keys=sort_keys)
    else:
        text = json.dumps(obj, indent=indent, ensure_ascii=False, default=_json_default, sort_keys=sort_keys)
    return text + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2, clean: bool = True,
                      sort_keys: bool = False) -> Path:
    return atomic_write_text(path, json_text(obj, indent=indent, clean=clean, sort_keys=sort_keys))


def atomic_write_jsonl(path: str | os.PathLike, rows: Iterable[Any], *, clean: bool = False) -> Path:
    """One compact JSON object per line (``clean=True``: NaN/inf as null)."""
    with atomic_open(path, "w", newline="\n") as fh:
        for row in rows:
            fh.write(json_text(row, indent=None, clean=clean))
    return Path(path)


def atomic_write_parquet(path: str | os.PathLike, table: Any, **options: Any) -> Path:
    """A ``pyarrow.Table`` (``options`` go to ``pyarrow.parquet.write_table``)."""
    import pyarrow.parquet as pq

    with atomic_open(path, "wb") as fh:
        pq.write_table(table, fh, **options)
    return Path(path)


def atomic_torch_save(path: str | os.PathLike, obj: Any) -> Path:
    """``torch.save(obj)`` streamed into the temporary file."""
    import torch

    with atomic_open(path, "wb") as fh:
        torch.save(obj, fh)
    return Path(path)


def atomic_savefig(path: str | os.PathLike, fig: Any, **options: Any) -> Path:
    """``fig.savefig`` (format from the file's suffix, default png; ``options``: dpi, bbox_inches...).
    The figure is not closed."""
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, **options)
    return Path(path)


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    """``(where, object)`` for every non-blank line of a JSON-lines file; ``where`` is
    ``"file:line"``, and a malformed line (or one that is not UTF-8) is a ``ValueError`` naming it."""
    path = Path(path)
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                                 f"{exc.start + 1})") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg})") from None
            yield where, obj


def read_jsonl(path: str | os.PathLike) -> list[Any]:
    """Every object of a JSON-lines file (see :func:`iter_jsonl`)."""
    return [obj for _, obj in iter_jsonl(path)]
