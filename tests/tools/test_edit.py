"""edit: pi 1.6's matching rules, error texts, line-ending and BOM preservation, and its diff details."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from tool_helpers import call, error_of, text_of

from tau.common import jsjson
from tau.tools import ToolContext, builtin_tool, prepare_arguments, validate_arguments
from tau.tools.edit_apply import apply_edits, apply_replacements_to_original, normalize_to_lf, split_bom
from tau.tools.edit_diff import generate_edit_diff

VECTORS = Path(__file__).parent / "data" / "pi_edit_vectors.json"


def write(ctx, name: str, data: bytes | str) -> str:
    path = os.path.join(ctx.cwd, name)
    with open(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    return path


def read_bytes(ctx, name: str) -> bytes:
    with open(os.path.join(ctx.cwd, name), "rb") as handle:
        return handle.read()


def edit(path: str, *pairs: tuple[str, str]) -> dict:
    return {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in pairs]}


def test_single_edit_result_and_details_match_the_i_edit_write_golden(ctx, pi_fixtures):
    write(ctx, "notes.txt", "alpha\nbeta\ngamma\n")
    result = call("edit", edit("notes.txt", ("beta", "BETA")), ctx)
    golden = None
    for line in (pi_fixtures / "scenarios" / "i-edit-write.jsonl").read_bytes().split(b"\n"):
        if b'"toolName":"edit"' in line and b"Successfully" in line:
            golden = jsjson.loads(line)["message"]
    assert golden is not None
    assert result.content == golden["content"]
    assert result.details == golden["details"]
    assert read_bytes(ctx, "notes.txt") == b"alpha\nBETA\ngamma\n"


def test_not_found_golden_text(ctx, pi_fixtures):
    write(ctx, "notes.txt", "alpha\n")
    message = error_of("edit", edit("notes.txt", ("delta", "x")), ctx)
    assert message == (
        "Could not find the exact text in notes.txt. The old text must match exactly including all whitespace and newlines."
    )
    assert message.encode() in (pi_fixtures / "scenarios" / "i-edit-write.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ((("", "x"),), "oldText must not be empty in f.txt."),
        ((("a", "b"), ("", "x")), "edits[1].oldText must not be empty in f.txt."),
        (
            (("zzz", "x"), ("one", "1")),
            "Could not find edits[0] in f.txt. The oldText must match exactly including all whitespace and newlines.",
        ),
        (
            (("dup", "x"),),
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.",
        ),
        (
            (("one", "1"), ("dup", "x")),
            "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique.",
        ),
        (
            (("one two", "x"), ("two three", "y")),
            "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions.",
        ),
        (
            (("one", "one"),),
            "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with "
            "special characters or the text not existing as expected.",
        ),
        (
            (("one", "one"), ("three", "three")),
            "No changes made to f.txt. The replacements produced identical content.",
        ),
    ],
)
def test_error_texts(ctx, pairs, message):
    write(ctx, "f.txt", "one two three\ndup\ndup\n")
    assert error_of("edit", edit("f.txt", *pairs), ctx) == message
    assert read_bytes(ctx, "f.txt") == b"one two three\ndup\ndup\n"


def test_missing_file_and_empty_edits(ctx):
    assert (
        error_of("edit", edit("gone.txt", ("a", "b")), ctx)
        == "Could not edit file: gone.txt. Error code: ENOENT."
    )
    assert error_of("edit", {"path": "gone.txt", "edits": []}, ctx) == (
        "Edit tool input is invalid. edits must contain at least one replacement."
    )


def test_multiple_edits_match_the_original_not_incrementally(ctx):
    write(ctx, "f.txt", "a = 1\nb = 2\nc = 3\n")
    result = call("edit", edit("f.txt", ("a = 1", "a = 10"), ("c = 3", "c = 30")), ctx)
    assert text_of(result) == "Successfully replaced 2 block(s) in f.txt."
    assert read_bytes(ctx, "f.txt") == b"a = 10\nb = 2\nc = 30\n"
    assert result.details["firstChangedLine"] == 1


def test_crlf_and_bom_are_preserved(ctx):
    write(ctx, "win.txt", "\ufeffone\r\ntwo\r\nthree\r\n".encode())
    call("edit", edit("win.txt", ("two\nthree", "2\nthree")), ctx)
    assert read_bytes(ctx, "win.txt") == "\ufeffone\r\n2\r\nthree\r\n".encode()


def test_mixed_line_endings_keep_untouched_lines(ctx):
    write(ctx, "mixed.txt", b"a\r\nb\nc\r\n")
    call("edit", edit("mixed.txt", ("b", "B\nB2")), ctx)
    assert read_bytes(ctx, "mixed.txt") == b"a\r\nB\nB2\nc\r\n"


def test_fuzzy_match_rewrites_only_the_touched_lines(ctx):
    write(ctx, "q.py", "x = \u201chello\u201d   \ny = \u2018keep\u2019\nz = 1\n")
    result = call("edit", edit("q.py", ('x = "hello"', 'x = "bye"')), ctx)
    assert text_of(result) == "Successfully replaced 1 block(s) in q.py."
    # the touched line is rewritten from the normalized text; the other lines keep their bytes
    assert read_bytes(ctx, "q.py").decode() == 'x = "bye"\ny = \u2018keep\u2019\nz = 1\n'


def test_diff_skips_distant_context(ctx):
    lines = [f"line {i}" for i in range(1, 21)]
    write(ctx, "long.txt", "\n".join(lines) + "\n")
    details = call("edit", edit("long.txt", ("line 10\n", "LINE 10\n")), ctx).details
    assert details["diff"] == (
        "    ...\n  6 line 6\n  7 line 7\n  8 line 8\n  9 line 9\n-10 line 10\n+10 LINE 10\n"
        " 11 line 11\n 12 line 12\n 13 line 13\n 14 line 14\n    ..."
    )
    assert details["patch"].startswith("--- long.txt\n+++ long.txt\n@@ -6,9 +6,9 @@\n line 6\n")
    assert details["firstChangedLine"] == 10


def test_pi_vectors():
    """300 random edits (CRLF, CR, BOM, smart quotes, dashes, NBSP, fullwidth) run through pi 1.6 itself."""
    mismatches = []
    for case in json.loads(VECTORS.read_text()):
        bom, content = split_bom(case["content"])
        normalized = normalize_to_lf(content)
        try:
            applied = apply_edits(normalized, case["edits"], case["path"])
        except ValueError as exc:
            got = {"error": str(exc)}
        else:
            final = applied.new_content
            if content != normalized:
                final = apply_replacements_to_original(content, applied.replacements)
            details = generate_edit_diff(
                case["path"], applied.base_content, applied.new_content, applied.replacements
            )
            got = {"details": details, "written": bom + final}
        expected = {key: case[key] for key in ("error", "details", "written") if key in case}
        if got != expected:
            mismatches.append((case, got))
    assert not mismatches, mismatches[:2]


def test_prepare_arguments_folds_legacy_and_loose_shapes():
    tool = builtin_tool("edit")
    one = {"oldText": "a", "newText": "b"}
    assert prepare_arguments(tool, {"path": "p", "edits": json.dumps([one])}) == {"path": "p", "edits": [one]}
    assert prepare_arguments(tool, {"path": "p", "edits": json.dumps(one)}) == {"path": "p", "edits": [one]}
    assert prepare_arguments(tool, {"path": "p", "edits": one}) == {"path": "p", "edits": [one]}
    assert prepare_arguments(tool, {"path": "p", "oldText": "a", "newText": "b"}) == {
        "path": "p",
        "edits": [one],
    }
    two = {"oldText": "c", "newText": "d"}
    assert prepare_arguments(tool, {"path": "p", "edits": [two], **one}) == {"path": "p", "edits": [two, one]}
    original = {"path": "p", "edits": "not json"}
    assert prepare_arguments(tool, original) == original
    prepared = prepare_arguments(tool, {"path": "p", "oldText": "a", "newText": "b"})
    assert validate_arguments("edit", tool.parameters, prepared) == {"path": "p", "edits": [one]}


def test_an_edits_string_is_parsed_into_the_live_call_and_a_legacy_fold_is_a_copy():
    """Issue 22: as pi, ``edits`` sent as a JSON string becomes the array in the call's own arguments
    (later events and the next request carry it; the stored entry was written before)."""
    tool = builtin_tool("edit")
    one = {"oldText": "a", "newText": "b"}
    live = {"path": "p", "edits": json.dumps([one])}
    assert prepare_arguments(tool, live) is live and live == {"path": "p", "edits": [one]}
    single = {"path": "p", "edits": one}
    assert prepare_arguments(tool, single) is single and single["edits"] == [one]
    legacy = {"path": "p", "oldText": "a", "newText": "b"}
    assert prepare_arguments(tool, legacy) is not legacy
    assert legacy == {"path": "p", "oldText": "a", "newText": "b"}


def test_parallel_edits_of_one_file_are_serialized(ctx):
    """Ten concurrent single-line edits of one file all land (no lost update)."""
    write(ctx, "counter.txt", "".join(f"slot{i}=0\n" for i in range(10)))
    tool = builtin_tool("edit")

    async def run_all():
        calls = [
            tool.execute(f"c{i}", edit("counter.txt", (f"slot{i}=0", f"slot{i}=1")), None, None, ctx)
            for i in range(10)
        ]
        return await asyncio.gather(*calls)

    results = asyncio.run(run_all())
    assert all(text_of(r) == "Successfully replaced 1 block(s) in counter.txt." for r in results)
    assert read_bytes(ctx, "counter.txt").decode() == "".join(f"slot{i}=1\n" for i in range(10))


def test_edit_through_a_symlink_edits_the_target(ctx: ToolContext):
    target = write(ctx, "real.txt", "old\n")
    os.symlink(target, os.path.join(ctx.cwd, "link.txt"))
    call("edit", edit("link.txt", ("old", "new")), ctx)
    assert read_bytes(ctx, "real.txt") == b"new\n"
