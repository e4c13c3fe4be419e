"""The Python SDK (issue 21): ``tau.create_agent_session`` and ``tau.run`` behave as the CLI's sessions do.

Everything runs on the faux model; sessions are in memory unless a test is about the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
from pathlib import Path

import pytest
from faux_ext import script as pi_golden_script
from golden_compare import normalize_stream, read_jsonl

import tau
from tau.agent.events import to_json_event
from tau.cli import main as cli_main

FAUX = "faux/faux-1"


def in_loop(test):
    """Run an ``async def`` test in a fresh event loop (the suite has no asyncio plugin)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


def _roles(messages: list[dict]) -> list[str]:
    return [message["role"] for message in messages if message["role"] != "system"]


def _session_context(path: str) -> list[dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["session", "context", path]) == 0
    return json.loads(out.getvalue())


@in_loop
async def test_in_memory_session_runs_a_bash_call_and_answers(project):
    steps = [{"bash": "echo hi from bash"}, {"text": "the command said hi"}]
    async with await tau.create_agent_session(model=FAUX, faux_script=steps) as session:
        await session.prompt("say hi with bash")
        assert session.session_file is None
        assert _roles(session.messages) == ["user", "assistant", "toolResult", "assistant"]
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert result["content"][0]["text"].strip() == "hi from bash"
        assert session.last_assistant_text() == "the command said hi"
        usage = session.usage()
    assert usage.requests == 2
    assert usage.output_tokens > 0 and usage.cache_write_tokens > 0
    assert usage == tau.Usage(
        requests=2,
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        cost=0.0,
    )


@in_loop
async def test_events_arrive_in_pi_order(project, pi_fixtures):
    """The subscriber sees what ``pi --mode json`` printed for the same bash turn (its golden)."""
    golden = read_jsonl((pi_fixtures / "events" / "json-bash.jsonl").read_bytes())
    seen: list[dict] = []
    session = await tau.create_agent_session(model=FAUX, faux_script=pi_golden_script(), extensions=False)
    unsubscribe = session.subscribe(lambda event: seen.append(to_json_event(event)))
    await session.prompt("bash: echo hi from bash")
    unsubscribe()
    await session.prompt("bash: echo not seen")
    await session.close()
    header = session.session_manager.get_header()
    assert normalize_stream([header, *seen]) == normalize_stream(golden)


def test_run_from_plain_synchronous_code(project):
    result = tau.run("hello", model=FAUX, faux_script=[{"text": "hello back"}])
    assert (result.text, result.stop_reason, result.error, result.session_file) == (
        "hello back",
        "stop",
        None,
        None,
    )
    assert _roles(result.messages) == ["user", "assistant"]
    assert result.usage.requests == 1


@in_loop
async def test_run_inside_a_running_event_loop(project):
    """A notebook's thread already runs a loop: ``run`` still works (on a thread of its own)."""
    result = tau.run(["one", "two"], model=FAUX, faux_script=[{"text": "1"}, {"text": "2"}])
    assert result.text == "2"
    assert [m["content"][0]["text"] for m in result.messages if m["role"] == "user"] == ["one", "two"]


@in_loop
async def test_model_and_faux_script_are_given_as_on_the_command_line(project, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from a file"}, {"text": "from the same file"}]))
    async with await tau.create_agent_session(model=FAUX, faux_script=script) as session:
        await session.prompt("one")
        assert session.last_assistant_text() == "from a file"
    async with await tau.create_agent_session(model="anthropic/claude-sonnet-4-6:low") as session:
        assert (session.model.provider, session.model.id, session.thinking_level) == (
            "anthropic",
            "claude-sonnet-4-6",
            "low",
        )
        with pytest.raises(RuntimeError, match='No API key found for "anthropic"'):  # nothing was sent
            await session.prompt("hi")


@in_loop
async def test_two_sessions_of_one_process_run_their_own_scripts_at_once(project, tmp_path, monkeypatch):
    """Each session's ``faux_script`` is its own: neither takes the other's steps, nor the env script."""
    env_script = tmp_path / "env.json"
    env_script.write_text(json.dumps([{"text": "the env script"}]))
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(env_script))
    arrived = {"a": asyncio.Event(), "b": asyncio.Event()}

    def meet(me: str, other: str):
        async def factory(request):  # both requests are in flight before either is answered
            arrived[me].set()
            await asyncio.wait_for(arrived[other].wait(), 60)
            return {"text": f"{me} first"}

        return factory

    script_a = [{"factory": meet("a", "b")}, {"bash": "echo from a"}, {"text": "a done"}]
    script_b = [{"factory": meet("b", "a")}, {"text": "b done"}]
    async with (
        await tau.create_agent_session(model=FAUX, faux_script=script_a, extensions=False) as a,
        await tau.create_agent_session(model=FAUX, faux_script=script_b, extensions=False) as b,
    ):
        await asyncio.gather(a.prompt("one"), b.prompt("one"))
        await asyncio.gather(a.prompt("two"), b.prompt("two"))
        texts = {
            name: [
                block.get("text")
                for m in session.messages
                if m["role"] in ("assistant", "toolResult")
                for block in m["content"]
                if block["type"] == "text"
            ]
            for name, session in (("a", a), ("b", b))
        }
        assert texts == {"a": ["a first", "from a\n", "a done"], "b": ["b first", "b done"]}
        assert (a.model_registry.faux.pending, b.model_registry.faux.pending) == (0, 0)
    async with await tau.create_agent_session(model=FAUX, extensions=False) as c:
        await c.prompt("one")  # no script of its own: the env script, from its first step
        assert c.last_assistant_text() == "the env script"


