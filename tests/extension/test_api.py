"""The API object, ctx, commands and tools, on a fake host."""

from __future__ import annotations

import asyncio
import io
import sys
from typing import Any

import pytest
from extension_fakes import FakeHost

from tau.extension import (
    ExtensionRunner,
    ExtensionToolContext,
    PrintUI,
    ToolContext,
    ToolDefinition,
    ToolResult,
    bash_tool,
    load_factory,
)
from waiting import until


def echo_tool(name: str = "echo", text: str = "hi") -> ToolDefinition:
    async def execute(call_id, params, signal, on_update, ctx):
        return ToolResult.text(f"{text}:{call_id}:{type(ctx).__name__}")

    return ToolDefinition(
        name=name, description="echo", parameters={"type": "object", "properties": {}}, execute=execute
    )


async def load(runner: ExtensionRunner, *factories: Any) -> None:
    for index, factory in enumerate(factories):
        await load_factory(runner, factory, path=f"ext{index + 1}.py")


def loaded(
    *factories: Any, host: FakeHost | None = None, mode: str = "json"
) -> tuple[ExtensionRunner, FakeHost]:
    runner = ExtensionRunner(cwd="/tmp", mode=mode)
    asyncio.run(load(runner, *factories))
    host = host or FakeHost()
    runner.bind(host)
    return runner, host


def test_tools_registered_while_loading_reach_the_session_on_bind_and_get_an_extension_ctx():
    runner, host = loaded(lambda tau: tau.register_tool(echo_tool()))
    assert host.hooks is runner
    assert "echo" in host.active
    result = asyncio.run(host.tools["echo"].execute("call_1", {}, None, None, ToolContext(cwd="/tmp")))
    assert result.content[0]["text"] == "hi:call_1:ExtensionToolContext"


def test_a_tool_registered_after_bind_is_applied_at_once_and_replaces_a_builtin():
    def ext(tau):
        tau.on("session_start", lambda event, ctx: tau.register_tool(echo_tool("bash", "mine")))

    runner, host = loaded(ext)
    builtin = host.tools["bash"]
    asyncio.run(runner.emit({"type": "session_start", "reason": "startup"}))
    assert host.tools["bash"] is not builtin
    result = asyncio.run(host.tools["bash"].execute("c", {}, None, None, ToolContext(cwd="/tmp")))
    assert result.content[0]["text"].startswith("mine:")


def test_the_first_extension_to_register_a_name_owns_it():
    captured: dict[str, Any] = {}
    _runner, host = loaded(
        lambda tau: tau.register_tool(echo_tool("dup", "first")),
        lambda tau: captured.setdefault("tau", tau).register_tool(echo_tool("dup", "second")),
    )
    result = asyncio.run(host.tools["dup"].execute("c", {}, None, None, ToolContext(cwd="/tmp")))
    assert result.content[0]["text"].startswith("first:")
    info = next(tool for tool in captured["tau"].get_all_tools() if tool["name"] == "dup")
    assert info["sourceInfo"]["path"] == "ext1.py"  # who owns the name, for collision messages


def test_register_tool_rejects_a_non_object_schema_with_the_extension_named():
    runner = ExtensionRunner(cwd="/tmp", mode="json")
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)

    def bad(tau):
        tool = echo_tool()
        tool.parameters = "not a schema"  # type: ignore[assignment]
        tau.register_tool(tool)

    asyncio.run(load(runner, bad))
    assert runner.extensions == []
    assert errors[0]["extensionPath"] == "ext1.py"
    assert (
        'Tool "echo" registered by extension "ext1.py" must define an object parameter schema'
        in errors[0]["error"]
    )


def test_a_wrapped_builtin_accepts_the_extension_tool_ctx(tmp_path):
    seen = []

    def ext(tau):
        base = bash_tool()

        async def execute(call_id, params, signal, on_update, ctx):
            seen.append(isinstance(ctx, ExtensionToolContext))
            return await base.execute(call_id, params, signal, on_update, ctx)

        tau.register_tool(
            ToolDefinition(name="bash", description="wrapped", parameters=base.parameters, execute=execute)
        )

    _runner, host = loaded(ext)
    result = asyncio.run(
        host.tools["bash"].execute(
            "c", {"command": "echo wrapped"}, None, None, ToolContext(cwd=str(tmp_path))
        )
    )
    assert seen == [True]
    assert result.content[0]["text"].strip() == "wrapped"


