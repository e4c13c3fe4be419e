"""The Chat Completions adapter through the real ``openai`` SDK against a loopback SSE server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from loopback import (
    BASH_TOOL,
    READ_TOOL,
    LoopbackServer,
    Reply,
    event_types,
    json_reply,
    run_stream,
    sse,
    system,
    user,
)

from tau.llm.overflow import is_context_overflow
from tau.llm.providers import openai_completions as provider
from tau.llm.registry import ModelRegistry
from tau.llm.retry import is_retryable
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.types import Model, ModelCost

# Imported up front: the SDK takes seconds to import, which must not count against a test's timeout.
pytest.importorskip("openai")


def model(server, **overrides):
    fields = dict(
        id="fake-1",
        provider="fakeai",
        api="openai-completions",
        base_url=f"{server.url}/v1",
        max_tokens=4096,
        cost=ModelCost(input=1, output=2, cacheRead=0.1),
    )
    fields.update(overrides)
    return Model(**fields)


def opts(**kw):
    return StreamOptions(api_key="sk-test", **kw)


def chunk(delta=None, finish=None, usage=None, choices=True):
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake-1"}
    body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else []
    if usage is not None:
        body["usage"] = usage
    return sse(body)


USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 8,
    "total_tokens": 128,
    "prompt_tokens_details": {"cached_tokens": 100},
}


def text_reply(*pieces, finish="stop"):
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in pieces]
    events += [chunk(finish=finish), chunk(usage=USAGE, choices=False), b"data: [DONE]\n\n"]
    return Reply(pieces=events)


CONTEXT = {"messages": [system("Be brief.", [BASH_TOOL]), user("hi")]}


# -- the requests pi 1.6 sent ---------------------------------------------------------------------


def _fixture_requests(pi_fixtures):
    lines = (pi_fixtures / "requests" / "openai-completions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _pi_context(body):
    """The transcript pi had when it sent ``body``: rebuilt from the request itself."""
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "parameters": t["function"]["parameters"],
        }
        for t in body["tools"]
    ]
    messages = [system(body["messages"][0]["content"], tools)]
    for index, message in enumerate(body["messages"][1:], start=1):
        role = message["role"]
        if role == "user":
            messages.append({"role": "user", "content": message["content"], "timestamp": index})
        elif role == "assistant":
            content = []
            if message.get("content"):
                content.append({"type": "text", "text": message["content"]})
            for call in message.get("tool_calls") or []:
                arguments = json.loads(call["function"]["arguments"])
                content.append(
                    {
                        "type": "toolCall",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "arguments": arguments,
                    }
                )
            messages.append(
                {
                    "role": "assistant",
                    "content": content,
                    "api": "openai-completions",
                    "provider": "fakeai",
                    "model": "fake-1",
                    "usage": {},
                    "stopReason": "toolUse" if message.get("tool_calls") else "stop",
                    "timestamp": index,
                }
            )
        elif role == "tool":
            name = next(
                call["function"]["name"]
                for m in body["messages"]
                for call in m.get("tool_calls") or []
                if call["id"] == message["tool_call_id"]
            )
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": message["tool_call_id"],
                    "toolName": name,
                    "content": [{"type": "text", "text": message["content"]}],
                    "isError": False,
                    "timestamp": index,
                }
            )
    return {"messages": messages}


def test_requests_equal_what_pi_sent(pi_fixtures):
    recorded = _fixture_requests(pi_fixtures)
    with LoopbackServer([text_reply("ok") for _ in recorded]) as server:
        for entry in recorded:
            _, message = run_stream(provider.stream, model(server), _pi_context(entry["body"]), opts())
            assert message["stopReason"] == "stop", message.get("errorMessage")
    assert [request.path for request in server.captured] == [entry["path"] for entry in recorded]
    for request, entry in zip(server.captured, recorded, strict=True):
        assert request.body == entry["body"]
        # Tool-call arguments are JSON text exactly as JSON.stringify writes it.
        sent = [
            c["function"]["arguments"] for m in request.body["messages"] for c in m.get("tool_calls") or []
        ]
        expected = [
            c["function"]["arguments"] for m in entry["body"]["messages"] for c in m.get("tool_calls") or []
        ]
        assert sent == expected


# -- streaming --------------------------------------------------------------------------------------


def test_streamed_text_and_usage_with_cached_tokens():
    with LoopbackServer([text_reply("Hel", "lo")]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert event_types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert (message["stopReason"], message["responseId"]) == ("stop", "chatcmpl-1")
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (20, 8, 100, 0)
    assert usage["totalTokens"] == 128
    assert usage["cost"]["total"] == pytest.approx((20 * 1 + 8 * 2 + 100 * 0.1) / 1e6)
    request = server.captured[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"


def tool_reply():
    return Reply(
        pieces=[
            chunk(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "bash", "arguments": ""},
                        }
                    ],
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"command":'}}]}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
                        }
                    ]
                }
            ),
            # A late piece for the first call, after the second one started.
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "ls"}'}}]}),
            chunk(finish="tool_calls"),
            chunk(usage=USAGE, choices=False),
            b"data: [DONE]\n\n",
        ]
    )


def test_several_tool_calls_accumulate_by_index():
    with LoopbackServer([tool_reply()]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        {"type": "toolCall", "id": "call_a", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "b.txt"}},
    ]
    assert event_types(events).count("toolcall_end") == 2


def test_reasoning_fields_become_thinking_and_replay_in_the_same_field():
    reply = Reply(
        pieces=[
            chunk({"role": "assistant", "reasoning_content": "Think"}),
            chunk({"reasoning_content": "ing."}),
            chunk({"content": "Answer"}),
            chunk(finish="stop"),
            b"data: [DONE]\n\n",
        ]
    )
    with LoopbackServer([reply, text_reply("ok")]) as server:
        m = model(server, reasoning=True)
        _, message = run_stream(provider.stream, m, CONTEXT, opts(reasoning="high"))
        assert message["content"] == [
            {"type": "thinking", "thinking": "Thinking.", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "Answer"},
        ]
        run_stream(provider.stream, m, {"messages": [*CONTEXT["messages"], message, user("more", 9)]}, opts())
    assert server.captured[0].body["reasoning_effort"] == "high"
    assert server.captured[1].body["messages"][2] == {
        "role": "assistant",
        "content": "Answer",
        "reasoning_content": "Thinking.",
    }


def test_images_in_user_messages_and_tool_results():
    png = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.png"}}],
        "api": "openai-completions",
        "provider": "fakeai",
        "model": "fake-1",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [png],
        "isError": False,
        "timestamp": 3,
    }
    ctx = {
        "messages": [
            system("S", [READ_TOOL]),
            {"role": "user", "content": [{"type": "text", "text": "look"}, png], "timestamp": 1},
            call,
            result,
        ]
    }
    with LoopbackServer([text_reply("seen")]) as server:
        _, message = run_stream(provider.stream, model(server, input=("text", "image")), ctx, opts())
    assert message["stopReason"] == "stop"
    params = server.captured[0].body  # what the SDK sent
    url = {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}
    assert params["messages"][1:] == [
        {"role": "user", "content": [{"type": "text", "text": "look"}, url]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.png"}'},
                }
            ],
        },
        {"role": "tool", "content": "(see attached image)", "tool_call_id": "c1"},
        {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, url]},
    ]


def test_merge_user_messages_compat():
    custom = {"role": "user", "content": [{"type": "text", "text": "[todo snapshot]"}], "timestamp": 3}
    ctx = {"messages": [system("S"), user("one"), {"role": "user", "content": "two", "timestamp": 2}, custom]}
    merged = provider.build_params(
        Model(id="m", provider="p", api="openai-completions", compat={"mergeUserMessages": True}), ctx, opts()
    )
    assert merged["messages"] == [
        {"role": "system", "content": "S"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {"type": "text", "text": "[todo snapshot]"},
            ],
        },
    ]
    plain = provider.build_params(Model(id="m", provider="p", api="openai-completions"), ctx, opts())
    assert [m["role"] for m in plain["messages"]] == ["system", "user", "user", "user"]


def test_orphaned_tool_call_and_error_assistant_in_request():
    broken = {
        "role": "assistant",
        "content": [{"type": "text", "text": "half"}],
        "api": "openai-completions",
        "provider": "fakeai",
        "model": "fake-1",
        "usage": {},
        "stopReason": "error",
        "timestamp": 2,
    }
    call = {
        **broken,
        "content": [{"type": "toolCall", "id": "c9", "name": "bash", "arguments": {}}],
        "stopReason": "toolUse",
    }
    ctx = {"messages": [system("S"), user("a"), broken, call, user("b", 5)]}
    params = provider.build_params(
        Model(id="fake-1", provider="fakeai", api="openai-completions"), ctx, opts()
    )
    assert params["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "content": "No result provided", "tool_call_id": "c9"},
        {"role": "user", "content": [{"type": "text", "text": "b"}]},
    ]


# -- failures -----------------------------------------------------------------------------------------


def test_http_429_with_retry_after_surfaces_at_once():
    body = {
        "error": {
            "message": "Rate limit reached",
            "type": "rate_limit_error",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    with LoopbackServer([json_reply(429, body, {"retry-after": "120"})]) as server:
        started = time.monotonic()
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert time.monotonic() - started < 30
    assert event_types(events) == ["error"]
    assert (
        message["errorMessage"]
        == '429: {"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}'
    )
    assert len(server.captured) == 1


def test_http_500_without_json():
    with LoopbackServer(
        [Reply(status=500, pieces=[b"Internal Server Error"], headers={"content-type": "text/plain"})]
    ) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["errorMessage"]) == ("error", "500 Internal Server Error")


def test_error_object_inside_the_stream():
    reply = Reply(
        pieces=[
            chunk({"content": "a"}),
            sse({"error": {"message": "Upstream overloaded", "type": "server_error"}}),
        ]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["errorMessage"]) == ("error", "Upstream overloaded")
    assert message["content"] == [{"type": "text", "text": "a"}]


def test_stream_cut_mid_event():
    reply = Reply(pieces=[chunk({"content": "Hi"}), b'data: {"id":"chatcmpl-1","choi'], cut=True)
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["content"] == [{"type": "text", "text": "Hi"}]
    assert is_retryable(message)  # the agent retries a dropped stream


def test_stream_without_finish_reason():
    with LoopbackServer([Reply(pieces=[chunk({"content": "Hi"}), b"data: [DONE]\n\n"])]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["errorMessage"] == "Stream ended without finish_reason"


def test_malformed_sse_event():
    with LoopbackServer([Reply(pieces=[chunk({"content": "Hi"}), b"data: {oops\n\n"])]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Could not parse")


def test_context_overflow_error_text():
    body = {
        "error": {
            "message": "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "type": "invalid_request_error",
        }
    }
    with LoopbackServer([json_reply(400, body)]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["errorMessage"].startswith("400: ")
    assert is_context_overflow(message, 131072)


def test_content_filter_finish_reason_is_an_error():
    with LoopbackServer([text_reply("x", finish="content_filter")]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["errorMessage"]) == (
        "error",
        "Provider finish_reason: content_filter",
    )


def test_abort_mid_stream():
    reply = Reply(pieces=[chunk({"content": "Partial"})], hang=True)

    async def main(server):
        signal = AbortSignal()
        stream = provider.stream(model(server), CONTEXT, opts(signal=signal))
        async for event in stream:
            if event["type"] == "text_delta":
                signal.abort()
        return await stream.result()

    with LoopbackServer([reply]) as server:
        started = time.monotonic()
        message = asyncio.run(asyncio.wait_for(main(server), 60))
    assert time.monotonic() - started < 30
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "Request was aborted")
    assert message["content"] == [{"type": "text", "text": "Partial"}]


def test_keyless_server_gets_no_authorization_and_openai_needs_a_key():
    with LoopbackServer([text_reply("ok")]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, StreamOptions())
        _, refused = run_stream(provider.stream, model(server, provider="openai"), CONTEXT, StreamOptions())
    assert message["stopReason"] == "stop"
    assert "authorization" not in server.captured[0].headers
    assert refused["errorMessage"] == "No API key for provider: openai"
    assert len(server.captured) == 1


def test_authorization_header_from_models_json_wins():
    with LoopbackServer([text_reply("ok")]) as server:
        run_stream(
            provider.stream,
            model(server, headers={"Authorization": "Bearer from-header"}),
            CONTEXT,
            StreamOptions(),
        )
    assert server.captured[0].headers["authorization"] == "Bearer from-header"


def test_models_json_server_through_the_registry(isolated_agent_dir):
    with LoopbackServer([text_reply("via registry")]) as server:
        isolated_agent_dir.mkdir(parents=True, exist_ok=True)
        config = {
            "providers": {
                "fakeai": {
                    "baseUrl": f"{server.url}/v1",
                    "api": "openai-completions",
                    "apiKey": "from-models-json",
                    "compat": {"mergeUserMessages": True},
                    "models": [{"id": "fake-1", "name": "Fake", "maxTokens": 4096}],
                }
            }
        }
        (isolated_agent_dir / "models.json").write_text(json.dumps(config))
        registry = ModelRegistry(isolated_agent_dir)
        found = registry.find("fakeai", "fake-1")
        assert found is not None, registry.error
        context = {"systemPrompt": "S", "messages": [user("a"), user("b", 2)]}

        async def main():
            return await registry.stream(found, context, StreamOptions()).result()

        message = asyncio.run(asyncio.wait_for(main(), 60))
    assert message["content"] == [{"type": "text", "text": "via registry"}]
    request = server.captured[0]
    assert request.headers["authorization"] == "Bearer from-models-json"
    assert request.body["max_completion_tokens"] == 4096
    assert request.body["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]


def test_connection_refused_is_a_retryable_connection_error():
    with LoopbackServer([]) as server:
        dead = model(server)
    _, message = run_stream(provider.stream, dead, CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Connection error.")
    assert is_retryable(message)


# -- issue 22, item 7: parallel calls that share an index ------------------------------------------


def _call(call_id, name, arguments, index=0):
    piece = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        piece = {
            "id": call_id,
            "index": index,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    return piece


def _ollama_chunk(delta, finish=None):
    """Ollama's shape (ollama/ollama#15457): one chunk per call, whole arguments, ``index`` always 0."""
    body = {
        "id": "chatcmpl-426",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "qwen2.5-coder:7b",
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return sse(body)


def test_ollama_parallel_calls_with_one_index_stay_separate_calls():
    write_a = '{"filePath":"hello.py","content":"print(\\"hello\\")"}'
    write_b = '{"filePath":"world.py","content":"print(\\"world\\")"}'
    reply = Reply(
        pieces=[
            _ollama_chunk(
                {"role": "assistant", "content": "", "tool_calls": [_call("call_f1", "write", write_a)]}
            ),
            _ollama_chunk(
                {"role": "assistant", "content": "", "tool_calls": [_call("call_f2", "write", write_b)]}
            ),
            _ollama_chunk({"role": "assistant", "content": ""}, finish="tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )
    with LoopbackServer([reply]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        {"type": "toolCall", "id": "call_f1", "name": "write", "arguments": json.loads(write_a)},
        {"type": "toolCall", "id": "call_f2", "name": "write", "arguments": json.loads(write_b)},
    ]
    assert event_types(events).count("toolcall_start") == event_types(events).count("toolcall_end") == 2


def test_vllm_fragments_after_a_reused_index_continue_the_newest_call():
    """vLLM's shape: id and name first, then id-less argument fragments, a newline between the calls."""
    reply = Reply(
        pieces=[
            chunk(
                {"role": "assistant", "content": None, "tool_calls": [_call("chatcmpl-tool-1", "bash", "")]}
            ),
            chunk({"tool_calls": [_call(None, None, '{"command": ')]}),
            chunk({"tool_calls": [_call(None, None, '"ls"}')]}),
            chunk({"content": "\n"}),
            chunk({"tool_calls": [_call("chatcmpl-tool-2", "read", "")]}),
            chunk({"tool_calls": [_call(None, None, '{"path": "b.txt"}')]}),
            chunk(finish="tool_calls"),
            chunk(usage=USAGE, choices=False),
            b"data: [DONE]\n\n",
        ]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    calls = [block for block in message["content"] if block["type"] == "toolCall"]
    assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [
        ("chatcmpl-tool-1", "bash", {"command": "ls"}),
        ("chatcmpl-tool-2", "read", {"path": "b.txt"}),
    ]
    assert "argumentsError" not in calls[0] and "argumentsError" not in calls[1]


def test_a_server_repeating_the_same_id_on_every_fragment_is_one_call():
    reply = Reply(
        pieces=[
            chunk({"role": "assistant", "tool_calls": [_call("call_x", "bash", '{"command":')]}),
            chunk({"tool_calls": [_call("call_x", "bash", ' "ls"}')]}),
            chunk(finish="tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    # The name is repeated too: it is kept once, as the first fragment gave it.
    assert message["content"] == [
        {"type": "toolCall", "id": "call_x", "name": "bash", "arguments": {"command": "ls"}}
    ]


@pytest.mark.parametrize("ending", [b"", b"\n"])
def test_a_last_chunk_without_its_blank_line_is_delivered(ending):
    """Issue 22, item 9: a server that ends with the finish chunk (no ``[DONE]``) and no blank line
    after it. The SDK's decoder dropped it ("Stream ended without finish_reason"); pi flushes it."""
    last = chunk(finish="stop").rstrip(b"\n") + ending
    reply = Reply(pieces=[chunk({"role": "assistant", "content": "hello"}), last])
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["content"]) == ("stop", [{"type": "text", "text": "hello"}])


# -- issue 34: OpenRouter ---------------------------------------------------------------------------


def openrouter(server, model_id="anthropic/claude-sonnet-4.6", **overrides):
    return model(server, id=model_id, provider="openrouter", **overrides)


def _tool_turn():
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
        "api": "openai-completions",
        "provider": "openrouter",
        "model": "anthropic/claude-sonnet-4.6",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a.txt"}],
        "isError": False,
        "timestamp": 3,
    }
    return {"messages": [system("Be brief.", [READ_TOOL, BASH_TOOL]), user("hi"), call, result]}


def test_openrouter_claude_gets_anthropic_cache_markers_where_pi_puts_them():
    """Issue 34, item 1: the system prompt, the last tool and the last message carry cache_control."""
    with LoopbackServer([text_reply("ok"), text_reply("ok")]) as server:
        run_stream(provider.stream, openrouter(server), _tool_turn(), opts(session_id="s-1"))
        run_stream(provider.stream, openrouter(server), _tool_turn(), opts(cache_retention="long"))
    short, long = (request.body for request in server.captured)
    marker = {"type": "ephemeral"}
    assert short["messages"][0] == {
        "role": "system",
        "content": [{"type": "text", "text": "Be brief.", "cache_control": marker}],
    }
    assert [tool.get("cache_control") for tool in short["tools"]] == [None, marker]
    assert short["messages"][1] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert short["messages"][-1] == {
        "role": "tool",
        "content": [{"type": "text", "text": "a.txt", "cache_control": marker}],
        "tool_call_id": "c1",
    }
    assert server.captured[0].headers["x-session-id"] == "s-1"
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert long["messages"][0]["content"][0]["cache_control"] == hour
    assert long["tools"][-1]["cache_control"] == hour
    assert long["messages"][-1]["content"][0]["cache_control"] == hour


def test_cache_markers_only_for_claude_on_openrouter_or_when_compat_asks():
    ctx = {"messages": [system("S", [BASH_TOOL]), user("hi")]}

    def marked(m, **kw):
        body = json.dumps(provider.build_params(m, ctx, opts(**kw)))
        return body.count("cache_control")

    bare = Model(id="anthropic/claude-sonnet-4.6", provider="openrouter", api="openai-completions")
    assert marked(bare) == 3
    assert marked(bare, cache_retention="none") == 0
    assert marked(Model(id="openai/gpt-5", provider="openrouter", api="openai-completions")) == 0
    assert marked(Model(id="anthropic/claude-sonnet-4.6", provider="proxy", api="openai-completions")) == 0
    asked = {"cacheControlFormat": "anthropic"}
    assert marked(Model(id="claude", provider="proxy", api="openai-completions", compat=asked)) == 3
    # A user message of images only carries no marker: the one before it does.
    image = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    ctx["messages"].append({"role": "user", "content": [image], "timestamp": 2})
    seeing = Model(id=bare.id, provider="openrouter", api="openai-completions", input=("text", "image"))
    params = provider.build_params(seeing, ctx, opts())
    assert params["messages"][1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(params["messages"][2])


def or_chunk(delta=None, finish=None, usage=None, choices=True):
    """OpenRouter's chunk shape: a generation id, the upstream provider, ``native_finish_reason``."""
    body = {
        "id": "gen-1771534553-abc",
        "provider": "Anthropic",
        "model": "anthropic/claude-sonnet-4.6",
        "object": "chat.completion.chunk",
        "created": 1771534555,
    }
    if choices:
        body["choices"] = [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": "", **(delta or {})},
                "finish_reason": finish,
                "native_finish_reason": finish,
                "logprobs": None,
            }
        ]
    else:
        body["choices"] = []
    if usage is not None:
        body["usage"] = usage
    return sse(body)


def _thought(text, signature=None):
    detail = {"type": "reasoning.text", "text": text, "format": "anthropic-claude-v1", "index": 0}
    if signature is not None:
        detail["signature"] = signature
    return {"reasoning": text or None, "reasoning_details": [detail]}


OR_USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 64,
    "total_tokens": 1264,
    "cost": 0.00123,
    "is_byok": False,
    "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 100},
    "cost_details": {"upstream_inference_cost": None},
    "completion_tokens_details": {"reasoning_tokens": 20},
}


def openrouter_reasoning_reply():
    """Claude through OpenRouter: readable reasoning deltas, their details, the signature last,
    then text and two tool calls."""
    return Reply(
        pieces=[
            or_chunk(_thought("The user wants")),
            or_chunk(_thought(" the files.")),
            or_chunk(_thought("", signature="EqQBCkYIBxgCKkB")),
            or_chunk({"content": "Listing."}),
            or_chunk({"tool_calls": [_call("toolu_1", "bash", "")]}),
            or_chunk({"tool_calls": [_call(None, None, '{"command":"ls"}')]}),
            or_chunk({"tool_calls": [_call("toolu_2", "read", "", index=1)]}),
            or_chunk({"tool_calls": [_call(None, None, '{"path":"a"}', index=1)]}),
            or_chunk(finish="tool_calls"),
            or_chunk(finish="tool_calls", usage=OR_USAGE),
            b"data: [DONE]\n\n",
        ]
    )


def _results(message, *outputs):
    calls = [block for block in message["content"] if block["type"] == "toolCall"]
    return [
        {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": output}],
            "isError": False,
            "timestamp": 5 + number,
        }
        for number, (call, output) in enumerate(zip(calls, outputs, strict=True))
    ]


MERGED_DETAILS = [
    {
        "type": "reasoning.text",
        "text": "The user wants the files.",
        "format": "anthropic-claude-v1",
        "index": 0,
        "signature": "EqQBCkYIBxgCKkB",
    }
]


def test_openrouter_reasoning_details_are_kept_and_sent_back_as_pi_sends_them():
    """Issue 34, item 2: the details become the thinking block's signature (JSON, text deltas merged)
    and go back as the assistant message's reasoning_details, with no raw reasoning field."""
    ctx = {"messages": [system("S", [BASH_TOOL, READ_TOOL]), user("list")]}
    m = None
    with LoopbackServer([openrouter_reasoning_reply(), text_reply("done")]) as server:
        m = openrouter(server, reasoning=True)
        _, message = run_stream(provider.stream, m, ctx, opts(reasoning="high"))
        assert message["content"][0] == {
            "type": "thinking",
            "thinking": "The user wants the files.",
            "thinkingSignature": json.dumps(MERGED_DETAILS, separators=(",", ":")),
        }
        follow = {"messages": [*ctx["messages"], message, *_results(message, "a.txt", "A")]}
        run_stream(provider.stream, m, follow, opts(reasoning="high"))
    assert server.captured[0].body["reasoning"] == {"effort": "high"}
    assert server.captured[1].body["messages"][2] == {
        "role": "assistant",
        "content": "Listing.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command":"ls"}'},
            },
            {"id": "toolu_2", "type": "function", "function": {"name": "read", "arguments": '{"path":"a"}'}},
        ],
        "reasoning_details": MERGED_DETAILS,
    }


def test_openrouter_encrypted_reasoning_is_kept_as_an_empty_thinking_block():
    """An OpenAI model through OpenRouter sends only encrypted reasoning: pi keeps a thinking block
    with no text whose signature holds it, and sends it back."""
    encrypted = {
        "type": "reasoning.encrypted",
        "data": "gAAAAABpl3jdtUeb-r7leqAE91FNOR7V7sNUGWG",
        "id": "rs_0a1b",
        "format": "openai-responses-v1",
        "index": 0,
    }
    reply = Reply(
        pieces=[
            or_chunk({"reasoning": None, "reasoning_details": [encrypted]}),
            or_chunk({"content": "Four."}),
            or_chunk(
                finish="stop",
                usage={
                    **OR_USAGE,
                    "is_byok": True,
                    "cost": 0.0001,
                    "cost_details": {"upstream_inference_cost": 0.002},
                },
            ),
            b"data: [DONE]\n\n",
        ]
    )
    ctx = {"messages": [system("S"), user("2+2?")]}
    with LoopbackServer([reply, text_reply("ok")]) as server:
        m = openrouter(server, "openai/gpt-5", reasoning=True)
        events, message = run_stream(provider.stream, m, ctx, opts(reasoning="low"))
        follow = {"messages": [*ctx["messages"], message, user("sure?", 9)]}
        run_stream(provider.stream, m, follow, opts(reasoning="low"))
    assert message["content"] == [
        {
            "type": "thinking",
            "thinking": "",
            "thinkingSignature": json.dumps([encrypted], separators=(",", ":")),
        },
        {"type": "text", "text": "Four."},
    ]
    assert event_types(events) == [
        "start",
        "thinking_start",
        "text_start",
        "text_delta",
        "thinking_end",
        "text_end",
        "done",
    ]
    # BYOK: OpenRouter's fee plus the upstream provider's inference cost.
    assert message["usage"]["cost"]["total"] == pytest.approx(0.0021)
    assert message["usage"]["cost"]["totalFromProvider"] is True
    assert server.captured[1].body["messages"][2] == {
        "role": "assistant",
        "content": "Four.",
        "reasoning_details": [encrypted],
    }


def test_openrouter_reported_cost_replaces_the_catalogue_total():
    """Issue 34, item 3: OpenRouter's usage.cost is what the request cost (pi's totalFromProvider)."""
    with LoopbackServer([openrouter_reasoning_reply()]) as server:
        _, message = run_stream(provider.stream, openrouter(server), CONTEXT, opts())
    usage = message["usage"]
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"]) == (100, 1000, 100, 64)
    # The parts stay the catalogue's (input 1, output 2, cache read 0.1 per million); the total is billed.
    assert usage["cost"]["input"] == pytest.approx(100 / 1e6)
    assert (usage["cost"]["total"], usage["cost"]["totalFromProvider"]) == (0.00123, True)
    with LoopbackServer([openrouter_reasoning_reply()]) as server:
        _, other = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert other["usage"]["cost"]["totalFromProvider"] is False  # only OpenRouter's own figure counts


def test_event_order_with_thinking_and_two_tool_calls_is_pi_ais():
    """Issue 34, item 5: every block stays open until the stream ends, then ends in content order,
    and each tool-call piece is a delta (pi-ai 1.6's order, checked against it in
    tests/regressions/test_34_providers_like_pi.py)."""
    with LoopbackServer([openrouter_reasoning_reply()]) as server:
        events, message = run_stream(provider.stream, openrouter(server), CONTEXT, opts())
    assert event_types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "text_start",
        "text_delta",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "thinking_end",
        "text_end",
        "toolcall_end",
        "toolcall_end",
        "done",
    ]
    # Text and thinking blocks are shared with the live message, as pi's partials are (read at the
    # event, a block's text is the text so far); an open tool call is copied into each partial.
    first_delta = next(e for e in events if e["type"] == "thinking_delta")
    assert first_delta["partial"]["content"][0] is message["content"][0]
    call_deltas = [e for e in events if e["type"] == "toolcall_delta"]
    assert call_deltas[0]["partial"]["content"][2] is not message["content"][2]
    assert [b["type"] for b in message["content"]] == ["thinking", "text", "toolCall", "toolCall"]


def test_a_reply_cut_off_keeps_the_reasoning_details_it_received():
    """pi stores the details on the thinking block of a failed reply too (the error message)."""
    pieces = openrouter_reasoning_reply().pieces[:4]
    with LoopbackServer([Reply(pieces=pieces, cut=True)]) as server:
        _, message = run_stream(provider.stream, openrouter(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert json.loads(message["content"][0]["thinkingSignature"]) == MERGED_DETAILS


def test_opencode_go_reasoning_goes_back_as_reasoning_content():
    reply = Reply(
        pieces=[
            chunk({"role": "assistant", "reasoning": "Hmm."}),
            chunk({"content": "Yes."}),
            chunk(finish="stop"),
            b"data: [DONE]\n\n",
        ]
    )
    with LoopbackServer([reply, text_reply("ok")]) as server:
        m = model(server, provider="opencode-go", reasoning=True)
        _, message = run_stream(provider.stream, m, CONTEXT, opts())
        run_stream(provider.stream, m, {"messages": [*CONTEXT["messages"], message, user("more", 9)]}, opts())
    assert message["content"][0]["thinkingSignature"] == "reasoning_content"
    assert server.captured[1].body["messages"][2]["reasoning_content"] == "Hmm."
