"""write: creates parent directories, overwrites, answers pi's text, serializes with edit."""

from __future__ import annotations

import asyncio
import os

from tool_helpers import call, error_of, text_of

from tau.tools import FileMutationQueue, builtin_tool


def test_write_creates_parent_directories(ctx, pi_fixtures):
    result = call("write", {"path": "src/hello.py", "content": "print('hi')\n"}, ctx)
    # i-edit-write golden: the result carries no details and no structuredContent
    assert result.to_json() == {"content": [{"type": "text", "text": "Successfully wrote to src/hello.py"}]}
    assert (
        b"Successfully wrote to src/hello.py"
        in (pi_fixtures / "scenarios" / "i-edit-write.jsonl").read_bytes()
    )
    with open(os.path.join(ctx.cwd, "src", "hello.py"), "rb") as handle:
        assert handle.read() == b"print('hi')\n"


def test_write_overwrites_and_keeps_exact_bytes(ctx):
    call("write", {"path": "a.txt", "content": "first\n"}, ctx)
    call("write", {"path": "a.txt", "content": "é\r\nno newline"}, ctx)
    with open(os.path.join(ctx.cwd, "a.txt"), "rb") as handle:
        assert handle.read() == "é\r\nno newline".encode()


def test_write_into_a_file_as_directory_fails_like_node(ctx):
    call("write", {"path": "plain", "content": "x"}, ctx)
    target = os.path.join(ctx.cwd, "plain")
    assert error_of("write", {"path": "plain/inner.txt", "content": "x"}, ctx) == (
        f"EEXIST: file already exists, mkdir '{target}'"
    )
    assert error_of("write", {"path": "plain/deeper/inner.txt", "content": "x"}, ctx) == (
        f"ENOTDIR: not a directory, mkdir '{target}/deeper'"
    )
    os.mkdir(os.path.join(ctx.cwd, "dir"))
    assert error_of("write", {"path": "dir", "content": "x"}, ctx) == (
        f"EISDIR: illegal operation on a directory, open '{ctx.cwd}/dir'"
    )


def test_absolute_and_home_paths(ctx, monkeypatch, tmp_path):
    absolute = tmp_path / "elsewhere" / "x.txt"
    assert (
        text_of(call("write", {"path": str(absolute), "content": "x"}, ctx))
        == f"Successfully wrote to {absolute}"
    )
    assert absolute.read_text() == "x"
    monkeypatch.setenv("HOME", str(tmp_path))
    call("write", {"path": "~/home.txt", "content": "h"}, ctx)
    assert (tmp_path / "home.txt").read_text() == "h"


def test_queue_serializes_same_file_and_parallelizes_others(tmp_path):
    queue = FileMutationQueue()
    log: list[str] = []

    async def job(name: str, delay: float) -> None:
        log.append(f"start {name}")
        await asyncio.sleep(delay)
        log.append(f"end {name}")

    async def main() -> None:
        a, b = str(tmp_path / "a"), str(tmp_path / "b")
        await asyncio.gather(
            queue.run(a, lambda: job("a1", 0.05)),
            queue.run(a, lambda: job("a2", 0.0)),
            queue.run(b, lambda: job("b1", 0.01)),
        )

    asyncio.run(main())
    assert log.index("end a1") < log.index("start a2")  # same file: one after the other
    assert log.index("start b1") < log.index("end a1")  # another file: in parallel
    assert queue.active_keys() == []


def test_queue_key_follows_symlinks(tmp_path):
    from tau.tools.mutation_queue import mutation_key

    (tmp_path / "real").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert mutation_key(str(tmp_path / "link")) == mutation_key(str(tmp_path / "real"))
    assert mutation_key(str(tmp_path / "missing")) == str(tmp_path / "missing")


def test_write_and_edit_of_one_file_keep_their_order(ctx):
    write, edit = builtin_tool("write"), builtin_tool("edit")

    async def main():
        first = write.execute("1", {"path": "f.txt", "content": "v1\n"}, None, None, ctx)
        second = edit.execute(
            "2", {"path": "f.txt", "edits": [{"oldText": "v1", "newText": "v2"}]}, None, None, ctx
        )
        return await asyncio.gather(first, second)

    results = asyncio.run(main())
    assert [text_of(r) for r in results] == [
        "Successfully wrote to f.txt",
        "Successfully replaced 1 block(s) in f.txt.",
    ]
    with open(os.path.join(ctx.cwd, "f.txt")) as handle:
        assert handle.read() == "v2\n"
