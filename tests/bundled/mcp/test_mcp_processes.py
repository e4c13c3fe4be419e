"""Every MCP server process ends with tau: after a normal exit, Ctrl+C, SIGTERM, and ``kill -9`` of
tau itself (checked by pid, with the helper process the server started: npx and uvx leave one)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from mcp_harness import alive, call, pids, stdio_server, tau_argv, tau_env, wait_until, write_config

pytest.importorskip("mcp")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")


def _setup(tmp_path: Path, isolated_agent_dir: Path) -> tuple[Path, dict[str, str]]:
    pid_file = tmp_path / "pids"
    write_config(
        isolated_agent_dir,
        {"demo": stdio_server(exposure="direct", env={"MCP_TEST_PID_FILE": str(pid_file)})},
    )
    return pid_file, tau_env(isolated_agent_dir)


def _start_hanging(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """tau in JSON mode, waiting in a call the server never answers."""
    argv = tau_argv(tmp_path, "--no-session", "--mode", "json", call("mcp__demo__hang"))
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    # Reading stdout blocks: a tau that never gets to the call is killed after a generous bound, so
    # the test fails instead of hanging.
    watchdog = threading.Timer(240, proc.kill)
    watchdog.start()
    try:
        for raw in proc.stdout:
            record = json.loads(raw)
            if record.get("type") == "tool_execution_start" and record.get("toolName") == "mcp__demo__hang":
                return proc
    finally:
        watchdog.cancel()
    proc.wait(60)
    raise AssertionError(f"tau never called the tool: {proc.stderr.read().decode() if proc.stderr else ''}")


def _all_gone(pid_file: Path) -> None:
    started = pids(pid_file)
    assert len(started) == 2, started
    wait_until(
        lambda: not any(alive(pid) for pid in started), 60, f"the server and its helper {started} to end"
    )


def test_servers_end_with_a_normal_exit(tmp_path, isolated_agent_dir):
    pid_file, env = _setup(tmp_path, isolated_agent_dir)
    done = subprocess.run(
        tau_argv(tmp_path, "--no-session", "-p", call("mcp__demo__echo", {"text": "hi"})),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == 'tool mcp__demo__echo returned: hi | args {"text":"hi"}\n'
    _all_gone(pid_file)


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "kill-9"]
)
def test_servers_end_when_tau_is_stopped_mid_call(tmp_path, isolated_agent_dir, signum):
    pid_file, env = _setup(tmp_path, isolated_agent_dir)
    proc = _start_hanging(tmp_path, env)
    try:
        wait_until(lambda: len(pids(pid_file)) == 2, 60, "the server's pids")
        assert all(alive(pid) for pid in pids(pid_file))
        proc.send_signal(signum)
        # Ctrl+C aborts the call and the run ends as any run does; SIGTERM and kill -9 end tau.
        proc.wait(120)
        _all_gone(pid_file)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
