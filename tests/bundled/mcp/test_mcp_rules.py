"""pi's MCP rules, one by one: tool names, configuration (files, trust, overrides, validation),
``${VAR}``/``!command`` values, results (the 20 KB cut, resource links, binary resources), the
``mcp_servers`` section, and the log."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import sys
from datetime import UTC
from pathlib import Path
from types import SimpleNamespace

import pytest

from tau.bundled.mcp.config import (
    add_server_config,
    load_mcp_config,
    remove_server_config,
    update_server_config,
)
from tau.bundled.mcp.log import McpServerLog, format_log_message
from tau.bundled.mcp.naming import create_tool_name, server_summary
from tau.bundled.mcp.results import MCP_OUTPUT_MAX_BYTES, convert_tool_result, limit_content
from tau.bundled.mcp.section import render_servers_section
from tau.bundled.mcp.transport import _stdio_parameters, resolved_headers, uses_oauth
from tau.common.collation import locale_key
from tau.extension import McpConfigError, get_mcp_tool_exposure, validate_mcp_server_config
from tau.llm.auth import clear_command_cache


def run(coro):
    return asyncio.run(coro)


# -- names -------------------------------------------------------------------------------------------


def test_tool_names_are_sanitized_and_long_ones_end_in_a_hash():
    assert create_tool_name("dev-radius", "get.issue") == "mcp__dev_radius__get_issue"
    long_tool = "a" * 80
    digest = hashlib.sha256(f"srv\0{long_tool}".encode()).hexdigest()[:8]
    name = create_tool_name("srv", long_tool)
    assert len(name) == 64 and name == f"mcp__srv__{'a' * 45}_{digest}"
    taken = create_tool_name("s", "a-b", lambda candidate: candidate == "mcp__s__a_b")
    assert taken.startswith("mcp__s__a_b_") and len(taken) == len("mcp__s__a_b_") + 8


def test_tools_whose_names_sanitize_alike_all_get_the_hash():
    from tau.bundled.mcp.manager import McpExtension

    registered = []
    tau = SimpleNamespace(register_tool=registered.append, agent_dir="/nowhere", get_active_tools=lambda: [])
    manager = McpExtension(tau)
    connection = SimpleNamespace(
        name="s",
        entry_config={"exposure": "direct"},
        instructions=None,
        tools=[
            {"name": "a-b", "inputSchema": {}},
            {"name": "a_b", "inputSchema": {}},
            {"name": "c", "inputSchema": {}},
        ],
    )
    manager.tools.register(connection)
    names = [definition.name for definition in registered]
    assert names[2] == "mcp__s__c"
    assert names[0] != names[1] and all(len(name) == len("mcp__s__a_b_") + 8 for name in names[:2])


def test_summary_and_sort_order_follow_pi():
    assert server_summary("  First line\nsecond", "ignored") == "First line"
    assert server_summary(None, "\n  Instructions here\nmore") == "Instructions here"
    assert server_summary("", None) == ""
    assert sorted(["beta", "Alpha", "a_b", "a-b", "ab", "a1"], key=locale_key) == [
        "a_b",
        "a-b",
        "a1",
        "ab",
        "Alpha",
        "beta",
    ]


# -- configuration -----------------------------------------------------------------------------------


def _write(path: Path, servers: dict, **top) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**top, "mcpServers": servers}))
    return path


def test_validation_messages_are_pis():
    cases = [
        (("bad name", {"command": "x"}), 'invalid server name "bad name" (use letters, digits, "_" and "-")'),
        (("a", []), 'server "a" must be an object'),
        (("a", {"command": "x", "enabled": "yes"}), 'server "a": enabled must be a boolean'),
        (("a", {"command": "x", "timeout": 0}), 'server "a": timeout must be a positive number of seconds'),
        (("a", {"command": "x", "args": ["ok", 1]}), 'server "a": args must be an array of strings'),
        (("a", {"command": "x", "env": {"K": 1}}), 'server "a": env must map names to strings'),
        (("a", {"url": "file:///x"}), 'server "a": url must be an http or https URL'),
        (("a", {"url": "https://h/mcp", "headers": {"X": 2}}), 'server "a": headers must map names to strings'),
        (("a", {"url": "https://h/mcp", "oauth": {"callbackPort": 70000}}), 'server "a": oauth.callbackPort must be a port number'),
        (("a", {"type": "sse", "url": "https://h/sse"}), 'server "a": legacy SSE transport is not supported; use the streamable HTTP URL'),
        (("a", {"type": "stdio", "url": "https://h"}), 'server "a" needs either "command" (stdio) or "url" (streamable HTTP)'),
        (("a", {"command": "x", "exposure": "all"}), 'server "a": exposure must be one of "codemode", "deferred", "direct", "hidden"'),
        (("a", {"command": "x", "toolExposure": {"t": "nope"}}), 'server "a": toolExposure "t" must be one of "codemode", "deferred", "direct", "hidden"'),
        (("a", {"url": "http://example.com/mcp", "auth": {"provider": "x"}}), 'server "a": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]'),
    ]  # fmt: skip
    for (name, entry), message in cases:
        with pytest.raises(McpConfigError) as raised:
            validate_mcp_server_config(name, entry)
        assert str(raised.value) == message
    assert (
        validate_mcp_server_config("a", {"command": "x", "exposure": "codemode-deferred"})["exposure"]
        == "codemode"
    )


def test_tool_exposure_exact_names_win_then_the_first_pattern():
    config = {
        "exposure": "deferred",
        "toolExposure": {"get_*": "codemode", "get_issue": "direct", "g*": "hidden"},
    }
    assert get_mcp_tool_exposure(config, "get_issue") == "direct"
    assert get_mcp_tool_exposure(config, "get_pr") == "codemode"
    assert get_mcp_tool_exposure(config, "grep") == "hidden"
    assert get_mcp_tool_exposure(config, "search") == "deferred"
    assert get_mcp_tool_exposure({}, "x") == "codemode"


def test_a_trusted_project_overrides_only_enabled_and_exposure(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "proj"
    _write(
        agent / "mcp.json",
        {
            "gh": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "fs": {"command": "fs"},
        },
        autoEnableCodemode=False,
    )
    _write(
        project / ".tau" / "mcp.json",
        {
            "gh": {"enabled": False, "toolExposure": {"x": "direct"}},
            "fs": {"env": {"A": "b"}},
            "new": {"command": "n"},
            "lonely": {"exposure": "direct"},
        },
        autoEnableCodemode=True,
    )
    trusted = load_mcp_config(agent, project, True)
    by_name = {entry.name: entry for entry in trusted.servers}
    assert by_name["gh"].config == {
        "url": "https://h/mcp",
        "headers": {"Authorization": "Bearer ${T}"},
        "enabled": False,
        "toolExposure": {"x": "direct"},
    }
    assert by_name["gh"].override == str(project / ".tau" / "mcp.json") and by_name["gh"].scope == "global"
    assert by_name["fs"].config == {"command": "fs"} and by_name["new"].scope == "project"
    assert trusted.auto_enable_codemode is True
    assert trusted.errors == [
        f'{project / ".tau" / "mcp.json"}: server "fs": an override can only set enabled, exposure, toolExposure',
        f'{project / ".tau" / "mcp.json"}: server "lonely" needs "command" or "url", or a global server to override',
    ]
    untrusted = load_mcp_config(agent, project, False)
    assert [entry.name for entry in untrusted.servers] == ["gh", "fs"] and untrusted.errors == []
    assert untrusted.auto_enable_codemode is False and untrusted.project_config is None


def test_names_that_share_a_namespace_conflict(tmp_path):
    path = _write(tmp_path / "mcp.json", {"dev-tools": {"command": "a"}, "dev_tools": {"command": "b"}})
    loaded = load_mcp_config(tmp_path, tmp_path, False)
    assert [entry.name for entry in loaded.servers] == ["dev-tools"]
    assert loaded.errors == [f'{path}: server "dev_tools" conflicts with "dev-tools"']


def test_a_broken_file_is_reported_and_nothing_else_is_lost(tmp_path):
    (tmp_path / "mcp.json").write_text("{not json")
    loaded = load_mcp_config(tmp_path, tmp_path, False)
    assert loaded.servers == [] and loaded.errors[0].startswith(f"{tmp_path / 'mcp.json'}: ")
    (tmp_path / "mcp.json").write_text('{"mcpServers": []}')
    assert load_mcp_config(tmp_path, tmp_path, False).errors == [
        f'{tmp_path / "mcp.json"}: expected an object with an "mcpServers" object'
    ]


def test_edits_keep_the_rest_of_the_file_and_its_indentation(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        '{\n    "other": 1,\n    "mcpServers": {\n        "a": {"command": "x", "enabled": false}\n    }\n}\n'
    )
    update_server_config(path, "a", {"enabled": True, "exposure": "direct"})
    assert path.read_text() == (
        '{\n    "other": 1,\n    "mcpServers": {\n        "a": {\n            "command": "x",\n'
        '            "exposure": "direct"\n        }\n    }\n}\n'
    )
    update_server_config(path, "a", {"exposure": "codemode"})
    assert json.loads(path.read_text())["mcpServers"]["a"] == {"command": "x"}
    project = tmp_path / "proj.json"
    update_server_config(project, "a", {"enabled": False}, override=True)
    assert json.loads(project.read_text()) == {"mcpServers": {"a": {"enabled": False}}}
    assert add_server_config(path, "b", {"url": "https://h"}) is False
    assert add_server_config(path, "b", {"url": "https://i"}) is True
    assert remove_server_config(path, "b") is True and remove_server_config(path, "b") is False
    assert json.loads(path.read_text())["other"] == 1


def test_env_and_headers_resolve_variables_and_commands(tmp_path, monkeypatch):
    clear_command_cache()
    monkeypatch.setenv("TOKEN", "s3cret")
    headers = resolved_headers(
        "docs", {"headers": {"Authorization": "Bearer ${TOKEN}", "X-Cmd": "!echo from-command"}}
    )
    assert headers == {"Authorization": "Bearer s3cret", "X-Cmd": "from-command"}
    with pytest.raises(ValueError, match='MCP server "docs" header "X" from environment variable: MISSING'):
        resolved_headers("docs", {"headers": {"X": "$MISSING"}})
    params = _stdio_parameters(
        "fs",
        {"command": "~/bin/server", "args": ["~/data"], "cwd": "sub", "env": {"KEY": "${TOKEN}"}},
        str(tmp_path),
    )
    home = str(Path.home())
    assert params.env["KEY"] == "s3cret" and params.env["PATH"] == os.environ["PATH"]
    assert params.cwd == str((tmp_path / "sub").resolve())
    # the server runs under the guard: its command and arguments come last, home expanded
    assert params.command == sys.executable and params.args[-2:] == [f"{home}/bin/server", f"{home}/data"]
    assert uses_oauth({"url": "https://h"}) and not uses_oauth(
        {"url": "https://h", "headers": {"authorization": "x"}}
    )
    assert not uses_oauth({"command": "x"}) and not uses_oauth(
        {"url": "https://h", "auth": {"provider": "p"}}
    )


# -- results -----------------------------------------------------------------------------------------


def test_text_over_20_kb_is_cut_in_the_middle_and_saved(tmp_path):
    saved: list[bytes] = []

    async def save(data: bytes, extension: str) -> str:
        saved.append(data)
        return str(tmp_path / f"full{extension}")

    text = "a" + "é" * 15000 + "\n" + "b" * 10000 + "\n"  # 40,003 bytes, 2 lines
    content, path = run(
        limit_content(
            [{"type": "text", "text": text}, {"type": "image", "data": "x", "mimeType": "image/png"}], save
        )
    )
    assert path == str(tmp_path / "full.txt") and saved == [text.encode()]
    out = content[0]["text"]
    assert out.startswith(
        "Warning: truncated output (original token count: 10001)\nTotal output lines: 2\n\n"
    )
    head, rest = out.split("\n\n", 1)[1].split("…", 1)
    removed, tail = rest.split("…", 1)
    assert head == "a" + "é" * 5119  # 10,239 bytes: the cut moved back to a character boundary
    kept_tail, trailer = tail.split("\n\n[", 1)
    assert len(kept_tail.encode()) == 10240  # half the limit, cut between characters
    assert removed == f"{len(text) - len(head) - len(kept_tail)} chars truncated"
    assert (
        kept_tail.endswith("b" * 10000 + "\n")
        and trailer == f"Full output: {path} (read it with offset/limit)]"
    )
    assert content[1]["type"] == "image"
    small = [{"type": "text", "text": "x" * MCP_OUTPUT_MAX_BYTES}]
    assert run(limit_content(small, save)) == (small, None)


def test_results_convert_as_pi_converts_them(tmp_path):
    async def save(data: bytes, extension: str) -> str:
        (tmp_path / f"blob{extension}").write_bytes(data)
        return str(tmp_path / f"blob{extension}")

    import base64

    blob = base64.b64encode(b"\x00\x01binary").decode()
    result = {
        "content": [
            {"type": "resource_link", "uri": "file:///a.pdf", "name": "a", "title": "A doc", "mimeType": "application/pdf", "size": 2048, "description": "the spec"},
            {"type": "resource", "resource": {"uri": "file:///x.bin", "mimeType": "application/octet-stream", "blob": blob}},
            {"type": "resource", "resource": {"uri": "file:///n.json", "mimeType": "application/json", "blob": base64.b64encode(b'{"a":1}').decode()}},
            {"type": "audio", "mimeType": "audio/wav", "data": ""},
            {"type": "video"},
        ],
        "_meta": {"hidden": True},
    }  # fmt: skip
    converted = run(convert_tool_result("docs", "fetch", result, readable=True, save=save))
    assert [block["text"] for block in converted.content] == [
        '[Resource file:///a.pdf "A doc" (application/pdf, 2.0KB): the spec. Read it with read_mcp_resource (server "docs")]',
        f"[Binary resource file:///x.bin (application/octet-stream, 8B) saved to {tmp_path / 'blob.bin'}]",
        '{"a":1}',
        "[audio audio/wav omitted]",
        "[unsupported MCP content video]",
    ]
    assert (tmp_path / "blob.bin").read_bytes() == b"\x00\x01binary"
    assert "_meta" not in converted.structured_content and converted.details == {
        "server": "docs",
        "tool": "fetch",
    }
    structured = run(convert_tool_result("s", "t", {"content": [], "structuredContent": {"a": [1]}}))
    assert structured.content == [{"type": "text", "text": '{\n  "a": [\n    1\n  ]\n}'}]
    failed = run(convert_tool_result("s", "t", {"content": [], "isError": True}))
    assert failed.is_error and failed.content == [{"type": "text", "text": "MCP tool s/t returned an error"}]


def test_the_spill_file_is_private(tmp_path):
    _content, path = run(limit_content([{"type": "text", "text": "y" * 30000}]))
    try:
        assert Path(path).name.startswith("tau-mcp-") and path.endswith(".txt")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert Path(path).read_text() == "y" * 30000
    finally:
        os.unlink(path)


# -- the mcp_servers section -------------------------------------------------------------------------


def _server(
    name: str, config: dict, instructions: str | None = None, enabled: bool = True
) -> SimpleNamespace:
    return SimpleNamespace(name=name, config=config, instructions=instructions, enabled=enabled)


def test_the_section_lists_indirect_servers_with_how_to_reach_them():
    section = render_servers_section(
        [
            _server("zeta", {"exposure": "deferred"}, "Zeta tools\nmore"),
            _server("alpha", {"description": "Alpha docs"}),
            _server("direct", {"exposure": "direct"}),
            _server("off", {}, enabled=False),
            _server("mixed", {"exposure": "direct", "toolExposure": {"x": "deferred"}}),
        ]
    )
    assert section == (
        "MCP servers whose tools are not declared to you. Call the tools of `codemode` servers from codemode "
        "scripts. Load the tools of `tool_search` servers with `tool_search`.\n"
        "- mcp__alpha (codemode): Alpha docs\n- mcp__mixed (tool_search)\n- mcp__zeta (tool_search): Zeta tools"
    )
    assert render_servers_section([_server("d", {"exposure": "direct"})]) is None


def test_the_section_stays_within_its_budget():
    many = [_server(f"server{n:03d}", {"description": "d" * 300}) for n in range(200)]
    section = render_servers_section(many)
    assert len(section) <= 4096
    assert section.endswith("find their tools with searchTools()") and "- … " in section
    few = render_servers_section([_server("a", {"description": "x" * 400})])
    assert few.endswith("x" * 249 + "…")


# -- the log -----------------------------------------------------------------------------------------


def test_log_lines_are_pis_and_the_file_rotates(tmp_path):
    from datetime import datetime

    when = datetime(2026, 12, 1, 10, 0, 0, 123000, tzinfo=UTC)
    assert (
        format_log_message("docs", {"level": "warning", "logger": "db", "data": "a\nb"}, when)
        == "2026-12-01T10:00:00.123Z [docs] warning db: a\n    b\n"
    )
    assert (
        format_log_message("docs", {"data": {"k": 1}}, when)
        == '2026-12-01T10:00:00.123Z [docs] info {"k":1}\n'
    )
    path = tmp_path / "mcp.log"
    path.write_bytes(b"x" * (5 * 1024 * 1024 + 1))
    log = McpServerLog(path)
    log.stderr("docs", "boom")
    assert (tmp_path / "mcp.log.1").stat().st_size == 5 * 1024 * 1024 + 1
    assert path.read_text().endswith("[docs] stderr: boom\n")
