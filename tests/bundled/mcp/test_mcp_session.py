"""MCP in a running tau session (the SDK's ``create_agent_session``) against real servers written
with the SDK's server library: over streamable HTTP on loopback (one server for the module) and
over stdio (a server per test), on the scripted faux model."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import FACTORY, HttpServer, call, stdio_server, tau_argv, tau_env, write_config

import tau
from tau.extension import NoUI

pytest.importorskip("mcp")

EXTENSIONS = ["builtin:mcp", "builtin:tool-search"]


def in_loop(test):
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


@pytest.fixture(scope="module")
def http_server():
    server = HttpServer()
    yield server
    server.stop()


@pytest.fixture
def project(tmp_path, monkeypatch):
    work = tmp_path / "proj"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TAU_MCP_STARTUP_WAIT", "120")
    return work


async def _session(**options: Any) -> Any:
    extensions = options.pop("extensions", EXTENSIONS)
    return await tau.create_agent_session(
        model="faux/faux-1",
        faux_script=[{"factory": FACTORY}],
        extensions=extensions,
        no_extensions=True,
        **options,
    )


def _results(session: Any) -> list[dict[str, Any]]:
    return [m for m in session.messages if m["role"] == "toolResult"]


def _systems(session: Any) -> list[dict[str, Any]]:
    return [m for m in session.messages if m["role"] == "system"]


def _declared(session: Any) -> list[str]:
    tools: dict[str, Any] = {}
    for message in _systems(session):
        for removed in message.get("toolsRemoved") or []:
            tools.pop(removed["name"], None)
        for added in message.get("toolsAdded") or []:
            tools[added["name"]] = added
    return list(tools)


@in_loop
async def test_http_tools_are_declared_and_called_with_pi_result_shapes(
    project, isolated_agent_dir, http_server
):
    write_config(isolated_agent_dir, {"web": {"url": http_server.url, "exposure": "direct"}})
    events: list[dict[str, Any]] = []
    async with await _session() as session:
        session.subscribe(
            lambda event: events.append(event) if event["type"] == "tool_execution_end" else None
        )
        for prompt in (
            call("mcp__web__add", {"a": 2, "b": 3}),
            call("mcp__web__fail", {"reason": "bad"}),
            call("mcp__web__picture"),
            call("mcp__web__big", {"size": 30000}),
        ):
            await session.prompt(prompt)
        declared = _declared(session)
        add, fail, picture, big = _results(session)
    assert {"mcp__web__add", "mcp__web__echo", "list_mcp_resources", "read_mcp_resource"} <= set(declared)
    assert add["content"] == [{"type": "text", "text": "5"}] and add["details"] == {
        "server": "web",
        "tool": "add",
    }
    assert fail["isError"] is True and "Error executing tool fail" in fail["content"][0]["text"]
    assert picture["content"][0] == {
        "type": "image",
        "data": picture["content"][0]["data"],
        "mimeType": "image/png",
    }
    # structuredContent reaches events (codemode scripts), never the transcript
    assert events[0]["result"]["structuredContent"]["structuredContent"] == {"result": 5}
    assert all("structuredContent" not in message for message in (add, fail, picture, big))
    # a 30 KB result: 20 KB kept, the middle cut, the whole text in a private temp file
    text = big["content"][0]["text"]
    path = big["details"]["fullOutputPath"]
    assert len(text.encode()) < 21 * 1024 and "chars truncated…" in text and f"[Full output: {path}" in text
    assert Path(path).name.startswith("tau-mcp-") and Path(path).stat().st_size == 30000
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.unlink(path)


@in_loop
async def test_servers_start_together(project, isolated_agent_dir, tmp_path):
    """Each server answers only once all three have started: connecting them one after the other
    would leave the first waiting for the others (an event, not a clock, decides)."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {"MCP_TEST_BARRIER": f"{barrier}:3"}
    write_config(
        isolated_agent_dir,
        {name: stdio_server(exposure="direct", env=env) for name in ("one", "two", "three")},
    )
    async with await _session() as session:
        await session.prompt(call("mcp__three__echo", {"text": "all up"}))
        declared = set(_declared(session))
        (result,) = _results(session)
    assert {"mcp__one__echo", "mcp__two__echo", "mcp__three__echo"} <= declared
    assert result["content"] == [{"type": "text", "text": "all up"}]


