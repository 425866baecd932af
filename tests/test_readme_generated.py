"""Every generated block of the README, the docs pages and the results READMEs matches the committed
results it is generated from; the README stays short and types no number of its own."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _scripts():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import readme_blocks_headline
        import readme_tables
        import record_setup
    finally:
        sys.path.pop(0)
    return readme_tables, readme_blocks_headline, record_setup


def test_readme_blocks_are_regenerated_from_results():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tables.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_docs_pages_are_among_the_generated_files():
    readme_tables, _, _ = _scripts()
    files = readme_tables.files()
    assert "README.md" in files and "docs/guide/benchmark.md" in files and "docs/index.md" in files


def test_a_retyped_number_is_caught():
    readme_tables, _, _ = _scripts()
    text = (ROOT / "docs" / "guide" / "benchmark.md").read_text()
    block = "<!-- BEGIN generated:data-stats -->\n"
    assert block in text
    number = re.search(r"\d+\.\d%", text[text.index(block):]).group(0)
    edited = text.replace(number, "99.9%", 1)
    assert edited != text and readme_tables.render(edited) == text


def test_an_unknown_block_is_an_error():
    readme_tables, _, _ = _scripts()
    try:
        readme_tables.render("<!-- BEGIN generated:no-such-block -->\n<!-- END generated:no-such-block -->")
    except readme_tables.UnknownBlock as e:
        assert "no-such-block" in str(e)
    else:
        raise AssertionError("an unknown block was accepted")


def _prose(text: str) -> str:
    """The README without its generated blocks, code blocks and citation."""
    text = re.sub(r"<!-- BEGIN generated:([\w-]+) -->.*?<!-- END generated:\1 -->", "", text, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return text


NUMBER = r"(?<![\w.])\d+(?:[.,]\d+)*"   # not a part of a name such as FB13


def test_the_readme_is_short_and_types_no_number():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    numbers = re.findall(NUMBER, _prose(text))
    allowed = {"3.10", "3.0"}  # the Python version, the licence's version
    typed = [n for n in numbers if n not in allowed and not (len(n) == 4 and n[:2] in ("19", "20"))]
    assert typed == [], f"numbers typed into the README (generate them instead): {typed}"
    for name in ("wgb-run-quick", "setup-times", "headlines-readme"):
        assert f"<!-- BEGIN generated:{name} -->" in text


def test_the_prose_check_sees_a_typed_number():
    assert re.findall(NUMBER, _prose("FB13 took 84 s\n```\nx = 3\n```\n")) == ["84"]


def test_setup_record_is_parsed_from_pytest_output(tmp_path):
    _, headline, record_setup = _scripts()
    out = ("....s\nSKIPPED [2] tests/kge/test_x.py:12: no CUDA\nFAILED tests/test_y.py::test_z - AssertionError\n"
           "==== 1001 passed, 2 skipped, 3 deselected in 312.50s (0:05:12) ====\n")
    s = record_setup.pytest_summary(out)
    assert (s["passed"], s["skipped"], s["failed"], s["seconds"]) == (1001, 2, 0, 312.5)
    assert s["skips"] == [{"count": 2, "file": "tests/kge/test_x.py", "reason": "no CUDA"}]
    assert s["failures"] == ["tests/test_y.py::test_z"]
    assert record_setup.pytest_summary("no summary here") == {"found": False}
    import json

    rec = {"cpu_count": 2, "loadavg_before": [1.0], "loadavg_after": [2.5], "note": "n",
           "install": {"wall_seconds": 95.2}, "ci": {"wall_seconds": 600.0, "pytest": s}}
    (tmp_path / "r.json").write_text(json.dumps(rec))
    headline.ROOT, old = tmp_path, headline.ROOT
    try:
        line = headline.setup_times("r.json")
    finally:
        headline.ROOT = old
    assert "the install took 95 s" in line and "10.0 min" in line and "1001 passed, 2 skipped" in line
    s["failed"] = 1
    (tmp_path / "r.json").write_text(json.dumps(rec))
    headline.ROOT = tmp_path
    try:
        assert "1001 passed, 1 failed, 2 skipped" in headline.setup_times("r.json")
    finally:
        headline.ROOT = old


def test_the_docs_hook_drops_sphinx_roles():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from mkdocs_hooks import clean
    finally:
        sys.path.pop(0)
    html = "<p>See :func:<code>load</code> and :class:<code>~wgbcore.registry.Registry</code>::</p>"
    assert clean(html) == "<p>See <code>load</code> and <code>Registry</code>:</p>"
    assert clean("<p>a :: b</p>") == "<p>a :: b</p>"


def test_setup_record_refuses_a_file_caught_mid_edit(tmp_path):
    _, _, record_setup = _scripts()
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("def f():\n  x = 1\n    y = 2\n")
    assert record_setup._compiles(tmp_path / "ok.py") and not record_setup._compiles(tmp_path / "bad.py")
