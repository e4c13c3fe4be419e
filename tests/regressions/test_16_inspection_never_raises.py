"""Issue 16, item 4: ``tau session check|info|context`` never raise; a crash is exit 3, in one line.

58 of 7,200 fuzzed files crashed them (``RecursionError`` on deep JSON, unhashable ``role``/``id``
values, a lone surrogate in a session name), a crash exited 1 like "problems found", and one file
took 21.7 s and 5.2 GB. Every problem is now a reported line, values are quoted shortened, nesting
is bounded by the JSONL reader, and ancestry checks are linear. The fuzz tests are deterministic
(``derandomize``) with bounded example counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.bundled.occ.decision_record import DECISION_TYPE
from tau.common import jsjson
from tau.modes import inspect
from tau.session import jsonl
from tau.session.check import _Index

TS = "2026-11-29T23:42:14.169Z"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": TS, "cwd": "/tmp/proj"}
FUZZ = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run(*argv: str) -> tuple[int, str, str]:
    """``tau session ARGV`` in this process: exit code, stdout (UTF-8, strict) and stderr."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = inspect.main(list(argv))
        stdout.flush()
    return code, stdout.buffer.getvalue().decode("utf-8"), stderr.getvalue()


def write(path: Path, lines: list[Any]) -> Path:
    """Dicts as pi would write them (lone surrogates escaped), bytes as they are."""
    with inspect.recursion_headroom():  # the deepest values need more than Python's default
        data = b"\n".join(line if isinstance(line, bytes) else jsjson.dumps(line) for line in lines)
    path.write_bytes(data + b"\n")
    return path


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# --- the crashes of the issue ------------------------------------------------------------------


def message(entry_id: str, parent: str | None, role: Any, content: Any = "hi") -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": TS,
        "message": {"role": role, "content": content, "timestamp": 1},
    }


@pytest.mark.parametrize("depth", [900, 1000, 1020])  # + 4 levels above: 1024 in all
def test_deeply_nested_values_are_printed(tmp_path, depth):
    content = [{"type": "text", "text": "hi", "extra": nested(depth)}]
    path = write(tmp_path / "deep.jsonl", [HEADER, message("a1", None, "user", content)])
    for argv in (["check"], ["info"], ["info", "--json"], ["context"], ["context", "--pretty"]):
        code, _, err = run(*argv, str(path))
        assert (code, err) == (0, ""), argv
    with inspect.recursion_headroom():
        printed = json.loads(run("context", "--pretty", str(path))[1])
    assert printed[0]["content"][0]["text"] == "hi"


def test_a_line_nested_past_the_limit_is_a_reported_line(tmp_path):
    too_deep = ("[" * 1100 + "]" * 1100).encode()
    escaped = b'["\\ud800",' + b"[" * 1100 + b"]" * 1101  # a lone surrogate takes the slower parser
    path = write(tmp_path / "deeper.jsonl", [HEADER, message("a1", None, "user"), too_deep, escaped])
    code, out, err = run("check", str(path))
    assert code == 1 and err == ""
    assert f"{path}:3: error: not valid JSON; skipped" in out
    assert f"{path}:4: error: not valid JSON; skipped" in out


@pytest.mark.parametrize(
    "odd", [["user"], {"role": "user"}, [[["x"] * 100_000]]], ids=["list", "dict", "big"]
)
def test_unhashable_roles_and_ids_are_reported_lines(tmp_path, odd):
    lines = [HEADER, message("a1", None, odd), {**message("a2", "a1", "user"), "id": odd, "parentId": odd}]
    lines.append({"type": "context_edit", "id": "a3", "parentId": "a1", "targetId": odd, "replacement": None})
    path = write(tmp_path / "odd.jsonl", lines)
    code, out, err = run("check", str(path))
    assert code == 1 and err == ""
    assert f"{path}:2: error: message role " in out and "is unknown" in out
    assert f"{path}:3: error: entry id " in out and "is not a string" in out
    assert max(len(line) for line in out.splitlines()) < 400  # quoted shortened, never the whole value
    for argv in (["info"], ["info", "--json"], ["context"]):
        assert run(*argv, str(path))[0] == 0, argv