@in_loop
async def test_two_sessions_from_one_env_script_each_run_all_of_it(project, tmp_path, monkeypatch):
    """``$TAU_FAUX_SCRIPT`` is read by each session's registry: one session's calls never use up the other's steps."""
    env_script = tmp_path / "env.json"
    env_script.write_text(json.dumps([{"bash": "echo hi"}, {"text": "first"}, {"text": "second"}]))
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(env_script))
    async with (
        await tau.create_agent_session(model=FAUX, extensions=False) as a,
        await tau.create_agent_session(model=FAUX, extensions=False) as b,
    ):
        await a.prompt("go")
        await b.prompt("go")
        await a.prompt("again")
        assert [a.last_assistant_text(), b.last_assistant_text()] == ["second", "first"]
        calls = [
            block["id"]
            for s in (a, b)
            for m in s.messages
            if m["role"] == "assistant"
            for block in m["content"]
            if block["type"] == "toolCall"
        ]
        assert calls == ["call_1", "call_1"]  # each session's ids count its own calls


def test_run_reports_a_failed_request(project):
    result = tau.run("hello", model=FAUX, faux_script=[])
    assert (result.text, result.stop_reason, result.error) == (None, "error", "No more faux responses queued")


def test_file_session_continues_and_reads_back_with_tau_session_context(project, tmp_path):
    path = tmp_path / "kept.jsonl"
    first = tau.run("first", model=FAUX, session=path, faux_script=[{"text": "one"}])
    assert first.session_file == str(path) and path.is_file()
    second = tau.run("second", session=str(path), faux_script=[{"text": "two"}])
    assert second.text == "two"
    again = tau.run("third", session="continue", session_dir=tmp_path, faux_script=[{"text": "three"}])
    assert again.session_file == str(path)
    context = _session_context(str(path))
    texts = [(m["role"], m["content"][0]["text"]) for m in context if m["role"] in ("user", "assistant")]
    assert texts == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
        ("assistant", "two"),
        ("user", "third"),
        ("assistant", "three"),
    ]
    assert json.loads(path.read_text().splitlines()[0])["cwd"] == str(project)


def test_usage_counts_as_tau_savings_records_the_file(project, tmp_path):
    """``usage()`` is what ``tau savings`` reports as the file's recorded figures: every assistant message of
    the branch one request, its tokens, and the cost it recorded (faux records 0: a price is put in)."""
    path = tmp_path / "counted.jsonl"
    tau.run("count", model=FAUX, session=path, faux_script=[{"bash": "echo one"}, {"text": "two"}])
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    for number, entry in enumerate(entries):
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant":
            entry["message"]["usage"]["cost"] = {"input": 0.5, "output": 0.25, "total": 0.75 + number}
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    usage = tau.run("again", session=path, faux_script=[{"text": "three"}]).usage
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["savings", "--json", str(path)]) == 0
    recorded = json.loads(out.getvalue())["recorded"]
    assert (usage.requests, usage.cost) == (3, pytest.approx(recorded["cost"]))
    assert recorded["cost"] > 1.5
    assert usage == tau.Usage(
        requests=recorded["requests"],
        input_tokens=recorded["uncachedInput"],
        cache_read_tokens=recorded["cacheRead"],
        cache_write_tokens=recorded["cacheWrite"],
        output_tokens=recorded["outputTokens"],
        cost=usage.cost,
    )


