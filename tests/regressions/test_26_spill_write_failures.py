"""Issue 26, item 5: a spill file that cannot be written is reported in the tool result, never as a
traceback.

Under ``ulimit -f 150`` a long bash output made ``os.write`` fail with ``EFBIG`` inside the command's
output callback: two asyncio "Exception in callback" tracebacks on stderr, exit 0, and a tool result
that pointed the model at a file holding part of the output. Now the accumulator stops spilling and
the result says what the file holds and why the rest is missing; an exception that still reaches the
event loop is one line saying it is a bug, never a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from tau.tools import output as output_module
from tau.tools.output import OutputAccumulator
from tau.tools.truncate import format_size
from tau_process import tau_command, tau_env

BOUND = 120
LINES = "seq 1 200000"  # 1.2 MB of output


def _run(tmp_path: Path, shell: str, *args: str, script: list, **kwargs) -> subprocess.CompletedProcess:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    env = tau_env(agent_dir=tmp_path / "agent")
    argv = tau_command("-ne", "--model", "faux/faux-1", "--faux-script", script_file, *args)
    return subprocess.run(
        ["bash", "-c", f'{shell}; exec "$@"', "bash", *argv],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=BOUND,
        **kwargs,
    )


def _no_traceback(stderr: bytes) -> None:
    assert b"Exception in callback" not in stderr
    assert b"Traceback" not in stderr
    assert b"never retrieved" not in stderr


def _tool_results(tmp_path: Path) -> list[dict]:
    (session,) = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [line["message"] for line in lines if line.get("message", {}).get("role") == "toolResult"]


@pytest.mark.parametrize("mode", [["-p", "go"], ["--mode", "json", "go"]])
def test_a_file_size_limit_while_output_spills_is_reported_in_the_tool_result(tmp_path, mode):
    done = _run(tmp_path, "ulimit -f 150", *mode, script=[{"bash": LINES}, {"text": "done"}])
    _no_traceback(done.stderr)
    assert done.returncode == 0
    (result,) = _tool_results(tmp_path)
    text = result["content"][0]["text"]
    assert text.endswith(
        "[Showing lines 198001-200000 of 200000. Full output incomplete: "
        + result["details"]["fullOutputError"].split("Full output incomplete: ", 1)[1]
        + "]"
    )
    error = result["details"]["fullOutputError"]
    assert " holds the first 150.0KB of 1.2MB; writing the rest failed: File too large" in error
    assert result["details"]["fullOutputPath"] is None  # nothing claims the partial file is the output
    assert text.splitlines()[-3] == "200000"  # the tail is whole


def test_a_file_size_limit_in_an_rpc_users_bash_command_leaves_no_traceback(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    env = tau_env(agent_dir=tmp_path / "agent")
    argv = tau_command("-ne", "--no-session", "--mode", "rpc")
    process = subprocess.Popen(
        ["bash", "-c", 'ulimit -f 150; exec "$@"', "bash", *argv],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        process.stdin.write(json.dumps({"id": "b", "type": "bash", "command": LINES}).encode() + b"\n")
        process.stdin.flush()
        while (line := process.stdout.readline()) and json.loads(line).get("type") != "response":
            pass
        response = json.loads(line)
        _out, err = process.communicate(b"", timeout=BOUND)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    _no_traceback(err)
    assert process.returncode == 0
    assert response["success"] is True and response["data"]["truncated"] is True
    assert "fullOutputPath" not in response["data"]  # the file does not hold the output
    assert response["data"]["output"].endswith("\n200000")


def test_the_accumulator_keeps_its_tail_and_says_why_when_a_write_fails(monkeypatch):
    real_write = os.write
    limit = 100_000

    def limited(fd, data):
        if os.fstat(fd).st_size + len(data) > limit and fd > 2:
            if os.fstat(fd).st_size >= limit:
                raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
            data = bytes(data[: limit - os.fstat(fd).st_size])
        return real_write(fd, data)

    monkeypatch.setattr(output_module.os, "write", limited)
    accumulator = OutputAccumulator()
    for number in range(50_000):
        accumulator.append(f"line {number}\n".encode())
    accumulator.finish()
    snapshot = accumulator.snapshot(persist_if_truncated=True)
    accumulator.close_file()
    failure = accumulator.spill_failure
    assert failure is not None and failure.kept == limit and failure.reason == "File too large"
    assert snapshot.full_output_path is None and snapshot.content.endswith("line 49999")
    total = sum(len(f"line {number}\n") for number in range(50_000))
    assert accumulator.raw_bytes == total
    assert failure.describe(total) == (
        f"Full output incomplete: {failure.path} holds the first {format_size(limit)} of "
        f"{format_size(total)}; writing the rest failed: File too large"
    )
    assert Path(failure.path).stat().st_size == limit
    full = accumulator.read_full_output(1024 * 1024)
    assert full.truncated and full.content.endswith("line 49999\n")
    os.unlink(failure.path)


def test_a_spill_file_that_cannot_be_created_is_reported(monkeypatch):
    def full_disk(prefix, extension):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output_module, "create_output_file", full_disk)
    accumulator = OutputAccumulator()
    accumulator.append(b"x\n" * 60_000)
    accumulator.finish()
    assert accumulator.snapshot(persist_if_truncated=True).full_output_path is None
    assert accumulator.spill_failure.describe(accumulator.raw_bytes) == (
        "Full output not saved: No space left on device"
    )


EXTENSION = """
import asyncio
from tau.extension import ToolDefinition

def extension(tau):
    async def buggy(call_id, params, signal, on_update, ctx):
        asyncio.get_running_loop().call_soon(lambda: 1 / 0)
        await asyncio.sleep(0.05)
        return {"content": [{"type": "text", "text": "ok"}]}
    tau.register_tool(ToolDefinition(name="buggy", description="b", parameters={"type": "object"}, execute=buggy))
"""


def test_an_exception_that_reaches_the_event_loop_is_one_line_never_a_traceback(tmp_path):
    extension = tmp_path / "buggy.py"
    extension.write_text(EXTENSION)
    done = _run(
        tmp_path,
        "true",
        "-e",
        str(extension),
        "-p",
        "go",
        script=[{"tool": "buggy", "args": {}}, {"text": "fine"}],
    )
    assert (done.returncode, done.stdout) == (0, b"fine\n")
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("tau: internal error (Exception in callback ")
    assert line.endswith(": ZeroDivisionError: division by zero); please report it")
