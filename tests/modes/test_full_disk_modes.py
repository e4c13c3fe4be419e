"""Print and JSON modes on a session file that cannot be written (issue 16): the run closes, the error
names the file and says the session is no longer being saved, and the exit code is 1."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from full_disk import FullDisk
from tau.modes.json_mode import run_json
from tau.modes.print_mode import run_text
from tau.modes.run import build_runtime, parse_args


@pytest.fixture
def script(tmp_path, monkeypatch):
    work = tmp_path / "proj"
    work.mkdir()
    monkeypatch.chdir(work)
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"bash": "echo ran"}, {"text": "done"}]))
    return path


def _run(mode: str, script, prompts: list[str]) -> tuple[int, bytes, str, str | None]:
    async def main() -> tuple[int, bytes, str, str | None]:
        args = parse_args([*mode_flag(mode), "-ne", "--model", "faux/faux-1", "--faux-script", str(script)])
        runtime = await build_runtime(args, mode)
        err = io.StringIO()
        if mode == "print":
            text = io.StringIO()
            code = await run_text(runtime.session, prompts[0], prompts[1:], out=text, err=err)
            out = text.getvalue().encode()
        else:
            binary = io.BytesIO()
            code = await run_json(runtime.session, prompts[0], prompts[1:], out=binary, err=err)
            out = binary.getvalue()
        path = runtime.session.session_file
        runtime.session.session_manager.close()
        return code, out, err.getvalue(), path

    return asyncio.run(main())


def mode_flag(mode: str) -> list[str]:
    return ["-p"] if mode == "print" else ["--mode", "json"]


@pytest.mark.parametrize("mode", ["print", "json"])
def test_a_full_disk_fails_the_run_with_exit_1_and_names_the_file(script, monkeypatch, mode):
    FullDisk(monkeypatch, 2)  # the file is created with the user message; the tool call cannot be saved
    code, out, err, path = _run(mode, script, ["go", "never sent"])
    assert code == 1
    assert err.startswith(f"cannot write session file {path!r}: No space left on device. ")
    assert "The session is no longer being saved" in err and err.count("\n") == 1
    if mode == "print":
        assert out == b""
    else:
        events = [json.loads(line) for line in out.splitlines()]
        assert [e["type"] for e in events][-3:] == ["turn_end", "agent_end", "agent_settled"]
        ends = [e for e in events if e["type"] == "tool_execution_end"]
        assert ends and all(e["result"]["content"][0]["text"] == "Operation aborted" for e in ends)
        assert "never sent" not in out.decode()


@pytest.mark.parametrize("mode", ["print", "json"])
def test_what_was_kept_in_memory_is_written_at_exit_once_the_disk_has_room(script, monkeypatch, mode):
    disk = FullDisk(monkeypatch, 2)

    async def main() -> tuple[int, str, int]:
        args = parse_args([*mode_flag(mode), "-ne", "--model", "faux/faux-1", "--faux-script", str(script)])
        runtime = await build_runtime(args, mode)
        err = io.StringIO()
        runner = run_text if mode == "print" else run_json
        out = io.StringIO() if mode == "print" else io.BytesIO()
        code = await runner(runtime.session, "go", [], out=out, err=err)
        disk.full = False  # room again before the process ends
        manager = runtime.session.session_manager
        kept = manager.get_entries()
        manager.close()
        lines = Path(runtime.session.session_file).read_text().splitlines()
        return code, err.getvalue(), len(lines) - 1 - len(kept)

    code, err, missing = asyncio.run(main())
    assert code == 1 and "no longer being saved" in err
    assert missing == 0
