"""``tau --mode rpc`` as a process: end of input, signals, raw framing, a clean stdout."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from faux_ext import script
from rpc_driver import tau_command, tau_env


@pytest.fixture
def tau(tmp_path):
    """Start ``tau --mode rpc`` (faux model, faux-ext replies) in ``tmp_path/proj``."""
    project = tmp_path / "proj"
    project.mkdir()
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script()))
    started: list[subprocess.Popen] = []

    def start(*extra: str) -> subprocess.Popen:
        argv = tau_command("-ne", "--model", "faux/faux-1", "--faux-script", str(script_file), *extra)
        env = tau_env(TAU_AGENT_DIR=str(tmp_path / "agent"), HOME=str(tmp_path))
        proc = subprocess.Popen(
            argv, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def read_until(proc: subprocess.Popen, kind: str, timeout: float = 60) -> list[dict]:
    records, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        records.append(json.loads(line))
        if records[-1].get("type") == kind:
            return records
    raise AssertionError(f"no {kind!r} record; got {records[-3:]}")


def test_end_of_input_exits_zero_with_empty_stderr(tau):
    proc = tau()
    out, err = proc.communicate(b"", timeout=60)
    assert (proc.returncode, out, err) == (0, b"", b"")


def test_separators_inside_strings_survive_the_pipes(tau):
    proc = tau()
    message = "line\u2028sep\u2029para"
    proc.stdin.write(
        json.dumps({"id": "p", "type": "prompt", "message": message}, ensure_ascii=False).encode() + b"\r\n"
    )
    proc.stdin.flush()
    records = read_until(proc, "agent_settled")
    _out, err = proc.communicate(b"", timeout=60)
    assert records[0] == {
        "id": "p",
        "type": "response",
        "command": "prompt",
        "success": True,
        "data": {"disposition": "started"},
    }
    final = [r for r in records if r["type"] == "message_end"][-1]["message"]
    assert final["content"] == [{"type": "text", "text": f"echo: {message}"}]
    assert (proc.returncode, err) == (0, b"")


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_aborts_the_run_and_exits(tau, name, code):
    proc = tau()
    proc.stdin.write(b'{"id":"p","type":"prompt","message":"bash: sleep 120"}\n')
    proc.stdin.flush()
    read_until(proc, "tool_execution_start")
    started = time.monotonic()
    proc.send_signal(getattr(signal, name))
    proc.wait(timeout=60)  # stdin stays open: the signal alone ends the process
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert time.monotonic() - started < 60  # the signal, not the 120 s sleep, ended it
    assert err == b""


def test_stray_prints_go_to_stderr(tau, tmp_path):
    extension = tmp_path / "chatty.py"
    extension.write_text(
        "def extension(tau):\n"
        "    def hello(args, ctx):\n"
        "        print('chatty extension output')\n"
        "        ctx.ui.notify('notified')\n"
        "    tau.register_command('hello', 'say hello', hello)\n"
    )
    proc = tau("-e", str(extension))
    out, err = proc.communicate(b'{"id":"h","type":"prompt","message":"/hello"}\n', timeout=60)
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("method") or r.get("command") for r in records] == ["notify", "prompt"]
    assert b"chatty extension output" in err
    assert proc.returncode == 0


def test_the_minimal_client_of_pis_rpc_docs(tau):
    """pi's docs/rpc.md "Minimal client", with ``tau`` for ``pi``: prompt, print deltas until settled, close."""
    process = tau()
    command = {"id": "prompt-1", "type": "prompt", "message": "Hello"}
    process.stdin.write(json.dumps(command).encode("utf-8") + b"\n")
    process.stdin.flush()
    printed = []
    while line := process.stdout.readline():
        record = json.loads(line)
        if record.get("type") == "message_update":
            update = record["assistantMessageEvent"]
            if update["type"] == "text_delta":
                printed.append(update["delta"])
        elif record.get("type") == "agent_settled":
            break
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert "".join(printed) == "echo: Hello"


def test_an_extension_that_fails_to_load_is_reported_on_stderr(tau, tmp_path):
    """As pi 1.6 (issue 32): every mode stops on an extension that fails to load, before any command."""
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('cannot start')\n")
    proc = tau("-e", str(broken))
    out, err = proc.communicate(b'{"id":"s","type":"get_state"}\n', timeout=60)
    assert out == b""
    assert b"broken.py" in err and b"cannot start" in err
    assert err.decode().splitlines()[-1] == 'Hint: start without extensions using "tau -ne".'
    assert proc.returncode == 1


def test_a_prompt_followed_by_end_of_input_is_answered_then_aborted(tau):
    proc = tau()
    out, err = proc.communicate(b'{"id":"p","type":"prompt","message":"bash: sleep 120"}\n', timeout=60)
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0] == {
        "id": "p",
        "type": "response",
        "command": "prompt",
        "success": True,
        "data": {"disposition": "started"},
    }
    assert (proc.returncode, err) == (0, b"")
