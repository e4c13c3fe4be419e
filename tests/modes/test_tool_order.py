"""The order of the active tools, which is the order of the declarations every request carries.

pi 1.6 builds its first loadout after every extension tool is registered: a plain ``--tools`` list
activates the tools it names in its order, then the other tools it matches; a resumed session gets
the recorded order back. tau registers extension tools after the session exists, so a named tool
that registers while extensions load must still take its place (``tests/regressions``'s
``tools-order`` golden checks the built-ins against real pi).
"""

from __future__ import annotations

import asyncio
import functools
import json

import pytest

import tau
from tau.extension import ToolDefinition, ToolResult

FAUX = "faux/faux-1"


def in_loop(test):
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


def _mine(tau_api) -> None:
    async def execute(call_id, params, signal, on_update, ctx):
        return ToolResult(content=[{"type": "text", "text": "ok"}])

    for name in ("mine", "other"):
        tau_api.register_tool(
            ToolDefinition(
                name=name,
                label=name,
                description=f"{name} tool",
                parameters={"type": "object"},
                execute=execute,
            )
        )


def _declared(session) -> list[str]:
    systems = [m for m in session.messages if m.get("role") == "system"]
    names: list[str] = []
    for system in systems:
        removed = {tool["name"] for tool in system.get("toolsRemoved") or []}
        names = [n for n in names if n not in removed] + [t["name"] for t in system.get("toolsAdded") or []]
    return names


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (["ls", "read"], ["ls", "read"]),
        (["mine", "read"], ["mine", "read"]),  # an extension tool, registered after the session exists
        (["read", "mine", "bash"], ["read", "mine", "bash"]),
        (["o*", "read", "mine"], ["read", "mine", "other"]),  # named first, then the matches
    ],
)
@in_loop
async def test_a_plain_tools_list_activates_and_declares_in_its_order(project, tools, expected):
    async with await tau.create_agent_session(
        model=FAUX, faux_script=[{"text": "ok"}], tools=tools, extensions=[_mine], no_extensions=True
    ) as session:
        assert session.get_active_tool_names() == expected
        await session.prompt("hi")
        assert _declared(session) == expected


@in_loop
async def test_default_tools_keep_their_order_with_an_extension_tool_named_first(project, isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (isolated_agent_dir / "settings.json").write_text(json.dumps({"defaultTools": ["mine", "read"]}))
    async with await tau.create_agent_session(
        model=FAUX, faux_script=[{"text": "ok"}], extensions=[_mine], no_extensions=True
    ) as session:
        # pi: the defaults in their order, then the other extension tools activated on registration
        assert session.get_active_tool_names() == ["mine", "read", "other"]


@in_loop
async def test_a_resumed_session_keeps_its_recorded_order(project, tmp_path):
    sessions = tmp_path / "sessions"
    async with await tau.create_agent_session(
        model=FAUX,
        faux_script=[{"text": "one"}],
        tools=["other", "bash", "mine", "read"],
        extensions=[_mine],
        no_extensions=True,
        session="new",
        session_dir=sessions,
    ) as session:
        await session.prompt("a")
        path = session.session_file
    async with await tau.create_agent_session(
        model=FAUX,
        faux_script=[{"text": "two"}],
        extensions=[_mine],
        no_extensions=True,
        session=str(path),
        session_dir=sessions,
    ) as resumed:
        assert resumed.get_active_tool_names() == ["other", "bash", "mine", "read"]
        await resumed.prompt("b")
        systems = [m for m in resumed.messages if m.get("role") == "system"]
        assert len(systems) == 1  # the same loadout in the same order: nothing new to declare
