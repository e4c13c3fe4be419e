"""grep, find and ls beyond the pi vectors: limits at scale, ignore rules pi's fd applies outside a
repository, a missing rg binary, and aborts."""

from __future__ import annotations

import asyncio
import os

import pytest
from tool_helpers import call, error_of, text_of

from tau.llm.stream import AbortSignal
from tau.tools import binaries
from tau.tools.truncate import DEFAULT_MAX_BYTES


def _files(root, names, data=b""):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# -- limits -----------------------------------------------------------------------------------


def test_find_stops_at_50kb_of_paths(ctx, tmp_path):
    root = tmp_path / "proj"
    names = [f"d/{'n' * 60}{i:04d}.txt" for i in range(1000)]
    _files(root, names)
    result = call("find", {"pattern": "*.txt", "limit": 5000}, ctx)
    text = text_of(result)
    assert text.endswith("\n\n[50.0KB limit reached]")
    truncation = result.details["truncation"]
    assert truncation["truncated"] and truncation["truncatedBy"] == "bytes"
    assert truncation["totalLines"] == 1000
    assert truncation["totalBytes"] == sum(len(name) + 1 for name in names) - 1
    assert truncation["outputBytes"] <= DEFAULT_MAX_BYTES
    shown = text.split("\n\n")[0].split("\n")
    assert shown == sorted(names)[: len(shown)] and len(shown) == truncation["outputLines"]


def test_find_default_limit_is_1000(ctx, tmp_path):
    _files(tmp_path / "proj", [f"f{i:04d}" for i in range(1001)])
    result = call("find", {"pattern": "f*"}, ctx)
    assert result.details == {"resultLimitReached": 1000}
    assert text_of(result).endswith(
        "[1000 results limit reached. Use limit=2000 for more, or refine pattern]"
    )
    assert text_of(result).count("\n") == 999 + 2


def test_ls_stops_at_50kb_and_at_500_entries(ctx, tmp_path):
    root = tmp_path / "proj"
    _files(root, [f"{'x' * 80}{i:04d}" for i in range(700)])  # 85 bytes a line: 700 pass 50 KB
    by_bytes = call("ls", {"limit": 1000}, ctx)
    assert by_bytes.details["truncation"]["truncatedBy"] == "bytes"
    assert text_of(by_bytes).endswith("\n\n[50.0KB limit reached]")
    by_count = call("ls", {}, ctx)
    assert by_count.details["entryLimitReached"] == 500
    assert "truncation" not in by_count.details  # 500 lines of 85 bytes stay under it
    assert text_of(by_count).endswith("[500 entries limit reached. Use limit=1000 for more]")


def test_grep_default_limit_is_100_matches(ctx, tmp_path):
    (tmp_path / "proj" / "a.txt").write_text("".join(f"hit {i}\n" for i in range(101)))
    result = call("grep", {"pattern": "hit"}, ctx)
    assert result.details == {"matchLimitReached": 100}
    assert text_of(result).split("\n")[99] == "a.txt:100: hit 99"


def test_grep_exactly_at_the_limit_has_no_notice(ctx, tmp_path):
    (tmp_path / "proj" / "a.txt").write_text("".join(f"hit {i}\n" for i in range(100)))
    result = call("grep", {"pattern": "hit"}, ctx)
    assert result.details is None and "limit" not in text_of(result)


def test_grep_cuts_long_lines_at_500_utf16_units_without_splitting_a_pair(ctx, tmp_path):
    line = "k" + "x" * 498 + "\U0001f600" + "tail"
    (tmp_path / "proj" / "a.txt").write_text(line + "\n")
    text = text_of(call("grep", {"pattern": "k"}, ctx))
    assert text.startswith("a.txt:1: k" + "x" * 498 + "... [truncated]")
    assert text.endswith("[Some lines truncated to 500 chars. Use read tool to see full lines]")


# -- what pi's fd rules mean outside a repository, and at a repository's edges -----------------


def test_find_outside_a_repository_respects_gitignore(ctx, tmp_path):
    root = tmp_path / "proj"
    assert not any((p / ".git").exists() for p in [root, *root.parents])
    _files(root, ["keep.py", "gen/skip.py", "skip.tmp.py", ".hidden.py"])
    (root / ".gitignore").write_text("gen/\n*.tmp.py\n")
    assert text_of(call("find", {"pattern": "*.py"}, ctx)).split("\n") == [".hidden.py", "keep.py"]


