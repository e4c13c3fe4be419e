"""RPC ``switch_session`` (pi 1.6 ``runtimeHost.switchSession``): resume another session file."""

from __future__ import annotations

import asyncio

from faux_ext import script as faux_ext_script
from rpc_client import RpcClient

seen_events: list[tuple] = []
CANCEL = {"on": False}


def switch_watcher(tau):
    def before(event, ctx):
        seen_events.append(("before", event.reason, event.target_session_file))
        return {"cancel": True} if CANCEL["on"] else None

    tau.on("session_before_switch", before)
    tau.on("session_shutdown", lambda e, c: seen_events.append(("shutdown", e.reason)))
    tau.on("session_start", lambda e, c: seen_events.append(("start", e.reason, e.previous_session_file)))


def scenario(test):
    def wrapper(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        seen_events.clear()
        CANCEL["on"] = False

        async def main():
            async with await RpcClient.start(script=faux_ext_script(), extensions=[switch_watcher]) as client:
                await test(client)

        asyncio.run(main())

    wrapper.__name__ = test.__name__
    return wrapper


async def prompt(client: RpcClient, text: str) -> None:
    start = len(client.records)
    client.send(id=f"p-{start}", type="prompt", message=text)
    await client.settled(start)


async def texts(client: RpcClient) -> list[str]:
    messages = (await client.request(type="get_messages"))["data"]["messages"]
    return [m["content"][0]["text"] for m in messages if m["role"] in ("user", "assistant")]


@scenario
async def test_switch_session_resumes_an_earlier_file(client):
    await prompt(client, "remember me")
    first = (await client.request(type="get_state"))["data"]["sessionFile"]
    await client.request(type="new_session")
    await prompt(client, "second session")
    second = (await client.request(type="get_state"))["data"]["sessionFile"]
    seen_events.clear()
    switched = await client.request(id="sw", type="switch_session", sessionPath=first)
    assert switched == {
        "id": "sw",
        "type": "response",
        "command": "switch_session",
        "success": True,
        "data": {"cancelled": False},
    }
    assert seen_events == [("before", "resume", first), ("shutdown", "resume"), ("start", "resume", second)]
    assert (await client.request(type="get_state"))["data"]["sessionFile"] == first
    assert await texts(client) == ["remember me", "echo: remember me"]
    await prompt(client, "and now")
    assert (await texts(client))[-2:] == ["and now", "echo: and now"]


@scenario
async def test_a_cancelled_switch_stays_in_the_current_session(client):
    await prompt(client, "remember me")
    first = (await client.request(type="get_state"))["data"]["sessionFile"]
    await client.request(type="new_session")
    await prompt(client, "second session")
    CANCEL["on"] = True
    switched = await client.request(type="switch_session", sessionPath=first)
    assert switched["data"] == {"cancelled": True}
    assert await texts(client) == ["second session", "echo: second session"]


@scenario
async def test_switching_to_a_file_that_is_not_a_session_is_an_error(client):
    state = (await client.request(type="get_state"))["data"]
    with open("not-a-session.jsonl", "w") as handle:
        handle.write('{"hello": 1}\n')
    switched = await client.request(type="switch_session", sessionPath="not-a-session.jsonl")
    assert switched["success"] is False and "not-a-session.jsonl" in switched["error"]
    assert (await client.request(type="get_state"))["data"]["sessionId"] == state["sessionId"]
