"""``tau mcp``: add, remove and check MCP servers and sign in to them without a session (pi's ``pi mcp``).

Agents run it through bash to configure servers and to check an ``mcp.json`` they wrote; the user
only approves access in the browser. It reads ``<agentDir>/mcp.json`` and, in a trusted project,
``.tau/mcp.json``; it loads no extensions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["HELP", "main"]

HELP = """Usage:
  tau mcp add <server> [options] -- <command> [args...]
  tau mcp add <server> [options] --url <url>
  tau mcp remove <server> [-l]
  tau mcp list [--json]
  tau mcp login <server> [-l] [--timeout <seconds>]
  tau mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.tau/agent/mcp.json and, in trusted projects, .tau/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .tau/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default) or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)"""
HELP_HINT = 'Use "tau mcp --help" for usage.'
DEFAULT_LOGIN_TIMEOUT = 300.0
_ALIASES = {"-l": "--local"}


class _Usage(Exception):
    """A command-line mistake; the message is printed and the exit code is 1."""


def _parse(
    args: list[str], known: dict[str, str], max_positionals: float = float("inf")
) -> tuple[list[str], dict[str, Any], dict[str, list[str]]]:
    """``--name value`` options; ``--`` (or the last allowed positional) passes the rest through."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    index = 0
    while index < len(args):
        typed = args[index]
        arg = _ALIASES.get(typed, typed)
        if arg == "--" or len(positional) >= max_positionals:
            positional += args[index + 1 if arg == "--" else index :]
            break
        if not arg.startswith("--"):
            positional.append(arg)
            index += 1
            continue
        name = arg[2:]
        kind = known.get(name)
        if kind is None:
            raise _Usage(f"Unknown option {typed}.\n{HELP_HINT}")
        if kind == "flag":
            values[name] = True
            index += 1
            continue
        if index + 1 >= len(args):
            raise _Usage(f"{arg} needs a value.")
        value = args[index + 1]
        if kind == "list":
            lists.setdefault(name, []).append(value)
        else:
            values[name] = value
        index += 2
    return positional, values, lists


def _pairs(option: str, pairs: list[str] | None) -> dict[str, str]:
    record: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _Usage(f'--{option} expects KEY=VALUE, got "{pair}".')
        record[key] = value
    return record


def _agent_dir() -> Path:
    from tau.common.paths import agent_dir

    return agent_dir()


def _trusted(cwd: Path) -> bool:
    from tau.agent.trust import saved_decision

    return saved_decision(cwd) is True


