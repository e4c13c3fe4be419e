"""Action Fusion and ObservationPack on the real run-time session with the scripted faux model.

The model edits a file with ``then_run`` running pytest (one request instead of two), then a command
prints 40 KB; the third request after it carries the placeholder instead, and ``obs_recall`` pages
back the exact bytes. The bundled loader installs both mechanisms, as ``tau`` does by default.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from faux_model import FauxModel

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import load_extensions  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

LINES = [f"line {n:05d} " + "x" * 29 for n in range(1000)]  # 40 bytes each with the newline
PRINT_40_KB = f"{sys.executable} -c \"[print(f'line {{n:05d}} ' + 'x' * 29) for n in range(1000)]\""
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py"


class Harness:
    def __init__(self, steps: list[Any], cwd: Path, settings: dict | None = None) -> None:
        scripted = FauxModel(steps)
        self.requests: list[list[dict[str, Any]]] = scripted.requests
        self.manager = SessionManager.create(str(cwd), str(cwd / "sessions"))
        self.session = session_module.AgentSession(
            self.manager,
            Settings.in_memory(settings or {}),
            scripted.registry,
            scripted.model,
            cwd=str(cwd),
            stream_fn=scripted.stream,
        )
        self.cwd = cwd

    async def start(self) -> Any:
        runner = await load_extensions(self.session, cwd=str(self.cwd), mode="json")
        await self.session.start()
        return runner

    def tool_results(self) -> list[dict[str, Any]]:
        return [
            entry["message"]
            for entry in self.manager.get_entries()
            if entry["type"] == "message" and entry["message"]["role"] == "toolResult"
        ]


def text_of(message: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text")


def test_fused_edit_then_large_output_then_placeholder_then_exact_recall(tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    recalled: list[str] = []

    def recall_first_page(request: dict[str, Any]) -> dict[str, Any]:
        results = [text_of(m) for m in request["messages"] if m["role"] == "toolResult"]
        obs_id = re.search(r"^id: (obs_[a-f0-9]{24})$", results[1], re.MULTILINE).group(1)
        return {"tool": "obs_recall", "args": {"id": obs_id, "offset": 0}}

    def recall_next(request: dict[str, Any]) -> Any:
        result = request["messages"][-1]
        page = text_of(result)
        recalled.append(page.split("\n", 2)[2])
        header = page.split("\n", 1)[0]
        if "eof=true" in header:
            return {"text": "all recalled"}
        obs_id = re.search(r"id=(obs_[a-f0-9]{24})", header).group(1)
        next_offset = int(re.search(r"next_offset=(\d+)", header).group(1))
        return [
            {"tool": "obs_recall", "args": {"id": obs_id, "offset": next_offset}},
            {"factory": recall_next},
        ]

    edit = {
        "path": "calc.py",
        "edits": [{"oldText": "return a - b", "newText": "return a + b"}],
        "then_run": {"command": PYTEST, "timeout": 60},
    }
    steps = [
        {"tool": "edit", "args": edit},
        {"bash": PRINT_40_KB},
        {"bash": "echo one"},
        {"bash": "echo two"},
        {"factory": recall_first_page},
        {"factory": recall_next},
    ]
    harness = Harness(steps, tmp_path)

    async def scenario():
        await harness.start()
        await harness.session.prompt("fix add and show me the log")

    asyncio.run(scenario())

    # one request for the edit and its test run: the next request already sees the pytest result
    fused = harness.tool_results()[0]
    assert fused["toolName"] == "edit" and not fused["isError"]
    assert fused["content"][0]["text"] == "Successfully replaced 1 block(s) in calc.py."
    assert (
        fused["content"][1]["text"].startswith("[then_run:succeeded]\n")
        and "1 passed" in fused["content"][1]["text"]
    )
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert harness.requests[1][-1]["toolCallId"] == fused["toolCallId"]

    # the 40 KB result: in full in the two requests after it, then the placeholder (in place)
    log = "\n".join(LINES) + "\n"
    big = harness.tool_results()[1]
    assert text_of(big) == log
    after = [request[5] for request in harness.requests[2:5]]
    assert text_of(after[0]) == log and text_of(after[1]) == log
    placeholder = text_of(after[2])
    assert placeholder.startswith("[large tool result replaced after its first 2 provider requests]\n")
    assert "line 00000" in placeholder and "line 00999" in placeholder
    assert len(placeholder.encode()) < 2000
    assert [m["role"] for m in harness.requests[4]] == [m["role"] for m in harness.requests[3]] + [
        "assistant",
        "toolResult",
    ]

    # every later request carries the same placeholder bytes, and recall returns the exact log
    assert len(harness.requests) > 6 and all(
        text_of(request[5]) == placeholder for request in harness.requests[5:]
    )
    assert "".join(recalled) == log
    assert text_of(harness.manager.get_entries()[-1]["message"]) == "all recalled"

    # the session file keeps the original; the archive lives under <sessionDir>/sol/<sessionId>/
    root = tmp_path / "sessions" / "sol" / harness.manager.get_session_id() / "observation-pack"
    obs_id = re.search(r"^id: (obs_[a-f0-9]{24})$", placeholder, re.MULTILINE).group(1)
    # objects are addressed by their content (issue 33): the placeholder's id finds it through its hash
    assert (root / "objects" / f"{hashlib.sha256(log.encode()).hexdigest()}.txt").read_text() == log
    assert obs_id in (root / "ledger.jsonl").read_text()
    assert text_of(big) == log  # the session keeps the original bytes
    events = [json.loads(line)["event"] for line in (root / "ledger.jsonl").read_text().splitlines()]
    assert events[:3] == ["full", "full", "placeholder"] and "recall" in events


def test_the_mechanisms_follow_the_sol_settings(tmp_path):
    harness = Harness([{"text": "hi"}], tmp_path, {"sol": {"actionFusion": False, "observationPack": False}})

    async def scenario():
        await harness.start()
        await harness.session.prompt("hello")

    asyncio.run(scenario())
    tools = {definition.name: definition for definition in harness.session.get_all_tools()}
    assert "obs_recall" not in tools and "then_run" not in tools["edit"].parameters["properties"]

    on = Harness([{"text": "hi"}], tmp_path / "on")
    (tmp_path / "on").mkdir(exist_ok=True)

    async def scenario_on():
        await on.start()
        await on.session.prompt("hello")

    asyncio.run(scenario_on())
    tools = {definition.name: definition for definition in on.session.get_all_tools()}
    assert "obs_recall" in tools and list(tools["edit"].parameters["properties"])[-1] == "then_run"
    declared = json.dumps(on.requests[0][0])
    assert '"then_run"' in declared and '"obs_recall"' in declared
    custom = [e for e in on.manager.get_entries() if e["type"] == "custom"]
    assert custom == []  # then_run is reachable: no reachability warning


def test_a_bad_sol_setting_is_reported_and_nothing_is_installed(tmp_path):
    harness = Harness([{"text": "hi"}], tmp_path, {"sol": {"observationPack": "yes"}})
    errors: list[dict[str, Any]] = []

    async def run():
        runner = await load_extensions(harness.session, cwd=str(tmp_path), mode="json")
        runner.on_error(errors.append)
        await harness.session.start()

    asyncio.run(run())
    messages = [e["error"] for e in errors if e["event"] == "session_start"]
    # one line for the four mechanisms that read the block (issue 19)
    assert messages == [
        'settings.json: sol.observationPack must be a boolean (true or false), got "yes"; '
        "the context-economy mechanisms (sol) are off"
    ]
    tools = {definition.name for definition in harness.session.get_all_tools()}
    assert "obs_recall" not in tools


def test_an_earlier_extension_owning_edit_makes_action_fusion_unreachable(tmp_path):
    """reachability: a third-party ``edit`` without then_run (loaded first, so it keeps the name)."""
    own = tmp_path / "own_edit.py"
    own.write_text(
        "from tau.extension import ToolDefinition, ToolResult\n\n"
        "SCHEMA = {'type': 'object', 'properties': {'path': {'type': 'string'}}, 'required': ['path']}\n\n"
        "async def execute(call_id, params, signal, on_update, ctx):\n"
        "    return ToolResult.text('edited elsewhere')\n\n"
        "def extension(tau):\n"
        "    for name in ('edit', 'write'):\n"
        "        tau.register_tool(ToolDefinition(name=name, description='x', parameters=SCHEMA, execute=execute))\n"
    )
    harness = Harness([{"text": "hi"}], tmp_path)

    async def scenario():
        await load_extensions(harness.session, cli_paths=[str(own)], cwd=str(tmp_path), mode="json")
        await harness.session.start()
        await harness.session.prompt("hello")

    asyncio.run(scenario())
    warnings = [e for e in harness.manager.get_entries() if e.get("customType") == "sol-pi-reachability-v1"]
    assert len(warnings) == 1
    data = warnings[0]["data"]
    assert data["reason"] == "then_run-not-on-active-tools" and data["mechanism"] == "actionFusion"
    assert "edit" in data["activeTools"] and data["schema"] == "sol-pi-reachability/1"


@pytest.mark.parametrize("enabled", [False, True])
def test_all_mechanisms_register_at_session_start_only_when_on(tmp_path, enabled):
    """all-mechanisms: nothing before session_start; with the switches off nothing at all."""
    sol = {"actionFusion": enabled, "observationPack": enabled}
    harness = Harness([{"text": "hi"}], tmp_path, {"sol": sol})

    async def scenario():
        runner = await load_extensions(harness.session, cwd=str(tmp_path), mode="json")
        ours = [
            ext
            for ext in runner.extensions
            if ext.path in ("bundled:action-fusion", "bundled:observation-pack")
        ]
        before = [(sorted(ext.handlers), sorted(ext.tools)) for ext in ours]
        await harness.session.start()
        await harness.session.start("reload")  # a second session_start registers nothing new
        after = [({k: len(v) for k, v in ext.handlers.items() if v}, sorted(ext.tools)) for ext in ours]
        return before, after

    before, after = asyncio.run(scenario())
    assert before == [(["session_start"], []), (["session_start"], [])]
    if enabled:
        assert after == [
            ({"session_start": 1, "before_agent_start": 1}, ["edit", "write"]),
            ({"session_start": 1, "context": 1, "session_shutdown": 1}, ["obs_recall"]),
        ]
    else:
        assert after == [({"session_start": 1}, []), ({"session_start": 1}, [])]
