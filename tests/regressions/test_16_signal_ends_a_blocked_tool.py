"""Issue 16: SIGINT ends a run whose tool is blocked, in every mode.

A tool blocked in a thread used to hold the exit: the first Ctrl-C aborted the run but the process
then waited for the thread, and a second Ctrl-C (``sys.exit`` in the handler) waited too. In the
terminal, quitting (Ctrl+C twice) left the screen but the process then waited for the thread for
good, and a SIGINT was ignored (now a Ctrl+C press). The tools here are an extension's: ``stubborn`` ignores
the abort (its thread never returns), ``polite`` honours it but leaves its thread blocked. Bounds
are generous: only a hang fails them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tau_process import popen_tau, tau_command, tau_env

REPO = Path(__file__).resolve().parents[2]
DEADLINE = 60.0

EXTENSION = """
import asyncio
import threading

from tau.extension import ToolDefinition

NEVER = threading.Event()


def extension(tau):
    async def stubborn(call_id, params, signal, on_update, ctx):
        open("tool-started", "w").close()
        await asyncio.to_thread(NEVER.wait)

    async def polite(call_id, params, signal, on_update, ctx):
        open("tool-started", "w").close()
        asyncio.ensure_future(asyncio.to_thread(NEVER.wait))
        await signal.wait()
        raise RuntimeError("stopped")

    for name, run in (("stubborn", stubborn), ("polite", polite)):
        tau.register_tool(
            ToolDefinition(name=name, description=name, parameters={"type": "object"}, execute=run)
        )
"""


@pytest.fixture
def start(tmp_path):
    extension = tmp_path / "blockers.py"
    extension.write_text(EXTENSION)
    project = tmp_path / "proj"
    project.mkdir()
    started: list[subprocess.Popen] = []

    def run(mode: str, tool: str) -> subprocess.Popen:
        script = tmp_path / f"{tool}.json"
        script.write_text(json.dumps([{"tool": tool, "args": {}}, {"text": "never"}]))
        argv = ["-ne", "-e", str(extension), "--model", "faux/faux-1"]
        argv += ["--faux-script", str(script), "--mode", mode]
        process = popen_tau(
            argv if mode == "rpc" else [*argv, "go"],
            cwd=project,
            env={"TAU_AGENT_DIR": str(tmp_path / "agent")},
            stdin=subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL,  # JSON mode reads piped stdin
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        started.append(process)
        if mode == "rpc":
            process.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')
            process.stdin.flush()
        return process

    yield run
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def _until_tool_runs(process: subprocess.Popen) -> None:
    while line := process.stdout.readline():
        if json.loads(line).get("type") == "tool_execution_start":
            return
    raise AssertionError(f"tau ended before the tool ran: {process.stderr.read().decode()}")


def _interrupt_until_exit(process: subprocess.Popen, *, repeat: bool) -> int:
    """SIGINT (again every half second when ``repeat``: signals sent close together may merge)."""
    deadline = time.monotonic() + DEADLINE
    process.send_signal(signal.SIGINT)
    while time.monotonic() < deadline:
        try:
            return process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            if repeat:
                process.send_signal(signal.SIGINT)
    raise AssertionError(f"tau still runs {DEADLINE} s after SIGINT")


@pytest.mark.parametrize("mode", ["json", "rpc"])
def test_a_second_sigint_exits_while_a_tool_ignores_the_abort(start, mode):
    process = start(mode, "stubborn")
    _until_tool_runs(process)
    assert _interrupt_until_exit(process, repeat=True) == 130


@pytest.mark.parametrize("mode", ["json", "rpc"])
def test_one_sigint_settles_the_run_and_exits_though_a_thread_stays_blocked(start, mode):
    process = start(mode, "polite")
    _until_tool_runs(process)
    assert _interrupt_until_exit(process, repeat=False) == 130
    records = [json.loads(line) for line in process.stdout.read().splitlines()]
    if mode == "json":  # (RPC mode stops streaming before it aborts the run, see docs/rpc.md)
        assert {"type": "agent_settled", "aborted": True} in records
    assert process.stderr.read() == b""


# -- the terminal -----------------------------------------------------------------------------------


@pytest.fixture
def terminal(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    extension = tmp_path / "blockers.py"
    extension.write_text(EXTENSION)
    project = tmp_path / "proj"
    project.mkdir()
    started: list = []

    def run(tool: str):
        script = tmp_path / f"{tool}.json"
        script.write_text(json.dumps([{"tool": tool, "args": {}}, {"text": "never"}]))
        program, *argv = tau_command("-ne", "-e", str(extension), "--model", "faux/faux-1")
        argv += ["--faux-script", str(script), "go"]
        env = tau_env({"TAU_AGENT_DIR": str(tmp_path / "agent"), "TERM": "xterm-256color"})
        try:
            child = pexpect.spawn(program, argv, cwd=str(project), env=env, dimensions=(40, 100))
        except (OSError, pexpect.ExceptionPexpect) as exc:
            pytest.skip(f"cannot allocate a pseudo-terminal here ({exc})")
        started.append(child)
        deadline = time.monotonic() + DEADLINE
        while not (project / "tool-started").exists():
            assert child.isalive() and time.monotonic() < deadline, "the tool never started"
            try:
                child.read_nonblocking(1 << 16, timeout=0.05)
            except pexpect.TIMEOUT:
                pass
        return child

    yield run
    for child in started:
        if child.isalive():
            child.terminate(force=True)


def _exit_status(child) -> int:
    import pexpect

    child.expect(pexpect.EOF, timeout=DEADLINE)  # a hang fails here
    child.close()
    return child.exitstatus


@pytest.mark.parametrize("tool", ["stubborn", "polite"])
def test_quitting_the_terminal_does_not_wait_for_a_blocked_tool(terminal, tool):
    child = terminal(tool)
    child.send("\x03\x03")  # Ctrl+C twice on an empty editor: quit (the run is aborted first)
    assert _exit_status(child) == 0


def test_a_sigint_in_the_terminal_mode_counts_as_a_ctrl_c_press(tmp_path):
    """The terminal's Ctrl+C is a key in raw mode, and a SIGINT while prompt_toolkit prints above the
    live area (cooked mode) or a ``kill -INT``: both count as a press, so two quit. They were ignored."""
    import asyncio

    sys.path.insert(0, str(REPO / "tests" / "modes" / "interactive"))
    from interactive_support import Screen, faux_session

    session = faux_session(tmp_path, [])

    async def scenario() -> int:
        screen = Screen(session)
        screen.mode.clock = lambda: 1000.0  # both presses at the same instant
        await screen.start()
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            pytest.skip("prompt_toolkit does not handle SIGINT here (not the main thread)")
        os.kill(os.getpid(), signal.SIGINT)
        await screen.wait_text("Press Ctrl+C again to quit")
        assert not screen.task.done()
        os.kill(os.getpid(), signal.SIGINT)
        return await asyncio.wait_for(screen.task, DEADLINE)

    assert asyncio.run(scenario()) == 0
