"""Issue 29: MCP in tau runs the scenarios real pi 1.6 runs, with the same events, session files and
contexts, and sessions with MCP tool calls resume in both directions.

Each scenario of ``pi29_runs.py`` was run through pi 1.6 (``data/pi29/<name>.json``) against the
server in ``data/pi29/server.py`` (the SDK's own server library, over stdio or streamable HTTP on
loopback); tau runs it the same way and the two runs are compared whole, modulo ids, times,
durations, usage estimates, the texts of the system-prompt sections that name their program, and
spill-file names (``pi29_runs.comparable``). The ``mcp_servers`` section is compared word for word.
``PI_BIN=/work/pi-run/node_modules/.bin/pi`` also re-runs pi: on each scenario and on a session tau
just wrote.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path

import pytest
from pi22_runs import Run
from pi29_runs import DATA, SCENARIOS, comparable, load_golden, run_pi, run_tau, without_system

pytest.importorskip("mcp")

_RUNS: dict[str, dict] = {}
FIRST_RUNS = sorted(name for name, scenario in SCENARIOS.items() if scenario.resumes is None)
PI_BIN = os.environ.get("PI_BIN")


def _tau(name: str, resume: list | None = None, of: str = "") -> dict:
    """tau's run of ``name`` (continuing ``resume``, the session ``of`` names), as compared."""
    key = f"{name}:{of}"
    if key not in _RUNS:
        # A scratch folder named like the goldens' (/tmp/pi29-XXXXXXXX): texts keep their lengths.
        with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
            _RUNS[key] = dataclasses.asdict(run_tau(SCENARIOS[name], Path(tmp), resume))
    return comparable(Run(**_RUNS[key]))


def _records(run: dict, kind: str) -> list[dict]:
    return [record for record in run["stdout"] if record.get("type") == kind]


def _results(run: dict) -> list[dict]:
    return [record["result"] for record in _records(run, "tool_execution_end")]


@pytest.mark.parametrize("name", FIRST_RUNS)
def test_run_equals_pi(name):
    tau, pi = _tau(name), comparable(load_golden(name))
    assert tau == pi
    assert json.dumps(tau) == json.dumps(pi)  # fields in pi's order too


def test_the_golden_results_are_what_the_issue_asks_for():
    """What the goldens hold, read from pi's runs: result shapes, errors, images, the spill, the
    structured content in events only."""
    direct = comparable(load_golden("direct-calls"))
    add, fail, picture, big = _results(direct)
    assert add["content"] == [{"type": "text", "text": "5"}]
    assert add["details"] == {"server": "demo", "tool": "add"}
    assert add["structuredContent"]["structuredContent"] == {"result": 5}
    assert fail["isError"] is True and fail["content"][0]["text"].startswith("Error executing tool fail")
    assert picture["content"][0]["type"] == "image" and picture["content"][0]["mimeType"] == "image/png"
    text = big["content"][0]["text"]
    assert text.startswith("Warning: truncated output (original token count: 7500)\nTotal output lines: 577")
    assert "chars truncated…" in text and text.endswith(
        "[Full output: <output file>.txt (read it with offset/limit)]"
    )
    assert big["details"]["fullOutputPath"] == "<output file>.txt"
    stored = [e["message"] for e in direct["session"] if e.get("message", {}).get("role") == "toolResult"]
    assert stored and all("structuredContent" not in message for message in stored)
    crash = _results(comparable(load_golden("crash")))
    assert crash[0]["content"] == [{"type": "text", "text": "MCP connection closed"}]
    assert crash[1]["content"] == [{"type": "text", "text": "back again"}]
    (hang,) = _results(comparable(load_golden("timeout")))
    assert hang["content"] == [{"type": "text", "text": "MCP request timed out after 30000ms"}]


def test_deferred_tools_are_listed_then_loaded_by_tool_search():
    run = comparable(load_golden("deferred-search"))
    systems = [r["message"] for r in _records(run, "message_end") if r["message"]["role"] == "system"]
    assert systems[0]["mcpSection"] == (
        "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` "
        "servers with `tool_search`.\n- mcp__demo (tool_search): Demo tools for tests.\n</mcp_servers>"
    )
    declared = [tool["name"] for tool in systems[0]["toolsAdded"]]
    assert "tool_search" in declared and "mcp__demo__echo" in declared and "mcp__demo__add" not in declared
    search, add, nothing, hidden = _results(run)
    assert search["content"][0]["text"] == (
        "Loaded 1 tool. They are available from your next call:\n- mcp__demo__add: Add two numbers."
    )
    assert search["details"] == {"loaded": ["mcp__demo__add"]}
    assert [tool["name"] for tool in systems[1]["toolsAdded"]] == ["mcp__demo__add"]
    assert add["content"] == [{"type": "text", "text": "42"}]
    assert nothing["content"][0]["text"] == "No matching tools found."
    assert hidden["content"][0]["text"] == "Tool mcp__demo__hang not found"


