"""The command line's error boundary and its checks of output locations.

- :class:`ErrorBoundaryGroup`: the top-level ``wgb`` group. Every exception a command lets escape
  (a library's ``ValueError`` naming the file and field, an ``OSError`` naming the path, ...)
  becomes one line on stderr, ``Error: ...``, and exit code 1; usage errors keep click's exit
  code 2. ``wgb --debug ...`` (or ``WGB_DEBUG=1``) shows the traceback instead.
- :class:`OutputPath`: a ``click.Path`` for files and folders a command writes. It checks, while
  the command line is parsed and so before any work starts, that the location can be written:
  an existing path of the right kind, or a missing one whose nearest existing parent is a
  writable folder (probed by creating and removing a temporary file there; nothing is left).
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import click

from wgbcore.lock import FolderLocked

__all__ = ["ErrorBoundaryGroup", "OutputPath", "one_line", "check_writable", "debug_enabled", "hold_lock"]

#: exceptions whose text says what went wrong and where: shown without their type or a --debug hint
#: (``FolderLocked``: another process writes the folder; its text names the folder and the holder)
_SELF_EXPLAINING = (ValueError, OSError, KeyError, FolderLocked)

_PASS_THROUGH = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                 KeyboardInterrupt, SystemExit)


def debug_enabled(ctx: click.Context | None = None) -> bool:
    """``--debug`` on the ``wgb`` group, or ``WGB_DEBUG`` set to anything but ``''``/``0``."""
    if os.environ.get("WGB_DEBUG", "").strip() not in ("", "0"):
        return True
    while ctx is not None:
        if ctx.params.get("debug"):
            return True
        ctx = ctx.parent
    return False


def one_line(exc: BaseException, limit: int = 600) -> str:
    """A one-line message for ``exc``: its text (a ``KeyError``'s without the quotes), lines joined;
    exceptions other than ``ValueError`` / ``OSError`` (whose texts say what went wrong) are
    prefixed with their type."""
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])
    else:
        text = str(exc)
    text = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if not text:
        text = type(exc).__name__
    elif not isinstance(exc, _SELF_EXPLAINING):
        text = f"{type(exc).__name__}: {text}"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


class ErrorBoundaryGroup(click.Group):
    """A group whose commands (and sub-groups' commands) never end in a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            if debug_enabled(ctx):
                raise
            hint = "" if isinstance(exc, _SELF_EXPLAINING) else " (rerun with --debug for the traceback)"
            raise click.ClickException(one_line(exc) + hint) from exc


def check_writable(path: str | os.PathLike, *, directory: bool) -> str | None:
    """Why ``path`` cannot be written (as a folder when ``directory``, else as a file), or None."""
    p = Path(path)
    for q in (p, *p.parents):   # exists() is False for a symlink loop and a dangling link: say which
        if q.exists():
            break
        if q.is_symlink():
            try:
                os.stat(q)
            except OSError as exc:
                why = ("a symlink loop" if exc.errno == errno.ELOOP
                       else f"a symlink to {os.readlink(q)}, which does not exist")
                return f"{q} is {why}: give a folder or a new name"
    if p.exists():
        if directory and not p.is_dir():
            return f"{p} exists and is not a folder"
        if not directory and p.is_dir():
            return f"{p} is a folder, expected a file name"
        probe_dir = p if directory else p.parent
    else:
        probe_dir = p.parent
        while not probe_dir.exists():
            if probe_dir == probe_dir.parent:
                break
            probe_dir = probe_dir.parent
        if not probe_dir.is_dir():
            return f"cannot create {p}: {probe_dir} is not a folder"
    try:
        fd, tmp = tempfile.mkstemp(prefix=".wgb-write-check-", dir=probe_dir)
    except OSError as exc:
        return f"cannot write {p}: {probe_dir} is not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(tmp)
    if p.is_file() and not os.access(p, os.W_OK):
        return f"cannot write {p}: the file is read-only"
    return None


class OutputPath(click.Path):
    """``click.Path`` for an output: ``directory=True`` a folder, else a file; checked writable
    when the command line is parsed."""

    def __init__(self, *, directory: bool, path_type: Any = None) -> None:
        super().__init__(file_okay=not directory, dir_okay=directory, path_type=path_type)
        self.directory = directory

    def convert(self, value: Any, param, ctx) -> Any:
        rv = super().convert(value, param, ctx)
        problem = check_writable(os.fsdecode(rv) if not isinstance(rv, str) else rv, directory=self.directory)
        if problem:
            self.fail(problem, param, ctx)
        return rv


def hold_lock(path: str | os.PathLike, what: str) -> None:
    """Take the exclusive lock of the output folder or file ``path`` (:mod:`wgbcore.lock`, its lock
    file beside it, so the output is neither created nor touched by taking it) and hold it until
    the running command ends. A second writer of the same output gets a one-line error naming the
    holder (pid, host, start time), before any work."""
    from wgbcore.lock import folder_lock

    click.get_current_context().with_resource(folder_lock(Path(path), what=what, beside=True))


def refuse_unusable_runs(meta: dict) -> None:
    """After a grid or study: the runs whose stored evaluations could not be used (unreadable, or
    changed since they were written) named on stderr, and a non-zero exit; the next invocation
    evaluates them again (``wgbstudies.grid_exec.eval_current``)."""
    bad = meta.get("runs_unreadable") or {}
    if not bad:
        return
    for path, why in sorted(bad.items()):
        click.echo(f"UNUSABLE {path}: {why}", err=True)
    raise click.ClickException(f"{len(bad)} stored evaluation file(s) unreadable or changed since written (listed "
                               "above): their runs are left out of the verdicts; rerun the same command to "
                               "evaluate them again")
