"""``/mcp``: the servers' state, and sign-in, reconnect, exposure and enabling (pi's ``/mcp``).

In the terminal, ``/mcp`` opens a list of servers (those that need attention first); choosing one
offers its actions. Elsewhere it prints the status. ``/mcp login|logout|reconnect [server]`` act
directly. Exposure and enabled-state changes are saved to the ``mcp.json`` that defines the server
(registered servers: this session only); in a trusted project a global server can be turned on or
off for the project alone.
"""

from __future__ import annotations

import contextlib
from typing import Any

from tau.common.collation import locale_key
from tau.extension import get_mcp_tool_exposure

__all__ = ["format_status", "register_command"]

USAGE = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]"
EXPOSURE_DESCRIPTIONS = {
    "codemode": "called from codemode scripts, which find them with searchTools()",
    "deferred": "not declared until tool_search loads them, then called directly; no codemode needed",
    "direct": "declared to the model like built-in tools",
}


def _attention(server: Any) -> int:
    if not server.enabled:
        return 5
    state: Any = getattr(server.connection, "state", None)
    return {"needs-auth": 0, "failed": 1, "disconnected": 2, "connected": 4}.get(state, 3)


def _transport(server: Any) -> str:
    config = server.config
    return config["url"] if "url" in config else " ".join([config["command"], *(config.get("args") or [])])


def format_status(mcp: Any) -> str:
    """The plain status of every server (pi's ``formatStatus``)."""
    if not mcp.servers and not mcp.config_errors and not mcp.overridden:
        return f"No MCP servers configured. Add them to {mcp.agent_dir / 'mcp.json'} or .tau/mcp.json."
    lines = []
    for server in mcp.servers:
        exposure = server.entry.exposure
        connection = server.connection
        state = getattr(connection, "state", None)
        if state == "needs-auth":
            lines.append(f"{server.name}: needs sign-in, run /mcp login {server.name} ({exposure})")
            continue
        tools = f", {len(connection.tools)} tools" if state == "connected" else ""
        shown = (
            "disabled"
            if not server.enabled
            else "disconnected, reconnects on next call"
            if state == "disconnected"
            else state or "starting"
        )
        error = connection.error if connection is not None and state != "connected" else None
        detail = "\n    " + error.replace("\n", "\n    ") if error else ""
        lines.append(f"{server.name}: {shown}{tools} ({exposure}){detail}")
    lines += [f"config error: {error}" for error in mcp.config_errors]
    lines += [f"overridden: {line}" for line in mcp.overridden]
    lines.append(f"Server log: {mcp.log_path}")
    return "\n".join(lines)


async def _pick(mcp: Any, name: str | None, ctx: Any, eligible: Any, preferred: Any, none: str) -> Any:
    if name:
        server = mcp.find(name)
        if server is None:
            ctx.ui.notify(f'No MCP server named "{name}".', "error")
            return None
        if not eligible(server):
            ctx.ui.notify(none, "error")
            return None
        return server
    candidates = [server for server in mcp.servers if eligible(server)]
    if not candidates:
        ctx.ui.notify(none, "info")
        return None
    if len(candidates) == 1:
        return candidates[0]
    favoured = [server for server in candidates if preferred(server)]
    if len(favoured) == 1:
        return favoured[0]
    choice = await ctx.ui.select("MCP server", [server.name for server in candidates])
    return mcp.find(choice) if choice else None


def _uses_oauth(server: Any) -> bool:
    return server.connection is not None and server.connection.oauth_url is not None


async def _sign_in(mcp: Any, server: Any, ctx: Any) -> str | None:
    from tau.bundled.mcp.oauth import SignInCancelled, sign_in

    url = server.connection.oauth_url if server.connection is not None else None
    if url is None:
        return f'MCP server "{server.name}" does not use OAuth.'

    def show(link: str) -> None:
        import webbrowser

        ctx.ui.notify(f'Sign in to MCP server "{server.name}" in your browser:\n{link}', "info")
        with contextlib.suppress(Exception):
            webbrowser.open(link)

    async def paste() -> str | None:
        return await ctx.ui.input(
            f'Waiting for sign-in to "{server.name}". If the browser cannot reach this machine, '
            "paste the URL it was redirected to.",
            "http://127.0.0.1:.../callback?code=...",
        )

    try:
        await sign_in(mcp.credentials(), server.name, server.config, mcp.cwd, show_url=show, paste=paste)
    except SignInCancelled:
        return "Sign-in cancelled."
    except Exception as exc:
        return f"Sign-in failed: {exc}"
    return await mcp.reconnect(server)


async def _logout(mcp: Any, server: Any, ctx: Any) -> None:
    url = server.connection.oauth_url
    removed = mcp.credentials().remove(server.name, url)
    await server.connection.sign_out()
    ctx.ui.notify(
        f'Signed out of MCP server "{server.name}".'
        if removed
        else f'No stored credentials for MCP server "{server.name}".',
        "info",
    )


async def _manage(mcp: Any, ctx: Any) -> None:
    """The terminal manager: servers, then one server's actions, until Esc."""
    while True:
        ordered = sorted(mcp.servers, key=lambda s: (_attention(s), locale_key(s.name)))
        if not ordered:
            ctx.ui.notify(format_status(mcp), "info")
            return
        from tau.bundled.mcp.manager import describe_state

        labels = {
            f"{s.name} — {describe_state(s)} · {s.entry.exposure} · "
            f"{'global, project override' if s.entry.override else s.entry.scope}": s
            for s in ordered
        }
        choice = await ctx.ui.select("MCP servers", list(labels))
        if not choice:
            return
        await _server_menu(mcp, labels[choice], ctx)