def test_a_trusted_project_overrides_exposure_and_an_untrusted_one_is_ignored():
    trusted = comparable(load_golden("project-override"))
    first = next(r["message"] for r in _records(trusted, "message_end") if r["message"]["role"] == "system")
    names = [tool["name"] for tool in first["toolsAdded"]]
    assert "mcp__demo__add" in names and "mcp__demo__echo" not in names
    assert _results(trusted)[1]["content"][0]["text"] == "Tool mcp__demo__echo not found"
    untrusted = comparable(load_golden("project-untrusted"))
    assert _results(untrusted)[0]["content"] == [{"type": "text", "text": "still direct"}]


def test_codemode_scripts_call_mcp_tools_and_declared_ones_gain_its_sentence():
    """From pi's goldens: a script calls the tools of a codemode server and gets the whole
    ``CallToolResult`` (an error result resolves); with codemode active, declared MCP tools carry
    codemode's sentence about what the call resolves to."""
    calls = comparable(load_golden("codemode-calls"))
    (script,) = [r for r in _records(calls, "tool_execution_end") if r["toolName"] == "codemode"]
    assert script["result"]["content"][1]["text"] == (
        '==> text 1/2 <==\n{"sum":{"result":5},"failed":true}\n==> text 2/2 <==\nfrom codemode'
    )
    nested = [r["toolName"] for r in _records(calls, "tool_execution_end") if r.get("parentToolCallId")]
    assert nested == ["mcp__demo__add", "mcp__demo__fail", "mcp__demo__echo"]
    direct = comparable(load_golden("codemode-direct"))
    first = next(r["message"] for r in _records(direct, "message_end") if r["message"]["role"] == "system")
    add = next(tool for tool in first["toolsAdded"] if tool["name"] == "mcp__demo__add")
    assert add["description"] == (
        "Add two numbers.\n\nCodemode: `tools.mcp__demo__add(args)` resolves to "
        "`{ content, structuredContent?: { result }, isError? }`."
    )


def test_tau_resumes_its_session_as_pi_resumes_its_own():
    """``direct-calls`` then ``resume-calls`` in tau equals the same in pi: the MCP tools the session
    declared are declared again and callable once the server connected."""
    assert _tau("direct-calls") == comparable(load_golden("direct-calls"))
    session = _RUNS["direct-calls:"]["session"]
    assert _tau("resume-calls", session, of="tau") == comparable(load_golden("resume-calls"))


def test_tau_resumes_a_pi_session():
    """tau continues pi's session with its MCP tools: the same events and entries as pi continuing
    it, but for the system message declaring tau's own prompt texts."""
    resumed = _tau("resume-calls", load_golden("direct-calls").session, of="pi")
    expected = comparable(load_golden("resume-calls"))
    assert without_system(resumed) == without_system(expected)
    assert _results(resumed)[0]["content"] == [{"type": "text", "text": "resumed"}]


def test_pi_resumed_a_tau_session():
    """The committed golden of pi continuing a session tau wrote: the same as pi continuing its own,
    but for pi's system message; and tau still writes that session."""
    crossed = comparable(load_golden("resume-calls.pi-resumes-tau"))
    assert without_system(crossed) == without_system(comparable(load_golden("resume-calls")))
    written = json.loads((DATA / "direct-calls.tau-session.json").read_text())
    assert (
        _tau("direct-calls")["session"]
        == comparable(dataclasses.replace(load_golden("direct-calls"), session=written))["session"]
    )


def test_the_comparison_notices_a_changed_record():
    golden = load_golden("crash")
    changed = [line.replace("MCP connection closed", "MCP connection lost") for line in golden.stdout]
    assert comparable(dataclasses.replace(golden, stdout=changed)) != comparable(golden)
    section = [
        line.replace("Demo tools for tests.", "Demo tools.") for line in load_golden("deferred-search").stdout
    ]
    assert comparable(dataclasses.replace(load_golden("deferred-search"), stdout=section)) != comparable(
        load_golden("deferred-search")
    )


# -- with real pi (PI_BIN) ------------------------------------------------------------------------


@pytest.mark.skipif(not PI_BIN, reason="set PI_BIN to real pi 1.6 to re-run it")
@pytest.mark.parametrize("name", FIRST_RUNS)
def test_pi_still_runs_the_scenario_as_the_golden(name):
    with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
        run = run_pi(SCENARIOS[name], Path(tmp), PI_BIN)
    assert comparable(run) == comparable(load_golden(name))


@pytest.mark.skipif(not PI_BIN, reason="set PI_BIN to real pi 1.6 to re-run it")
def test_pi_resumes_the_session_tau_writes_now():
    _tau("direct-calls")
    with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
        crossed = run_pi(SCENARIOS["resume-calls"], Path(tmp), PI_BIN, _RUNS["direct-calls:"]["session"])
    assert without_system(comparable(crossed)) == without_system(comparable(load_golden("resume-calls")))
    assert _results(comparable(crossed))[0]["content"] == [{"type": "text", "text": "resumed"}]