@in_loop
async def test_deferred_tools_are_listed_in_the_section_and_loaded_by_tool_search(
    project, isolated_agent_dir, http_server
):
    write_config(
        isolated_agent_dir,
        {"web": {"url": http_server.url, "exposure": "deferred", "description": "A demo server\nmore"}},
    )
    async with await _session() as session:
        await session.prompt(call("tool_search", {"query": "add two numbers"}))
        await session.prompt(call("mcp__web__add", {"a": 1, "b": 2}))
        systems = _systems(session)
        search, add = _results(session)
    assert systems[0]["sections"]["mcp_servers"] == (
        "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` "
        "servers with `tool_search`.\n- mcp__web (tool_search): A demo server\n</mcp_servers>"
    )
    assert "mcp__web__add" not in [t["name"] for t in systems[0]["toolsAdded"]]
    assert search["content"][0]["text"].startswith("Loaded 1 tool. They are available from your next call:\n")
    assert search["details"] == {"loaded": ["mcp__web__add"]}
    assert [t["name"] for t in systems[1]["toolsAdded"]] == ["mcp__web__add"]
    assert add["content"] == [{"type": "text", "text": "3"}]


@in_loop
async def test_resource_tools_list_and_read(project, isolated_agent_dir, http_server):
    write_config(isolated_agent_dir, {"web": {"url": http_server.url, "exposure": "direct"}})
    async with await _session() as session:
        await session.prompt(call("list_mcp_resources"))
        await session.prompt(call("list_mcp_resource_templates"))
        await session.prompt(call("read_mcp_resource", {"server": "web", "uri": "docs://pages/intro"}))
        await session.prompt(call("read_mcp_resource", {"server": "nope", "uri": "docs://readme"}))
        listed, templates, read, unknown = _results(session)
    assert json.loads(listed["content"][0]["text"])["resources"][0]["uri"] == "docs://readme"
    assert (
        json.loads(templates["content"][0]["text"])["resourceTemplates"][0]["uriTemplate"]
        == "docs://pages/{name}"
    )
    assert read["content"] == [{"type": "text", "text": "Page intro"}]
    assert unknown["isError"] is True
    assert unknown["content"][0]["text"] == 'MCP server "nope" has no resources. Servers with resources: web'


@in_loop
async def test_a_server_an_extension_registers_later_connects_and_leaves(project, http_server):
    changes: list[list[str]] = []

    def extension(api: Any) -> None:
        api.on("mcp_servers_change", lambda event, ctx: changes.append([s["name"] for s in event.servers]))

        async def register(args: str, ctx: Any) -> None:
            api.register_mcp_server("late", {"url": http_server.url, "exposure": "direct"})

        async def unregister(args: str, ctx: Any) -> None:
            api.unregister_mcp_server("late")

        api.register_command("register-late", "", register)
        api.register_command("unregister-late", "", unregister)

    async with await _session(extensions=[extension, *EXTENSIONS]) as session:
        await session.prompt("/register-late")
        await session.prompt(call("mcp__late__echo", {"text": "registered"}))
        await session.prompt("/unregister-late")
        await session.prompt(call("mcp__late__echo", {"text": "gone"}))
        first, second = _results(session)
    assert changes == [["late"], []]
    assert first["content"] == [{"type": "text", "text": "registered"}]
    assert second["isError"] is True and second["content"][0]["text"] == "Tool mcp__late__echo not found"


def test_an_invalid_registration_names_the_problem(project):
    errors: list[str] = []

    def extension(api: Any) -> None:
        for name, config in (
            ("bad name", {"command": "x"}),
            ("x", {"url": "ftp://host"}),
            ("y", {"type": "sse", "url": "http://h"}),
        ):
            try:
                api.register_mcp_server(name, config)
            except ValueError as exc:
                errors.append(str(exc))

    async def main() -> None:
        async with await _session(extensions=[extension, *EXTENSIONS]):
            pass

    asyncio.run(main())
    path = "inline:test_mcp_session.test_an_invalid_registration_names_the_problem.<locals>.extension"
    assert errors == [
        f'Invalid MCP server registered by extension "{path}": invalid server name "bad name" '
        '(use letters, digits, "_" and "-")',
        f'Invalid MCP server registered by extension "{path}": server "x": url must be an http or https URL',
        f'Invalid MCP server registered by extension "{path}": server "y": legacy SSE transport is not '
        "supported; use the streamable HTTP URL",
    ]


class RecordingUI(NoUI):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def notify(self, message: str, type: str = "info") -> None:
        self.notes.append(message)