def test_duplicate_command_names_get_suffixes_in_load_order():
    ran = []

    def ext1(tau):
        tau.register_command("plan", "first plan", lambda args, ctx: ran.append(("1", args)))
        tau.register_command("solo", "only one", lambda args, ctx: ran.append(("solo", args)))

    def ext2(tau):
        async def handler(args, ctx):
            ran.append(("2", args, type(ctx).__name__))

        tau.register_command("plan", "second plan", handler)

    runner, _ = loaded(ext1, ext2)
    names = [command["name"] for command in runner.get_commands()]
    assert names == ["plan:1", "solo", "plan:2"]
    assert asyncio.run(runner.execute_command("/plan:2 do it")) is True
    assert asyncio.run(runner.execute_command("/solo")) is True
    assert asyncio.run(runner.execute_command("/plan")) is False
    assert asyncio.run(runner.execute_command("plain text")) is False
    assert ran == [("2", "do it", "ExtensionCommandContext"), ("solo", "")]


def test_a_failing_command_is_reported_and_counts_as_handled():
    runner, _ = loaded(lambda tau: tau.register_command("boom", "", lambda args, ctx: 1 / 0))
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)
    assert asyncio.run(runner.execute_command("/boom")) is True
    assert errors == [
        {
            "type": "extension_error",
            "extensionPath": "command:boom",
            "event": "command",
            "error": "division by zero",
        }
    ]


def test_actions_need_the_running_session_and_say_so():
    runner = ExtensionRunner(cwd="/tmp")
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)
    asyncio.run(load(runner, lambda tau: tau.append_entry("x", {})))
    assert "The session is not running yet" in errors[0]["error"]


