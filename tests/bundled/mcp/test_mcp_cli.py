"""``tau mcp``: pi 1.6's ``pi mcp`` commands, word for word with ``pi`` read as ``tau`` (the outputs
below were checked against real pi 1.6 on the same files)."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_harness import SERVER, write_config

from tau.cli import main as cli_main

pytest.importorskip("mcp")


@pytest.fixture
def project(tmp_path, monkeypatch):
    work = tmp_path / "proj"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def tau_mcp(capsys, *args: str) -> tuple[int, str, str]:
    code = cli_main(["mcp", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_remove_and_the_untrusted_project(project, isolated_agent_dir, capsys):
    config = isolated_agent_dir / "mcp.json"
    local = project / ".tau" / "mcp.json"
    assert tau_mcp(
        capsys,
        "add",
        "demo",
        "--exposure",
        "direct",
        "--description",
        "Demo",
        "--",
        "python",
        "s.py",
        "--flag",
    ) == (
        0,
        f'Added global MCP server "demo" in {config}.\nCheck it with: tau mcp list\n',
        "",
    )
    assert tau_mcp(
        capsys, "add", "web", "--url", "https://h/mcp", "--header", "X-A=b", "--bearer-token-env-var", "TOK"
    )[1] == (f'Added global MCP server "web" in {config}.\nCheck it with: tau mcp list\n')
    assert tau_mcp(capsys, "add", "sso", "--url", "https://h/mcp")[1].endswith(
        "Check it with: tau mcp list. If it requires sign-in: tau mcp login sso\n"
    )
    assert json.loads(config.read_text())["mcpServers"] == {
        "demo": {
            "command": "python",
            "args": ["s.py", "--flag"],
            "exposure": "direct",
            "description": "Demo",
        },
        "web": {"url": "https://h/mcp", "headers": {"X-A": "b", "Authorization": "Bearer ${TOK}"}},
        "sso": {"url": "https://h/mcp"},
    }
    assert tau_mcp(capsys, "add", "bad", "--url", "ftp://x") == (
        1,
        "",
        'server "bad": url must be an http or https URL\n',
    )
    assert tau_mcp(capsys, "add", "x", "--env", "A=b", "--url", "https://h") == (
        1,
        "",
        "--env only applies to stdio servers.\n",
    )
    assert tau_mcp(capsys, "add", "local", "-l", "--", "echo", "hi")[1] == (
        f'Added project MCP server "local" in {local}.\n'
        f"The project is not trusted, so {local} is ignored until you start tau in the project and trust it.\n"
        "Check it with: tau mcp list\n"
    )
    assert tau_mcp(capsys, "remove", "web") == (0, f'Removed global MCP server "web" from {config}.\n', "")
    assert tau_mcp(capsys, "remove", "web") == (1, "", f'No global MCP server named "web" in {config}.\n')
    assert tau_mcp(capsys, "remove", "local") == (
        1,
        "",
        f'No global MCP server named "local" in {config}. It is defined in {local}; use --local.\n',
    )
    assert tau_mcp(capsys, "frob") == (
        1,
        "",
        'Unknown mcp command "frob".\nUse "tau mcp --help" for usage.\n',
    )
    assert tau_mcp(capsys, "list", "--bogus") == (
        1,
        "",
        'Unknown option --bogus.\nUse "tau mcp --help" for usage.\n',
    )


def test_list_connects_and_reports(project, isolated_agent_dir, capsys):
    write_config(
        isolated_agent_dir,
        {
            "demo": {
                "command": sys.executable,
                "args": [str(SERVER)],
                "exposure": "deferred",
                "toolExposure": {"echo": "direct"},
            },
            "off": {"command": "nothing", "enabled": False},
            "broken": {"command": str(project / "missing")},
            "bad": {"url": 3},
        },
    )
    code, out, err = tau_mcp(capsys, "list")
    config = isolated_agent_dir / "mcp.json"
    assert (code, err) == (1, "")
    assert out == (
        "demo: connected, 7 tools (deferred, global)\n"
        f"  {sys.executable} {SERVER}\n"
        "  tools: echo [direct], add, fail, picture, big, crash, hang\n"
        "  offers resources\n"
        "off: disabled (codemode, global)\n"
        "  nothing\n"
        "broken: failed (codemode, global)\n"
        f"  {project / 'missing'}\n"
        f"  spawn {project / 'missing'} ENOENT\n"
        f'config error: {config}: server "bad" needs either "command" (stdio) or "url" (streamable HTTP)\n'
    )
    code, out, _ = tau_mcp(capsys, "list", "--json")
    report = json.loads(out)
    assert code == 1 and [server["state"] for server in report["servers"]] == [
        "connected",
        "disabled",
        "failed",
    ]
    assert (
        report["servers"][0]["toolExposure"] == {"echo": "direct"}
        and report["servers"][0]["resources"] is True
    )


def test_login_and_logout_refuse_servers_without_oauth(project, isolated_agent_dir, capsys):
    write_config(isolated_agent_dir, {"demo": {"command": "x"}, "sso": {"url": "https://h/mcp"}})
    assert tau_mcp(capsys, "login", "demo") == (
        1,
        "",
        'MCP server "demo" does not use OAuth. Only HTTP servers without an Authorization header do.\n',
    )
    assert tau_mcp(capsys, "login", "dem") == (
        1,
        "",
        'No MCP server named "dem". Did you mean "demo"? Configured: demo, sso.\n',
    )
    assert tau_mcp(capsys, "logout", "sso") == (0, 'No stored credentials for MCP server "sso".\n', "")
    assert tau_mcp(capsys, "--help")[1].startswith(
        "Usage:\n  tau mcp add <server> [options] -- <command> [args...]\n"
    )
