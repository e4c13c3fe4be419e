"""bash: pi 1.6's texts and shapes for exits, truncation, spill files, timeouts, aborts and signals."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import time

import pytest
from tool_helpers import call, error_of, text_of

from tau.common import jsjson
from tau.llm.stream import AbortSignal
from tau.tools import ToolResult, bash, bash_exec, bash_tool
from tau.tools.bash import _js_round_tenths, _timeout_status

SPILL = re.compile(r"/tau-bash-[0-9a-f]{16}\.log$")


def golden_end(pi_fixtures, stream: str) -> dict:
    for line in (pi_fixtures / "events" / stream).read_bytes().split(b"\n"):
        if b'"tool_execution_end"' in line:
            return jsjson.loads(line)
    raise AssertionError(f"no tool_execution_end in {stream}")


@pytest.mark.parametrize(
    ("stream", "command"),
    [("json-bash-fail.jsonl", "echo out; exit 2"), ("json-bash.jsonl", "echo hi from bash")],
)
def test_results_equal_pi_json_mode_goldens(ctx, pi_fixtures, stream, command):
    result = call("bash", {"command": command}, ctx)
    golden = golden_end(pi_fixtures, stream)
    # The wall time is how long this machine took (0.1 s on a loaded one); its shape is pinned below.
    wall_time = result.structured_content["wall_time_seconds"]
    assert wall_time >= 0 and wall_time == _js_round_tenths(wall_time)
    result.structured_content["wall_time_seconds"] = golden["result"]["structuredContent"][
        "wall_time_seconds"
    ]
    assert jsjson.dumps(result.to_json()) == jsjson.dumps(golden["result"])
    assert result.is_error == golden["isError"]


def test_wall_time_is_in_tenths_of_a_second_as_javascript_rounds_it():
    assert [_js_round_tenths(s) for s in (0.0, 0.049, 0.05, 0.14, 0.25, 1.0, 2.96)] == [
        0,
        0,
        0.1,
        0.1,
        0.3,
        1,
        3,
    ]
    assert isinstance(_js_round_tenths(1.0), int)


def test_b_parallel_tools_exit_3(ctx):
    result = call("bash", {"command": "echo hi; exit 3"}, ctx)
    assert text_of(result) == "hi\n\n\nCommand exited with code 3" and result.is_error


def test_no_output(ctx):
    result = call("bash", {"command": "true"}, ctx)
    assert text_of(result) == "(no output)" and not result.is_error
    assert result.structured_content["output"] == ""
    assert text_of(call("bash", {"command": "exit 4"}, ctx)) == "(no output)\n\nCommand exited with code 4"


def test_stdout_and_stderr_both_reach_the_output(ctx):
    """Two pipes, as in pi: each stream keeps its own order (their interleaving is the reader's)."""
    text = text_of(call("bash", {"command": "echo one; echo two >&2; echo three"}, ctx))
    assert sorted(text.splitlines()) == ["one", "three", "two"]
    assert text.index("one") < text.index("three")


def test_a_chunk_never_mixes_stdout_and_stderr():
    """Issue 22: pi passes stdout and stderr chunks on separately (one update each); one shared
    pipe merged them. Whatever the timing, every chunk comes from one stream."""
    from tau.tools.bash_exec import LocalBashOperations

    chunks: list[bytes] = []
    command = "for i in 1 2 3 4 5; do printf ooo; printf eee >&2; done"
    code = asyncio.run(
        LocalBashOperations().exec(
            command, os.getcwd(), on_data=chunks.append, signal=None, timeout=None, env=dict(os.environ)
        )
    )
    assert code == 0
    assert b"".join(chunks).count(b"o") == b"".join(chunks).count(b"e") == 15
    assert all(set(chunk) in ({ord("o")}, {ord("e")}) for chunk in chunks), chunks


def test_invalid_utf8_and_binary_output_never_crash(ctx):
    result = call("bash", {"command": r"printf 'ok\xff\xfe\xc3(\0end'"}, ctx)
    assert text_of(result) == "ok\ufffd\ufffd\ufffd(\0end"


def test_signal_death_is_128_plus_n(ctx):
    result = call("bash", {"command": "kill -TERM $$"}, ctx)
    assert result.structured_content["exit_code"] == 143
    assert text_of(result) == "(no output)\n\nCommand exited with code 143"


def test_line_limit_at_2000_and_2001(ctx):
    at_limit = call("bash", {"command": "seq 1 2000"}, ctx)
    assert at_limit.details is None and "[Showing" not in text_of(at_limit)
    over = call("bash", {"command": "seq 1 2001"}, ctx)
    text = text_of(over)
    notice = text[text.rindex("\n\n[") :]
    path = over.details["fullOutputPath"]
    assert notice == f"\n\n[Showing lines 2-2001 of 2001. Full output: {path}]"
    assert SPILL.search(path) and text.startswith("2\n3\n")
    with open(path, "rb") as handle:
        assert handle.read() == "".join(f"{i}\n" for i in range(1, 2002)).encode()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.unlink(path)


def test_byte_limit_notice(ctx):
    result = call("bash", {"command": "yes \"$(printf '%0199d' 0)\" | head -n 500"}, ctx)
    path = result.details["fullOutputPath"]
    assert text_of(result).endswith(f"\n\n[Showing lines 245-500 of 500 (50.0KB limit). Full output: {path}]")
    assert result.details["truncation"]["truncatedBy"] == "bytes"
    os.unlink(path)


def test_partial_last_line_notice(ctx):
    result = call("bash", {"command": "head -c 60000 /dev/zero | tr '\\0' a"}, ctx)
    path = result.details["fullOutputPath"]
    assert (
        text_of(result)
        == "a" * 51200 + f"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {path}]"
    )
    os.unlink(path)


def test_huge_output_spill_file_holds_everything_and_structured_output_is_capped(ctx):
    command = "for i in $(seq 1 25000); do printf '%0100d\\n' $i; done"
    result = call("bash", {"command": command}, ctx)
    path = result.details["fullOutputPath"]
    with open(path, "rb") as handle:
        spilled = handle.read()
    assert spilled == b"".join(b"%0100d\n" % i for i in range(1, 25001))
    structured = result.structured_content
    assert structured["truncated"] is True and structured["full_output_path"] == path
    omitted = len(spilled) - 1024 * 1024
    assert f"\n\n[... {omitted} bytes omitted ...]\n\n" in structured["output"]
    assert structured["output"].endswith(f"{25000:0100d}\n")
    os.unlink(path)


def test_timeout(ctx):
    # 2.5 s leaves a loaded machine time to start the shell and print "started" before the deadline.
    started = time.monotonic()
    message = error_of("bash", {"command": "echo started; sleep 60", "timeout": 2.5}, ctx)
    assert message == "started\n\n\nCommand timed out after 2.5 seconds"
    assert time.monotonic() - started < 30  # killed at the deadline, not after the sleep
    assert (
        error_of("bash", {"command": "sleep 60", "timeout": 0.2}, ctx)
        == "Command timed out after 0.2 seconds"
    )


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (0, "Invalid timeout: must be a finite number of seconds"),
        (-1, "Invalid timeout: must be a finite number of seconds"),
        (3_000_000, "Invalid timeout: maximum is 2147483.647 seconds"),
    ],
)
def test_invalid_timeouts(ctx, timeout, message):
    assert error_of("bash", {"command": "echo x", "timeout": timeout}, ctx) == message


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is dead for our purposes
        return handle.read().split(") ")[-1][0] != "Z"