@in_loop
async def test_a_crash_mid_call_is_reported_once_with_the_log_and_the_server_comes_back(
    project, isolated_agent_dir
):
    write_config(isolated_agent_dir, {"demo": stdio_server(exposure="direct")})
    ui = RecordingUI()
    async with await _session() as session:
        session.hooks.set_ui(ui)
        await session.prompt(call("mcp__demo__crash"))
        await session.prompt(call("mcp__demo__echo", {"text": "back"}))
        await session.prompt(call("mcp__demo__crash"))
        crashed, back, again = _results(session)
    assert crashed["isError"] is True and crashed["content"] == [
        {"type": "text", "text": "MCP connection closed"}
    ]
    assert back["content"] == [{"type": "text", "text": "back"}]
    assert again["content"] == crashed["content"]
    log = isolated_agent_dir / "mcp.log"
    assert ui.notes == [
        f'MCP server "demo" disconnected (Connection closed); it reconnects on the next call. Server log: {log}'
    ]
    assert "[demo] stderr: crashing on purpose" in log.read_text()


def _print_hello(tmp_path: Path, agent_dir: Path) -> subprocess.CompletedProcess[str]:
    """``tau -p hello`` with the mcp extension: it answers and ends (within a generous bound)."""
    done = subprocess.run(
        tau_argv(tmp_path, "--no-session", "-p", "hello"),
        cwd=tmp_path,
        env=tau_env(agent_dir),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout == "echo: hello\n"
    return done


def test_a_server_that_cannot_start_is_reported_and_the_run_goes_on(tmp_path, isolated_agent_dir):
    missing = tmp_path / "no-such-server"
    write_config(
        isolated_agent_dir, {"broken": {"command": str(missing), "exposure": "direct"}, "bad": {"command": 3}}
    )
    done = _print_hello(tmp_path, isolated_agent_dir)
    log = isolated_agent_dir / "mcp.log"
    assert done.stderr == (
        "Warning: MCP servers need attention:\n"
        f'  config: {isolated_agent_dir / "mcp.json"}: server "bad" needs either "command" (stdio) or "url" '
        "(streamable HTTP)\n"
        f"  broken: failed: spawn {missing} ENOENT\n"
        f"Run /mcp to fix. Server log: {log}\n"
    )
    assert f"[broken] stderr: spawn {missing} ENOENT" in log.read_text()


def test_an_mcp_json_that_is_a_fifo_is_reported_and_the_session_starts(tmp_path, isolated_agent_dir):
    # Opening a named pipe for reading blocks until a writer comes: session_start must not wait for one.
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    fifo = isolated_agent_dir / "mcp.json"
    os.mkfifo(fifo)
    done = _print_hello(tmp_path, isolated_agent_dir)
    assert done.stderr == (
        "Warning: MCP servers need attention:\n"
        f"  config: {fifo}: cannot be read: {fifo} is a named pipe, not a regular file; tau does not open it\n"
        f"Run /mcp to fix. Server log: {isolated_agent_dir / 'mcp.log'}\n"
    )


@in_loop
async def test_no_mcp_turns_it_off(project, isolated_agent_dir, http_server):
    write_config(isolated_agent_dir, {"web": {"url": http_server.url, "exposure": "direct"}})
    async with await _session(no_mcp=True) as session:
        await session.prompt(call("mcp__web__echo", {"text": "x"}))
        (result,) = _results(session)
        commands = (
            [c["name"] for c in session.hooks.get_commands()]
            if hasattr(session.hooks, "get_commands")
            else []
        )
    assert result["content"][0]["text"] == "Tool mcp__web__echo not found"
    assert "mcp" not in commands


@in_loop
async def test_the_mcp_command_prints_the_status_outside_the_terminal(
    project, isolated_agent_dir, http_server
):
    write_config(
        isolated_agent_dir,
        {"web": {"url": http_server.url, "exposure": "direct"}, "off": {"command": "x", "enabled": False}},
    )
    ui = RecordingUI()
    async with await _session() as session:
        session.hooks.set_ui(ui)
        await session.prompt("/mcp")
        await session.prompt("/mcp reconnect web")
        await session.prompt("/mcp login web")
        await session.prompt("/mcp frob a b")
    assert ui.notes == [
        f"web: connected, 7 tools (direct)\noff: disabled (codemode)\nServer log: {isolated_agent_dir / 'mcp.log'}",
        'Reconnected to MCP server "web" (connected · 7 tools · resources).',
        # an HTTP server without an Authorization header may use OAuth (pi): signing in needs a terminal
        'Signing in to MCP server "web" requires interactive mode.',
        "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]",
    ]


def test_observation_pack_packs_mcp_results_and_the_reducer_leaves_them(tmp_path):
    """The economy treats an MCP result as any tool result: ObservationPack archives and packs a
    large one (recallable), the Evidence-Preserving Reducer only reduces bash-like results."""
    from tau.bundled.obspack.observation import observation_of
    from tau.bundled.reducer.candidate import ResultView, find_candidate

    text = "row\n" * 5000  # 20 KB, as an MCP result reaches the model after its own cut
    message = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "mcp__db__query",
        "content": [{"type": "text", "text": text}],
        "details": {"server": "db", "tool": "query"},
        "isError": False,
        "timestamp": 1,
    }
    observation = observation_of(message)
    assert observation is not None and observation.tool_name == "mcp__db__query"
    view = ResultView(
        tool_name="mcp__db__query",
        tool_call_id="call_1",
        input={"sql": "select"},
        content=message["content"],
        details=message["details"],
    )
    assert find_candidate(view) is None


