"""The RPC command table against a real session (faux model), as a client sees it on stdout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from faux_ext import script as faux_ext_script
from rpc_client import RpcClient

from waiting import Gate


def scenario(test):
    """Run an ``async def test(client)`` against a fresh RPC session in ``tmp_path``."""

    def wrapper(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)

        async def main():
            async with await RpcClient.start(script=faux_ext_script()) as client:
                await test(client)

        asyncio.run(main())

    wrapper.__name__, wrapper.__doc__ = test.__name__, test.__doc__
    return wrapper


async def prompt(client: RpcClient, text: str) -> list[dict]:
    start = len(client.records)
    client.send(id=f"p-{start}", type="prompt", message=text)
    await client.settled(start)
    return client.records[start:]


@scenario
async def test_state_before_the_first_prompt(client):
    response = await client.request(id="s0", type="get_state")
    assert list(response) == ["id", "type", "command", "success", "data"]
    state = response["data"]
    assert list(state) == [
        "model",
        "thinkingLevel",
        "isStreaming",
        "isCompacting",
        "steeringMode",
        "followUpMode",
        "sessionFile",
        "sessionId",
        "autoCompactionEnabled",
        "messageCount",
        "pendingMessageCount",
    ]
    assert state["model"]["id"] == "faux-1" and state["model"]["provider"] == "faux"
    assert (state["thinkingLevel"], state["isStreaming"], state["messageCount"]) == ("off", False, 0)
    assert state["sessionFile"].endswith(f"_{state['sessionId']}.jsonl")


@scenario
async def test_prompt_is_answered_before_its_run_starts(client):
    records = await prompt(client, "hello")
    kinds = [r.get("command") or r["type"] for r in records]
    assert kinds[:3] == ["prompt", "agent_start", "turn_start"]
    assert records[0]["data"] == {"disposition": "started"}
    assert kinds[-1] == "agent_settled"
    text = await client.request(type="get_last_assistant_text")
    assert text["data"] == {"text": "echo: hello"}


@scenario
async def test_prompt_refused_without_model_answer(client):
    client.runtime.session.agent.state.model = None
    response = await client.request(id="p", type="prompt", message="hi")
    assert response["success"] is False and "No model selected" in response["error"]


@scenario
async def test_unknown_unsupported_and_typeless_commands(client):
    unknown = await client.request(id="u", type="no_such_command")
    assert unknown == {
        "id": "u",
        "type": "response",
        "command": "no_such_command",
        "success": False,
        "error": "Unknown command: no_such_command",
    }
    html = await client.request(id="h", type="export_html")  # issue 32: supported; nothing to export yet
    assert html["success"] is False and html["error"] == "Nothing to export yet - start a conversation first"
    client.send(id="t")
    typeless = await client.response("t")
    assert typeless == {
        "id": "t",
        "type": "response",
        "success": False,
        "error": "Unknown command: undefined",
    }


@scenario
async def test_lines_that_are_not_json_get_a_parse_error_without_id(client):
    client.send_line('{"id":"bad","type":"get_state"')
    client.send_line("")
    client.send(id="after", type="get_state")
    await client.response("after")
    errors = [r for r in client.records if r.get("command") == "parse"]
    assert len(errors) == 2
    for record in errors:
        assert list(record) == ["type", "command", "success", "error"]
        assert record["error"].startswith("Failed to parse command: ")


@scenario
async def test_commands_without_id_get_responses_without_id(client):
    client.send(type="get_available_thinking_levels")
    response = await client.event("response")
    assert response == {
        "type": "response",
        "command": "get_available_thinking_levels",
        "success": True,
        "data": {"levels": ["off"]},
    }


@scenario
async def test_session_name(client):
    empty = await client.request(type="set_session_name", name="   ")
    assert (empty["success"], empty["error"]) == (False, "Session name cannot be empty")
    named = await client.request(type="set_session_name", name="  my work \n")
    assert named["success"] is True and "data" not in named
    changed = await client.event("session_info_changed")
    assert changed == {"type": "session_info_changed", "name": "my work"}
    state = await client.request(type="get_state")
    assert state["data"]["sessionName"] == "my work"


@scenario
async def test_entries_since_a_cursor_and_the_tree(client):
    await prompt(client, "one")
    everything = (await client.request(type="get_entries"))["data"]
    entries = everything["entries"]
    assert everything["leafId"] == entries[-1]["id"]
    assert [e["type"] for e in entries[:2]] == ["model_change", "thinking_level_change"]
    later = await client.request(type="get_entries", since=entries[1]["id"])
    assert later["data"]["entries"] == entries[2:]
    missing = await client.request(type="get_entries", since="nope")
    assert (missing["success"], missing["error"]) == (False, "Entry not found: nope")
    tree = (await client.request(type="get_tree"))["data"]
    assert tree["leafId"] == entries[-1]["id"]
    assert tree["tree"][0]["entry"] == entries[0]


@scenario
async def test_fork_messages_fork_and_clone(client):
    await prompt(client, "first")
    await prompt(client, "second")
    forks = (await client.request(type="get_fork_messages"))["data"]["messages"]
    assert [m["text"] for m in forks] == ["first", "second"]
    before = (await client.request(type="get_state"))["data"]
    forked = await client.request(type="fork", entryId=forks[1]["entryId"])
    assert forked["data"] == {"text": "second", "cancelled": False}
    after = (await client.request(type="get_state"))["data"]
    assert after["sessionFile"] != before["sessionFile"]
    texts = [
        m["content"][0]["text"]
        for m in (await client.request(type="get_messages"))["data"]["messages"]
        if m["role"] == "user"
    ]
    assert texts == ["first"]
    bad = await client.request(type="fork", entryId="nope")
    assert bad["success"] is False
    cloned = await client.request(type="clone")
    assert cloned["data"] == {"cancelled": False}


@scenario
async def test_models_and_thinking_levels(client):
    models = (await client.request(type="get_available_models"))["data"]["models"]
    assert any(m["provider"] == "faux" and m["id"] == "faux-1" for m in models)
    chosen = await client.request(type="set_model", provider="faux", modelId="faux-1")
    assert chosen["data"]["id"] == "faux-1" and chosen["data"]["contextWindow"] == 128000
    missing = await client.request(type="set_model", provider="faux", modelId="nope")
    assert (missing["success"], missing["error"]) == (False, "Model not found: faux/nope")
    if [m["id"] for m in models] == ["faux-1"]:
        only = await client.request(type="cycle_model")
        assert only["success"] is True and only["data"] is None  # one model: nothing to cycle to
    cycled = await client.request(type="cycle_thinking_level")
    assert cycled["success"] is True and cycled["data"] is None
    level = await client.request(type="set_thinking_level", level="high")
    assert level["success"] is True and "data" not in level
    assert (await client.request(type="get_state"))["data"]["thinkingLevel"] == "off"  # clamped: no reasoning


@scenario
async def test_queue_modes_and_settings_switches(client):
    assert (await client.request(type="set_steering_mode", mode="all"))["success"] is True
    assert (await client.request(type="set_follow_up_mode", mode="all"))["success"] is True
    bad = await client.request(type="set_steering_mode", mode="sometimes")
    assert bad["success"] is False and "'mode'" in bad["error"]
    assert (await client.request(type="set_auto_compaction", enabled=False))["success"] is True
    assert (await client.request(type="set_auto_retry", enabled=False))["success"] is True
    assert (await client.request(type="abort_retry"))["success"] is True
    state = (await client.request(type="get_state"))["data"]
    assert (state["steeringMode"], state["followUpMode"], state["autoCompactionEnabled"]) == (
        "all",
        "all",
        False,
    )


@scenario
async def test_compact_with_nothing_to_compact_fails_with_the_reason(client):
    response = await client.request(type="compact")
    assert response["success"] is False and "compact" in response["error"].lower()


@scenario
async def test_new_session(client):
    await prompt(client, "hello")
    before = (await client.request(type="get_state"))["data"]
    response = await client.request(type="new_session")
    assert response["data"] == {"cancelled": False}
    after = (await client.request(type="get_state"))["data"]
    assert after["sessionId"] != before["sessionId"] and after["messageCount"] == 0


@scenario
async def test_session_stats_count_the_whole_file(client):
    await prompt(client, "bash: echo stats")
    stats = (await client.request(type="get_session_stats"))["data"]
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"]) == (
        1,
        2,
        1,
        1,
    )
    assert stats["totalMessages"] == 5  # the system message is a message entry too
    tokens = stats["tokens"]
    assert (
        tokens["total"] == tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"] > 0
    )
    assert stats["contextUsage"]["contextWindow"] == 128000


@scenario
async def test_steer_follow_up_and_clear_queue_while_a_tool_runs(client):
    gate = Gate(Path.cwd())
    first = f"bash: {gate.command('echo done')}"
    client.send(id="p", type="prompt", message=first)
    await client.event("tool_execution_start")
    steered = await client.request(id="st", type="steer", message="steer me")
    assert steered["data"] == {"disposition": "queued"}
    queued = await client.request(id="fu", type="prompt", message="later", streamingBehavior="followUp")
    assert queued["data"] == {"disposition": "queued"}
    cleared = await client.request(id="c", type="clear_queue")
    assert cleared["data"] == {"steering": ["steer me"], "followUp": ["later"]}
    gate.open()
    await client.settled()
    users = [m for m in client.runtime.session.messages if m["role"] == "user"]
    assert [u["content"][0]["text"] for u in users] == [first]


@scenario
async def test_abort_ends_the_run_and_answers_once_idle(client):
    client.send(id="p", type="prompt", message="bash: sleep 60")
    await client.event("tool_execution_start")
    response = await client.request(id="a", type="abort")
    assert response == {"id": "a", "type": "response", "command": "abort", "success": True}
    settled = await client.event("agent_settled")
    assert settled == {"type": "agent_settled", "aborted": True}
    assert client.records.index(settled) < client.records.index(response)


@scenario
async def test_bash_streams_output_and_records_it(client):
    response = await client.request(
        id="b1", type="bash", command="printf 'one\\n'; printf 'two\\033[31m red\\033[0m\\n'"
    )
    assert response["data"] == {
        "output": "one\ntwo red\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
    }
    updates = [r for r in client.records if r["type"] == "bash_execution_update"]
    assert updates and all(r["id"] == "b1" for r in updates)
    assert "".join(r["delta"] for r in updates) == "one\ntwo red\n"
    messages = (await client.request(type="get_messages"))["data"]["messages"]
    assert messages[-1]["role"] == "bashExecution" and messages[-1]["command"].startswith("printf")
    failed = await client.request(type="bash", command="exit 3", excludeFromContext=True)
    assert failed["data"]["exitCode"] == 3
    entries = (await client.request(type="get_entries"))["data"]["entries"]
    assert entries[-1]["message"]["excludeFromContext"] is True


@scenario
async def test_abort_bash_cancels_the_command(client):
    client.send(id="b", type="bash", command="echo started; sleep 60")
    await client.event("bash_execution_update")  # the command runs: the abort has something to cancel
    assert (await client.request(type="abort_bash"))["success"] is True
    result = (await client.response("b"))["data"]
    assert result["cancelled"] is True and "exitCode" not in result


@scenario
async def test_end_of_input_shuts_down_with_exit_code_zero(client):
    client.send(id="p", type="prompt", message="bash: sleep 60")
    await client.event("tool_execution_start")
    assert await client.close() == 0
    after = len(client.records)
    await asyncio.sleep(0.1)
    assert len(client.records) == after  # nothing is written after shutdown


def test_get_messages_is_json_serializable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def main():
        async with await RpcClient.start(script=faux_ext_script()) as client:
            await prompt(client, "bash: echo hi")
            messages = (await client.request(type="get_messages"))["data"]["messages"]
            return messages, client.out.raw

    messages, raw = asyncio.run(main())
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert all(json.loads(line) for line in bytes(raw).split(b"\n") if line)


@pytest.mark.parametrize("field", ["message"])
def test_prompt_without_message_is_an_error(tmp_path, monkeypatch, field):
    monkeypatch.chdir(tmp_path)

    async def main():
        async with await RpcClient.start(script=faux_ext_script()) as client:
            return await client.request(id="p", type="prompt")

    response = asyncio.run(main())
    assert response["success"] is False and repr(field) in response["error"]


@scenario
async def test_long_bash_output_keeps_its_tail_and_the_whole_in_a_file(client):
    result = (await client.request(id="b", type="bash", command="seq 1 30000"))["data"]
    assert result["truncated"] is True and result["exitCode"] == 0
    assert result["output"].endswith("29999\n30000") and not result["output"].startswith("1\n")
    with open(result["fullOutputPath"]) as full:
        assert full.read() == "".join(f"{n}\n" for n in range(1, 30001))


@scenario
async def test_bash_during_a_run_is_stored_after_the_run(client):
    gate = Gate(Path.cwd())
    client.send(id="p", type="prompt", message=f"bash: {gate.command('echo slow')}")
    await client.event("tool_execution_start")
    done = await client.request(id="b", type="bash", command="echo side")
    assert done["data"]["output"] == "side\n"
    gate.open()
    await client.settled()
    roles = [m["role"] for m in (await client.request(type="get_messages"))["data"]["messages"]]
    assert roles[-4:] == ["assistant", "toolResult", "assistant", "bashExecution"]


@scenario
async def test_switch_session_resumes_a_file_or_says_it_cannot(client):
    await prompt(client, "remember me")
    first = (await client.request(type="get_state"))["data"]["sessionFile"]
    await client.request(type="new_session")
    switched = await client.request(id="sw", type="switch_session", sessionPath=first)
    if not hasattr(client.runtime.session, "switch_session"):
        assert switched["error"] == "not supported by tau: switch_session"
        return
    assert switched["data"] == {"cancelled": False}
    state = (await client.request(type="get_state"))["data"]
    assert state["sessionFile"] == first and state["messageCount"] > 0
