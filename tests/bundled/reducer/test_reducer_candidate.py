"""Which results the reducer may touch, the log inside them, and the spill file rules."""

from __future__ import annotations

import os
import tempfile

import pytest
from reducer_fakes import bash_event, fused_event

from tau.bundled.reducer import candidate as candidate_module
from tau.bundled.reducer.candidate import (
    ResultView,
    exit_failed,
    find_candidate,
    read_spill_file,
    split_status,
)
from tau.bundled.reducer.config import DIAGNOSTIC_COMMAND


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "cargo test --all",
        "cargo",
        "cd src && make",
        "python3 -m pytest tests/",
        "python -m unittest",
        "(npm test )",
        "go test ./...",
        "lake build",
        "cmake --build build",
        "FOO=1; ninja",
        "PYTEST",
    ],
)
def test_test_and_build_commands_are_diagnostic(command):
    assert DIAGNOSTIC_COMMAND.search(command)


@pytest.mark.parametrize(
    "command", ["rg test src", "echo pytest-html", "ls", "python script.py", "makefile-lint", "npm install"]
)
def test_other_commands_are_not(command):
    assert not DIAGNOSTIC_COMMAND.search(command)


def view(event) -> ResultView:
    return ResultView.of(event)


def test_a_non_diagnostic_command_never_touches_the_spill_file(monkeypatch, tmp_path):
    def refuse(*args, **kwargs):
        raise AssertionError("the spill file was read")

    monkeypatch.setattr(candidate_module, "read_spill_file", refuse)
    monkeypatch.setattr(candidate_module, "_safe_spill_path", refuse)
    event = bash_event("rg test src", "x", details={"fullOutputPath": str(tmp_path / "tau-bash-1.log")})
    assert find_candidate(view(event)) is None


def test_nested_calls_and_codemode_are_skipped():
    assert find_candidate(view(bash_event("pytest", "log", parent_tool_call_id="call_9"))) is None
    codemode = bash_event("pytest", "log")
    codemode.tool_name = "codemode"
    assert find_candidate(view(codemode)) is None
    other = bash_event("pytest", "log")
    other.tool_name = "read"
    assert find_candidate(view(other)) is None