def test_a_lone_surrogate_in_a_session_name_is_shown_escaped(tmp_path):
    name = {"type": "session_info", "id": "a2", "parentId": "a1", "timestamp": TS, "name": "fix \ud800 bug"}
    header = {**HEADER, "cwd": "/tmp/\udc80", "note\ud801": "x"}
    path = write(tmp_path / "name.jsonl", [header, message("a1", None, "user", "\ud800"), name])
    code, out, err = run("info", str(path))
    assert (code, err) == (0, "")
    assert "name        fix \\ud800 bug" in out and "cwd         /tmp/\\udc80" in out
    code, out, _ = run("info", "--json", str(path))
    assert code == 0 and json.loads(out)["name"] == "fix \ud800 bug"


def test_huge_values_are_reported_in_short_lines(tmp_path):
    huge = "r" * 5_000_000
    lines = [
        {**HEADER, "giant": huge},
        message("a1", None, huge),
        {"type": huge, "id": "a2", "parentId": "a1"},
    ]
    path = write(tmp_path / "huge.jsonl", lines)
    code, out, _ = run("check", str(path))
    assert code == 1 and len(out) < 2000
    code, out, _ = run("info", str(path))
    assert code == 0 and len(out) < 3000 and "(5000000 characters)" in out


def test_odd_figures_in_a_compaction_decision_are_shown_not_raised(tmp_path):
    data = {
        "compact": [1],
        "reason": ["r" * 100_000],
        "writeTokens": {"a": [1]},
        "archiveTokens": "x" * 10_000,
    }
    decision = {"type": "custom", "id": "a2", "parentId": "a1", "customType": DECISION_TYPE, "data": data}
    path = write(tmp_path / "occ.jsonl", [HEADER, message("a1", None, "user"), decision])
    code, out, err = run("info", str(path))
    assert (code, err) == (0, "")
    (line,) = [line for line in out.splitlines() if line.startswith("  1. ")]
    assert line.startswith("  1. compact ([") and "W {'a': [1]}" in line and len(line) < 600


def test_an_internal_error_is_exit_3_in_one_line(tmp_path, monkeypatch):
    path = write(tmp_path / "ok.jsonl", [HEADER, message("a1", None, "user")])

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(inspect, "summarize", broken)
    code, out, err = run("info", str(path))
    assert code == 3 and out == ""
    assert err == "tau session info: internal error (KeyError: 'boom'); please report it with the file\n"
    assert run("check", str(path))[0] == 0  # the other commands are unaffected


def test_many_edits_are_checked_without_walking_every_branch(tmp_path):
    """20,000 chained context_edit entries took 216 s (each edit walked its whole branch)."""
    lines = [HEADER, message("e0", None, "user")]
    lines += [
        {
            "type": "context_edit",
            "id": f"e{n}",
            "parentId": f"e{n - 1}",
            "targetId": "e0",
            "replacement": None,
        }
        for n in range(1, 20_000)
    ]
    path = write(tmp_path / "edits.jsonl", lines)
    calls = {"n": 0}
    original = _Index._parent_of

    def counting(self, entry):
        calls["n"] += 1
        return original(self, entry)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Index, "_parent_of", counting)
        code, out, _ = run("check", str(path))
    assert code == 0 and out.endswith("ok, 20000 entries, no problems\n")
    assert calls["n"] < 3 * 20_000  # a constant number of parent lookups per entry, not one per ancestor


# --- ancestry: the linear index agrees with walking parentIds ----------------------------------

IDS = [f"e{n}" for n in range(6)]


def walk_ancestors(by_id: dict[str, dict], entry: dict) -> set[str]:
    found: set[str] = set()
    parent = entry.get("parentId")
    while isinstance(parent, str) and parent not in found and parent in by_id:
        found.add(parent)
        parent = by_id[parent].get("parentId")
    return found


entries = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from([*IDS, None]) | st.just(["x"]),
            "parentId": st.sampled_from([*IDS, None, "missing"]) | st.just({"a": 1}),
        }
    ),
    min_size=1,
    max_size=10,
)


