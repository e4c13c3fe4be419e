"""Action Fusion: edit/write with then_run, through the extension's tools (extensions.md §5.3)."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace
from typing import Any

import pytest

import tau.bundled.fusion as fusion
from tau.bundled.fusion import tools as fusion_tools
from tau.bundled.fusion.markers import then_run_schema
from tau.bundled.fusion.queue import queue_key
from tau.bundled.fusion.tools import ActionFusion, host_tool_properties
from tau.common import jsjson
from tau.extension import ToolContext, ToolDefinition, ToolError, ToolResult, edit_tool


class UI:
    def __init__(self):
        self.notices, self.statuses = [], []

    def notify(self, message, type="info"):
        self.notices.append((message, type))

    def set_status(self, key, text=None):
        self.statuses.append((key, text))


class Ctx:
    """The tool ctx an extension tool gets: cwd, mode, ui and the built-in tool context."""

    def __init__(self, cwd, mode="json"):
        self.cwd = str(cwd)
        self.mode = mode
        self.ui = UI()
        self.tool_context = ToolContext(cwd=str(cwd))
        self.session_manager = SimpleNamespace(get_session_id=lambda: f"session-{id(self)}")

    def is_project_trusted(self):
        return False


class Tau:
    def __init__(self, settings=None):
        self.tools: dict[str, ToolDefinition] = {}
        self.handlers: dict[str, list] = {}
        self.entries: list = []
        self.settings = settings or {}

    def register_tool(self, definition):
        self.tools[definition.name] = definition

    def on(self, event, handler):
        self.handlers.setdefault(event, []).append(handler)

    def get_settings(self):
        return self.settings

    def append_entry(self, custom_type, data=None):
        self.entries.append((custom_type, data))

    def get_all_tools(self):
        return [{"name": n, "parameters": t.parameters} for n, t in self.tools.items()]

    def get_active_tools(self):
        return list(self.tools)


class RecordingBash:
    """A bash stand-in: records each call, answers with a preset result (or runs ``action``)."""

    def __init__(self, result: ToolResult | None = None, action: Any = None):
        self.calls: list[tuple[str, dict]] = []
        self.result = result or ToolResult.text("ok")
        self.action = action

    def definition(self) -> ToolDefinition:
        async def execute(call_id, params, signal, on_update, ctx):
            self.calls.append((call_id, params))
            if self.action is not None:
                return await self.action(params)
            return self.result

        return ToolDefinition(name="bash", description="", parameters={}, execute=execute)


def fused(bash: RecordingBash | None = None) -> dict[str, ToolDefinition]:
    tau = Tau()
    ActionFusion(tau, bash=bash.definition() if bash else None).install()
    return tau.tools


def call(tools, name, params, ctx, call_id="call_1"):
    return asyncio.run(tools[name].execute(call_id, params, None, None, ctx))


def test_the_schemas_add_then_run_last_with_the_exact_descriptions():
    tools = fused()
    edit, write = tools["edit"].parameters, tools["write"].parameters
    assert list(edit["properties"]) == ["path", "edits", "then_run"]
    assert list(write["properties"]) == ["path", "content", "then_run"]
    assert edit["required"] == ["path", "edits"] and write["required"] == ["path", "content"]
    # SoL-Pi's shape; the descriptions cut to what a model needs (issue 25: sent with every request)
    assert edit["properties"]["then_run"] == {
        "type": "object",
        "required": ["command"],
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number", "description": "seconds"}},
        "description": "Command to run right after the edit succeeds (e.g. its tests); a failure keeps the edit",
    }
    assert write["properties"]["then_run"] == then_run_schema("write")
    assert "after the write succeeds" in write["properties"]["then_run"]["description"]
    assert len(jsjson.dumps(edit["properties"]["then_run"])) < 250  # about 60 tokens, was 115
    base = edit_tool()
    assert (
        tools["edit"].description == base.description and tools["edit"].prompt_snippet == base.prompt_snippet
    )
    assert tools["edit"].prepare_arguments is not None


def test_host_schemas_of_any_shape():
    direct = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    assert host_tool_properties(direct) == {"properties": {"path": {"type": "string"}}, "required": ["path"]}
    callable_schema = SimpleNamespace(to_json_schema=lambda: {"properties": {"a": {}}})
    assert host_tool_properties(callable_schema) == {"properties": {"a": {}}, "required": []}

    def broken():
        raise RuntimeError("no schema")

    assert host_tool_properties(SimpleNamespace(to_json_schema=broken)) == {}
    assert host_tool_properties({"properties": []}) == {}
    assert host_tool_properties(None) == {}
    tau = Tau()
    fusion_tools = ActionFusion(tau)
    assert (
        fusion_tools.fused(ToolDefinition(name="edit", description="", parameters={}, execute=None), "edit")
        is None
    )


def test_without_then_run_the_result_is_the_built_ins_and_bash_is_never_used(tmp_path):
    bash = RecordingBash()
    result = call(fused(bash), "write", {"path": "a.txt", "content": "hello"}, Ctx(tmp_path))
    assert result.to_json() == {"content": [{"type": "text", "text": "Successfully wrote to a.txt"}]}
    assert bash.calls == [] and (tmp_path / "a.txt").read_text() == "hello"


def test_a_fused_write_runs_the_command_on_the_written_file(tmp_path):
    result = call(
        fused(),
        "write",
        {"path": "a.txt", "content": "hello", "then_run": {"command": "cat a.txt"}},
        Ctx(tmp_path),
    )
    assert result.to_json() == {
        "content": [
            {"type": "text", "text": "Successfully wrote to a.txt"},
            {"type": "text", "text": "[then_run:succeeded]\nhello"},
        ]
    }


def test_a_fused_edit_keeps_its_diff_details(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    params = {
        "path": "m.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
        "then_run": {"command": "true"},
    }
    result = call(fused(), "edit", params, Ctx(tmp_path))
    assert [b["text"] for b in result.content] == [
        "Successfully replaced 1 block(s) in m.py.",
        "[then_run:succeeded]\n(no output)",
    ]
    assert "diff" in result.details and not result.is_error


def test_a_failing_command_returns_an_error_result_and_keeps_the_edit(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    params = {
        "path": "m.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
        "then_run": {"command": "echo broken; exit 3"},
    }
    ctx = Ctx(tmp_path, mode="tui")
    result = call(fused(), "edit", params, ctx)
    assert result.is_error and "diff" in result.details
    assert (
        [b["text"] for b in result.content]
        == [
            "Successfully replaced 1 block(s) in m.py.",
            "[then_run:failed]\nbroken\n\n\nCommand exited with code 3",  # bash's own text: output, blank line, status
        ]
    )
    assert (tmp_path / "m.py").read_text() == "x = 2\n"  # never rolled back
    assert ctx.ui.notices == []


def test_a_failure_without_output_says_command_failed(tmp_path):
    bash = RecordingBash(ToolResult.error(""))
    result = call(
        fused(bash), "write", {"path": "a", "content": "x", "then_run": {"command": "false"}}, Ctx(tmp_path)
    )
    assert result.content[-1]["text"] == "[then_run:failed]\nCommand failed." and result.is_error
    # a result without isError is a success, whatever it says
    bash = RecordingBash(ToolResult.text("FAILED everything"))
    result = call(
        fused(bash), "write", {"path": "a", "content": "x", "then_run": {"command": "x"}}, Ctx(tmp_path)
    )
    assert not result.is_error and result.content[-1]["text"] == "[then_run:succeeded]\nFAILED everything"


def test_a_signal_killed_command_fails_with_128_plus_n(tmp_path):
    params = {"path": "a", "content": "x", "then_run": {"command": "kill -TERM $$"}}
    result = call(fused(), "write", params, Ctx(tmp_path))
    assert result.is_error and "Command exited with code 143" in result.content[-1]["text"]


def test_a_timeout_fails_with_the_mutation_output_kept(tmp_path):
    params = {"path": "a", "content": "x", "then_run": {"command": "sleep 60", "timeout": 0.3}}
    with pytest.raises(ToolError) as info:
        call(fused(), "write", params, Ctx(tmp_path))
    text = str(info.value)
    assert (
        text.startswith("Successfully wrote to a\n\n[then_run:failed]\n\n")
        and "timed out after 0.3 seconds" in text
    )
    assert (tmp_path / "a").read_text() == "x"


def test_the_command_and_timeout_pass_through_unchanged(tmp_path):
    bash = RecordingBash()
    params = {"path": "a", "content": "x", "then_run": {"command": "pytest -q 'tests/a b.py'", "timeout": 12}}
    call(fused(bash), "write", params, Ctx(tmp_path), call_id="toolu_7")
    assert bash.calls == [("toolu_7:then_run", {"command": "pytest -q 'tests/a b.py'", "timeout": 12})]
    call(fused(bash), "write", {"path": "a", "content": "x", "then_run": {"command": "ls"}}, Ctx(tmp_path))
    assert bash.calls[-1][1] == {"command": "ls"}


def test_a_failed_mutation_skips_the_command(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    bash = RecordingBash()
    params = {
        "path": "m.py",
        "edits": [{"oldText": "nope", "newText": "y"}],
        "then_run": {"command": "touch ran"},
    }
    with pytest.raises(ToolError) as info:
        call(fused(bash), "edit", params, Ctx(tmp_path))
    assert str(info.value).endswith(
        "\n\n[then_run:skipped] The file mutation did not complete successfully; the command was not run."
    )
    assert "Could not find" in str(info.value) and bash.calls == []


def test_a_file_changed_before_the_command_skips_it(tmp_path, monkeypatch):
    bash = RecordingBash()
    hashes = iter(["aaa", "bbb"])
    monkeypatch.setattr(fusion_tools, "_sha256", lambda path: next(hashes))
    with pytest.raises(
        ToolError,
        match=r"^\[then_run:skipped\] target content changed after the fused mutation; "
        "the command was not run.$",
    ):
        call(
            fused(bash), "write", {"path": "a", "content": "x", "then_run": {"command": "ls"}}, Ctx(tmp_path)
        )
    assert bash.calls == []


def test_savings_show_only_after_a_success_in_the_interactive_mode(tmp_path):
    ctx = Ctx(tmp_path, mode="tui")
    call(fused(), "write", {"path": "a", "content": "x", "then_run": {"command": "true"}}, ctx)
    assert ctx.ui.notices == [("⚡ SoL-Pi · Action Fusion\nMoney saved · 1 model round-trip avoided", "info")]
    call(fused(), "write", {"path": "a", "content": "x"}, ctx)
    assert len(ctx.ui.notices) == 1
    quiet = Ctx(tmp_path, mode="rpc")
    call(fused(), "write", {"path": "a", "content": "x", "then_run": {"command": "true"}}, quiet)
    assert quiet.ui.notices == []


def test_the_interactive_row_carries_the_banner_only_for_a_succeeded_fused_call(tmp_path):
    tool_rows = pytest.importorskip("tau.modes.interactive.tool_rows", reason="interactive mode not present")
    from tau.modes.interactive.model import ToolBlock

    tools = fused()
    (tmp_path / "m.py").write_text("x = 1\n")
    args = {
        "path": "m.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
        "then_run": {"command": "echo ok"},
    }
    running = tool_rows.tool_row(ToolBlock("c0", "edit", args), tools["edit"])  # no result yet
    assert running.title == "edit m.py  ⚡ then_run: $ echo ok"
    assert running.body == ["⚡ SoL-Pi · Action Fusion", "Money saved · 1 model round-trip avoided"]
    result = call(tools, "edit", args, Ctx(tmp_path)).to_json()
    block = ToolBlock("c1", "edit", args, status="done", result=result, details=result["details"])
    row = tool_rows.tool_row(block, tools["edit"])
    assert row.title == "edit m.py  ⚡ then_run: $ echo ok"
    assert row.body[:2] == ["⚡ SoL-Pi · Action Fusion", "Money saved · 1 model round-trip avoided"]
    assert any(line.startswith("+") and "x = 2" in line for line in row.body)

    plain = {"path": "m.py", "edits": [{"oldText": "x = 2", "newText": "x = 3"}]}
    plain_result = call(tools, "edit", plain, Ctx(tmp_path)).to_json()
    plain_block = ToolBlock(
        "c2", "edit", plain, status="done", result=plain_result, details=plain_result["details"]
    )
    assert tool_rows.tool_row(plain_block, tools["edit"]) == tool_rows.tool_row(plain_block, edit_tool())

    failing = {**args, "edits": [{"oldText": "x = 3", "newText": "x = 4"}], "then_run": {"command": "exit 1"}}
    failed = call(tools, "edit", failing, Ctx(tmp_path)).to_json()
    failed_block = ToolBlock("c3", "edit", failing, status="error", result=failed, details=failed["details"])
    assert (
        "Money saved · 1 model round-trip avoided" not in tool_rows.tool_row(failed_block, tools["edit"]).body
    )


def test_the_queue_holds_the_file_through_the_command(tmp_path):
    events: list[str] = []

    async def slow(params):
        events.append(f"start {params['command']}")
        # "one" holds a.txt until b.txt's command has started; a queue that also held b.txt would
        # start "three" only after "one" ended (the wait gives up after 30 s, and the test fails).
        for _ in range(3000):
            if params["command"] != "one" or "start three" in events:
                break
            await asyncio.sleep(0.01)
        events.append(f"end {params['command']}")
        return ToolResult.text("ok")

    tools = fused(RecordingBash(action=slow))
    ctx = Ctx(tmp_path)

    async def scenario():
        url = f"file://{tmp_path}/a.txt"
        first = tools["write"].execute(
            "1", {"path": "a.txt", "content": "1", "then_run": {"command": "one"}}, None, None, ctx
        )
        second = tools["write"].execute(
            "2", {"path": url, "content": "2", "then_run": {"command": "two"}}, None, None, ctx
        )
        other = tools["write"].execute(
            "3", {"path": "b.txt", "content": "3", "then_run": {"command": "three"}}, None, None, ctx
        )
        await asyncio.gather(first, second, other)

    asyncio.run(scenario())
    assert events.index("end one") < events.index("start two")
    assert events.index("start three") < events.index("end one")  # other files are not held


def test_queue_keys_follow_the_real_path_of_the_deepest_existing_ancestor(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    assert queue_key(str(tmp_path / "link" / "new" / "f.txt")) == str(real / "new" / "f.txt")


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("file://{dir}/my%20file.txt", "my file.txt"),
        ("@file://{dir}/caf%C3%A9.txt", "café.txt"),
        ("@notes.txt", "notes.txt"),
        ("{dir}/wide\u3000name.txt", "wide name.txt"),
        ("sub/../plain.txt", "plain.txt"),
    ],
)
def test_paths_resolve_like_the_built_in_tools(tmp_path, spelling, name):
    path = spelling.format(dir=tmp_path)
    result = call(
        fused(),
        "write",
        {"path": path, "content": "v", "then_run": {"command": f"cat '{name}'"}},
        Ctx(tmp_path),
    )
    assert result.content[-1]["text"] == "[then_run:succeeded]\nv"


def test_an_invalid_file_url_runs_nothing(tmp_path):
    bash = RecordingBash()
    with pytest.raises(ValueError, match="encoded / characters"):
        call(
            fused(bash),
            "write",
            {"path": f"file://{tmp_path}/a%2Fb", "content": "x", "then_run": {"command": "ls"}},
            Ctx(tmp_path),
        )
    assert bash.calls == [] and os.listdir(tmp_path) == []


# -- registration -------------------------------------------------------------------------------


def start(tau, ctx):
    for handler in list(tau.handlers.get("session_start", [])):
        handler(SimpleNamespace(reason="startup"), ctx)


def test_registration_waits_for_session_start_and_happens_once(tmp_path):
    tau = Tau()
    fusion.extension(tau)
    assert tau.tools == {} and list(tau.handlers) == ["session_start"]
    start(tau, Ctx(tmp_path))
    start(tau, Ctx(tmp_path))
    assert list(tau.tools) == ["edit", "write"] and len(tau.handlers["before_agent_start"]) == 1
    assert tau.entries == []  # then_run is reachable
    off = Tau({"sol": {"actionFusion": False}})
    fusion.extension(off)
    start(off, Ctx(tmp_path))
    assert off.tools == {}


def test_a_bad_sol_setting_stops_initialisation(tmp_path):
    tau = Tau({"sol": {"actionFusion": "yes"}})
    fusion.extension(tau)
    with pytest.raises(ValueError, match=r"^settings\.json: sol\.actionFusion must be a boolean"):
        start(tau, Ctx(tmp_path))
    assert tau.tools == {}


def test_the_shell_settings_of_the_session_reach_the_command(tmp_path):
    ctx = Ctx(tmp_path)
    ctx.tool_context = ToolContext(cwd=str(tmp_path), shell_command_prefix="export GREETING=from-settings")
    result = call(
        fused(), "write", {"path": "a", "content": "x", "then_run": {"command": "echo $GREETING"}}, ctx
    )
    assert result.content[-1]["text"] == "[then_run:succeeded]\nfrom-settings\n"


def test_an_aborted_mutation_stays_an_abort_and_runs_nothing(tmp_path):
    from tau.extension import AbortSignal, ToolAborted

    bash = RecordingBash()
    signal = AbortSignal()
    signal.abort()
    tools = fused(bash)
    params = {"path": "a", "content": "x", "then_run": {"command": "ls"}}
    with pytest.raises(ToolAborted, match=r"Operation aborted\n\n\[then_run:skipped\]"):
        asyncio.run(tools["write"].execute("c", params, signal, None, Ctx(tmp_path)))
    assert bash.calls == [] and not (tmp_path / "a").exists()


@pytest.mark.parametrize("key", ["shellPath", "shellCommandPrefix"])
def test_a_malformed_shell_setting_stops_initialisation(tmp_path, key):
    """Issue 33, item 4 (seed 003): malformed settings stop initialization rather than silently
    selecting another shell for then_run."""
    tau = Tau({key: 42})
    fusion.extension(tau)
    with pytest.raises(ValueError, match=rf"^settings: {key} must be a string, got 42; Action Fusion is off"):
        start(tau, Ctx(tmp_path))
    assert tau.tools == {}


def test_a_malformed_shell_setting_in_the_settings_file_names_the_file(tmp_path, isolated_agent_dir):
    # the host leaves the wrong-typed value out of the effective settings (and warns): Action Fusion
    # reads the file as written
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    path = isolated_agent_dir / "settings.json"
    path.write_text('{"shellPath": 42}')
    tau = Tau({})
    fusion.extension(tau)
    with pytest.raises(ValueError) as raised:
        start(tau, Ctx(tmp_path))
    assert str(raised.value).startswith(f"{path}: shellPath must be a string, got 42; Action Fusion is off")
    assert tau.tools == {}
    path.write_text('{"shellPath": "/bin/sh"}')
    fine = Tau({})
    fusion.extension(fine)
    start(fine, Ctx(tmp_path))
    assert list(fine.tools) == ["edit", "write"]