def _shown(updates: list[ToolResult]) -> str:
    return updates[-1].content[0]["text"] if updates and updates[-1].content else ""


def test_abort_kills_the_whole_process_group_quickly(ctx, tmp_path):
    pid_file = tmp_path / "bg.pid"
    updates: list[ToolResult] = []

    async def main() -> tuple[str, float]:
        signal = AbortSignal()
        tool = bash_tool()
        task = asyncio.ensure_future(
            tool.execute(
                "1",
                {"command": f"sleep 60 & echo $! > {pid_file}; echo waiting; sleep 60"},
                signal,
                updates.append,
                ctx,
            )
        )
        # Abort only once the tool has shown "waiting", however slowly the shell got there.
        while "waiting" not in _shown(updates) or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        started = time.monotonic()
        signal.abort()
        with pytest.raises(Exception) as info:
            await task
        return str(info.value), time.monotonic() - started

    message, elapsed = asyncio.run(asyncio.wait_for(main(), 60))
    assert message == "waiting\n\n\nCommand aborted"
    assert elapsed < 20  # the abort, not the 60 s sleep, ended the call
    background = int(pid_file.read_text())
    deadline = time.monotonic() + 20
    while process_alive(background) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not process_alive(background)


def test_already_aborted_signal(ctx):
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(Exception, match=r"^Command aborted$"):
        call("bash", {"command": "echo never"}, ctx, signal=signal)


# The bounds below are far under the background sleeps and far over what a loaded machine needs.


def test_detached_background_writer_does_not_hang_the_call(ctx):
    started = time.monotonic()
    result = call(
        "bash", {"command": "(sleep 60 >/dev/null 2>&1 &) ; nohup sleep 60 >/dev/null 2>&1 & echo done"}, ctx
    )
    assert text_of(result) == "done\n" and time.monotonic() - started < 30


def test_background_process_holding_the_pipe_does_not_hang_the_call(ctx):
    started = time.monotonic()
    assert text_of(call("bash", {"command": "sleep 60 & echo bg"}, ctx)) == "bg\n"
    assert time.monotonic() - started < 30