def _add(args: list[str], cwd: Path) -> int:
    from tau.bundled.mcp.config import add_server_config
    from tau.extension import McpConfigError, validate_mcp_server_config

    known = {
        "local": "flag",
        "url": "value",
        "env": "list",
        "cwd": "value",
        "header": "list",
        "bearer-token-env-var": "value",
        "oauth-client-id": "value",
        "oauth-client-secret": "value",
        "oauth-callback-port": "value",
        "oauth-client-name": "value",
        "oauth-client-registration": "value",
        "exposure": "value",
        "description": "value",
    }
    positional, values, lists = _parse(args, known, 2)
    name, command = (positional[0] if positional else None), positional[1:]
    url = values.get("url")
    if not name or (url is None) == (not command):
        raise _Usage(
            f"Usage: tau mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}"
        )
    http_only = [
        "header",
        "bearer-token-env-var",
        "oauth-client-id",
        "oauth-client-secret",
        "oauth-callback-port",
        "oauth-client-name",
        "oauth-client-registration",
    ]
    misplaced = next(
        (o for o in (http_only if url is None else ["env", "cwd"]) if o in values or o in lists), None
    )
    if misplaced:
        where = "HTTP servers (--url)" if url is None else "stdio servers"
        raise _Usage(f"--{misplaced} only applies to {where}.")
    config: dict[str, Any]
    if url is not None:
        headers = _pairs("header", lists.get("header"))
        if "bearer-token-env-var" in values:
            headers["Authorization"] = f"Bearer ${{{values['bearer-token-env-var']}}}"
        oauth: dict[str, Any] = {}
        for option, key in (
            ("oauth-client-id", "clientId"),
            ("oauth-client-secret", "clientSecret"),
            ("oauth-callback-port", "callbackPort"),
            ("oauth-client-name", "clientName"),
            ("oauth-client-registration", "clientRegistration"),
        ):
            if option in values:
                value = values[option]
                if key == "callbackPort":
                    try:
                        value = int(value)
                    except ValueError:
                        value = float("nan")
                oauth[key] = value
        config = {
            "url": url,
            **({"headers": headers} if headers else {}),
            **({"oauth": oauth} if oauth else {}),
        }
    else:
        env = _pairs("env", lists.get("env"))
        config = {
            "command": command[0],
            **({"args": command[1:]} if command[1:] else {}),
            **({"env": env} if env else {}),
            **({"cwd": values["cwd"]} if "cwd" in values else {}),
        }
    if "exposure" in values:
        config["exposure"] = values["exposure"]
    if "description" in values:
        config["description"] = values["description"]
    try:
        validated = validate_mcp_server_config(name, config)
    except McpConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    project = bool(values.get("local"))
    path = cwd / ".tau" / "mcp.json" if project else _agent_dir() / "mcp.json"
    scope = "project" if project else "global"
    try:
        replaced = add_server_config(path, name, validated)
    except (OSError, ValueError) as exc:
        print(f"Could not update {path}: {exc}", file=sys.stderr)
        return 1
    print(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    if project and not _trusted(cwd):
        print(
            f"The project is not trusted, so {path} is ignored until you start tau in the project and trust it."
        )
    may_sign_in = "url" in validated and not any(
        h.lower() == "authorization" for h in validated.get("headers") or {}
    )
    print(
        f"Check it with: tau mcp list{f'. If it requires sign-in: tau mcp login {name}' if may_sign_in else ''}"
    )
    return 0


def _remove(args: list[str], cwd: Path) -> int:
    from tau.bundled.mcp.config import load_mcp_config, remove_server_config

    positional, values, _ = _parse(args, {"local": "flag"})
    if len(positional) != 1:
        raise _Usage(f"Usage: tau mcp remove <server> [-l]\n{HELP_HINT}")
    name = positional[0]
    project = bool(values.get("local"))
    path = cwd / ".tau" / "mcp.json" if project else _agent_dir() / "mcp.json"
    scope = "project" if project else "global"
    try:
        removed = remove_server_config(path, name)
    except (OSError, ValueError) as exc:
        print(f"Could not update {path}: {exc}", file=sys.stderr)
        return 1
    if removed:
        print(f'Removed {scope} MCP server "{name}" from {path}.')
        return 0
    other = next(
        (s for s in load_mcp_config(_agent_dir(), cwd, True).servers if s.name == name and s.scope != scope),
        None,
    )
    hint = (
        f" It is defined in {other.source}{'; use --local' if other.scope == 'project' else '; omit --local'}."
        if other
        else ""
    )
    print(f'No {scope} MCP server named "{name}" in {path}.{hint}', file=sys.stderr)
    return 1


async def _report(entry: Any, cwd: Path) -> dict[str, Any]:
    from tau import __version__
    from tau.bundled.mcp.connection import McpServerConnection
    from tau.bundled.mcp.log import McpServerLog
    from tau.bundled.mcp.oauth import McpCredentialStore
    from tau.extension import get_mcp_tool_exposure

    report: dict[str, Any] = {
        "name": entry.name,
        "scope": entry.scope,
        "source": entry.source,
        **({"override": entry.override} if entry.override else {}),
        "enabled": entry.enabled,
        "exposure": entry.exposure,
        "transport": entry.config["url"]
        if "url" in entry.config
        else " ".join([entry.config["command"], *(entry.config.get("args") or [])]),
        "state": "disabled",
        "tools": [],
    }
    if not entry.enabled:
        return report
    store = McpCredentialStore(_agent_dir() / "mcp-auth.json")
    connection = McpServerConnection(
        entry.name,
        entry.config,
        str(cwd),
        log=McpServerLog(_agent_dir() / "mcp.log"),
        auth=store.auth_for(entry.name) if "url" in entry.config else None,
        version=__version__,
    )
    with contextlib.suppress(Exception):  # the connection records the state and the error
        await connection.get_client()
    report["state"] = connection.state
    report["tools"] = [tool["name"] for tool in connection.tools]
    overrides = {
        tool: exposure
        for tool in report["tools"]
        if (exposure := get_mcp_tool_exposure(entry.config, tool)) != report["exposure"]
    }
    if overrides:
        report["toolExposure"] = overrides
    if connection.has_resources:
        report["resources"] = True
    if connection.state != "connected" and connection.error:
        report["error"] = connection.error
    await connection.close()
    return report


def _list(args: list[str], cwd: Path) -> int:
    from tau.bundled.mcp.config import load_mcp_config

    positional, values, _ = _parse(args, {"json": "flag"})
    if positional:
        raise _Usage(f"Usage: tau mcp list [--json]\n{HELP_HINT}")
    trusted = _trusted(cwd)
    loaded = load_mcp_config(_agent_dir(), cwd, trusted)
    project = cwd / ".tau" / "mcp.json"
    note = (
        f"{project} is ignored because the project is not trusted. Start tau in the project to trust it."
        if not trusted and project.exists()
        else None
    )

    async def gather() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(_report(entry, cwd) for entry in loaded.servers)))

    reports = asyncio.run(gather())
    failed = bool(loaded.errors) or any(r["enabled"] and r["state"] != "connected" for r in reports)
    if values.get("json"):
        print(
            json.dumps(
                {"servers": reports, "errors": loaded.errors, **({"note": note} if note else {})}, indent=2
            )
        )
        return 1 if failed else 0
    if not reports and not loaded.errors:
        print(f"No MCP servers configured. Add them to {_agent_dir() / 'mcp.json'} or .tau/mcp.json.")
    for report in reports:
        count = len(report["tools"])
        state = (
            f"connected, {count} tool{'' if count == 1 else 's'}"
            if report["state"] == "connected"
            else "needs sign-in"
            if report["state"] == "needs-auth"
            else report["state"]
        )
        print(f"{report['name']}: {state} ({report['exposure']}, {report['scope']})")
        print(f"  {report['transport']}")
        if report.get("override"):
            print(f"  project override: {report['override']}")
        if report["state"] == "needs-auth":
            print(f"  sign in with: tau mcp login {report['name']}")
        if report["tools"]:
            shown = [
                f"{tool} [{report['toolExposure'][tool]}]" if tool in report.get("toolExposure", {}) else tool
                for tool in report["tools"]
            ]
            print(f"  tools: {', '.join(shown)}")
        if report.get("resources"):
            print("  offers resources")
        if report.get("error"):
            print("  " + report["error"].replace("\n", "\n  "))
    for error in loaded.errors:
        print(f"config error: {error}")
    if note:
        print(note)
    return 1 if failed else 0


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i]
        for j in range(1, len(b) + 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1])))
        previous = current
    return previous[len(b)]


