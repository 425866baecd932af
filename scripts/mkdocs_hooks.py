"""MkDocs hooks of the docs site (mkdocs.yml ``hooks:``).

The docstrings are written with Sphinx roles (``:func:`x```, ``:class:`~pkg.mod.C```) and reST's
``::`` before a literal block; mkdocstrings renders them as text. This hook drops the role prefix
and the ``~`` (keeping the code span), and turns a paragraph's closing ``::`` into ``:``.
"""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):(?=<code>)")
_TILDE = re.compile(r"<code>~(?:[\w]+\.)*([\w]+)</code>")
_LITERAL = re.compile(r"::</p>")


def clean(html: str) -> str:
    """``html`` without the Sphinx role markup that mkdocstrings leaves in docstrings."""
    return _LITERAL.sub(":</p>", _TILDE.sub(r"<code>\1</code>", _ROLE.sub("", html)))


def on_page_content(html: str, **kwargs) -> str:
    return clean(html)