@FUZZ
@given(entries)
def test_is_above_agrees_with_walking_the_parent_ids(items):
    index = _Index(items, list(range(1, len(items) + 1)))
    for item in items:
        ancestors = walk_ancestors(index.by_id, item)
        for key in [*IDS, "missing", None]:
            assert index.is_above(key, item) == (key in ancestors)


# --- fuzzing the inspection commands and the JSONL reader --------------------------------------

text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)  # lone surrogates too
# Numbers JSON.stringify writes back unchanged: safe integers, finite floats.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
odd_ids = st.sampled_from(["a1", "a2", "a3", "missing"]) | values
KINDS = [
    "message",
    "compaction",
    "context_edit",
    "label",
    "session_info",
    "custom_message",
    "branch_summary",
    "custom",
]
# The figures `tau session info` shows from Online Context Compact's decision entries.
DECISION_FIELDS = ["compact", "reason", "writeTokens", "archiveTokens", "savingTokens", "horizonRequests"]


@st.composite
def session_lines(draw) -> list[Any]:
    header = dict(HEADER)
    if draw(st.booleans()):
        header[draw(st.sampled_from(["version", "id", "cwd", "timestamp", "x"]))] = draw(values)
    lines: list[Any] = [header]
    for _ in range(draw(st.integers(0, 6))):
        shape = draw(st.integers(0, 9))
        if shape == 0:
            lines.append(draw(st.binary(max_size=40)).replace(b"\n", b""))
        elif shape == 1:
            lines.append(b"[" * draw(st.integers(900, 1100)) + b"]" * draw(st.integers(0, 1100)))
        else:
            entry = {
                "type": draw(st.sampled_from(KINDS) | values),
                "id": draw(odd_ids),
                "parentId": draw(odd_ids),
                "timestamp": draw(st.just(TS) | values),
            }
            for field in draw(
                st.lists(
                    st.sampled_from(
                        ["message", "targetId", "firstKeptEntryId", "name", "replacement", "summary", "label"]
                    ),
                    max_size=3,
                )
            ):
                entry[field] = draw(odd_ids if field.endswith("Id") else values)
            if entry["type"] == "custom":
                entry["customType"] = DECISION_TYPE
                entry["data"] = draw(st.dictionaries(st.sampled_from(DECISION_FIELDS), values, max_size=4))
            if entry["type"] == "message" and draw(st.booleans()):
                entry["message"] = {
                    "role": draw(st.sampled_from(["user", "assistant", "toolResult"]) | values),
                    "content": draw(values),
                }
            lines.append(entry)
    return lines


@FUZZ
@given(session_lines(), st.sampled_from(["check", "info", "info --json", "context", "context --pretty"]))
def test_inspection_of_any_file_reports_and_never_raises(lines, command):
    with tempfile.TemporaryDirectory() as directory:
        path = write(Path(directory) / "fuzz.jsonl", lines)
        code, out, err = run(*command.split(), str(path))
    assert code in (0, 1, 2), err  # never 3: every problem is a reported line
    assert "Traceback" not in err and len(err.splitlines()) <= 1
    if code == 2:
        assert err.startswith(f"tau session {command.split()[0]}: ")
    elif command == "check":
        body = out.splitlines()
        assert body[-1].startswith(f"{path}: ")
        assert all(
            line.startswith(f"{path}:") and (": error: " in line or ": note: " in line) for line in body[:-1]
        )
    elif command in ("context", "context --pretty"):
        assert isinstance(json.loads(out), list)
    elif command == "info --json":
        assert json.loads(out)["file"] == str(path.resolve())
    else:
        assert code == 0 and out.startswith("file        ")


@FUZZ
@given(st.binary(max_size=200) | values.map(jsjson.dumps))
def test_the_jsonl_reader_parses_or_refuses_every_line(raw):
    try:
        value = jsonl.parse(raw)
    except ValueError:
        return
    written = jsonl.encode(value)  # what it accepts it can write, and that reads back as written
    assert jsonl.encode(jsonl.parse(written)) == written


@FUZZ
@given(values)
def test_the_jsonl_reader_reads_back_what_it_writes(value):
    assert jsonl.parse(jsonl.encode(value)) == value