def test_actions_reach_the_session():
    captured: dict[str, Any] = {}

    def ext(tau):
        captured["tau"] = tau

    _runner, host = loaded(ext)
    tau = captured["tau"]

    async def scenario() -> None:
        tau.send_message({"customType": "note", "content": "hi", "display": False}, trigger_turn=True)
        # the session's synchronous part ran before send_message returned
        assert host.calls[-1][0] == "send_custom_message"
        tau.send_user_message("hello", deliver_as="followUp")
        entry_id = tau.append_entry("state", {"n": 1})
        tau.set_label(entry_id, "mark")
        tau.set_session_name("named")
        tau.set_active_tools(["read", "nope"])
        tau.set_thinking_level("high")
        assert await tau.set_model("m") is True
        assert host.session_manager.get_entry(entry_id)["data"] == {"n": 1}

    asyncio.run(scenario())
    assert host.calls[0] == (
        "send_custom_message",
        ({"customType": "note", "content": "hi", "display": False},),
        {"trigger_turn": True, "deliver_as": None},
    )
    assert host.calls[1] == ("send_user_message", ("hello",), {"deliver_as": "followUp"})
    assert tau.get_session_name() == "named"
    assert tau.get_active_tools() == ["read"]
    assert (tau.get_thinking_level(), host.model) == ("high", "m")
    settings = tau.get_settings()
    settings["sol"]["actionFusion"] = False
    assert tau.get_settings()["sol"] == {"actionFusion": True}  # a copy
    infos = {tool["name"]: tool for tool in tau.get_all_tools()}
    assert set(infos) >= {"read", "bash", "edit", "write"}
    assert infos["read"]["sourceInfo"] == {
        "path": "builtin:read",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert infos["read"]["parameters"]["required"] == ["path"]


def test_ctx_reads_the_session_when_asked():
    seen: dict[str, Any] = {}

    def ext(tau):
        def handler(event, ctx):
            seen.update(
                cwd=ctx.cwd,
                mode=ctx.mode,
                has_ui=ctx.has_ui,
                idle=ctx.is_idle(),
                trusted=ctx.is_project_trusted(),
                usage=ctx.get_context_usage(),
                prompt=ctx.get_system_prompt(),
                level=ctx.thinking_level,
                session_id=ctx.session_manager.get_session_id(),
                branch=ctx.session_manager.get_branch(),
            )
            ctx.compact("keep the plan", on_complete=lambda result: seen.setdefault("compacted", result))
            ctx.abort()

        tau.on("agent_start", handler)

    runner, host = loaded(ext)

    async def scenario() -> None:
        await runner.emit({"type": "agent_start"})
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert seen["cwd"] == "/tmp" and seen["mode"] == "json" and seen["has_ui"] is False
    assert seen["idle"] is True and seen["trusted"] is False
    assert (
        seen["usage"]["contextWindow"] == 100
        and seen["prompt"] == "You are tau."
        and seen["level"] == "medium"
    )
    assert seen["session_id"] == host.session_manager.get_session_id() and seen["branch"] == []
    assert seen["compacted"] == {"summary": "s"}
    assert [call[0] for call in host.calls] == ["compact", "abort"]


def test_session_manager_view_is_read_only():
    runner, _ = loaded()
    view = runner.create_context().session_manager
    assert hasattr(view, "get_branch") and hasattr(view, "build_session_projection")
    assert not hasattr(view, "append_message") and not hasattr(view, "append_custom_entry")


def test_tool_ctx_execute_tool_passes_the_calling_id_and_signal():
    outcome: dict[str, Any] = {}

    async def execute(call_id, params, signal, on_update, ctx):
        outcome.update(await ctx.execute_tool("read", {"path": "a.txt"}))
        return ToolResult.text("done")

    tool = ToolDefinition(name="outer", description="", parameters={"type": "object"}, execute=execute)
    _runner, host = loaded(lambda tau: tau.register_tool(tool))
    marker = object()
    asyncio.run(host.tools["outer"].execute("call_7", {}, marker, None, ToolContext(cwd="/tmp")))
    assert host.calls == [("execute_tool", ("call_7", "read", {"path": "a.txt"}), {"signal": marker})]
    assert outcome["toolCall"]["id"] == "call_7/1"


def test_command_ctx_controls_the_session():
    async def handler(args, ctx):
        await ctx.wait_for_idle()
        await ctx.navigate_tree("e1", summarize=True, label="here")
        await ctx.fork("e2", position="at")
        await ctx.new_session()

    runner, host = loaded(lambda tau: tau.register_command("go", "", handler))
    asyncio.run(runner.execute_command("/go"))
    assert host.calls == [
        (
            "navigate_tree",
            ("e1",),
            {"summarize": True, "custom_instructions": None, "replace_instructions": False, "label": "here"},
        ),
        ("fork", ("e2",), {"position": "at"}),
        ("new_session", (), {}),
    ]


def test_ui_outside_the_interactive_mode():
    stream = io.StringIO()
    ui = PrintUI(stream)
    ui.notify("saved")
    ui.notify("careful", "warning")
    ui.notify("broken", "error")
    assert stream.getvalue() == "saved\nWarning: careful\nError: broken\n"

    async def dialogs() -> list[Any]:
        return [
            await ui.select("t", ["a"]),
            await ui.confirm("t", "m"),
            await ui.input("t"),
            await ui.custom(object()),
        ]

    assert asyncio.run(dialogs()) == [None, False, None, None]
    runner, _ = loaded(mode="json")
    runner.create_context().ui.notify("nowhere")  # JSON mode: no output at all


def test_print_mode_reports_errors_on_stderr_without_a_listener(capsys):
    runner = ExtensionRunner(mode="print")
    runner.emit_error("x.py", "turn_end", "bad draft")
    assert capsys.readouterr().err == "Extension error (x.py): bad draft\n"
    json_runner = ExtensionRunner(mode="json")  # the JSON mode prints what reaches the session's listeners
    json_runner.emit_error("x.py", "turn_end", "bad draft")
    json_runner.emit_error("y.py", "load", "Failed to load extension: ImportError: nope")
    assert capsys.readouterr().err == "Extension error (y.py): Failed to load extension: ImportError: nope\n"


def test_a_stale_ctx_raises():
    runner, _ = loaded()
    ctx = runner.create_context()
    runner.invalidate()
    with pytest.raises(RuntimeError, match="stale"):
        _ = ctx.cwd


def test_exec_runs_without_a_shell_and_reports_codes(tmp_path):
    captured: dict[str, Any] = {}
    _runner, _ = loaded(lambda tau: captured.setdefault("tau", tau))
    tau = captured["tau"]

    async def scenario() -> list[Any]:
        ok = await tau.exec(
            sys.executable, ["-c", "import os; print(os.getcwd()); print('é')"], cwd=str(tmp_path)
        )
        failed = await tau.exec(sys.executable, ["-c", "import sys; sys.stderr.write('no'); sys.exit(3)"])
        slow = await tau.exec(sys.executable, ["-c", "import time; time.sleep(5)"], timeout=0.2)
        capped = await tau.exec(sys.executable, ["-c", "print('x' * 1000)"], max_buffer=10)
        missing = await tau.exec(str(tmp_path / "nope"))
        return [ok, failed, slow, capped, missing]

    ok, failed, slow, capped, missing = asyncio.run(scenario())
    assert ok.stdout == f"{tmp_path}\né\n" and ok.code == 0 and not ok.killed
    assert (failed.code, failed.stderr) == (3, "no")
    assert slow.killed and slow.code == 143
    assert capped.truncated and capped.stdout == "x" * 10 and capped.code != 0
    assert missing.code == 1 and "nope" in missing.stderr


def test_a_modes_dialogs_are_announced_as_ui_prompt_events():
    seen: list[tuple[str, str, str | None]] = []

    class DialogUI(PrintUI):
        async def confirm(self, title, message, *, timeout=None):
            return await ctx_holder["ctx"].ui.select("inner", ["a"]) == "a"

        async def select(self, title, options, *, timeout=None):
            return options[0]

    ctx_holder: dict[str, Any] = {}

    def ext(tau):
        tau.on("ui_prompt_start", lambda e, c: seen.append(("start", e.kind, e.title)))
        tau.on("ui_prompt_end", lambda e, c: seen.append(("end", e.kind, e.title)))

    runner, _ = loaded(ext)
    runner.set_ui(DialogUI(), "rpc")
    ctx = ctx_holder["ctx"] = runner.create_context()
    assert ctx.has_ui is True
    assert asyncio.run(ctx.ui.confirm("Proceed?", "sure")) is True
    assert seen == [
        ("start", "confirm", "Proceed?"),
        ("end", "confirm", "Proceed?"),
    ]  # the nested select adds nothing


def test_session_work_started_from_a_handler_runs_its_synchronous_part_at_once_and_the_rest_later():
    steps: list[str] = []

    class SlowHost(FakeHost):
        async def send_custom_message(self, message, *, trigger_turn=False, deliver_as=None):
            steps.append("queued")
            await asyncio.sleep(0.01)
            steps.append("run finished")

    captured: dict[str, Any] = {}
    _runner, _ = loaded(lambda tau: captured.setdefault("tau", tau), host=SlowHost())

    async def scenario() -> None:
        captured["tau"].send_message({"customType": "x", "content": "y", "display": True}, trigger_turn=True)
        steps.append("handler goes on")
        await until(lambda: "run finished" in steps)

    asyncio.run(scenario())
    assert steps == ["queued", "handler goes on", "run finished"]


def test_a_failure_of_session_work_is_reported_as_a_runtime_error():
    class FailingHost(FakeHost):
        async def send_user_message(self, content, *, deliver_as=None):
            await asyncio.sleep(0)
            raise RuntimeError("Cannot submit a prompt while compaction is in progress.")

    captured: dict[str, Any] = {}
    runner, _ = loaded(lambda tau: captured.setdefault("tau", tau), host=FailingHost())
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)

    async def scenario() -> None:
        captured["tau"].send_user_message("hi")
        await until(lambda: errors)

    asyncio.run(scenario())
    assert errors == [
        {
            "type": "extension_error",
            "extensionPath": "<runtime>",
            "event": "send_user_message",
            "error": "Cannot submit a prompt while compaction is in progress.",
        }
    ]


def test_the_event_bus_is_shared_and_a_failing_subscriber_is_reported():
    got: list[Any] = []
    captured: dict[str, Any] = {}

    def listener(tau):
        tau.events.on("plan", got.append)

        def broken(data):
            raise KeyError("steps")

        tau.events.on("plan", broken)

    runner, _ = loaded(listener, lambda tau: captured.setdefault("tau", tau))
    errors: list[dict[str, Any]] = []
    runner.on_error(errors.append)
    asyncio.run(captured["tau"].events.emit("plan", {"step": 1}))
    assert got == [{"step": 1}]
    assert errors == [
        {"type": "extension_error", "extensionPath": "ext1.py", "event": "events:plan", "error": "'steps'"}
    ]