def spill(name: str, text: str) -> str:
    path = os.path.join(tempfile.gettempdir(), name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


@pytest.fixture
def spill_files():
    made: list[str] = []

    def make(name: str, text: str) -> str:
        made.append(spill(name, text))
        return made[-1]

    yield make
    for path in made:
        if os.path.lexists(path):
            os.unlink(path)


@pytest.mark.parametrize("prefix", ["tau-bash", "pi-bash"])
def test_the_full_output_file_of_the_host_is_the_body(spill_files, prefix):
    path = spill_files(f"{prefix}-abc123.log", "full log line\n" * 3)
    event = bash_event("pytest", "preview", details={"fullOutputPath": path})
    assert find_candidate(view(event)).body == "full log line\n" * 3
    inline = bash_event("pytest", f"preview\n\n[Showing lines 2-3 of 3. Full output: {path}]")
    assert find_candidate(view(inline)).body == "full log line\n" * 3


def test_other_files_are_never_read(spill_files, tmp_path):
    wrong_name = spill_files("other-abc.log", "secret file")
    outside = tmp_path / "tau-bash-x.log"
    outside.write_text("outside the temp dir")
    target = spill_files("tau-bash-target.log", "target")
    link = os.path.join(tempfile.gettempdir(), "tau-bash-link.log")
    os.symlink(target, link)
    try:
        for path in (wrong_name, str(outside), link, "/nonexistent/tau-bash-1.log"):
            event = bash_event("pytest", "preview", details={"fullOutputPath": path})
            assert find_candidate(view(event)).body == "preview", path
    finally:
        os.unlink(link)


def test_the_character_limit_exactly_at_and_one_over(spill_files):
    at = spill_files("tau-bash-at.log", "é" * 10)
    over = spill_files("tau-bash-over.log", "é" * 11)
    assert read_spill_file(at, max_chars=10) == "é" * 10
    assert read_spill_file(over, max_chars=10) is None
    astral = spill_files("tau-bash-astral.log", "😀" * 5 + "x")  # 11 UTF-16 code units
    assert read_spill_file(astral, max_chars=10) is None
    event = bash_event("pytest", "preview", details={"fullOutputPath": over})
    assert find_candidate(view(event), max_chars=10).body is None


def test_the_size_is_checked_before_reading(spill_files, monkeypatch):
    path = spill_files("tau-bash-big.log", "x" * 31)  # >= 3 * 10 + 1 bytes

    def refuse(*args):
        raise AssertionError("read although the size was over the limit")

    monkeypatch.setattr(os, "read", refuse)
    assert read_spill_file(path, max_chars=10) is None


def test_reads_are_bounded_for_a_file_that_grows(spill_files, monkeypatch):
    path = spill_files("tau-bash-grow.log", "x" * 20)
    reads: list[int] = []
    real_read = os.read

    def endless(fd, size):
        reads.append(size)
        real_read(fd, size)
        return b"y" * size  # the file keeps growing

    monkeypatch.setattr(os, "read", endless)
    assert read_spill_file(path, max_chars=100_000) is None
    assert len(reads) <= 2


def test_a_read_failure_falls_back_to_the_preview(spill_files, monkeypatch):
    path = spill_files("tau-bash-fail.log", "full")

    def broken(*args, **kwargs):
        raise OSError("EIO")

    monkeypatch.setattr(candidate_module, "read_spill_file", broken)
    event = bash_event("pytest", "preview", details={"fullOutputPath": path})
    assert find_candidate(view(event)).body == "preview"


def test_fused_body_is_the_command_output_after_the_marker_and_goes_back_in_place():
    event = fused_event(
        "edit",
        "pytest -q",
        ["Successfully replaced 1 block(s) in a.py.", "[then_run:succeeded]\n\n1 passed"],
        details={"diff": "+x"},
    )
    found = find_candidate(view(event))
    assert found.body == "1 passed" and found.status is None and found.exit_failed is False
    assert found.project("RECEIPT") == [
        {"type": "text", "text": "Successfully replaced 1 block(s) in a.py."},
        {"type": "text", "text": "[then_run:succeeded]\n\nRECEIPT"},
    ]


def test_fused_failure_uses_the_failed_marker_and_keeps_the_status():
    event = fused_event(
        "write",
        "make test",
        ["Successfully wrote 3 bytes to a.py", "[then_run:failed]\nboom\n\nCommand exited with code 2"],
        is_error=True,
    )
    found = find_candidate(view(event))
    assert (found.body, found.status, found.exit_failed) == ("boom", "Command exited with code 2", True)
    assert found.project("R")[1]["text"] == "[then_run:failed]\nR\n\nCommand exited with code 2"
    mismatch = fused_event("write", "make", ["ok", "[then_run:succeeded]\nall good"], is_error=True)
    assert find_candidate(view(mismatch)) is None  # no failed marker: nothing to reduce


@pytest.mark.parametrize(
    "status",
    [
        "Command exited with code 7",
        "Command timed out after 5 seconds",
        "Command aborted",
        "Command terminated without an exit code",
    ],
)
def test_the_runtime_status_is_kept_after_the_receipt(status):
    event = bash_event("npm test", f"log line\n\n{status}", is_error=True)
    found = find_candidate(view(event))
    assert (found.body, found.status) == ("log line", status)
    assert found.project("RECEIPT") == [{"type": "text", "text": f"RECEIPT\n\n{status}"}]


@pytest.mark.parametrize(
    ("text", "is_error"),
    [
        ("log\n\nCommand exited with code 1\nmore", True),  # not last
        ("log\n\nnote: Command exited with code 1", True),  # prefixed
        ("log\n\nCommand exited with code one", True),  # not numeric
        ("log\nCommand aborted", True),  # no blank line before it
        ("log\n\nCommand aborted", False),  # success results keep everything
    ],
)
def test_look_alikes_are_not_promoted(text, is_error):
    assert split_status(text, is_error) == (text, None)


def test_the_exit_signal():
    ok = ResultView("bash", "c", {}, [], structured_content={"exit_code": 0})
    assert exit_failed(ok, "whatever\nCommand exited with code 3", fused=False) is False
    plain = ResultView("bash", "c", {}, [])
    assert exit_failed(plain, "out\n\nCommand exited with code 3", fused=False) is True
    assert exit_failed(plain, "out", fused=False) is None
    fused = ResultView("edit", "c", {}, [])
    assert exit_failed(fused, "[then_run:succeeded]\nok", fused=True) is False
    assert exit_failed(fused, "[then_run:succeeded]\nok\nCommand exited with code 4", fused=True) is True
    assert exit_failed(fused, "[then_run:failed]\nx [then_run:succeeded]", fused=True) is True
