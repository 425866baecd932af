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


NUMBER = r"(?<![\w.@#])\d+(?:[.,]\d+)*"   # not a part of a name such as FB13, Hits@10 or issue #19


def _year(n: str) -> bool:
    return len(n) == 4 and n[:2] in ("19", "20")


def test_the_readme_is_short_and_types_no_number():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    numbers = re.findall(NUMBER, _prose(text))
    allowed = {"3.10", "3.0"}  # the Python version, the licence's version
    typed = [n for n in numbers if n not in allowed and not _year(n)]
    assert typed == [], f"numbers typed into the README (generate them instead): {typed}"
    for name in ("wgb-run-quick", "setup-times", "headlines-readme"):
        assert f"<!-- BEGIN generated:{name} -->" in text


def test_the_prose_check_sees_a_typed_number():
    assert re.findall(NUMBER, _prose("FB13 took 84 s\n```\nx = 3\n```\n")) == ["84"]


def _doc_prose(text: str) -> str:
    """A docs page's prose: as `_prose`, and without inline code unless the code is a bare number
    (commands, paths, options and literals such as `--folds 5` or `1e-3` are the interface, but a
    result in backticks still counts), a heading's ordinal ("### 2. One machine") and the snippet
    include line of docs/contributing/architecture.md."""
    text = _prose(text)
    text = re.sub(r"`([^`]*)`", lambda m: m.group(0) if re.fullmatch(r"[\d.,%+-]+", m.group(1).strip()) else "", text)
    text = re.sub(r"(?m)^(#+\s+)\d+\.", r"\1", text)
    return re.sub(r"(?m)^--8<--.*$", "", text)


# Numbers a docs page may type: parameters and facts of the interface, versions, citations; never a
# result (those come from a generated block). Years (19xx, 20xx) are allowed everywhere.
# docs/configuration.md is generated whole from the config classes (tests/test_readme_configuration.py).
DOCS_ALLOWED = {
    "docs/getting-started.md": {"3.10": "the minimum Python version"},
    "docs/index.md": {"3.0": "the licence, CC BY-SA 3.0"},
    "docs/guide/building.md": {"1": "'[1]', a quoted citation marker; 'Pass 1', a name",
                               "0.95": "the selection rules' target share, set before measuring"},
    "docs/guide/crossfit.md": {"5": "the default of --folds", "10": "the validation slice, fold_val_fraction 0.1"},
    "docs/guide/debiasing.md": {"0": "the bound a verdict's interval is judged against",
                                "10": "seeds of the study command shown below it", "5": "the same",
                                "2": "that command's two workers on two cores", "1.0.1": "WEFE's version"},
    "docs/guide/errors-and-caches.md": {"1": "exit code 1; ks >= 1", "2": "exit code 2; a line number in an example",
                                        "99": "an example relation id"},
    "docs/guide/extractors.md": {"0": "the bound a flagged gap's interval excludes",
                                 "95": "the intervals' confidence level", "0.1.1": "OpenNRE's version"},
    "docs/guide/kge.md": {"1": "|A|+1 in Keidar et al.'s formula", "3": "Bourli's chapter 3",
                          "6.2": "Bourli's Table 6.2", "6.3": "Bourli's Table 6.3", "1.11": "PyKEEN's version",
                          "512": "the range profile's uniform candidates per batch (kge.train_profiles)"},
    "docs/guide/main-job.md": {"0": "the claims' null values", "1": "(1 - q) and 1/A in the definitions",
                               "95": "the null range's level", "100": "null graphs per seed, wgb.pipeline.nulls.N_DRAWS"},
    "docs/guide/scale-out.md": {
        "0": "rank 0, worker 0", "1": "--partitions 1, one thread or core", "2": "two ranks, workers, threads or "
        "epochs of a described set-up; at least 2 partitions per machine", "3": "PBG's 3 HDF5 datasets per bucket; "
        "the executor's MAX_WORKER_DEATHS", "5": "the executor's poll_seconds", "8": "re_throughput.py's 8 runs; "
        "8 cores projected", "12": "bytes an edge in a bucket file (three int32)", "32": "32 cores projected",
        "50": "PBG's 50 MiB per HDF5 dataset", "150": "3 x 50 MiB", "81": "the setuptools version",
        "1.0.0": "PBG's version"},
    "docs/guide/scoring.md": {"0.1.1": "OpenNRE's version"},
}


def _typed_numbers(rel: str, text: str) -> list[str]:
    allowed = DOCS_ALLOWED.get(rel, {})
    return [n for n in re.findall(NUMBER, _doc_prose(text)) if n not in allowed and not _year(n)]


def test_the_docs_pages_type_no_measured_number():
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
    assert "docs/guide/kge.md" in pages and set(DOCS_ALLOWED) <= set(pages)
    typed = {rel: found for rel in pages if rel != "docs/configuration.md"
             and (found := _typed_numbers(rel, (ROOT / rel).read_text(encoding="utf-8")))}
    assert typed == {}, f"numbers typed into docs prose (generate them in a block, or allow a parameter): {typed}"


def test_the_docs_check_sees_a_typed_number():
    rel = "docs/guide/kge.md"
    text = (ROOT / rel).read_text(encoding="utf-8")
    assert _typed_numbers(rel, text) == []
    block = "<!-- BEGIN generated:kge-convergence -->\n"
    assert block in text
    assert _typed_numbers(rel, text.replace(block, "TransE reaches Hits@10 0.316 after 70 epochs.\n\n" + block)) \
        == ["0.316", "70"]
    assert _typed_numbers(rel, text.replace(block, "Fisher took `9.4` s (`--epochs 70`).\n\n" + block)) == ["9.4"]
    assert _typed_numbers(rel, "```\nx = 3\n```\n<!-- BEGIN generated:a -->\n84\n<!-- END generated:a -->\n") == []


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
