"""Truncation limits at N and N+1, as pi 1.6 counts lines and UTF-8 bytes."""

from __future__ import annotations

from tau.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head, truncate_tail


def lines(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_head_at_the_line_limit_is_untouched_and_one_more_is_cut():
    at_limit = truncate_head(lines(2000))
    assert not at_limit["truncated"] and at_limit["totalLines"] == 2000
    over = truncate_head(lines(2001))
    assert over["truncated"] and over["truncatedBy"] == "lines"
    assert over["outputLines"] == 2000 and over["content"].endswith("\n2000")


def test_head_at_the_byte_limit_is_untouched_and_one_more_byte_is_cut():
    exact = "a" * 1023 + "\n"
    text = exact * 50  # 51200 bytes exactly
    assert len(text.encode()) == DEFAULT_MAX_BYTES
    assert not truncate_head(text)["truncated"]
    over = truncate_head(text + "b")
    assert over["truncatedBy"] == "bytes" and over["outputLines"] == 50


def test_head_never_returns_a_partial_line_and_flags_an_oversized_first_line():
    result = truncate_head("x" * (DEFAULT_MAX_BYTES + 1) + "\nshort")
    assert result["firstLineExceedsLimit"] and result["content"] == "" and result["outputLines"] == 0


def test_tail_keeps_the_last_lines():
    result = truncate_tail(lines(2001))
    assert (
        result["truncatedBy"] == "lines"
        and result["content"].startswith("2\n")
        and result["outputLines"] == 2000
    )


def test_tail_keeps_the_end_of_an_oversized_last_line_on_a_character_boundary():
    result = truncate_tail("é" * 30000)  # 60000 bytes, one line
    assert result["lastLinePartial"] and result["truncatedBy"] == "bytes"
    assert result["outputBytes"] <= DEFAULT_MAX_BYTES and set(result["content"]) == {"é"}


def test_multibyte_text_is_measured_in_utf8_bytes():
    assert truncate_head("é" * 25600)["totalBytes"] == 51200


def test_format_size():
    assert [format_size(n) for n in (0, 1023, 1024, 51200, 1536, 1024 * 1024, 5 * 1024 * 1024 + 1)] == [
        "0B",
        "1023B",
        "1.0KB",
        "50.0KB",
        "1.5KB",
        "1.0MB",
        "5.0MB",
    ]
