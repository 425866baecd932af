"""One template engine for every report: jinja2 templates, HTML escaped, markdown not.

``render(name, package=..., **context)`` renders ``<package>/templates/<name>``; a template may
extend ``base.html`` (this package's layout: one stylesheet, page width, tables, verdict badges).
Templates whose name ends in ``.html`` / ``.htm`` / ``.xml`` escape every value (item and person
names reach the page as text, never as markup); ``.md`` templates do not, and use the ``cell``
filter for table cells. Undefined names are errors, not empty strings.

Filters: ``num`` (fixed decimals, ``–`` for None / NaN), ``signed`` (with a sign), ``interval``
(``[lo, hi]``), ``pct``, ``cell`` (a markdown table cell: ``|`` and line breaks escaped),
``data_uri`` (a PNG file inlined as ``data:image/png;base64,...``), ``inline`` (HTML only: the text
escaped, then ``**bold**`` and ```code``` as markup, so one string serves both renderings).

:class:`Document` is a report as a list of blocks (heading, paragraph, list, table, image) that
the shared templates ``document.md`` / ``document.html`` render; the grid, study and kge reports
use it, the run report has its own templates.
"""
from __future__ import annotations

import base64
import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["environment", "render", "render_to", "num", "count", "signed", "interval", "pct", "cell", "data_uri", "inline",
           "Document"]


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def num(x: Any, nd: int = 3) -> str:
    if _missing(x):
        return "–"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    return f"{x:.{nd}f}"


def count(x: Any, nd: int = 1) -> str:
    """A count of persons or items: a whole number as one (``35``, not ``35.0``); a mean over seeds
    that is not whole with ``nd`` decimals."""
    if _missing(x):
        return "–"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return num(x, nd)


def signed(x: Any, nd: int = 3) -> str:
    if _missing(x):
        return "–"
    return f"{x:+.{nd}f}"


def interval(ci: Any, nd: int = 3) -> str:
    if not ci or any(_missing(c) for c in ci):
        return "–"
    return f"[{ci[0]:+.{nd}f}, {ci[1]:+.{nd}f}]"


def pct(x: Any, nd: int = 0) -> str:
    return "–" if _missing(x) else f"{100 * x:.{nd}f}%"


def cell(x: Any) -> str:
    """A markdown table cell: one line, ``|`` escaped, ``<`` escaped (no raw HTML from names)."""
    return " ".join(str(x).split()).replace("|", "\\|").replace("<", "\\<")


def data_uri(path: str | os.PathLike) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def inline(text: Any):
    """HTML of one line of report text: escaped first, then ``**x**`` -> <strong>, ```x``` -> <code>."""
    from markupsafe import Markup, escape

    s = str(escape(str(text)))
    s = _CODE.sub(r"<code>\1</code>", s)
    s = _BOLD.sub(r"<strong>\1</strong>", s)
    return Markup(s)


@lru_cache(maxsize=None)
def environment(package: str):
    """The environment of ``package``'s templates, falling back to this package's (``base.html``)."""
    import jinja2

    loaders = [jinja2.PackageLoader(package, "templates")]
    if package != "wgbcore":
        loaders.append(jinja2.PackageLoader("wgbcore", "templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "htm", "xml"), default_for_string=True),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=num, count=count, signed=signed, interval=interval, pct=pct, cell=cell, data_uri=data_uri, inline=inline)
    return env


def render(name: str, *, package: str, **context: Any) -> str:
    return environment(package).get_template(name).render(**context)


def render_to(path: str | os.PathLike, name: str, *, package: str, **context: Any) -> Path:
    """Render and write through a temp file + rename."""
    from wgbcore.atomicio import atomic_write_text

    return atomic_write_text(path, render(name, package=package, **context))


class Document:
    """A report as blocks, rendered to markdown and HTML by ``document.md`` / ``document.html``.

    Text may use ``**bold**`` and ```code```; everything else in it reaches the HTML page as text.
    Table cells are strings (or numbers, formatted by ``fmt``); a column whose cells are all numbers
    is right-aligned.
    """

    def __init__(self, title: str, *, fmt=None) -> None:
        self.title = title
        self.fmt = fmt  # the default cell formatter of every table
        self.blocks: list[dict] = []

    def heading(self, text: str, level: int = 2) -> "Document":
        self.blocks.append({"kind": "heading", "text": text, "level": level})
        return self

    def para(self, text: str) -> "Document":
        self.blocks.append({"kind": "para", "text": text})
        return self

    def items(self, lines: list[str]) -> "Document":
        self.blocks.append({"kind": "list", "items": list(lines) or ["none"]})
        return self

    def table(self, header: list[str], rows: list[list], *, fmt=None, caption: str = "") -> "Document":
        if not rows:
            return self.para("(no rows)")
        numeric = [all(isinstance(r[j], (int, float)) or r[j] is None for r in rows) for j in range(len(header))]
        f = fmt or self.fmt or (lambda c: c if isinstance(c, str) else num(c))
        self.blocks.append({"kind": "table", "header": list(header), "numeric": numeric, "caption": caption,
                            "rows": [[f(c) for c in r] for r in rows]})
        return self

    def image(self, src: str, alt: str) -> "Document":
        self.blocks.append({"kind": "image", "src": src, "alt": alt})
        return self

    def markdown(self) -> str:
        return render("document.md", package="wgbcore", doc=self)

    def html(self) -> str:
        return render("document.html", package="wgbcore", doc=self)

    def write(self, out_dir: str | os.PathLike, stem: str) -> dict[str, Path]:
        """``OUT/<stem>.md`` and ``OUT/<stem>.html`` (atomic writes); images are linked, not copied."""
        from wgbcore.atomicio import atomic_write_text

        out = Path(out_dir)
        return {"md": atomic_write_text(out / f"{stem}.md", self.markdown()),
                "html": atomic_write_text(out / f"{stem}.html", self.html())}