async def _server_menu(mcp: Any, server: Any, ctx: Any) -> None:
    while True:
        actions: list[str] = []
        in_project = server.entry.scope == "global" and not server.entry.override and mcp.project_config
        state = getattr(server.connection, "state", None)
        if not server.enabled:
            actions.append("Enable")
            if in_project:
                actions.append("Enable in this project")
        else:
            if state == "needs-auth":
                actions.append("Sign in")
            if state == "connected":
                actions.append("Tools")
            if state in ("failed", "disconnected", "connected", "needs-auth"):
                actions.append("Reconnect")
            if state == "connected" and _uses_oauth(server):
                actions.append("Sign out")
            actions += ["Exposure", "Disable"]
            if in_project:
                actions.append("Disable in this project")
        action = await ctx.ui.select(f"MCP server {server.name} ({_transport(server)})", actions)
        if not action:
            return
        message = await _run_action(mcp, server, action, ctx)
        if message:
            ctx.ui.notify(message, "warning")


async def _run_action(mcp: Any, server: Any, action: str, ctx: Any) -> str | None:
    if action == "Sign in":
        return await _sign_in(mcp, server, ctx)
    if action == "Reconnect":
        return await mcp.reconnect(server)
    if action == "Sign out":
        await _logout(mcp, server, ctx)
        return None
    if action == "Tools":
        exposure = server.entry.exposure
        lines = []
        for tool in server.connection.tools:
            own = get_mcp_tool_exposure(server.config, tool["name"])
            first = (tool.get("description") or "").split("\n", 1)[0]
            lines.append(
                f"{tool['name']}: {first}" if own == exposure else f"{tool['name']}: [{own}] {first}"
            )
        ctx.ui.notify(f"Tools of {server.name} (exposure {exposure}):\n" + "\n".join(lines), "info")
        return None
    if action == "Exposure":
        choice = await ctx.ui.select(
            f"Exposure of {server.name}", [f"{name}: {text}" for name, text in EXPOSURE_DESCRIPTIONS.items()]
        )
        if not choice:
            return None
        exposure = choice.split(":", 1)[0]
        return None if exposure == server.entry.exposure else mcp.set_exposure(server, exposure, ctx)
    enable = action.startswith("Enable")
    return await mcp.set_enabled(server, enable, ctx, in_project=action.endswith("this project"))


def register_command(mcp: Any) -> None:
    async def handler(args: str, ctx: Any) -> None:
        words: list[str | None] = [*args.split()] or [None]
        action, *rest = words
        if action is None:
            if ctx.mode == "tui":
                await _manage(mcp, ctx)
            else:
                if mcp.pending is not None:
                    with contextlib.suppress(BaseException):
                        await mcp.pending
                ctx.ui.notify(format_status(mcp), "info")
            return
        if len(rest) > 1:
            ctx.ui.notify(USAGE, "warning")
            return
        name = rest[0] if rest else None
        if mcp.pending is not None:
            with contextlib.suppress(BaseException):
                await mcp.pending
        if action in ("login", "logout"):
            server = await _pick(
                mcp,
                name,
                ctx,
                _uses_oauth,
                lambda s: getattr(s.connection, "state", None) == "needs-auth",
                "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
            )
            if server is None:
                return
            if action == "logout":
                await _logout(mcp, server, ctx)
                return
            if not ctx.has_ui:
                ctx.ui.notify(f'Signing in to MCP server "{server.name}" requires interactive mode.', "error")
                return
            failure = await _sign_in(mcp, server, ctx)
            if failure:
                ctx.ui.notify(failure, "info" if failure == "Sign-in cancelled." else "error")
                return
            mcp.ensure_discovery_active(ctx)
            count = len(server.connection.tools) if server.connection is not None else 0
            ctx.ui.notify(f'Signed in to MCP server "{server.name}" ({count} tools).', "info")
            return
        if action == "reconnect":
            server = await _pick(
                mcp,
                name,
                ctx,
                lambda s: s.connection is not None,
                lambda s: getattr(s.connection, "state", None) in ("failed", "disconnected"),
                "No enabled MCP server to reconnect.",
            )
            if server is None:
                return
            failure = await mcp.reconnect(server)
            if failure:
                ctx.ui.notify(failure, "error")
                return
            from tau.bundled.mcp.manager import describe_state

            mcp.ensure_discovery_active(ctx)
            ctx.ui.notify(f'Reconnected to MCP server "{server.name}" ({describe_state(server)}).', "info")
            return
        ctx.ui.notify(USAGE, "warning")

    def completions(prefix: str) -> list[dict[str, str]] | None:
        words = prefix.lstrip().split()
        trailing = prefix.endswith(" ")
        if not words or (len(words) == 1 and not trailing):
            start = words[0] if words else ""
            return [
                {"value": f"{item} ", "label": item}
                for item in ("login", "logout", "reconnect")
                if item.startswith(start)
            ] or None
        action = words[0]
        if action not in ("login", "logout", "reconnect") or len(words) > 2:
            return None
        start = words[1] if len(words) == 2 else ""
        from tau.bundled.mcp.manager import describe_state

        items = [
            {"value": f"{action} {server.name}", "label": server.name, "description": describe_state(server)}
            for server in mcp.servers
            if (server.connection is not None if action == "reconnect" else _uses_oauth(server))
            and server.name.startswith(start)
        ]
        return items or None

    mcp.tau.register_command(
        "mcp",
        "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        handler,
        get_argument_completions=completions,
    )
