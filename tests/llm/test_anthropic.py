"""The Anthropic adapter through the real ``anthropic`` SDK against a loopback SSE server."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

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
from tau.llm.providers import anthropic as provider
from tau.llm.retry import is_retryable
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.types import Model, ModelCost

CACHE = {"type": "ephemeral"}

# Imported up front: the SDK takes seconds to import, which must not count against a test's timeout.
pytest.importorskip("anthropic")


def model(server, **overrides):
    fields = dict(
        id="claude-test",
        provider="anthropic",
        api="anthropic-messages",
        base_url=server.url,
        reasoning=True,
        input=("text", "image"),
        cost=ModelCost(input=3, output=15, cacheRead=0.3, cacheWrite=3.75),
        max_tokens=8192,
        context_window=200_000,
    )
    fields.update(overrides)
    return Model(**fields)


def opts(**kw):
    return StreamOptions(api_key="sk-ant-test", **kw)


def message_start(usage=None, model_id="claude-test"):
    usage = usage or {"input_tokens": 12, "output_tokens": 1}
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model_id,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return sse({"type": "message_start", "message": message}, "message_start")


def block_start(index, block):
    return sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")


def delta(index, payload):
    return sse({"type": "content_block_delta", "index": index, "delta": payload}, "content_block_delta")


def block_stop(index):
    return sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def message_delta(stop_reason, usage=None):
    body = {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}}
    body["usage"] = usage or {"output_tokens": 7}
    return sse(body, "message_delta")


def message_stop():
    return sse({"type": "message_stop"}, "message_stop")


def text_reply(*pieces, stop="end_turn", usage=None, end_usage=None):
    events = [
        message_start(usage),
        block_start(0, {"type": "text", "text": ""}),
        sse({"type": "ping"}, "ping"),
    ]
    events += [delta(0, {"type": "text_delta", "text": piece}) for piece in pieces]
    events += [block_stop(0), message_delta(stop, end_usage), message_stop()]
    return Reply(pieces=events)


CONTEXT = {"messages": [system("You are helpful.", [BASH_TOOL, READ_TOOL]), user("hi")]}


def test_streamed_text_request_and_usage_with_cache_tiers():
    start_usage = {
        "input_tokens": 100,
        "output_tokens": 1,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 300,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    }
    with LoopbackServer(
        [text_reply("Hel", "lo", usage=start_usage, end_usage={"output_tokens": 9})]
    ) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts(session_id="s1"))
    assert event_types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stopReason"] == "stop"
    assert message["responseId"] == "msg_01"
    assert message["rawStopReason"] == "end_turn"
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (100, 9, 2000, 300)
    assert usage["cacheWrite1h"] == 200
    assert usage["totalTokens"] == 2409
    # 1h writes cost twice the input price; 5m writes the cacheWrite price.
    assert usage["cost"]["cacheWrite"] == pytest.approx((3.75 * 100 + 3 * 2 * 200) / 1e6)
    assert usage["cost"]["total"] == pytest.approx((100 * 3 + 9 * 15 + 2000 * 0.3 + 3.75 * 100 + 1200) / 1e6)

    request = server.captured[0]
    assert request.path.split("?")[0] == "/v1/messages"
    assert request.headers["authorization"] == "Bearer sk-ant-test"  # this SDK sends keys as Bearer
    assert request.body == {
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHE}]}],
        "model": "claude-test",
        "stream": True,
        "system": [{"type": "text", "text": "You are helpful.", "cache_control": CACHE}],
        "thinking": {"type": "disabled"},
        "tools": [
            {
                "name": "bash",
                "description": "Run a command",
                "eager_input_streaming": True,
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string", "description": "Shell command"}},
                    "required": ["command"],
                },
            },
            {
                "name": "read",
                "description": "Read a file",
                "eager_input_streaming": True,
                "input_schema": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
                "cache_control": CACHE,
            },
        ],
    }
    assert "anthropic-beta" not in request.headers


def test_cache_retention_long_sets_one_hour_ttl_and_none_sends_no_markers():
    ctx = {"messages": [system("S", [BASH_TOOL]), {"role": "user", "content": "plain", "timestamp": 1}]}
    long_params = provider.build_params(model_stub(), ctx, opts(cache_retention="long"))
    ttl = {"type": "ephemeral", "ttl": "1h"}
    assert long_params["system"][0]["cache_control"] == ttl
    assert long_params["tools"][-1]["cache_control"] == ttl
    assert long_params["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "plain", "cache_control": ttl}]}
    ]
    none_params = provider.build_params(model_stub(), ctx, opts(cache_retention="none"))
    assert "cache_control" not in json.dumps(none_params)
    assert none_params["messages"] == [{"role": "user", "content": "plain"}]


def model_stub(**overrides):
    fields = dict(
        id="claude-test", provider="anthropic", api="anthropic-messages", reasoning=True, max_tokens=8192
    )
    fields.update(overrides)
    return Model(**fields)


def test_cache_breakpoint_only_on_a_trailing_user_message_and_system_updates_folded():
    assistant = {
        "role": "assistant",
        "content": [{"type": "text", "text": "answer"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
    update = {"role": "system", "content": "", "sections": {"extra": "More rules."}, "timestamp": 3}
    ctx = {"messages": [system("Base."), user("q"), assistant, update]}
    params = provider.build_params(model_stub(), ctx, opts())
    assert params["system"][0]["text"] == "Base.\n\nMore rules."
    assert params["messages"][-1] == {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}
    assert "cache_control" not in json.dumps(params["messages"])


def tool_call_reply():
    return Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Running."}),
            block_stop(0),
            block_start(1, {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}),
            delta(1, {"type": "input_json_delta", "partial_json": '{"comm'}),
            delta(1, {"type": "input_json_delta", "partial_json": 'and": "ls -la"}'}),
            block_stop(1),
            block_start(2, {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}}),
            delta(2, {"type": "input_json_delta", "partial_json": '{"path": "a.txt"}'}),
            block_stop(2),
            message_delta("tool_use"),
            message_stop(),
        ]
    )


def test_several_tool_calls_stream_and_parse():
    with LoopbackServer([tool_call_reply()]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        {"type": "text", "text": "Running."},
        {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": "ls -la"}},
        {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {"path": "a.txt"}},
    ]
    types = event_types(events)
    assert types.count("toolcall_start") == 2 and types.count("toolcall_end") == 2
    partials = [e["partial"]["content"][1]["arguments"] for e in events if e["type"] == "toolcall_delta"][:2]
    assert partials == [{"comm": ""}, {"command": "ls -la"}] or partials[1] == {"command": "ls -la"}
    ends = [e["toolCall"] for e in events if e["type"] == "toolcall_end"]
    assert [call["id"] for call in ends] == ["toolu_1", "toolu_2"]


def thinking_reply():
    return Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, {"type": "thinking_delta", "thinking": "Let me think."}),
            delta(0, {"type": "signature_delta", "signature": "EqQBCkYI"}),
            delta(0, {"type": "signature_delta", "signature": "AhgCKkA"}),
            block_stop(0),
            block_start(1, {"type": "redacted_thinking", "data": "ENCRYPTED=="}),
            block_stop(1),
            block_start(2, {"type": "text", "text": ""}),
            delta(2, {"type": "text_delta", "text": "42"}),
            block_stop(2),
            message_delta(
                "end_turn", {"output_tokens": 30, "output_tokens_details": {"thinking_tokens": 20}}
            ),
            message_stop(),
        ]
    )


def test_thinking_with_signature_and_redacted_thinking_round_trip():
    with LoopbackServer([thinking_reply(), text_reply("ok")]) as server:
        m = model(server)
        events, message = run_stream(provider.stream, m, CONTEXT, opts(reasoning="medium"))
        assert message["content"] == [
            {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "EqQBCkYIAhgCKkA"},
            {
                "type": "thinking",
                "thinking": "[Reasoning redacted]",
                "thinkingSignature": "ENCRYPTED==",
                "redacted": True,
            },
            {"type": "text", "text": "42"},
        ]
        assert message["usage"]["reasoning"] == 20
        assert "thinking_delta" in event_types(events)
        follow_up = {"messages": [*CONTEXT["messages"], message, user("and?", 5)]}
        run_stream(provider.stream, m, follow_up, opts(reasoning="medium"))

    first = server.captured[0]
    assert first.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    # medium = 8192 thinking tokens on top of the output cap, within the model's 8192 cap.
    assert first.body["thinking"] == {"type": "enabled", "budget_tokens": 7168, "display": "summarized"}
    assert first.body["max_tokens"] == 8192
    replayed = server.captured[1].body["messages"][1]
    assert replayed == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkYIAhgCKkA"},
            {"type": "redacted_thinking", "data": "ENCRYPTED=="},
            {"type": "text", "text": "42"},
        ],
    }


def test_thinking_budget_raises_max_tokens_up_to_the_model_cap():
    params = provider.build_params(
        model_stub(max_tokens=64000), CONTEXT, opts(reasoning="low", max_tokens=4000)
    )
    assert params["max_tokens"] == 6048
    assert params["thinking"]["budget_tokens"] == 2048
    adaptive = provider.build_params(
        model_stub(compat={"forceAdaptiveThinking": True}), CONTEXT, opts(reasoning="minimal")
    )
    assert adaptive["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert adaptive["output_config"] == {"effort": "low"}
    assert "betas" not in adaptive
    plain = provider.build_params(
        model_stub(reasoning=False), CONTEXT, opts(reasoning="high", temperature=0.2)
    )
    assert "thinking" not in plain and plain["temperature"] == 0.2


def test_images_and_grouped_tool_results_with_orphan_and_error_images():
    png = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    calls = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": "call|odd/id", "name": "read", "arguments": {"path": "x.png"}},
            {"type": "toolCall", "id": "t2", "name": "bash", "arguments": {"command": "false"}},
            {"type": "toolCall", "id": "t3", "name": "bash", "arguments": {"command": "sleep"}},
        ],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-x",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    results = [
        {
            "role": "toolResult",
            "toolCallId": "call|odd/id",
            "toolName": "read",
            "content": [png],
            "isError": False,
            "timestamp": 3,
        },
        {
            "role": "toolResult",
            "toolCallId": "t2",
            "toolName": "bash",
            "content": [{"type": "text", "text": "failed"}, png],
            "isError": True,
            "timestamp": 4,
        },
    ]
    ctx = {
        "messages": [
            system("S"),
            {"role": "user", "content": [{"type": "text", "text": "see"}, png], "timestamp": 1},
            calls,
            *results,
        ]
    }
    with LoopbackServer([text_reply("seen")]) as server:
        _, message = run_stream(provider.stream, model(server), ctx, opts())
    assert message["stopReason"] == "stop"
    params = server.captured[0].body  # what the SDK sent
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert params["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "see"}, image]}
    assert [b["id"] for b in params["messages"][1]["content"]] == ["call_odd_id", "t2", "t3"]
    assert params["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_odd_id",
                "content": [{"type": "text", "text": "(see attached image)"}, image],
                "is_error": False,
            },
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "failed\n(image attached after the tool results)",
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "t3", "content": "No result provided", "is_error": True},
            {"type": "text", "text": "Images from the error result of tool call t2 (bash):"},
            {**image, "cache_control": CACHE},
        ],
    }


def test_http_429_with_retry_after_surfaces_at_once():
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"}}
    reply = json_reply(429, body, {"retry-after": "120"})
    with LoopbackServer([reply]) as server:
        started = time.monotonic()
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert time.monotonic() - started < 30
    assert event_types(events) == ["error"]
    assert message["stopReason"] == "error"
    assert (
        message["errorMessage"]
        == '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"}}'
    )
    assert len(server.captured) == 1


def test_http_500_and_non_json_body():
    with LoopbackServer(
        [Reply(status=500, pieces=[b"upstream exploded"], headers={"content-type": "text/plain"})]
    ) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "500 upstream exploded"


def test_overloaded_error_event_in_the_stream():
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    reply = Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "par"}),
            sse(error, "error"),
        ]
    )
    with LoopbackServer([reply]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert (
        message["errorMessage"]
        == '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    )
    assert message["content"] == [{"type": "text", "text": "par"}]
    assert events[-1]["type"] == "error"


def test_stream_cut_in_the_middle_of_an_event():
    half = b'event: content_block_delta\ndata: {"type":"content_block_delta","ind'
    reply = Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Hi"}),
            half,
        ],
        cut=True,
    )
    with LoopbackServer([reply]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["content"] == [{"type": "text", "text": "Hi"}]
    assert message["errorMessage"]
    assert events[-1]["type"] == "error"
    assert is_retryable(message)  # the agent retries a dropped stream


def test_stream_closed_cleanly_before_message_stop():
    reply = Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Hi"}),
        ]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["errorMessage"] == "Anthropic stream ended before message_stop"


def test_malformed_sse_event():
    reply = Reply(pieces=[message_start(), b"event: content_block_start\ndata: {not json\n\n"])
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Could not parse Anthropic SSE event")


def test_prompt_too_long_is_a_context_overflow():
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 213462 tokens > 200000 maximum",
        },
    }
    with LoopbackServer([json_reply(400, body)]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("400 ")
    assert "prompt is too long: 213462 tokens > 200000 maximum" in message["errorMessage"]
    assert is_context_overflow(message, 200_000)


def test_refusal_stop_reason_is_an_error_with_explanation():
    reply = text_reply("no")
    reply.pieces[-2] = sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal", "stop_details": {"explanation": "Not allowed."}},
            "usage": {"output_tokens": 1},
        },
        "message_delta",
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["errorMessage"]) == ("error", "Not allowed.")


def test_abort_in_the_middle_of_a_stream():
    reply = Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Partial"}),
        ],
        hang=True,
    )

    async def main(server):
        signal = AbortSignal()
        stream = provider.stream(model(server), CONTEXT, opts(signal=signal))
        events = []
        async for event in stream:
            events.append(event)
            if event["type"] == "text_delta":
                signal.abort()
        return events, await stream.result()

    with LoopbackServer([reply]) as server:
        started = time.monotonic()
        events, message = asyncio.run(asyncio.wait_for(main(server), 60))
        elapsed = time.monotonic() - started
    assert elapsed < 30
    assert message["stopReason"] == "aborted"
    assert message["errorMessage"] == "Request was aborted"
    assert message["content"] == [{"type": "text", "text": "Partial"}]
    assert events[-1]["type"] == "error" and events[-1]["reason"] == "aborted"


def test_abort_before_the_response_arrives():
    async def main(server):
        signal = AbortSignal()
        stream = provider.stream(model(server), CONTEXT, opts(signal=signal))
        await asyncio.sleep(0.05)
        signal.abort()
        return await stream.result()

    with LoopbackServer([Reply(pieces=[], hang=True)]) as server:
        message = asyncio.run(asyncio.wait_for(main(server), 60))
    assert message["stopReason"] == "aborted"


def test_missing_api_key_is_an_error_event():
    with LoopbackServer([]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, StreamOptions())
    assert event_types(events) == ["error"]
    assert message["errorMessage"] == "No API key for provider: anthropic"
    assert server.captured == []


def test_keyless_custom_provider_sends_no_authorization():
    with LoopbackServer([text_reply("ok")]) as server:
        _, message = run_stream(
            provider.stream, model(server, provider="local-claude"), CONTEXT, StreamOptions()
        )
    assert message["stopReason"] == "stop"
    assert "authorization" not in server.captured[0].headers


def test_headers_and_payload_hook():
    seen = {}

    def on_payload(params, _model):
        seen["model"] = params["model"]
        return {**params, "metadata": {"user_id": "u1"}}

    def on_response(status, headers):
        seen["status"] = status

    with LoopbackServer([text_reply("x")]) as server:
        run_stream(
            provider.stream,
            model(server, headers={"x-model-header": "m"}),
            CONTEXT,
            opts(headers={"x-option-header": "o"}, on_payload=on_payload, on_response=on_response),
        )
    request = server.captured[0]
    assert request.headers["x-model-header"] == "m" and request.headers["x-option-header"] == "o"
    assert request.body["metadata"] == {"user_id": "u1"}
    assert seen == {"model": "claude-test", "status": 200}


def test_configured_retries_follow_retry_after_then_succeed():
    busy = json_reply(
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"retry-after": "0"},
    )
    with LoopbackServer([busy, text_reply("after retry")]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts(max_retries=1))
    assert message["content"] == [{"type": "text", "text": "after retry"}]
    assert len(server.captured) == 2


CLAUDE_COMPAT = {
    "forceAdaptiveThinking": True,
    "supportsTemperature": False,
    "supportsMidConvoEffort": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
    "thinkingLevelMap": {"off": None, "minimal": None, "xhigh": "xhigh", "max": "max"},
}
STRICT_BASH = {**BASH_TOOL, "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}
WRITE_TOOL = {
    "name": "write",
    "description": "Write a file",
    "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
}


def test_mid_conversation_system_messages_tool_changes_and_effort_markers():
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "answer"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": {},
        "stopReason": "stop",
        "providerThinkingLevel": "high",
        "timestamp": 2,
    }
    update = {
        "role": "system",
        "content": "",
        "sections": {"rules": "New rules."},
        "toolsAdded": [WRITE_TOOL],
        "toolsRemoved": [{"name": "read"}],
        "timestamp": 3,
    }
    ctx = {
        "messages": [system("Base.", [STRICT_BASH, READ_TOOL]), user("q"), reply, update, user("again", 4)]
    }
    built = provider.build_request(
        model_stub(compat=CLAUDE_COMPAT), ctx, opts(reasoning="medium", temperature=0.5)
    )
    params = built.params
    assert built.provider_thinking_level == "medium"
    assert built.has_preferred_strict_tools
    assert params["betas"] == [
        "mid-conversation-output-config-2026-07-01",
        "thinking-binding-controls-2026-08-01",
        "inline-tools-2026-09-15",
    ]
    assert params["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    assert params["output_config"] == {"effort": "low"}
    assert "temperature" not in params
    assert params["system"] == [{"type": "text", "text": "Base.", "cache_control": CACHE}]
    bash, read, placeholder = params["tools"]
    assert bash["strict"] is True and bash["input_schema"]["additionalProperties"] is False
    assert read["cache_control"] == CACHE and "strict" not in read
    assert placeholder["name"] == "__pi_deferred_placeholder__" and placeholder["defer_loading"] is True
    write_definition = {
        "name": "write",
        "description": "Write a file",
        "eager_input_streaming": True,
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
    assert params["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "system", "content": [], "output_config": {"effort": "high"}},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
        {
            "role": "system",
            "content": [
                {"type": "text", "text": 'Updated system prompt section "rules":\n\nNew rules.'},
                {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "read"}},
                {
                    "type": "tool_addition",
                    "tool": {"type": "tool_definition", "definition": write_definition},
                    "cache_control": CACHE,
                },
            ],
        },
        {"role": "system", "content": [], "output_config": {"effort": "medium"}},
    ]


def test_system_update_between_tool_call_and_result_waits_for_the_next_reply():
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls"}}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    update = {"role": "system", "content": "Note.", "timestamp": 3}
    result = {
        "role": "toolResult",
        "toolCallId": "t1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a"}],
        "isError": False,
        "timestamp": 4,
    }
    compat = {"supportsMidConvoSystemMessages": True}
    ctx = {"messages": [system("Base.", [BASH_TOOL]), user("q"), call, update, result]}
    messages = provider.build_params(model_stub(compat=compat), ctx, opts())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "system"]
    assert messages[2]["content"][0]["type"] == "tool_result"
    assert messages[3] == {
        "role": "system",
        "content": [{"type": "text", "text": "Note.", "cache_control": CACHE}],
    }


def test_strict_tool_limit_rejection_falls_back_to_plain_tools():
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Too many strict tools (21). The maximum is 20.",
        },
    }
    compat = {"supportsStrictTools": True}
    ctx = {"messages": [system("S", [STRICT_BASH]), user("hi")]}
    with LoopbackServer([json_reply(400, body), text_reply("ok"), text_reply("again")]) as server:
        m = model(server, compat=compat)
        session_id = f"strict-{uuid.uuid4()}"  # the fallback is remembered per session, per process
        _, message = run_stream(provider.stream, m, ctx, opts(session_id=session_id))
        run_stream(provider.stream, m, ctx, opts(session_id=session_id))
    assert message["content"] == [{"type": "text", "text": "ok"}]
    assert message["diagnostics"][0]["type"] == "anthropic_strict_tools_fallback"
    first, second, third = (request.body["tools"][0] for request in server.captured)
    assert first.get("strict") is True
    assert "strict" not in second and "strict" not in third


def test_the_sdk_sends_the_built_body_unchanged():
    """New API fields (system messages, tool_addition blocks, output_config) pass through the SDK."""
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "answer"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": {},
        "stopReason": "stop",
        "providerThinkingLevel": "high",
        "timestamp": 2,
    }
    update = {
        "role": "system",
        "content": "",
        "toolsAdded": [WRITE_TOOL],
        "toolsRemoved": [{"name": "read"}],
        "timestamp": 3,
    }
    ctx = {
        "messages": [system("Base.", [STRICT_BASH, READ_TOOL]), user("q"), reply, update, user("again", 4)]
    }
    with LoopbackServer([text_reply("ok")]) as server:
        m = model(server, compat=CLAUDE_COMPAT)
        _, message = run_stream(provider.stream, m, ctx, opts(reasoning="medium"))
    expected = provider.build_params(m, ctx, opts(reasoning="medium"))
    betas = expected.pop("betas")
    assert server.captured[0].body == expected
    assert server.captured[0].headers["anthropic-beta"] == ",".join(betas)
    assert message["providerThinkingLevel"] == "medium"


def test_max_tokens_inside_a_tool_call_keeps_the_partial_arguments():
    """Issue 22, item 8: the shape Claude streams when max_tokens cuts a tool call's input: no
    content_block_stop for it. pi keeps the partially parsed object (no toolcall_end, no
    argumentsError); the agent then fails the call as truncated."""
    reply = Reply(
        pieces=[
            message_start({"input_tokens": 2095, "output_tokens": 5}),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": "Writing the file."}),
            block_stop(0),
            block_start(1, {"type": "tool_use", "id": "toolu_01", "name": "write", "input": {}}),
            delta(1, {"type": "input_json_delta", "partial_json": ""}),
            delta(1, {"type": "input_json_delta", "partial_json": '{"path": "notes.md", "con'}),
            delta(1, {"type": "input_json_delta", "partial_json": 'tent": "# Notes\\n\\nFirst li'}),
            message_delta("max_tokens", {"output_tokens": 64}),
            message_stop(),
        ]
    )
    with LoopbackServer([reply]) as server:
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts(max_tokens=64))
    assert message["stopReason"] == "length"
    assert message["content"][1] == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "write",
        "arguments": {"path": "notes.md", "content": "# Notes\n\nFirst li"},
    }
    assert event_types(events).count("toolcall_end") == 0 and event_types(events)[-1] == "done"


def test_a_stopped_tool_call_cut_by_max_tokens_is_an_arguments_error_as_in_pi():
    """With content_block_stop the whole text is parsed once: malformed, so ``{}`` plus the error."""
    reply = Reply(
        pieces=[
            message_start(),
            block_start(0, {"type": "tool_use", "id": "toolu_01", "name": "write", "input": {}}),
            delta(0, {"type": "input_json_delta", "partial_json": '{"path": "a.txt", "content": "hello wo'}),
            block_stop(0),
            message_delta("max_tokens"),
            message_stop(),
        ]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    call = message["content"][0]
    assert call["arguments"] == {} and "Received arguments:" in call["argumentsError"]


def test_a_last_event_without_its_blank_line_is_delivered():
    """Issue 22, item 9: a server that closes right after ``message_stop``'s data line. The SDK's
    decoder dropped the event ("ended before message_stop"); pi's parser flushes it."""
    reply = text_reply("Hello")
    reply.pieces[-1] = reply.pieces[-1].rstrip(b"\n")
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["content"]) == ("stop", [{"type": "text", "text": "Hello"}])


def test_claude_on_openrouter_keeps_its_session_on_one_upstream_and_takes_the_billed_cost():
    """Issue 34: pi's ``x-session-id`` for OpenRouter and its billed ``usage.cost`` from message_delta."""
    billed = {"output_tokens": 7, "cost": 0.0042, "is_byok": False}
    with LoopbackServer([text_reply("Hi", end_usage=billed), text_reply("Hi")]) as server:
        routed = model(server, id="anthropic/claude-sonnet-4.6", provider="openrouter")
        _, message = run_stream(provider.stream, routed, CONTEXT, opts(session_id="s-9"))
        _, direct = run_stream(provider.stream, model(server), CONTEXT, opts(session_id="s-9"))
    assert server.captured[0].headers["x-session-id"] == "s-9"
    assert "x-session-id" not in server.captured[1].headers
    assert (message["usage"]["cost"]["total"], message["usage"]["cost"]["totalFromProvider"]) == (
        0.0042,
        True,
    )
    assert direct["usage"]["cost"]["totalFromProvider"] is False
