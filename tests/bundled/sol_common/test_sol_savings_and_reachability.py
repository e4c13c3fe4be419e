"""The interactive savings notices and the reachability probe (extensions.md §5.2)."""

from __future__ import annotations

import asyncio

import pytest

from tau.bundled.sol_common import (
    REACHABILITY_TYPE,
    banner_lines,
    find_unreachable,
    format_savings_bytes,
    format_savings_count,
    probe_reachability,
    show_savings,
    watch_reachability,
)
from tau.bundled.sol_common import tui as tui_module


class UI:
    def __init__(self):
        self.notices, self.statuses = [], []

    def notify(self, message, type="info"):
        self.notices.append((message, type))

    def set_status(self, key, text=None):
        self.statuses.append((key, text))


class Ctx:
    def __init__(self, mode):
        self.mode, self.ui = mode, UI()


def test_formats():
    assert format_savings_count(12345.4, "context tokens avoided") == "12,345 context tokens avoided"
    assert format_savings_count(-3, "x") == "0 x"
    assert format_savings_bytes(3 * 1024 * 1024) == "3 MiB removed from future prompts"
    assert format_savings_bytes(1536) == "1.5 KiB removed from future prompts"
    assert format_savings_bytes(999) == "999 B removed from future prompts"
    assert banner_lines("Action Fusion", "1 model round-trip avoided") == [
        "⚡ SoL-Pi · Action Fusion",
        "Money saved · 1 model round-trip avoided",
    ]


def test_savings_show_only_in_the_interactive_mode_and_the_status_clears(monkeypatch):
    monkeypatch.setattr(tui_module, "STATUS_SECONDS", 0.01)
    for mode in ("rpc", "json", "print"):
        ctx = Ctx(mode)
        show_savings(ctx, "Action Fusion", "1 model round-trip avoided")
        assert ctx.ui.notices == [] and ctx.ui.statuses == []

    async def scenario():
        ctx = Ctx("tui")
        show_savings(ctx, "Action Fusion", "1 model round-trip avoided")
        show_savings(ctx, "Action Fusion", "1 model round-trip avoided")
        await asyncio.sleep(0.05)
        return ctx

    ctx = asyncio.run(scenario())
    assert ctx.ui.notices[0] == (
        "⚡ SoL-Pi · Action Fusion\nMoney saved · 1 model round-trip avoided",
        "info",
    )
    assert ctx.ui.statuses == [
        ("sol-pi-savings", "⚡ Action Fusion · 1 model round-trip avoided"),
        ("sol-pi-savings", "⚡ Action Fusion · 1 model round-trip avoided"),
        ("sol-pi-savings", None),  # the timer restarted: cleared once
    ]


THEN_RUN = {"type": "object", "properties": {"path": {}, "then_run": {}}}
PLAIN = {"type": "object", "properties": {"path": {}}}


def test_then_run_detection():
    edit = {"name": "edit", "parameters": THEN_RUN}
    plain_edit = {"name": "edit", "parameters": PLAIN}
    assert find_unreachable(action_fusion=True, reducer=False, active=[edit], all_tools=[edit]) == []
    (finding,) = find_unreachable(
        action_fusion=True, reducer=False, active=[plain_edit], all_tools=[plain_edit]
    )
    assert finding == {
        "mechanism": "actionFusion",
        "reason": "then_run-not-on-active-tools",
        "message": "Action Fusion is enabled but the tool the model calls does not expose then_run",
        "activeTools": ["edit"],
        "allTools": ["edit"],
    }
    # no schema anywhere: the names decide
    assert find_unreachable(action_fusion=True, reducer=False, active=[{"name": "write"}], all_tools=[]) == []
    (reducer,) = find_unreachable(action_fusion=False, reducer=True, active=[], all_tools=[plain_edit])
    assert reducer["reason"] == "bash-tool-absent"


class Tau:
    def __init__(self, tools, active=None, broken=False):
        self.tools, self.active, self.broken = tools, active, broken
        self.entries, self.handlers = [], {}

    def get_all_tools(self):
        if self.broken:
            raise RuntimeError("not ready")
        return self.tools

    def get_active_tools(self):
        return self.active if self.active is not None else [t["name"] for t in self.tools]

    def append_entry(self, custom_type, data=None):
        self.entries.append((custom_type, data))

    def on(self, event, handler):
        self.handlers.setdefault(event, []).append(handler)


@pytest.mark.parametrize("mode", ["tui", "json"])
def test_a_finding_is_recorded_once_and_shown_only_in_the_interactive_mode(mode):
    tau, ctx = Tau([{"name": "edit", "parameters": PLAIN}]), Ctx(mode)
    warned = set()
    for _ in range(2):
        probe_reachability(tau, ctx, action_fusion=True, reducer=False, warned=warned)
    assert len(tau.entries) == 1
    custom_type, data = tau.entries[0]
    assert (
        custom_type == REACHABILITY_TYPE
        and data["schema"] == "sol-pi-reachability/1"
        and data["kind"] == "warning"
    )
    expected = [
        (
            "⚡ SoL-Pi · Action Fusion is enabled but the tool the model calls does not expose then_run",
            "warning",
        )
    ]
    assert ctx.ui.notices == (expected if mode == "tui" else [])


def test_the_probe_is_skipped_without_a_tool_surface_and_rechecked_once_before_the_agent_starts():
    broken = Tau([], broken=True)
    assert probe_reachability(broken, Ctx("tui"), action_fusion=True, reducer=True, warned=set()) == []
    tau = Tau([{"name": "edit", "parameters": THEN_RUN}])
    watch_reachability(tau, Ctx("json"), action_fusion=True, reducer=False)
    assert tau.entries == []
    tau.tools = [{"name": "edit", "parameters": PLAIN}]  # a later extension replaced edit
    (handler,) = tau.handlers["before_agent_start"]
    handler(None, Ctx("json"))
    handler(None, Ctx("json"))
    assert [entry[1]["reason"] for entry in tau.entries] == ["then_run-not-on-active-tools"]