def test_bundled_extensions_are_active_by_default(project, tmp_path):
    first = {"action": "add", "baseRevision": 0, "title": "write the code"}
    second = {"action": "add", "baseRevision": 1, "title": "test it"}
    path = tmp_path / "todo.jsonl"
    result = tau.run(
        "plan the work",
        model=FAUX,
        session=path,
        faux_script=[{"tool": "todo", "args": first}, {"tool": "todo", "args": second}, {"text": "planned"}],
    )
    assert result.text == "planned"
    states = [
        entry["data"]
        for entry in map(json.loads, path.read_text().splitlines())
        if entry.get("customType") == "pi-todo:state"
    ]
    assert [[task["title"] for task in state["tasks"]] for state in states] == [
        ["write the code"],
        ["write the code", "test it"],
    ]


@in_loop
async def test_extensions_none_is_the_default(project):
    async with await tau.create_agent_session(model=FAUX, extensions=None) as session:
        assert {"todo", "obs_recall"} <= set(session.get_active_tool_names())


def test_no_extensions_means_no_bundled_tools(project):
    result = tau.run(
        "x",
        model=FAUX,
        extensions=False,
        faux_script=[{"tool": "todo", "args": {"action": "list"}}, {"text": "ok"}],
    )
    tool_result = next(m for m in result.messages if m["role"] == "toolResult")
    assert tool_result["isError"] is True
    assert "todo" in tool_result["content"][0]["text"]


