"""wgbcore.render: one jinja2 engine; HTML escaped, markdown cells escaped, real lists and tables."""
from __future__ import annotations

import jinja2
import pytest

from wgbcore.render import cell, environment, interval, num, pct, signed


def test_html_templates_escape_names_and_build_real_lists():
    page = environment("wgbcore").from_string(
        '{% extends "base.html" %}{% block title %}{{ t }}{% endblock %}{% block body %}'
        "<ul>{% for x in xs %}<li>{{ x }}</li>{% endfor %}</ul>"
        "<table><tr>{% for x in xs %}<td>{{ x }}</td>{% endfor %}</tr></table>{% endblock %}"
    ).render(t="a <title>", xs=["<script>alert(1)</script>", "Fish & Chips"])
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Fish &amp; Chips" in page and "<title>a &lt;title&gt;</title>" in page
    assert page.count("<li>") == 2 and page.index("<ul>") < page.index("<li>") < page.index("</ul>")
    assert page.startswith("<!doctype html>") and "max-width: 1100px" in page


def test_document_markdown_is_not_escaped_and_html_is(tmp_path):
    # names reach markdown as text, with | and < escaped in cells; the HTML page escapes them
    from wgbcore.render import Document

    doc = Document("t").heading("A & B").para("see `results.json`, **bold**")
    doc.table(["item", "score"], [["<b>x</b> | y", 0.5]]).items(["one `code`"])
    md = doc.markdown()
    assert md.startswith("# t\n") and "## A & B" in md and "| \\<b>x\\</b> \\| y | 0.500 |" in md
    assert "see `results.json`, **bold**" in md and "- one `code`" in md
    html = doc.html()
    assert "&lt;b&gt;x&lt;/b&gt; | y" in html and "<thead>" in html and '<td class="num">0.500</td>' in html
    assert "<code>results.json</code>" in html and "<strong>bold</strong>" in html and "`" not in html
    assert html.index("<ul>") < html.index("<li>one <code>code</code></li>") < html.index("</ul>")
    paths = doc.write(tmp_path, "r")
    assert paths["md"].read_text() == md and paths["html"].read_text() == html


def test_inline_escapes_before_markup():
    from wgbcore.render import inline

    assert str(inline("**<script>**")) == "<strong>&lt;script&gt;</strong>"
    assert str(inline("a `<i>` b")) == "a <code>&lt;i&gt;</code> b"


def test_filters():
    assert num(None) == num(float("nan")) == "–" and num(0.12345) == "0.123" and num(3) == "3"
    assert signed(0.1234) == "+0.123" and signed(-2.0, 1) == "-2.0" and signed(None) == "–"
    assert interval([-0.1, 0.25]) == "[-0.100, +0.250]" and interval([float("nan"), 1.0]) == "–"
    assert pct(0.256) == "26%" and cell("a\nb|c") == "a b\\|c"


def test_undefined_names_are_errors():
    with pytest.raises(jinja2.UndefinedError):
        environment("wgbcore").from_string("{{ missing.value }}").render()