def test_timeout_while_only_background_output_remains_names_the_shell_exit(ctx, monkeypatch):
    # The shell exits at once; its background loop keeps the pipe busy until the timeout. A loaded
    # machine can pause that loop past the 100 ms idle grace, which would end the call early.
    monkeypatch.setattr(bash_exec, "EXIT_STDIO_GRACE_SECONDS", 30)
    message = error_of(
        "bash", {"command": "(while true; do echo x; sleep 0.05; done) & exit 3", "timeout": 3}, ctx
    )
    assert message.startswith("x\nx\n")
    status = re.search(r"\n\n\n(Command timed out.*)\Z", message).group(1)
    after = re.fullmatch(
        r"Command timed out after 3 seconds\. The shell exited with code 3 after (\d+(?:\.\d)?) seconds, but "
        r"background processes it started kept writing output until the timeout\.",
        status,
    )
    assert after and float(after.group(1)) < 3


def test_shell_exit_seconds_print_as_javascript_prints_them():
    shell_exit = bash_exec.ShellExit(3, 0.0)
    assert _timeout_status(bash_exec.CommandTimedOut(0.5, shell_exit)) == (
        "Command timed out after 0.5 seconds. The shell exited with code 3 after 0 seconds, but background "
        "processes it started kept writing output until the timeout."
    )
    shell_exit.after_seconds = 1.5
    assert "after 1.5 seconds, but" in _timeout_status(bash_exec.CommandTimedOut(2, shell_exit))


def test_session_environment_and_prefix(ctx, monkeypatch):
    monkeypatch.setenv("TAU_MODEL", "stale")
    ctx.session_id, ctx.session_file, ctx.provider, ctx.model, ctx.reasoning_level = (
        "sid",
        "/s.jsonl",
        "faux",
        "faux-1",
        "off",
    )
    command = (
        'echo "$TAU_SESSION_ID|$TAU_SESSION_FILE|$TAU_PROVIDER|$TAU_MODEL|$TAU_REASONING_LEVEL|$PREFIXED"'
    )
    ctx.shell_command_prefix = "export PREFIXED=yes"
    assert text_of(call("bash", {"command": command}, ctx)) == "sid|/s.jsonl|faux|faux-1|off|yes\n"
    ctx.model = None
    assert text_of(call("bash", {"command": 'echo "[$TAU_MODEL]"'}, ctx)) == "[]\n"


def test_runs_in_the_context_cwd_with_the_configured_shell(ctx):
    assert text_of(call("bash", {"command": "pwd"}, ctx)) == os.path.realpath(ctx.cwd) + "\n"
    ctx.shell_path = "/bin/sh"
    assert text_of(call("bash", {"command": "echo $0"}, ctx)) == "/bin/sh\n"
    ctx.shell_path = "/no/such/shell"
    assert error_of("bash", {"command": "echo"}, ctx) == "Custom shell path not found: /no/such/shell"


def test_missing_working_directory(ctx):
    ctx.cwd = os.path.join(ctx.cwd, "gone")
    assert error_of("bash", {"command": "echo"}, ctx) == (
        f"Working directory does not exist: {ctx.cwd}\nCannot execute bash commands."
    )


def test_partial_updates_are_throttled(ctx):
    updates: list[ToolResult] = []
    command = "for i in $(seq 1 40); do echo $i; sleep 0.01; done"
    started = time.monotonic()
    call("bash", {"command": command}, ctx, on_update=updates.append)
    elapsed = time.monotonic() - started
    assert updates[0].to_json() == {"content": []}
    assert updates[1].to_json()["details"] == {}
    # At most one update per 0.1 s between the first (empty) and the last (the flush): a slow
    # machine may see more of them, never more than its elapsed time allows. 40 lines unthrottled
    # would be 41 updates.
    assert 2 < len(updates) <= 3 + elapsed / bash.UPDATE_THROTTLE_SECONDS
    assert updates[-1].content[0]["text"] == "".join(f"{i}\n" for i in range(1, 41))


def test_custom_operations_without_exit_code(ctx):
    class NoExitCode:
        async def exec(self, command, cwd, *, on_data, signal, timeout, env):
            on_data(b"partial")
            return None

    tool = bash_tool(NoExitCode())
    with pytest.raises(Exception, match=r"^partial\n\nCommand terminated without an exit code$"):
        asyncio.run(tool.execute("1", {"command": "x"}, None, None, ctx))


def test_kill_tracked_groups_stops_running_commands(ctx):
    from tau.tools import kill_tracked_groups

    updates: list[ToolResult] = []

    async def main() -> ToolResult:
        task = asyncio.ensure_future(
            bash_tool().execute("1", {"command": "echo up; sleep 60"}, None, updates.append, ctx)
        )
        while "up" not in _shown(updates):
            await asyncio.sleep(0.01)
        kill_tracked_groups()
        return await asyncio.wait_for(task, 30)

    result = asyncio.run(asyncio.wait_for(main(), 60))
    assert text_of(result) == "up\n\n\nCommand exited with code 137"
