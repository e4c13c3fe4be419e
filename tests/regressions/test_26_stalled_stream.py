"""Issue 26, item 6: a provider that stops sending ends as a retryable error after an idle timeout.

A provider that stalled mid-stream (the connection open, nothing on it) was waited on for good:
still waiting after 200 s. ``httpIdleTimeoutMs`` (pi's setting; default 300,000 ms, ``"disabled"`` or
0 for none) now bounds the wait for a response's headers and between two events of its stream; a stall
ends the request with ``Stream timed out: …`` (or ``Request timed out: …``), which the agent's
retry policy retries. Each adapter is driven through its real SDK against a loopback server.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from loopback import LoopbackServer, Reply, sse, sse_reply, user

from tau.agent.session import AgentSession
from tau.agent.settings import Settings
from tau.agent.settings_schema import check_settings
from tau.llm.providers import anthropic, openai_completions, openai_responses
from tau.llm.registry import ModelRegistry
from tau.llm.retry import is_retryable
from tau.llm.stream import StreamOptions
from tau.llm.types import Model
from tau.session import SessionManager

IDLE_MS = 3000  # short for the test, long enough that a loaded machine never trips it early
BOUND = 60.0
STALLED = "Stream timed out: the provider sent nothing for 3 s (httpIdleTimeoutMs)"
SILENT = "Request timed out: no response from the provider in 3 s (httpIdleTimeoutMs)"
CONTEXT = {"messages": [user("hi")]}


def _anthropic_pieces(text: str, *, complete: bool) -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    pieces = [
        sse(start, "message_start"),
        sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
        sse(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
            "content_block_delta",
        ),
    ]
    if complete:
        pieces += [
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 3},
                },
                "message_delta",
            ),
            sse({"type": "message_stop"}, "message_stop"),
        ]
    return pieces


def _responses_pieces(text: str, *, complete: bool) -> list[bytes]:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
    pieces = [
        sse(
            {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}
        ),
        sse({"type": "response.output_item.added", "output_index": 0, "item": item}),
        sse(
            {
                "type": "response.content_part.added",
                "output_index": 0,
                "content_index": 0,
                "item_id": "msg_1",
                "part": {"type": "output_text", "text": "", "annotations": []},
            }
        ),
        sse(
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "item_id": "msg_1",
                "delta": text,
            }
        ),
    ]
    if complete:
        done_item = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        pieces += [
            sse({"type": "response.output_item.done", "output_index": 0, "item": done_item}),
            sse(
                {
                    "type": "response.completed",
                    "response": {
                        "id": "resp_1",
                        "status": "completed",
                        "output": [done_item],
                        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
                    },
                }
            ),
        ]
    return pieces


def _completions_pieces(text: str, *, complete: bool) -> list[bytes]:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    pieces = [sse({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]})]
    if complete:
        pieces += [
            sse({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            b"data: [DONE]\n\n",
        ]
    return pieces


ADAPTERS = {
    "anthropic": (anthropic, "anthropic-messages", _anthropic_pieces, ""),
    "openai-responses": (openai_responses, "openai-responses", _responses_pieces, "/v1"),
    "openai-completions": (openai_completions, "openai-completions", _completions_pieces, "/v1"),
}


def _stream(name: str, reply: Reply, idle_ms: int = IDLE_MS) -> dict:
    module, api, _pieces, suffix = ADAPTERS[name]
    with LoopbackServer([reply]) as server:
        model = Model(id="m", provider="local", api=api, base_url=server.url + suffix)
        options = StreamOptions(api_key="sk-test", idle_timeout_ms=idle_ms)

        async def main() -> dict:
            stream = module.stream(model, CONTEXT, options)
            return await stream.result()

        return asyncio.run(asyncio.wait_for(main(), BOUND))


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_a_stream_that_stalls_mid_answer_ends_as_a_retryable_error(name):
    pieces = ADAPTERS[name][2]("Partial", complete=False)
    message = _stream(name, Reply(pieces=pieces, hang=True))
    assert (message["stopReason"], message["errorMessage"]) == ("error", STALLED)
    assert [block["text"] for block in message["content"]] == ["Partial"]  # what arrived is kept
    assert is_retryable(message)


@pytest.mark.parametrize("name", ["anthropic", "openai-completions"])
def test_a_server_that_never_answers_ends_as_a_retryable_error(name):
    message = _stream(name, Reply(stall=True))
    assert (message["stopReason"], message["errorMessage"]) == ("error", SILENT)
    assert is_retryable(message)


def _session(tmp_path: Path, server: LoopbackServer, api: str, suffix: str, settings: dict) -> AgentSession:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": server.url + suffix,
                        "api": api,
                        "apiKey": "sk-local",
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    registry = ModelRegistry(agent_dir, env={})
    manager = SessionManager.in_memory(tmp_path)
    return AgentSession(
        manager, Settings.in_memory(settings), registry, registry.resolve("local/m").model, cwd=tmp_path
    )


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_the_agent_retries_a_stalled_stream_and_gets_its_answer(tmp_path, name):
    _module, api, pieces, suffix = ADAPTERS[name]
    replies = [
        Reply(pieces=pieces("Partial", complete=False), hang=True),
        sse_reply(pieces("Whole", complete=True)),
    ]
    settings = {"httpIdleTimeoutMs": IDLE_MS, "retry": {"baseDelayMs": 10}, "compaction": {"enabled": False}}
    with LoopbackServer(replies) as server:
        session = _session(tmp_path, server, api, suffix, settings)
        events: list[dict] = []
        session.subscribe(events.append)
        asyncio.run(asyncio.wait_for(session.prompt("hi"), BOUND))
        requests = len(server.captured)
    retries = [event for event in events if event["type"] == "auto_retry_start"]
    assert requests == 2
    assert [(event["attempt"], event["errorMessage"]) for event in retries] == [(1, STALLED)]
    final = session.messages[-1]
    assert (final["stopReason"], final["content"][0]["text"]) == ("stop", "Whole")


def test_the_setting_is_read_and_disabled_means_no_limit(tmp_path):
    with LoopbackServer([]) as server:
        for value, expected in ((1234, 1234), ("disabled", 0), (0, 0), (None, 300_000)):
            settings = {} if value is None else {"httpIdleTimeoutMs": value}
            session = _session(tmp_path, server, "openai-completions", "/v1", settings)
            assert session.agent.stream_options.idle_timeout_ms == expected
    kept, problems = check_settings(
        {"httpIdleTimeoutMs": "soon"}, "settings.json", {"httpIdleTimeoutMs": 300_000}
    )
    assert problems == [
        'settings.json: httpIdleTimeoutMs must be a non-negative integer (milliseconds) or "disabled", '
        'got "soon"; using the default 300000'
    ]
    assert "httpIdleTimeoutMs" not in kept  # the bad value is dropped: the default applies