class ScriptedUI(RecordingUI):
    """A terminal UI whose menus answer from a script (the label chosen, or ``None`` for Esc)."""

    def __init__(self, choices: list[Any]) -> None:
        super().__init__()
        self.choices = list(choices)
        self.menus: list[tuple[str, list[str]]] = []

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self.menus.append((title, list(options)))
        choice = self.choices.pop(0)
        return next((option for option in options if option.startswith(choice)), None) if choice else None


@in_loop
async def test_the_mcp_manager_disables_a_server_and_saves_it(project, isolated_agent_dir, http_server):
    config = write_config(isolated_agent_dir, {"web": {"url": http_server.url, "exposure": "direct"}})
    ui = ScriptedUI(["web", "Exposure", "deferred", "Disable", None, None])
    async with await _session() as session:
        await session.prompt(call("mcp__web__echo", {"text": "before"}))
        session.hooks.set_ui(ui, mode="tui")
        await session.prompt("/mcp")
        await session.prompt(call("mcp__web__echo", {"text": "after"}))
        before, after = _results(session)
    assert [title for title, _ in ui.menus] == [
        "MCP servers",
        f"MCP server web ({http_server.url})",
        "Exposure of web",
        f"MCP server web ({http_server.url})",
        f"MCP server web ({http_server.url})",
        "MCP servers",
    ]
    assert ui.menus[0][1] == ["web — connected · 7 tools · resources · direct · global"]
    assert ui.menus[4][1] == ["Enable", "Enable in this project"]  # a trusted project (nothing to guard)
    assert json.loads(config.read_text())["mcpServers"]["web"] == {
        "url": http_server.url,
        "exposure": "deferred",
        "enabled": False,
    }
    assert before["content"] == [{"type": "text", "text": "before"}]
    assert after["isError"] is True and after["content"][0]["text"] == "Tool mcp__web__echo not found"


@in_loop
async def test_over_http_a_crash_mid_call_and_a_call_that_never_answers(project, isolated_agent_dir):
    server = HttpServer()
    try:
        # The call that never answers goes through an entry with a short timeout; the other calls
        # keep the default 60 s, so a loaded machine's slow answer is never taken for a hang.
        write_config(
            isolated_agent_dir,
            {
                "web": {"url": server.url, "exposure": "direct"},
                "slow": {"url": server.url, "exposure": "direct", "timeout": 5},
            },
        )
        async with await _session() as session:
            await session.prompt(call("mcp__slow__hang"))
            await session.prompt(call("mcp__web__crash"))
            await session.prompt(call("mcp__web__echo", {"text": "gone"}))
            server.stop()
            server = HttpServer(port=server.port)  # the server restarts: the next call reconnects
            await session.prompt(call("mcp__web__echo", {"text": "back"}))
            hang, crash, gone, back = _results(session)
    finally:
        server.stop()
    assert hang["isError"] is True
    assert hang["content"] == [{"type": "text", "text": "MCP request timed out after 5000ms"}]
    assert crash["isError"] is True and crash["content"] == [
        {"type": "text", "text": "MCP connection closed"}
    ]
    assert gone["isError"] is True
    assert gone["content"][0]["text"].startswith('MCP server "web" failed to connect: ')
    assert back["content"] == [{"type": "text", "text": "back"}]