def test_a_parent_gitignore_stops_at_a_nested_repository(ctx, tmp_path):
    root = tmp_path / "proj"
    _files(root, [".git/HEAD", "a.log", "inner/.git/HEAD", "inner/b.log", "inner/c.txt"])
    (root / ".gitignore").write_text("*.log\n")
    found = text_of(call("find", {"pattern": "*.log"}, ctx))
    assert found == "inner/b.log"


def test_gitignore_above_the_repository_root_does_not_apply(ctx, tmp_path):
    (tmp_path / ".gitignore").write_text("*.md\n")
    root = tmp_path / "proj"
    _files(root, [".git/HEAD", "README.md"])
    assert text_of(call("find", {"pattern": "*.md"}, ctx)) == "README.md"


def test_dot_ignore_applies_without_git_and_beats_gitignore(ctx, tmp_path):
    root = tmp_path / "proj"
    _files(root, [".git/HEAD", "a.txt", "b.txt"])
    (root / ".gitignore").write_text("*.txt\n")
    (root / ".ignore").write_text("!a.txt\n")
    assert text_of(call("find", {"pattern": "*.txt"}, ctx)) == "a.txt"


def test_searching_inside_an_ignored_folder_lists_it(ctx, tmp_path):
    root = tmp_path / "proj"
    _files(root, [".git/HEAD", "build/out.js", "build/sub/x.js"])
    (root / ".gitignore").write_text("build/\n")
    assert text_of(call("find", {"pattern": "*.js"}, ctx)) == "No files found matching pattern"
    assert text_of(call("find", {"pattern": "*.js", "path": "build"}, ctx)).split("\n") == [
        "out.js",
        "sub/x.js",
    ]


def test_the_global_git_excludes_file_applies_in_a_repository(ctx, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.swp\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    root = tmp_path / "proj"
    _files(root, [".git/HEAD", "a.swp", "a.txt"])
    assert text_of(call("find", {"pattern": "a.*"}, ctx)) == "a.txt"


def test_find_reports_a_bad_glob_as_fd_does(ctx):
    assert error_of("find", {"pattern": "a["}, ctx) == (
        "[fd error]: error parsing glob 'a[': unclosed character class; missing ']'"
    )


# -- rg ----------------------------------------------------------------------------------------


def test_the_wheel_s_rg_is_found():
    binaries.find_ripgrep.cache_clear()
    found = binaries.find_ripgrep()
    assert found is not None and os.access(found, os.X_OK)
    assert os.path.basename(found) == "rg"


def test_a_missing_rg_is_a_clear_error_not_a_traceback(ctx, monkeypatch):
    monkeypatch.setattr("tau.tools.grep.find_ripgrep", lambda: None)
    message = error_of("grep", {"pattern": "x"}, ctx)
    assert message.startswith("ripgrep (rg) is not available")
    assert "pip install" in message and "PATH" in message


def test_grep_missing_path(ctx, tmp_path):
    assert (
        error_of("grep", {"pattern": "x", "path": "nope"}, ctx)
        == f"Path not found: {tmp_path / 'proj' / 'nope'}"
    )


# -- aborts ------------------------------------------------------------------------------------


def test_aborting_grep_stops_rg(ctx, tmp_path):
    """rg blocks reading a named pipe nobody writes: only the abort can end the call."""
    fifo = tmp_path / "proj" / "pipe"
    os.mkfifo(fifo)

    async def scenario():
        signal = AbortSignal()
        from tau.tools import builtin_tool

        task = asyncio.ensure_future(
            builtin_tool("grep").execute("c", {"pattern": "x", "path": "pipe"}, signal, None, ctx)
        )
        await asyncio.sleep(0.2)
        assert not task.done()
        signal.abort()
        with pytest.raises(Exception) as info:
            await asyncio.wait_for(task, 30)
        return str(info.value)

    assert asyncio.run(scenario()) == "Operation aborted"


def test_an_aborted_signal_stops_every_search_tool_before_it_starts(ctx):
    signal = AbortSignal()
    signal.abort()
    for name, params in (("grep", {"pattern": "x"}), ("find", {"pattern": "*"}), ("ls", {})):
        with pytest.raises(Exception, match="Operation aborted"):
            call(name, params, ctx, signal=signal)
