"""RPC ``prompt`` answers from the session's own disposition (pi ``preflightResult``), and user
bash results stored by the session (pi ``recordBashResult``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from faux_ext import script as faux_ext_script
from rpc_client import RpcClient

from waiting import Gate


def swallower(tau):
    tau.on("input", lambda event, ctx: {"action": "handled"} if event.text == "swallow" else None)


def scenario(test):
    def wrapper(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)

        async def main():
            async with await RpcClient.start(script=faux_ext_script(), extensions=[swallower]) as client:
                await test(client)

        asyncio.run(main())

    wrapper.__name__ = test.__name__
    return wrapper


@scenario
async def test_an_input_handler_that_swallows_a_prompt_during_a_run_is_answered_handled(client):
    gate = Gate(Path.cwd())
    first = f"bash: {gate.command('echo slow')}"
    client.send(id="p", type="prompt", message=first)
    await client.event("tool_execution_start")
    swallowed = await client.request(id="s", type="prompt", message="swallow", streamingBehavior="steer")
    queued = await client.request(id="q", type="prompt", message="later", streamingBehavior="followUp")
    assert swallowed["data"] == {"disposition": "handled"}
    assert queued["data"] == {"disposition": "queued"}
    gate.open()
    await client.wait_for(lambda r: r.get("type") == "agent_settled")
    users = [
        m["content"][0]["text"]
        for m in (await client.request(type="get_messages"))["data"]["messages"]
        if m["role"] == "user"
    ]
    assert users == [first, "later"]


@scenario
async def test_a_swallowed_prompt_when_idle_is_answered_handled_and_starts_nothing(client):
    start = len(client.records)
    answer = await client.request(id="s", type="prompt", message="swallow")
    assert answer["data"] == {"disposition": "handled"}
    await client.request(type="get_state")
    assert "agent_start" not in client.types(start)


@scenario
async def test_bash_during_a_run_is_stored_before_agent_settled(client):
    gate = Gate(Path.cwd())
    client.send(id="p", type="prompt", message=f"bash: {gate.command('echo slow')}")
    await client.event("tool_execution_start")
    await client.request(id="b", type="bash", command="echo side")
    assert client.runtime.session.has_pending_bash_messages
    gate.open()
    await client.settled()
    manager = client.runtime.session.session_manager
    roles = [e["message"]["role"] for e in manager.get_entries() if e["type"] == "message"]
    assert roles[-1] == "bashExecution" and roles.count("bashExecution") == 1
