"""obs_recall reads: exact pages and literal byte search (extensions.md §5.4), bounded by what a recall
costs (issue 25): pages of at most 8 KiB, a search hit's lines with the whole lines around them that
fit 200 bytes on each side."""

from __future__ import annotations

import asyncio
import os

import pytest

from tau.bundled.obspack.recall import MAX_RECALL_BYTES, read_page, render_page, search
from tau.common import jsjson
from tau.extension import AbortSignal, ToolError

OBS = "obs_" + "c" * 24


@pytest.fixture
def stored(tmp_path):
    def open_(data: bytes):
        path = tmp_path / "object.txt"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        return fd, len(data)

    return open_


def test_pages_return_the_exact_bytes_and_never_split_a_code_point(stored):
    body = ("utf8: luna ☾\n" + "0123456789abcdef\n" * 1200 + "final line" + "☾" * 9000).encode()
    fd, size = stored(body)
    recalled, offset, pages = b"", 0, 0
    while True:
        page = read_page(fd, size, offset)
        text = render_page(OBS, page)
        first, second, chunk = text.split("\n", 2)
        assert (
            first
            == f"[obs_recall id={OBS} offset={offset} next_offset={page.next_offset} eof={'true' if page.eof else 'false'}]"
        )
        assert (
            second == f"[chunk_bytes={len(page.data)} chunk_lines={page.lines}; use next_offset to continue]"
        )
        assert chunk.encode() == page.data and "\ufffd" not in chunk
        assert len(text.encode()) <= MAX_RECALL_BYTES and text.count("\n") + (not text.endswith("\n")) <= 200
        recalled += page.data
        pages += 1
        offset = page.next_offset
        if page.eof:
            break
    assert recalled == body and pages > 3


def test_a_page_stops_after_198_lines(stored):
    fd, size = stored(b"x\n" * 1000)
    page = read_page(fd, size, 0)
    assert page.data == b"x\n" * 198 and page.details(OBS) == {
        "id": OBS,
        "offset": 0,
        "bytes": 396,
        "lines": 198,
        "nextOffset": 396,
        "eof": False,
    }


def test_a_recall_page_is_bounded_to_8_kib(stored):
    """Issue 25: a recalled page stays in every later request, so it is at most 8 KiB (7,680 bytes of
    the original under two header lines), not 16 KiB; a 40 KB log comes back in six pages."""
    body = "".join(f"{n:05d} " + "x" * 74 + "\n" for n in range(500)).encode()  # 40,000 bytes, 80 a line
    fd, size = stored(body)
    page = read_page(fd, size, 0)
    assert (len(page.data), page.next_offset) == (7680, 7680)  # 96 lines, the last one cut
    assert len(render_page(OBS, page).encode()) <= 8 * 1024 == MAX_RECALL_BYTES
    offsets, offset = [], 0
    while not (page := read_page(fd, size, offset)).eof:
        offsets.append(offset)
        offset = page.next_offset
    assert len(offsets) + 1 == 6


def test_an_offset_past_the_end_is_an_error(stored):
    fd, size = stored(b"abc")
    assert read_page(fd, size, 3).eof
    with pytest.raises(ToolError, match="Offset 4 exceeds observation size 3"):
        read_page(fd, size, 4)


def run(coro):
    return asyncio.run(coro)


def test_search_finds_overlapping_matches_with_lines_and_contexts(stored):
    body = b"line one\naaaa\nthird\x00nul\n"
    fd, size = stored(body)
    found = run(search(fd, size, OBS, "aa", 0))
    assert [(m["byteOffset"], m["byteEnd"], m["line"]) for m in found.matches] == [
        (9, 11, 2),
        (10, 12, 2),
        (11, 13, 2),
    ]
    assert found.eof and found.next_offset == size
    first = found.matches[0]  # line 2 and the whole lines around it, without the final line break
    assert first["context"] == "line one\naaaa\nthird\x00nul"
    assert (first["contextStart"], first["contextEnd"]) == (0, size - 1)
    nul = run(search(fd, size, OBS, "\x00nul\n", 0)).matches
    assert [(m["byteOffset"], m["line"]) for m in nul] == [(19, 3)]
    multi = run(search(fd, size, OBS, "one\naaaa", 0)).matches
    assert [m["line"] for m in multi] == [1]
    from_offset = run(search(fd, size, OBS, "aa", 10))
    assert [m["byteOffset"] for m in from_offset.matches] == [10, 11]
    miss = run(search(fd, size, OBS, "zzz", 0))
    assert (miss.matches, miss.next_offset, miss.eof) == ([], size, True)