@in_loop
async def test_an_extension_function_adds_a_tool(project):
    from tau.extension import ToolDefinition, ToolResult

    def extension(api):
        async def shout(tool_call_id, params, signal, on_update, ctx):
            return ToolResult.text(params["text"].upper())

        api.register_tool(
            ToolDefinition(
                name="shout",
                label="Shout",
                description="Upper-case a text.",
                parameters={
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                execute=shout,
            )
        )

    steps = [{"tool": "shout", "args": {"text": "quiet"}}, {"text": "done"}]
    async with await tau.create_agent_session(
        model=FAUX, extensions=[extension], faux_script=steps
    ) as session:
        assert "shout" in session.get_active_tool_names()
        assert "todo" in session.get_active_tool_names()  # a list adds to the defaults, as -e does
        await session.prompt("shout quiet")
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert result["content"][0]["text"] == "QUIET"


@in_loop
async def test_settings_and_tools_are_the_clis(project):
    async with await tau.create_agent_session(
        model=FAUX, tools=["read", "bash"], settings={"disabledExtensions": ["todo", "todo-loop"]}
    ) as session:
        assert session.get_active_tool_names() == ["read", "bash"]
        assert session.settings.get("disabledExtensions") == ["todo", "todo-loop"]
    async with await tau.create_agent_session(model=FAUX, tools=[], extensions=False) as bare:
        assert bare.get_active_tool_names() == []


@in_loop
async def test_settings_merge_over_the_users_and_are_never_saved(project, isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    user = isolated_agent_dir / "settings.json"
    user.write_text(json.dumps({"compaction": {"keepRecentTokens": 1234, "reserveTokens": 5000}}))
    before = user.read_bytes()
    given = {"compaction": {"reserveTokens": 6000, "enabled": False}}
    steps = [{"text": "ok"}]
    async with await tau.create_agent_session(model=FAUX, settings=given, faux_script=steps) as session:
        assert session.settings.get("compaction.keepRecentTokens") == 1234  # the user's, kept
        assert session.settings.get("compaction.reserveTokens") == 6000  # given, over the user's
        assert session.settings.get("compaction.enabled") is False
        await session.prompt("hi")
    assert user.read_bytes() == before


@in_loop
async def test_abort_from_another_task_ends_a_running_bash_call(project):
    marker = project / "finished"
    steps = [{"bash": f"sleep 600; touch {marker}"}, {"text": "never reached"}]
    async with await tau.create_agent_session(model=FAUX, faux_script=steps, extensions=False) as session:
        started = asyncio.Event()
        session.subscribe(lambda event: event["type"] == "tool_execution_start" and started.set())
        run = asyncio.create_task(session.prompt("sleep"))
        await asyncio.wait_for(started.wait(), 60)
        await asyncio.wait_for(session.abort(), 60)
        await asyncio.wait_for(run, 60)
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert "aborted" in result["content"][0]["text"].lower()
        assert session.messages[-1]["role"] == "toolResult" or session.messages[-1]["stopReason"] == "aborted"
    assert not marker.exists()


@in_loop
async def test_steer_and_follow_up_while_a_bash_call_runs(project):
    """Both calls queue during the run: the steer is answered after the tool call, the follow-up last."""
    release = project / "release"
    wait = f"for i in $(seq 1200); do [ -e {release} ] && break; sleep 0.1; done; echo released"
    steps = [{"bash": wait}, {"text": "after the steer"}, {"text": "after the follow-up"}]
    async with await tau.create_agent_session(model=FAUX, faux_script=steps, extensions=False) as session:
        started = asyncio.Event()
        session.subscribe(lambda event: event["type"] == "tool_execution_start" and started.set())
        run = asyncio.create_task(session.prompt("start"))
        await asyncio.wait_for(started.wait(), 60)
        await session.steer("steer here")
        await session.follow_up("then this")
        release.touch()
        await asyncio.wait_for(run, 120)
        said = [
            (
                m["role"],
                m["content"][0]["text"] if m["content"][0]["type"] == "text" else m["content"][0]["type"],
            )
            for m in session.messages
            if m["role"] != "system"
        ]
    assert said == [
        ("user", "start"),
        ("assistant", "toolCall"),
        ("toolResult", "released\n"),
        ("user", "steer here"),
        ("assistant", "after the steer"),
        ("user", "then this"),
        ("assistant", "after the follow-up"),
    ]


@in_loop
async def test_a_prompt_with_an_image_then_compact(project, tmp_path):
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    image = {"type": "image", "data": png, "mimeType": "image/png"}
    # the last turn is split by keepRecentTokens 1: a summary of the history, then one of the turn's prefix
    steps = [
        {"text": "a dot"},
        {"text": "more of it"},
        {"text": "## Goal\nlook at a dot"},
        {"text": "## prefix"},
    ]
    path = tmp_path / "compacted.jsonl"
    async with await tau.create_agent_session(
        model=FAUX,
        faux_script=steps,
        session=path,
        extensions=False,
        settings={"compaction": {"keepRecentTokens": 1}},
    ) as session:
        await session.prompt("what is this", images=[image])
        assert session.messages[-2]["content"] == [{"type": "text", "text": "what is this"}, image]
        await session.prompt("and now")
        result = await session.compact()
        assert result["summary"].startswith("## Goal\nlook at a dot")
        assert [m["role"] for m in session.messages if m["role"] != "system"] == [
            "compactionSummary",
            "assistant",
        ]
    context = _session_context(str(path))  # the file, read back: the summary in place of the history
    assert "look at a dot" in json.dumps(context) and "what is this" not in json.dumps(context)
    assert cli_main(["session", "check", str(path)]) == 0


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"thinking": "loud"}, ValueError, "thinking must be one of"),
        ({"tools": "read,bash"}, TypeError, "list of tool names"),
        ({"extensions": "ext.py"}, TypeError, "extensions must be"),
        ({"session": 3}, TypeError, "session must be"),
        ({"cwd": "/no/such/dir"}, ValueError, "is not a directory"),
        ({"model": "nosuch/model-x"}, ValueError, "nosuch"),
    ],
)
@in_loop
async def test_bad_options_are_named(project, options, error, message):
    with pytest.raises(error, match=message):
        await tau.create_agent_session(**{"model": FAUX, **options})


@in_loop
async def test_a_failing_extension_is_a_warning(project, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.warns(RuntimeWarning, match="boom"):
        session = await tau.create_agent_session(model=FAUX, extensions=[broken])
    assert any("boom" in warning for warning in session.warnings)
    await session.close()
    await session.close()  # closing twice is harmless


def test_cwd_is_the_sessions_and_the_tools(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = tau.run("where", cwd=elsewhere, model=FAUX, faux_script=[{"bash": "pwd"}, {"text": "ok"}])
    output = next(m for m in result.messages if m["role"] == "toolResult")["content"][0]["text"]
    assert Path(output.strip()) == elsewhere.resolve()


@in_loop
async def test_a_wrong_typed_setting_is_a_warning_and_left_out(project):
    with pytest.warns(RuntimeWarning, match="compaction.enabled must be"):
        session = await tau.create_agent_session(model=FAUX, settings={"compaction": {"enabled": "yes"}})
    assert session.settings.get("compaction.enabled") is True
    await session.close()
