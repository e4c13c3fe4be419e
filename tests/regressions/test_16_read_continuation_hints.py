"""Issue 16, item 7: ``read`` with a negative or fractional ``limit`` printed a wrong continuation hint.

pi 1.6 computes ``[K more lines in file. Use offset=N to continue.]`` from the raw numbers, so
``limit=-3`` on a 10-line file showed lines 1-8 and then "14 more lines ... offset=-2". tau counts the
lines it really showed (a deliberate difference, docs/tools.md); for whole-number offsets and limits
the texts are pi's, unchanged.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.tools import ToolContext, builtin_tool

LINES = [f"line {n}" for n in range(1, 11)]
TEXT = "\n".join(LINES) + "\n"  # 11 lines as text.split("\n") counts them, the last one empty
HINT = re.compile(r"\n\n\[(-?[\d.]+) more lines in file\. Use offset=(-?[\d.]+) to continue\.\]\Z")


def read(directory: str, **params) -> str:
    tool = builtin_tool("read")
    result = asyncio.run(
        tool.execute("call_1", {"path": "ten.txt", **params}, None, None, ToolContext(cwd=directory))
    )
    return result.content[0]["text"]


def test_a_negative_limit_gets_the_hint_of_the_lines_it_showed(tmp_path):
    (tmp_path / "ten.txt").write_text(TEXT)
    assert (
        read(str(tmp_path), limit=-3)
        == "\n".join(LINES[:8]) + "\n\n[3 more lines in file. Use offset=9 to continue.]"
    )
    assert read(str(tmp_path), offset=3, limit=-2) == "\n\n[9 more lines in file. Use offset=3 to continue.]"
    assert (
        read(str(tmp_path), offset=2.5, limit=2)
        == "line 2\nline 3\n\n[8 more lines in file. Use offset=4 to continue.]"
    )


def test_whole_numbers_keep_pi_s_texts(tmp_path):
    (tmp_path / "ten.txt").write_text(TEXT)
    assert read(str(tmp_path), offset=3, limit=4) == "\n".join(LINES[2:6]) + (
        "\n\n[5 more lines in file. Use offset=7 to continue.]"
    )
    assert read(str(tmp_path), offset=-2, limit=3) == "\n".join(LINES[:3]) + (
        "\n\n[8 more lines in file. Use offset=4 to continue.]"
    )
    assert read(str(tmp_path), offset=-5) == TEXT
    assert read(str(tmp_path), limit=0) == "\n\n[11 more lines in file. Use offset=1 to continue.]"


numbers = st.integers(-15, 15) | st.floats(-15, 15, allow_nan=False).map(lambda x: round(x, 1))


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(offset=st.none() | numbers, limit=numbers)
def test_the_hint_continues_right_after_the_last_line_shown(offset, limit):
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "ten.txt").write_text(TEXT)
        params = {"limit": limit} if offset is None else {"offset": offset, "limit": limit}
        try:
            text = read(directory, **params)
        except ValueError as exc:  # an offset past the end
            assert "is beyond end of file (11 lines total)" in str(exc)
            return
        hint = HINT.search(text)
        if hint is None:
            return  # everything from the first shown line to the end was shown
        assert hint.group(1).isdigit() and hint.group(2).isdigit(), hint.group(
            0
        )  # whole lines, a real offset
        remaining, next_offset = int(hint.group(1)), int(hint.group(2))
        shown = text[: hint.start()]
        all_lines = TEXT.split("\n")
        assert remaining == len(all_lines) - (next_offset - 1)
        assert 1 <= next_offset <= len(all_lines)
        if shown:  # the shown lines end just before the line the hint continues with
            assert all_lines[: next_offset - 1][-len(shown.split("\n")) :] == shown.split("\n")
