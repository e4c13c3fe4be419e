"""``tau --mode rpc`` replays pi 1.6's RPC transcript (``rpc/rpc-session.jsonl``) with the same answers.

pi ran it with ``faux-ext.ts`` (``bash: <cmd>`` → a bash call, a tool result → ``tool <name> returned:
…``, else ``echo: …``); tau runs the same replies as a faux factory. The driver sends each input
line after the output line it followed in pi's run (steer, follow-up and a refused prompt while
``sleep 1`` runs). That ``sleep`` is a stand-in on ``PATH`` which ends once the driver has the
answer to the last of those, so a loaded machine cannot end it first.
Compared modulo what decisions.md lists: ids, timestamps, durations, usage and cost, paths, the
session id, system-prompt section texts, the number of streamed updates, and the parser's message.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from faux_ext import script
from golden_compare import _normalize, normalize_stream
from rpc_driver import plan_inputs, replay, tau_command, tau_env

from tau.session import SessionManager
from tau.session.projection import build_session_projection, convert_to_llm

PARSE_PREFIX = "Failed to parse command: "
_SESSION_FILE = re.compile(r"^(.*/)?[^/]+_[0-9a-f-]{36}\.jsonl$")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _outputs(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def _comparable_response(record: dict) -> dict:
    record = json.loads(json.dumps(record))
    if record.get("command") == "parse" and record.get("error", "").startswith(PARSE_PREFIX):
        record["error"] = PARSE_PREFIX + "<parser message>"
    data = record.get("data")
    if isinstance(data, dict):
        for key in ("sessionFile", "sessionId"):
            if key in data:
                data[key] = "<volatile>"
        if record.get("command") == "get_session_stats":
            for key in ("tokens", "cost", "contextUsage"):
                data[key] = "<usage>"
    return record


def comparable(records: list[dict]) -> list:
    """The stream as compared: responses made comparable, tool updates dropped (their count varies)."""
    kept = [
        _comparable_response(record) if record.get("type") == "response" else record
        for record in records
        if record.get("type") != "tool_execution_update"
    ]
    return normalize_stream(kept)


def responses(records: list[dict]) -> list[tuple]:
    return [(r.get("id"), r.get("command"), r["success"]) for r in records if r.get("type") == "response"]


_RUNS: dict[Path, dict] = {}


@pytest.fixture
def tau_run(tmp_path_factory, pi_fixtures):
    """One replay per test session (the run takes a few seconds), shared by the tests below."""
    if pi_fixtures not in _RUNS:
        _RUNS[pi_fixtures] = _replay(tmp_path_factory, pi_fixtures)
    return _RUNS[pi_fixtures]


def _replay(tmp_path_factory, pi_fixtures: Path) -> dict:
    base = tmp_path_factory.mktemp("rpc")
    project = base / "proj"
    project.mkdir()
    sessions = base / "sessions"
    script_file = base / "script.json"
    script_file.write_text(json.dumps(script()))
    transcript = _records(pi_fixtures / "rpc" / "rpc-session.jsonl")
    argv = tau_command("--offline", "-ne", "--model", "faux/faux-1", "--faux-script", str(script_file))
    argv += ["--session-dir", str(sessions)]
    gate = base / "sleep-may-end"
    path = f"{_gated_sleep(base / 'bin', gate)}{os.pathsep}{os.environ.get('PATH', '')}"
    env = tau_env(TAU_AGENT_DIR=str(base / "agent"), HOME=str(base), PATH=path)
    last = _last_input_during_the_sleep(transcript)

    def open_gate(line: str) -> None:
        record = json.loads(line)
        if record.get("type") == "response" and record.get("id") == last:
            gate.touch()

    run = asyncio.run(replay(plan_inputs(transcript), argv, cwd=project, env=env, on_output=open_gate))
    return {"run": run, "transcript": transcript, "sessions": sessions}


def _gated_sleep(directory: Path, gate: Path) -> Path:
    """A ``sleep`` that returns once ``gate`` exists (checked every 50 ms, for at most a minute)."""
    directory.mkdir()
    real = shutil.which("sleep") or "/bin/sleep"
    command = directory / "sleep"
    command.write_text(
        f"#!/bin/sh\nfor _ in $(seq 1200); do [ -e {shlex.quote(str(gate))} ] && exit 0; {real} 0.05; done\n"
    )
    command.chmod(0o755)
    return directory


def _last_input_during_the_sleep(transcript: list[dict]) -> str:
    """The id of the last input pi's driver sent while the transcript's ``sleep`` ran."""
    running, last = False, None
    for record in transcript:
        try:
            line = json.loads(record["line"])
        except ValueError:  # the transcript's malformed input line
            continue
        if record["dir"] == "out" and line.get("type") == "tool_execution_start":
            running = "sleep" in line["args"].get("command", "")
        elif record["dir"] == "out" and line.get("type") == "tool_execution_end":
            running = False
        elif record["dir"] == "in" and running:
            last = line["id"]
    assert last is not None, "the transcript sends nothing while its sleep runs"
    return last


def test_exit_code_and_stderr_like_pi(tau_run, pi_fixtures):
    summary = json.loads((pi_fixtures / "rpc" / "rpc-session.summary.json").read_text())
    run = tau_run["run"]
    assert run.stderr.decode() == (summary["stderr"] or "")
    assert run.code == summary["exitCode"] == 0


def test_responses_answer_each_request_in_pi_order(tau_run):
    golden = [json.loads(r["line"]) for r in tau_run["transcript"] if r["dir"] == "out"]
    assert responses(_outputs(tau_run["run"].out)) == responses(golden)


def test_stream_matches_pi_transcript(tau_run):
    golden = [json.loads(r["line"]) for r in tau_run["transcript"] if r["dir"] == "out"]
    produced = _outputs(tau_run["run"].out)
    assert comparable(produced) == comparable(golden)


def test_each_tool_call_streams_updates(tau_run):
    produced = _outputs(tau_run["run"].out)
    starts = [r["toolCallId"] for r in produced if r.get("type") == "tool_execution_start"]
    updated = {r["toolCallId"] for r in produced if r.get("type") == "tool_execution_update"}
    assert starts and set(starts) <= updated


def test_state_names_the_session_file_it_writes(tau_run):
    produced = _outputs(tau_run["run"].out)
    state = next(r for r in produced if r.get("id") == "s0")["data"]
    files = sorted(tau_run["sessions"].glob("*.jsonl"))
    assert len(files) == 1
    assert state["sessionFile"] == str(files[0]) and _SESSION_FILE.match(state["sessionFile"])
    assert state["sessionId"] in files[0].name


def test_session_file_projects_to_pi_context(tau_run, pi_fixtures):
    golden = json.loads((pi_fixtures / "rpc" / "rpc-session.session.context.json").read_text())
    (path,) = tau_run["sessions"].glob("*.jsonl")
    manager = SessionManager.open(path, read_only=True)
    messages = convert_to_llm(build_session_projection(manager.get_branch())["messages"])
    assert _normalize(messages) == _normalize(golden["messages"])


def test_session_file_has_pi_entry_sequence(tau_run, pi_fixtures):
    def shape(lines: list[str]) -> list[tuple]:
        out = []
        for line in lines:
            entry = json.loads(line)
            out.append((entry["type"], (entry.get("message") or {}).get("role"), list(entry)))
        return out

    (path,) = tau_run["sessions"].glob("*.jsonl")
    golden = (pi_fixtures / "rpc" / "rpc-session.session.jsonl").read_text().splitlines()
    assert shape(path.read_text().splitlines()) == shape(golden)


def test_comparison_notices_a_changed_answer(tau_run):
    """The comparison is not vacuous: one changed error text or one missing event is a difference."""
    golden = [json.loads(r["line"]) for r in tau_run["transcript"] if r["dir"] == "out"]
    changed = json.loads(json.dumps(golden))
    unknown = next(r for r in changed if r.get("id") == "u1")
    unknown["error"] = "Unknown command: something_else"
    assert comparable(changed) != comparable(golden)
    without_settle = [r for r in golden if r.get("type") != "agent_settled"]
    assert comparable(without_settle) != comparable(golden)
