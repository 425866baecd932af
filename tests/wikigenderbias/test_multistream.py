"""One multistream dump read by byte ranges through its index (wikigenderbias.multistream)."""
import bz2
import os
import shutil

import pytest

from wikigenderbias.build import expand_inputs
from wikigenderbias.dbpedia import DumpError, Issues
from wikigenderbias.multistream import index_for, is_index, plan_ranges, range_lines
from wikigenderbias.parts import PartSpec, plan_parts
from wikigenderbias.synthetic import generate
from wikigenderbias.wikipedia import iter_pages


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    """A generated multistream dump: header stream, 4 streams of persons, 1 of other pages, trailer."""
    folder = tmp_path_factory.mktemp("ms")
    gen = generate(folder, 400, parts=2, other=60, seed=3, short=True, multistream=True)
    return gen["parts"][0], gen["index"]


def read(path, byte_range=None):
    stats, issues = {}, Issues()
    pages = [(p.title, p.page_id, p.text) for p in iter_pages(path, stats=stats, issues=issues, byte_range=byte_range)]
    return pages, stats, issues.counts


def test_index_is_found_beside_its_dump_by_wikimedias_names(tmp_path):
    pairs = [("enwiki-20240101-pages-articles-multistream.xml.bz2",
              "enwiki-20240101-pages-articles-multistream-index.txt.bz2"),
             ("enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2",
              "enwiki-20240101-pages-articles-multistream-index1.txt-p1p41242.bz2")]
    for dump, index in pairs:
        (tmp_path / dump).write_bytes(b"")
        assert index_for(tmp_path / dump) is None  # no index there yet
        (tmp_path / index).write_bytes(b"")
        assert index_for(tmp_path / dump) == str(tmp_path / index)
        assert is_index(index) and not is_index(dump)
    assert index_for(tmp_path / "enwiki-20240101-pages-articles1.xml-p1p41242.bz2") is None


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50])
def test_ranges_cover_the_file_and_give_the_pages_of_the_whole_file(ms, n):
    path, index = ms
    ranges = plan_ranges(path, index, n)
    size = os.path.getsize(path)
    assert ranges[0][0] == 0 and ranges[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert len(ranges) == min(n, 5)  # never more ranges than page streams (4 of persons, 1 of other pages)
    whole, stats, issues = read(path)
    pages, st, iss = [], {}, {}
    for r in ranges:
        p, s, i = read(path, r)
        pages += p
        for k, v in s.items():
            st[k] = st.get(k, 0) + v
        assert i == {}
    assert pages == whole and st == stats and issues == {}
    assert sum(1 for t, _, _ in whole if t.rsplit(" ", 1)[-1].isdigit()) == 400  # every person read


def test_a_range_records_where_its_pages_are(ms):
    path, index = ms
    start, end = plan_ranges(path, index, 3)[1]
    pages = list(iter_pages(path, byte_range=(start, end)))
    name = os.path.basename(path)
    assert pages and all(p.where.startswith(f"{name}@{start}:") for p in pages)
    # the line is a line of the decompressed range: seek there and find the page
    first = pages[0]
    lines = list(range_lines(path, start, end))
    line = int(first.where.rsplit(":", 1)[1])
    assert lines[line - 1].strip() == b"<page>" and first.title.encode() in b"".join(lines[line:line + 3])


def rewrite_index(src, dst, edit):
    with bz2.open(src, "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines(keepends=True)
    with bz2.open(dst, "wt", encoding="utf-8") as fh:
        fh.writelines(edit(lines))


def test_a_bad_index_is_a_clear_error_before_any_work(ms, tmp_path):
    path, index = ms
    size = os.path.getsize(path)
    bad = tmp_path / "index.txt.bz2"
    cases = [
        (lambda ls: ls[:1] + ["oops\n"] + ls[1:], r"index.txt.bz2:2: not an index line"),
        (lambda ls: ls[:150] + ["5:1:Back\n"] + ls[150:], r"index.txt.bz2:151: offset 5 is smaller"),
        (lambda ls: ls + [f"{size + 10}:9:Beyond\n"], r"index.txt.bz2:\d+: offset \d+ is beyond the end"),
        # shifted by one byte: no bz2 stream starts there
        (lambda ls: [f"{int(x.split(':', 1)[0]) + 1}:{x.split(':', 1)[1]}" for x in ls], "no bz2 stream starts at byte"),
    ]
    for edit, message in cases:
        rewrite_index(index, bad, edit)
        with pytest.raises(DumpError, match=message):
            plan_ranges(path, bad, 4)


def test_a_range_cut_inside_a_stream_is_a_clear_error(ms):
    path, index = ms
    start, end = plan_ranges(path, index, 3)[1]
    with pytest.raises(DumpError, match="cut short"):
        list(range_lines(path, start, end - 7))


def test_plan_parts_cuts_only_multistream_dumps_with_an_index(ms, tmp_path):
    path, index = ms
    specs, warnings = plan_parts([path], 2)
    assert len(specs) == 5 and all(s.byte_range for s in specs) and warnings == []  # one range per page stream
    assert specs[0].label == f"{path}@0-{specs[0].byte_range[1]}"
    assert plan_parts([path], 1) == (specs, [])  # the cut does not depend on the workers (resuming with others)
    alone = tmp_path / "enwiki-x-pages-articles-multistream.xml.bz2"
    shutil.copy(path, alone)  # no index beside it
    specs, warnings = plan_parts([str(alone)], 2)
    assert specs == [PartSpec(str(alone))]
    assert len(warnings) == 1 and "read by one process although 2 workers" in warnings[0]
    assert "its index is not beside it" in warnings[0]
    plain = tmp_path / "pages.xml.bz2"
    shutil.copy(path, plain)
    assert "single-stream file can only be read from its start" in plan_parts([str(plain)], 2)[1][0]
    assert plan_parts([str(plain), str(alone)], 2)[1] == []  # two files, two workers: no warning


def test_index_files_are_not_inputs(ms, tmp_path):
    path, index = ms
    folder = os.path.dirname(path)
    assert expand_inputs([folder], "Wikipedia") == [path]
    with pytest.raises(DumpError, match="is a multistream index, not a dump"):
        expand_inputs([index], "Wikipedia")
