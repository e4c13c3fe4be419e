"""The bundled ``online-compact`` extension as the loader installs it: opt-in, and with ``todo``
active OCC takes its plan from ``todo`` (no ``update_plan``), so the model sees one plan tool."""

from __future__ import annotations

import asyncio

import pytest

from faux_model import FauxModel

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import load_extensions  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402


def start(tmp_path, settings, disabled=()):
    scripted = FauxModel([{"text": "hi"}], record=None)  # what the requests held is not asked here
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = session_module.AgentSession(
        manager,
        Settings.in_memory(settings),
        scripted.registry,
        scripted.model,
        cwd=str(tmp_path),
        stream_fn=scripted.stream,
    )

    async def scenario():
        await load_extensions(session, cwd=str(tmp_path), mode="json", disabled=list(disabled))
        await session.start()
        await session.prompt("hello")

    asyncio.run(scenario())
    return session, manager


def tool_names(session):
    return {definition.name for definition in session.get_all_tools()}


def test_off_by_default(tmp_path):
    session, manager = start(tmp_path, {})
    assert "update_plan" not in tool_names(session)
    custom = {e["customType"] for e in manager.get_entries() if e["type"] == "custom"}
    assert "sol-pi-online-context-state-v1" not in custom


def test_with_todo_active_the_plan_comes_from_todo(tmp_path):
    session, manager = start(tmp_path, {"sol": {"onlineContextCompact": True}})
    assert "todo" in tool_names(session) and "update_plan" not in tool_names(session)
    states = [e for e in manager.get_entries() if e.get("customType") == "sol-pi-online-context-state-v1"]
    assert states and states[-1]["data"]["requestCount"] == 1  # the request was counted


def test_without_todo_update_plan_is_registered(tmp_path):
    session, _ = start(tmp_path, {"sol": {"onlineContextCompact": True}}, disabled=["todo", "todo-loop"])
    tools = {definition.name: definition for definition in session.get_all_tools()}
    assert "update_plan" in tools and "todo" not in tools
    assert tools["update_plan"].execution_mode == "sequential"
