"""One ``pages-articles-multistream.xml.bz2`` read in parallel, through its index.

Wikimedia's multistream dump is a concatenation of independent bz2 streams: a header stream
(``<mediawiki>`` and ``<siteinfo>``), then streams of 100 whole pages each, then a trailer stream
(``</mediawiki>``). Its index, ``...-multistream-index.txt.bz2`` beside it, has one line
``offset:page_id:title`` per page, ``offset`` being the byte at which the page's stream starts.
Any stream offset is therefore a place where reading can start, so the file is cut into byte
ranges at stream offsets (:func:`plan_ranges`) and each range is decompressed on its own
(:func:`range_lines`). Every byte of the file is in exactly one range (the first range starts at
byte 0, the last ends at the end of the file), ranges keep the file's order, and no page
straddles two ranges: reading the ranges one after another yields the pages, and so the records,
of reading the whole file. A range's pages are located as ``file@start:line`` (line within the
decompressed range), so a page can be found again by seeking to ``start``.

Index and dump are checked before any work: the index must be readable, its offsets must not
decrease and must lie inside the file, and the file must hold a bz2 stream header
(``BZh1``-``BZh9`` followed by the block magic) at every cut; otherwise
:class:`~wikigenderbias.dbpedia.DumpError` names the index file and line, or the offset.

A plain (single-stream) ``.bz2`` is not cut: its blocks start at bit, not byte, offsets and
carry no index, and a block can only be decompressed after re-aligning the rest of the stream.
"""
from __future__ import annotations

import bz2
import io
import os
import re
from collections.abc import Iterator

from wikigenderbias.dbpedia import DumpError

__all__ = ["index_for", "is_index", "stream_offsets", "plan_ranges", "range_lines", "RANGE_BYTES"]

#: Target size of one byte range (compressed bytes): enwiki's ~22 GB file gives ~90 ranges,
#: each of which is a part of the build cache (an interrupted build resumes by range).
RANGE_BYTES = 256 * 2**20

_DUMP_NAME = re.compile(r"^(?P<stem>.*-multistream)(?P<num>\d*)\.xml(?P<rest>.*)\.bz2$")
_INDEX_NAME = re.compile(r"^.*-multistream-index\d*\.txt.*\.bz2$")
# a stream header: "BZh" + block size digit + the first block's magic (or the end-of-stream magic)
_STREAM_HEADER = re.compile(rb"^BZh[1-9](?:\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)")


def index_for(path: str | os.PathLike) -> str | None:
    """The index file beside a multistream dump (Wikimedia's naming: ``X-multistream.xml.bz2`` ->
    ``X-multistream-index.txt.bz2``, ``X-multistream1.xml-p1p41242.bz2`` ->
    ``X-multistream-index1.txt-p1p41242.bz2``), or None when the name is not a multistream
    dump's or the index is not there."""
    p = os.fspath(path)
    m = _DUMP_NAME.match(os.path.basename(p))
    if m is None:
        return None
    index = os.path.join(os.path.dirname(p), f"{m['stem']}-index{m['num']}.txt{m['rest']}.bz2")
    return index if os.path.isfile(index) else None


def is_index(path: str | os.PathLike) -> bool:
    """True for a file named like a multistream index (not a dump to read)."""
    return _INDEX_NAME.match(os.path.basename(os.fspath(path))) is not None


def stream_offsets(index: str | os.PathLike, size: int) -> Iterator[int]:
    """The distinct stream offsets of an index, in order (one line in memory at a time); a line
    that is not ``offset:page_id:title``, a decreasing offset or one outside a dump of ``size``
    bytes raises :class:`DumpError` naming ``index:line``."""
    p = os.fspath(index)
    name = os.path.basename(p)
    last = -1
    try:
        with bz2.open(p, "rb") as fh:
            for lineno, line in enumerate(fh, 1):
                head, sep, _ = line.partition(b":")
                if not sep or not head.isdigit():
                    if not line.strip():
                        continue
                    raise DumpError(f"{name}:{lineno}: not an index line offset:page_id:title "
                                    f"({line[:60]!r})")
                off = int(head)
                if off == last:
                    continue
                if off < last:
                    raise DumpError(f"{name}:{lineno}: offset {off} is smaller than the one before ({last}); "
                                    "the index does not belong to a multistream dump")
                if off >= size:
                    raise DumpError(f"{name}:{lineno}: offset {off} is beyond the end of the dump ({size} bytes); "
                                    "the index belongs to another dump")
                last = off
                yield off
    except EOFError as exc:
        raise DumpError(f"{p} is truncated ({exc}); re-download it") from exc
    except OSError as exc:
        raise DumpError(f"cannot read the multistream index {p}: {exc}") from exc


def plan_ranges(path: str | os.PathLike, index: str | os.PathLike, n: int,
                target: int = RANGE_BYTES) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` covering the dump, cut at stream offsets of the index: at
    least ``n`` (if the dump has that many streams) and about ``target`` bytes each at most.
    Every cut is checked to be a bz2 stream header."""
    p = os.fspath(path)
    size = os.path.getsize(p)
    want = max(n, -(-size // target), 1)
    step = size / want
    cuts: list[int] = []
    goal = step
    for off in stream_offsets(index, size):  # the first offset at or after each goal
        if off >= goal and off > (cuts[-1] if cuts else 0):
            cuts.append(off)
            while goal <= off:
                goal += step
    with open(p, "rb") as fh:
        for off in cuts:
            fh.seek(off)
            if not _STREAM_HEADER.match(fh.read(10)):
                raise DumpError(f"{p}: no bz2 stream starts at byte {off}, an offset of the index "
                                f"{os.path.basename(os.fspath(index))}; the index belongs to another dump")
    bounds = [0, *cuts, size]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


class _Range(io.RawIOBase):
    """The bytes ``[start, end)`` of a file, as a readable raw stream."""

    def __init__(self, path: str, start: int, end: int) -> None:
        self._fh = open(path, "rb")
        self._fh.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(b)[: self._left]
        n = self._fh.readinto(view)
        self._left -= n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def range_lines(path: str | os.PathLike, start: int, end: int) -> Iterator[bytes]:
    """Decompressed binary lines of the bz2 streams in bytes ``[start, end)`` of a multistream
    dump; a range that ends inside a stream raises :class:`DumpError`."""
    p = os.fspath(path)
    try:
        raw = _Range(p, start, end)
    except OSError as exc:
        raise DumpError(f"cannot open {p}: {exc}") from exc
    try:
        with bz2.BZ2File(io.BufferedReader(raw, 1 << 20)) as fh:
            yield from fh
    except EOFError as exc:
        raise DumpError(f"{p}: the streams in bytes {start}-{end} are cut short ({exc}); the file is "
                        "truncated or the index belongs to another dump") from exc
    except OSError as exc:
        raise DumpError(f"cannot read {p} (bytes {start}-{end}): {exc}") from exc
