"""Issue 25, item 4: the fixed overhead the default profile adds to every request, measured as the
faux provider bills it (UTF-16 code units / 4 of the request as received: system prompt, tool
declarations, messages). It was about 1,210 tokens (todo 654, then_run 229 on edit and write,
obs_recall 134, todo_loop_block 75, prompt lines 118); the declarations now say what a model needs."""

from __future__ import annotations

import asyncio

import tau
from tau.common import jsjson
from tau.llm.providers._faux_request import render_prompt


def first_request_tokens(**options) -> tuple[int, dict[str, int]]:
    captured: list[dict] = []

    async def run() -> None:
        async with await tau.create_agent_session(model="faux/faux-1", faux_script=[{"text": "ok"}], **options) as session:
            await session.prompt("hi")
            captured.extend(session.model_registry.faux.requests)  # what the session's faux was asked

    asyncio.run(run())
    messages = captured[0]["messages"]
    total = sum(len(part.encode("utf-16-le")) // 2 for part in render_prompt(messages)) // 4
    tools = {
        tool["name"]: len(jsjson.dumps_str(tool).encode("utf-16-le")) // 8
        for message in messages
        if message.get("role") == "system"
        for tool in message.get("toolsAdded") or []
    }
    return total, tools


def test_the_default_profile_adds_at_most_750_tokens_to_each_request(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bare, bare_tools = first_request_tokens(no_extensions=True)
    default, tools = first_request_tokens()
    assert default - bare <= 750  # 705 when written; 1,210 before
    assert tools["todo"] <= 400 and tools["obs_recall"] <= 100 and tools["todo_loop_block"] <= 70
    assert tools["edit"] - bare_tools["edit"] <= 65 and tools["write"] - bare_tools["write"] <= 65
