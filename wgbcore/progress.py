"""Progress of a long loop, on a terminal and off it.

:func:`progress` wraps an iterable: on a terminal a tqdm bar; elsewhere (a log file, ``nohup``, a
batch job, a CI log, where tqdm stays silent) one plain line on stderr every ``every`` seconds
(30 by default) with the count, the share done, the time spent and the time left at the rate so
far, so a training epoch of many minutes never runs without a word. ``enabled=False`` (a command's
``--quiet``) shows nothing; ``enabled=None`` lets the terminal decide the bar and prints the plain
lines off it. The returned object has tqdm's ``set_postfix`` and ``close`` either way.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Iterable, Iterator, TextIO

__all__ = ["progress", "PlainProgress", "EVERY_SECONDS"]

#: Seconds between two plain progress lines.
EVERY_SECONDS = 30.0


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


class PlainProgress:
    """The plain-line form of a progress bar (see the module docstring)."""

    def __init__(self, iterable: Iterable, *, total: int | None, desc: str, unit: str = "it",
                 initial: int = 0, every: float | None = None, stream: TextIO | None = None,
                 clock=time.monotonic):
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n, self.initial, self.clock = initial, initial, clock
        self.every = EVERY_SECONDS if every is None else every
        self.stream = stream
        self.postfix = ""
        self.started = self.last = clock()
        self.lines = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable:
            yield item
            self.update(1)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            self._line(now)

    def _line(self, now: float) -> None:
        spent = now - self.started
        done = self.n - self.initial
        text = f"{self.desc}: {self.n}"
        if self.total:
            text += f"/{self.total} {self.unit} ({100 * self.n / self.total:.0f}%)"
            if done > 0 and self.total > self.n:
                text += f", {_minutes(spent)} so far, ~{_minutes(spent / done * (self.total - self.n))} left"
            else:
                text += f", {_minutes(spent)}"
        else:
            text += f" {self.unit}, {_minutes(spent)}"
        if self.postfix:
            text += f" ({self.postfix})"
        print(text, file=self.stream or sys.stderr, flush=True)
        self.lines += 1

    def set_postfix(self, **kw: Any) -> None:
        self.postfix = ", ".join(f"{k} {v}" for k, v in kw.items())

    def set_description(self, desc: str) -> None:
        self.desc = desc

    def close(self) -> None:
        pass


def _on_terminal(stream: TextIO | None) -> bool:
    s = stream or sys.stderr
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False


def progress(iterable: Iterable, *, total: int | None = None, desc: str = "", unit: str = "it",
             enabled: bool | None = None, initial: int = 0, every: float | None = None, leave: bool = True,
             stream: TextIO | None = None, **tqdm_options: Any):
    """``iterable`` with its progress shown: a tqdm bar on a terminal, plain lines every ``every``
    seconds off it, nothing when ``enabled`` is False."""
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if enabled is False:
        return PlainProgress(iterable, total=total, desc=desc, unit=unit, initial=initial, every=float("inf"))
    if _on_terminal(stream):
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial, leave=leave, file=stream,
                    **tqdm_options)
    return PlainProgress(iterable, total=total, desc=desc, unit=unit, initial=initial, every=every, stream=stream)