def test_a_search_hit_is_its_line_with_a_little_context_not_a_page(stored):
    """Issue 25: searching a packed 40 KB test log for the one failing line returns that line and the
    whole lines around it within 200 bytes on each side (about 500 bytes), where paging to it
    returned a 16 KB page."""
    lines = [f"tests/test_{n:04d}.py::test_case_number_{n} PASSED" for n in range(1000)]
    lines[612] = "tests/test_0612.py::test_case_number_612 FAILED - AssertionError: assert 41 == 42"
    body = ("\n".join(lines) + "\n").encode()
    fd, size = stored(body)
    found = run(search(fd, size, OBS, "FAILED", 0))
    (match,) = found.matches
    context = match["context"].split("\n")
    assert match["line"] == 613 and lines[612] in context and lines[611] in context and lines[613] in context
    assert "\n".join(context) in "\n".join(lines) and body[match["contextStart"] : match["contextEnd"]].decode() == match["context"]
    assert len(context) == 7  # the failing line, and the three whole lines on each side that fit 200 bytes
    text = jsjson.dumps_str(found.details(OBS, "FAILED"))
    assert len(text.encode()) < 800 and size > 40_000


@pytest.mark.parametrize("char", ["é", "☾", "😀"])
def test_search_contexts_in_one_long_line_are_200_bytes_each_side_trimmed_to_whole_code_points(stored, char):
    body = (char * 200 + "NEEDLE" + char * 200).encode()
    fd, size = stored(body)
    (match,) = run(search(fd, size, OBS, "NEEDLE", 0)).matches
    start = len((char * 200).encode())
    assert match["byteOffset"] == start
    assert start - 200 <= match["contextStart"] <= start and match["contextEnd"] <= start + 6 + 200
    assert match["contextEnd"] - match["contextStart"] == len(match["context"].encode())
    assert body[match["contextStart"] : match["contextEnd"]].decode() == match["context"]
    width = len(char.encode())
    assert start - match["contextStart"] > 200 - width and match["contextEnd"] - start - 6 > 200 - width


def test_search_stops_at_20_matches_and_continues_without_skips_or_repeats(stored):
    body = ("hit\n" * 45).encode()
    fd, size = stored(body)
    starts, offset, rounds = [], 0, 0
    while True:
        found = run(search(fd, size, OBS, "hit", offset))
        starts += [m["byteOffset"] for m in found.matches]
        rounds += 1
        assert len(found.matches) <= 20
        if found.eof:
            break
        offset = found.next_offset
    assert starts == [4 * n for n in range(45)] and rounds == 3


def test_search_results_fit_8_kib_once_contexts_are_json_escaped(stored):
    noise = "\x01" * 300  # each byte escapes to six in JSON
    body = ("".join(f"{noise}K{noise}" for _ in range(30))).encode()
    fd, size = stored(body)
    found = run(search(fd, size, OBS, "K", 0))
    assert 0 < len(found.matches) < 20 and not found.eof
    assert len(jsjson.dumps(found.details(OBS, "K"))) <= MAX_RECALL_BYTES
    rest = run(search(fd, size, OBS, "K", found.next_offset))
    assert rest.matches[0]["byteOffset"] == found.next_offset


@pytest.mark.parametrize(
    ("query", "message"),
    [("", "must not be empty"), ("\ud800", "well-formed"), ("é" * 129, "256 UTF-8")],
)
def test_invalid_queries_are_refused(stored, query, message):
    fd, size = stored(b"abc")
    with pytest.raises(ToolError, match=message):
        run(search(fd, size, OBS, query, 0))


def test_search_honours_abort_even_during_the_prefix_rescan(stored):
    fd, size = stored(b"x" * (3 * 1024 * 1024) + b"needle")
    signal = AbortSignal()

    async def scenario():
        task = asyncio.ensure_future(search(fd, size, OBS, "needle", size - 6, signal))
        await asyncio.sleep(0)
        signal.abort()
        return await task

    with pytest.raises(ToolError, match="aborted"):
        run(scenario())
    aborted = AbortSignal()
    aborted.abort()
    with pytest.raises(ToolError, match="aborted"):
        run(search(fd, size, OBS, "needle", 0, aborted))
    assert run(search(fd, size, OBS, "needle", size - 6)).matches[0]["line"] == 1