def _login_or_logout(command: str, args: list[str], cwd: Path) -> int:
    from tau.bundled.mcp.config import load_mcp_config
    from tau.bundled.mcp.oauth import McpCredentialStore, SignInCancelled, sign_in
    from tau.bundled.mcp.transport import uses_oauth

    known = {"local": "flag", "timeout": "value"} if command == "login" else {"local": "flag"}
    positional, values, _ = _parse(args, known)
    if len(positional) != 1:
        raise _Usage(f"Usage: tau mcp {command} <server> [-l]\n{HELP_HINT}")
    name = positional[0]
    trusted = _trusted(cwd)
    loaded = load_mcp_config(_agent_dir(), cwd, trusted)
    entry = next((server for server in loaded.servers if server.name == name), None)
    if entry is None:
        names = [server.name for server in loaded.servers]
        suggestion = next((candidate for candidate in names if _edit_distance(candidate, name) <= 2), None)
        project = cwd / ".tau" / "mcp.json"
        untrusted = (
            f" {project} is ignored because the project is not trusted. Start tau in the project to trust it."
            if not trusted and project.exists()
            else ""
        )
        did_you_mean = f' Did you mean "{suggestion}"?' if suggestion else ""
        print(
            f'No MCP server named "{name}".{did_you_mean}{untrusted} Configured: {", ".join(names) or "none"}.',
            file=sys.stderr,
        )
        return 1
    if values.get("local") and entry.scope != "project":
        print(
            f'MCP server "{name}" is defined in {entry.source}, not in the project; omit --local.',
            file=sys.stderr,
        )
        return 1
    provider = (entry.config.get("auth") or {}).get("provider") if "url" in entry.config else None
    if provider:
        print(f'MCP server "{name}" uses the credentials of provider "{provider}".', file=sys.stderr)
        return 1
    if not uses_oauth(entry.config):
        print(
            f'MCP server "{name}" does not use OAuth. Only HTTP servers without an Authorization header do.',
            file=sys.stderr,
        )
        return 1
    store = McpCredentialStore(_agent_dir() / "mcp-auth.json")
    if command == "logout":
        removed = store.remove(name, entry.config["url"])
        print(
            f'Signed out of MCP server "{name}".'
            if removed
            else f'No stored credentials for MCP server "{name}".'
        )
        return 0
    try:
        timeout = float(values.get("timeout", DEFAULT_LOGIN_TIMEOUT))
    except ValueError:
        timeout = -1
    if not timeout > 0:
        print("--timeout must be a positive number of seconds.", file=sys.stderr)
        return 1

    def show(url: str) -> None:
        import webbrowser

        print(f'Sign in to MCP server "{name}" in your browser:\n{url}', flush=True)
        with contextlib.suppress(Exception):
            webbrowser.open(url)

    async def paste() -> str | None:
        if not sys.stdin.isatty():
            await asyncio.Event().wait()  # only the browser callback can finish it
        print(
            "If the browser cannot reach this machine, paste the URL it was redirected to: ",
            end="",
            file=sys.stderr,
            flush=True,
        )
        line = await asyncio.to_thread(sys.stdin.readline)
        return line.strip() or None

    try:
        count = asyncio.run(
            sign_in(store, name, entry.config, str(cwd), show_url=show, paste=paste, timeout=timeout)
        )
    except SignInCancelled:
        print(
            f'Sign-in to MCP server "{name}" was cancelled or not completed within {round(timeout)} seconds.',
            file=sys.stderr,
        )
        return 1
    except Exception as exc:
        print(f'Sign-in to MCP server "{name}" failed: {exc}', file=sys.stderr)
        return 1
    print(f'Signed in to MCP server "{name}" ({count} tools).')
    return 0


def main(argv: list[str]) -> int:
    """Run ``tau mcp <argv>``; the exit code."""
    if not argv or argv[0] == "help" or "--help" in argv or "-h" in argv:
        print(HELP)
        return 0
    command, rest = argv[0], argv[1:]
    cwd = Path.cwd()
    try:
        if command == "add":
            return _add(rest, cwd)
        if command == "remove":
            return _remove(rest, cwd)
        if command == "list":
            return _list(rest, cwd)
        if command in ("login", "logout"):
            return _login_or_logout(command, rest, cwd)
    except _Usage as usage:
        print(str(usage), file=sys.stderr)
        return 1
    print(f'Unknown mcp command "{command}".\n{HELP_HINT}', file=sys.stderr)
    return 1
