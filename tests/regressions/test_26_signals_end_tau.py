"""Issue 26, item 3: SIGTERM and SIGINT end tau within a bounded time in every state.

The signals were event-loop handlers: while the main thread was blocked (an ``open()`` of a named
pipe, a lock, a blocking call in an extension), the loop never ran them and ``timeout``'s SIGTERM was
ignored; a signal during start-up gave a ``KeyboardInterrupt`` traceback or the default death. Now
Python-level handlers end tau with 143 / 130: at once before the run starts, after an orderly stop
during a run (what was saved stays saved), and after the guard's grace when the run cannot stop.
Bounds are generous: only a hang fails them.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from loopback import LoopbackServer, Reply

from tau_process import tau_command, tau_env

DEADLINE = 60.0
CODES = {signal.SIGTERM: 143, signal.SIGINT: 130}

BLOCKERS = """
import os, threading
from tau.extension import ToolDefinition

def _started():
    open("tool-started", "w").close()

def extension(tau):
    if os.environ.get("BLOCK_AT_LOAD"):
        open("tool-started", "w").close()
        os.mkfifo("load.fifo")
        open("load.fifo").read()  # the extension loader blocked in open()

    async def fifo(call_id, params, signal, on_update, ctx):
        _started()
        os.mkfifo("tool.fifo")
        open("tool.fifo").read()  # the main thread blocked in open(), the loop with it

    async def lock(call_id, params, signal, on_update, ctx):
        held = threading.Lock()
        held.acquire()
        _started()
        held.acquire()  # the main thread waits on a lock nobody releases

    for name, run in (("fifo", fifo), ("lock", lock)):
        tau.register_tool(ToolDefinition(name=name, description=name, parameters={"type": "object"}, execute=run))
"""


class Tau:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.project = tmp_path / "proj"
        self.project.mkdir()
        self.agent = tmp_path / "agent"
        self.agent.mkdir()
        self.extension = tmp_path / "blockers.py"
        self.extension.write_text(BLOCKERS)
        self.process: subprocess.Popen | None = None

    def start(self, *args: str, script: list | None = None, mode: str = "print", **env: str) -> None:
        argv = tau_command("-ne", "-e", self.extension, *args)
        if script is not None:
            path = self.tmp / "script.json"
            path.write_text(json.dumps(script))
            argv += ["--model", "faux/faux-1", "--faux-script", str(path)]
        argv += (
            ["--mode", "rpc"]
            if mode == "rpc"
            else (["--mode", "json", "go"] if mode == "json" else ["-p", "go"])
        )
        self.process = subprocess.Popen(
            argv,
            cwd=self.project,
            env=tau_env(env, agent_dir=self.agent),
            stdin=subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        if mode == "rpc":
            self.process.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')
            self.process.stdin.flush()

    def wait_for(self, condition, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not condition():
            assert self.process.poll() is None, (
                f"tau ended before {what}: {self.process.stderr.read().decode()}"
            )
            assert time.monotonic() < deadline, f"{what} never happened"
            time.sleep(0.02)

    def signal_and_wait(self, number: int) -> tuple[int, bytes]:
        self.process.send_signal(number)
        try:
            self.process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"tau still runs {DEADLINE} s after {signal.Signals(number).name}")
        return self.process.returncode, self.process.stderr.read()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def tau(tmp_path):
    runner = Tau(tmp_path)
    yield runner
    runner.stop()


def _started(tau: Tau) -> bool:
    return (tau.project / "tool-started").exists()


def _session_lines(tau: Tau) -> list[dict]:
    (session,) = (tau.agent / "sessions").glob("*/*.jsonl")
    return [json.loads(line) for line in session.read_text().splitlines()]


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_waiting_on_the_provider_ends_tau_and_keeps_what_was_saved(tau, number):
    with LoopbackServer([Reply(pieces=[], hang=True)]) as server:
        (tau.agent / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "local": {
                            "baseUrl": server.url,
                            "api": "anthropic-messages",
                            "apiKey": "sk-local",
                            "models": [{"id": "m"}],
                        }
                    }
                }
            )
        )
        tau.start("--model", "local/m")
        tau.wait_for(lambda: server.captured, "the request")
        code, err = tau.signal_and_wait(number)
    assert (code, err) == (CODES[number], b"Request was aborted\n")  # the last message, as print mode says it
    messages = [line["message"] for line in _session_lines(tau) if line.get("type") == "message"]
    assert [m["content"][0]["text"] for m in messages if m["role"] == "user"] == ["go"]
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "aborted"


def test_sigterm_while_a_shell_command_runs_ends_tau_and_the_command(tau):
    marker = tau.project / "shell-started"
    tau.start(script=[{"bash": f"touch {marker}; sleep 600"}, {"text": "never"}])
    tau.wait_for(marker.exists, "the shell command")
    code, err = tau.signal_and_wait(signal.SIGTERM)
    assert code == 143 and b"Traceback" not in err
    results = [
        line["message"] for line in _session_lines(tau) if line.get("message", {}).get("role") == "toolResult"
    ]
    assert (
        results and "Command aborted" in results[-1]["content"][0]["text"]
    )  # the aborted call's result, saved


@pytest.mark.parametrize(
    ("tool", "mode"), [("fifo", "print"), ("lock", "print"), ("fifo", "json"), ("fifo", "rpc")]
)
def test_sigterm_ends_tau_while_its_main_thread_is_blocked(tau, tool, mode):
    tau.start(script=[{"tool": tool, "args": {}}, {"text": "never"}], mode=mode)
    tau.wait_for(lambda: _started(tau), "the tool")
    code, err = tau.signal_and_wait(signal.SIGTERM)
    assert code == 143
    assert b"Traceback" not in err


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_tau_starts_ends_it_at_once_without_a_traceback(tau, number):
    tau.start(script=[{"text": "never"}], BLOCK_AT_LOAD="1")
    tau.wait_for(lambda: _started(tau), "the extension load")
    code, err = tau.signal_and_wait(number)
    assert (code, err) == (CODES[number], b"")


def test_an_embedded_run_gets_the_signal_in_its_loop_and_the_handlers_back_afterwards():
    """In-process (the SDK, tests): the first signal reaches the run's loop; afterwards the watchdog is
    disarmed and the caller's handlers are back, so the caller's process lives on."""
    import asyncio

    from tau.modes.signal_exit import SignalGuard

    before = signal.getsignal(signal.SIGTERM)
    guard = SignalGuard(grace=600)
    received: list[str] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        guard.attach(loop, received.append)
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(2000):
            if received:
                return
            await asyncio.sleep(0.01)

    assert guard.install()
    try:
        asyncio.run(scenario())
    finally:
        guard.detach()
        guard.disarm()
        guard.restore()
    assert received == ["SIGTERM"]
    assert (guard.count, guard._watchdog) == (0, None)
    assert signal.getsignal(signal.SIGTERM) == before
