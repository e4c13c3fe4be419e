"""The OpenAI Responses adapter through the real ``openai`` SDK against a loopback SSE server."""

from __future__ import annotations

import asyncio
import json
import time
import warnings

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
from tau.llm.providers import openai_responses as provider
from tau.llm.retry import is_retryable
from tau.llm.stream import AbortSignal, StreamOptions
from tau.llm.types import Model, ModelCost

# Imported up front: the SDK takes seconds to import, which must not count against a test's timeout.
pytest.importorskip("openai")


def model(server=None, **overrides):
    fields = dict(
        id="gpt-test",
        provider="openai",
        api="openai-responses",
        base_url=f"{server.url}/v1" if server else None,
        reasoning=True,
        input=("text", "image"),
        max_tokens=32000,
        context_window=400_000,
        cost=ModelCost(input=1.25, output=10, cacheRead=0.125),
    )
    fields.update(overrides)
    return Model(**fields)


def opts(**kw):
    return StreamOptions(api_key="sk-test", **kw)


class Events:
    """Builds a Responses SSE stream with sequence numbers."""

    def __init__(self):
        self.pieces = []
        self.seq = 0

    def add(self, kind, **fields):
        self.pieces.append(sse({"type": kind, "sequence_number": self.seq, **fields}, kind))
        self.seq += 1
        return self

    def created(self):
        return self.add("response.created", response=_response("in_progress"))

    def completed(self, output=(), usage=None, status="completed", incomplete=None):
        response = _response(status, list(output), usage or USAGE)
        if incomplete:
            response["incomplete_details"] = {"reason": incomplete}
        return self.add(
            "response.incomplete" if status == "incomplete" else "response.completed", response=response
        )

    def reply(self, **kwargs):
        return Reply(pieces=self.pieces, **kwargs)


def _response(status, output=None, usage=None):
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "gpt-test",
        "output": output or [],
    }
    if usage:
        body["usage"] = usage
    return body


USAGE = {
    "input_tokens": 1000,
    "input_tokens_details": {"cached_tokens": 800},
    "output_tokens": 50,
    "output_tokens_details": {"reasoning_tokens": 30},
    "total_tokens": 1050,
}


def message_item(text, item_id="msg_1", status="completed", phase=None):
    item = {"type": "message", "id": item_id, "role": "assistant", "status": status, "content": []}
    if text is not None:
        item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
    if phase:
        item["phase"] = phase
    return item


def text_stream(*pieces):
    events = Events().created()
    events.add("response.output_item.added", output_index=0, item=message_item(None, status="in_progress"))
    for piece in pieces:
        events.add(
            "response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta=piece
        )
    done = message_item("".join(pieces), phase="final_answer")
    events.add("response.output_item.done", output_index=0, item=done)
    return events.completed([done])


CONTEXT = {"messages": [system("Be brief.", [BASH_TOOL, READ_TOOL]), user("hi")]}


def test_streamed_text_request_and_usage():
    with LoopbackServer([text_stream("Hel", "lo").reply()]) as server:
        events, message = run_stream(
            provider.stream, model(server), CONTEXT, opts(session_id="sess-1", reasoning="medium")
        )
    assert event_types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert message["content"] == [
        {"type": "text", "text": "Hello", "textSignature": '{"v":1,"id":"msg_1","phase":"final_answer"}'}
    ]
    assert (message["stopReason"], message["responseId"]) == ("stop", "resp_1")
    usage = message["usage"]
    assert (
        usage["input"],
        usage["output"],
        usage["cacheRead"],
        usage["reasoning"],
        usage["totalTokens"],
    ) == (200, 50, 800, 30, 1050)
    assert usage["cost"]["total"] == pytest.approx((200 * 1.25 + 50 * 10 + 800 * 0.125) / 1e6)
    request = server.captured[0]
    assert request.path == "/v1/responses"
    assert request.headers["session-id"] == "sess-1"
    assert request.headers["x-client-request-id"] == "sess-1"
    assert request.body == {
        "input": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ],
        "model": "gpt-test",
        "stream": True,
        "prompt_cache_key": "sess-1",
        "store": False,
        "max_output_tokens": 32000,
        "tools": [
            {
                "type": "function",
                "name": "bash",
                "description": "Run a command",
                "parameters": BASH_TOOL["parameters"],
            },
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL["parameters"],
            },
        ],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


def test_thinking_off_long_retention_and_strict_tools():
    strict_tool = {**BASH_TOOL, "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}
    ctx = {"messages": [system("S", [strict_tool]), user("x")]}
    params = provider.build_params(
        model(compat={"supportsStrictMode": True}), ctx, opts(session_id="s" * 80, cache_retention="long")
    )
    assert params["reasoning"] == {"effort": "none"}
    assert "include" not in params
    assert params["prompt_cache_key"] == "s" * 64
    assert params["prompt_cache_retention"] == "24h"
    assert params["tools"] == [
        {
            "type": "function",
            "name": "bash",
            "description": "Run a command",
            "parameters": {
                "type": "object",
                "required": ["command"],
                "properties": {"command": {"type": "string", "description": "Shell command"}},
                "additionalProperties": False,
            },
            "strict": True,
        }
    ]
    plain = provider.build_params(model(reasoning=False), ctx, opts(cache_retention="none", session_id="s"))
    assert "prompt_cache_key" not in plain and "reasoning" not in plain
    assert plain["input"][0] == {"role": "system", "content": "S"}


def reasoning_and_tools_stream():
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-secret"}
    events = Events().created()
    events.add("response.output_item.added", output_index=0, item={**reasoning, "summary": []})
    events.add(
        "response.reasoning_summary_text.delta",
        output_index=0,
        item_id="rs_1",
        summary_index=0,
        delta="Plan: ",
    )
    events.add(
        "response.reasoning_summary_text.delta",
        output_index=0,
        item_id="rs_1",
        summary_index=0,
        delta="list files.",
    )
    done_reasoning = {**reasoning, "summary": [{"type": "summary_text", "text": "Plan: list files."}]}
    events.add("response.output_item.done", output_index=0, item=done_reasoning)
    calls = [("fc_1", "call_1", "bash", '{"command":"ls"}'), ("fc_2", "call_2", "read", '{"path":"a.txt"}')]
    for offset, (item_id, call_id, name, args) in enumerate(calls, start=1):
        added = {
            "type": "function_call",
            "id": item_id,
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        events.add("response.output_item.added", output_index=offset, item=added)
        events.add(
            "response.function_call_arguments.delta", output_index=offset, item_id=item_id, delta=args[:5]
        )
        events.add(
            "response.function_call_arguments.delta", output_index=offset, item_id=item_id, delta=args[5:]
        )
        events.add(
            "response.function_call_arguments.done", output_index=offset, item_id=item_id, arguments=args
        )
        events.add(
            "response.output_item.done",
            output_index=offset,
            item={**added, "arguments": args, "status": "completed"},
        )
    return events.completed([done_reasoning])


def test_reasoning_items_and_parallel_tool_calls_round_trip():
    with LoopbackServer([reasoning_and_tools_stream().reply(), text_stream("done").reply()]) as server:
        m = model(server)
        events, message = run_stream(provider.stream, m, CONTEXT, opts(reasoning="high"))
        assert message["stopReason"] == "toolUse"
        thinking, first, second = message["content"]
        assert thinking["thinking"] == "Plan: list files."
        assert json.loads(thinking["thinkingSignature"])["encrypted_content"] == "gAAAA-secret"
        assert first == {
            "type": "toolCall",
            "id": "call_1|fc_1",
            "name": "bash",
            "arguments": {"command": "ls"},
        }
        assert second == {
            "type": "toolCall",
            "id": "call_2|fc_2",
            "name": "read",
            "arguments": {"path": "a.txt"},
        }
        assert event_types(events).count("toolcall_end") == 2
        results = [
            {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": [{"type": "text", "text": f"out {n}"}],
                "isError": False,
                "timestamp": 5,
            }
            for n, call in enumerate([first, second])
        ]
        run_stream(
            provider.stream,
            m,
            {"messages": [*CONTEXT["messages"], message, *results]},
            opts(reasoning="high"),
        )
    replay = server.captured[1].body["input"][2:]
    assert replay[0]["type"] == "reasoning" and replay[0]["id"] == "rs_1"
    assert replay[0]["encrypted_content"] == "gAAAA-secret"
    assert replay[1:] == [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "bash",
            "arguments": '{"command":"ls"}',
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": "read",
            "arguments": '{"path":"a.txt"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "out 0"},
        {"type": "function_call_output", "call_id": "call_2", "output": "out 1"},
    ]


def test_text_signature_and_other_model_replay():
    mine = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "A", "textSignature": '{"v":1,"id":"msg_abc","phase":"commentary"}'},
            {"type": "text", "text": "B"},
        ],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-test",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
    other = {
        **mine,
        "model": "gpt-older",
        "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": '{"type":"reasoning","id":"rs_x"}'},
            {"type": "toolCall", "id": "call_9|fc_9", "name": "bash", "arguments": {}},
        ],
        "stopReason": "toolUse",
    }
    ctx = {"messages": [system("S"), user("q"), mine, other]}
    items = provider.build_params(model(), ctx, opts())["input"]
    assert items[2] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "A", "annotations": []}],
        "status": "completed",
        "id": "msg_abc",
        "phase": "commentary",
    }
    assert items[3]["id"] == "msg_pi_1_1"
    # Another model's reasoning is dropped and its function_call loses the item id.
    assert items[4] == {"type": "function_call", "call_id": "call_9", "name": "bash", "arguments": "{}"}
    assert items[5] == {"type": "function_call_output", "call_id": "call_9", "output": "No result provided"}


def test_images_in_user_messages_and_tool_results():
    png = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    call = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "a.png"}}
        ],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-test",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "call_1|fc_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "pic"}, png],
        "isError": False,
        "timestamp": 3,
    }
    ctx = {
        "messages": [
            system("S"),
            {"role": "user", "content": [{"type": "text", "text": "see"}, png], "timestamp": 1},
            call,
            result,
        ]
    }
    with LoopbackServer([text_stream("ok").reply()]) as server:
        run_stream(provider.stream, model(server), ctx, opts())
    items = server.captured[0].body["input"]
    image = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"}
    assert items[1] == {"role": "user", "content": [{"type": "input_text", "text": "see"}, image]}
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [{"type": "input_text", "text": "pic"}, image],
    }


def test_incomplete_max_output_tokens_is_length():
    events = Events().created()
    done = message_item("trunc")
    events.add("response.output_item.added", output_index=0, item=message_item(None, status="in_progress"))
    events.add("response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta="trunc")
    events.add("response.output_item.done", output_index=0, item=done)
    events.completed([done], status="incomplete", incomplete="max_output_tokens")
    with LoopbackServer([events.reply()]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert (message["stopReason"], message["rawStopReason"]) == ("length", "incomplete.max_output_tokens")


def test_http_429_with_retry_after_surfaces_at_once():
    body = {
        "error": {
            "message": "Rate limit reached for gpt-test",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    with LoopbackServer([json_reply(429, body, {"retry-after": "120"})]) as server:
        started = time.monotonic()
        events, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert time.monotonic() - started < 30
    assert event_types(events) == ["error"]
    assert message["errorMessage"] == (
        'OpenAI API error (429): {"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}'
    )


def test_http_500():
    body = {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    with LoopbackServer([json_reply(500, body)]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["errorMessage"].startswith("OpenAI API error (500): ")


def test_response_failed_and_error_events():
    failed = (
        Events()
        .created()
        .add(
            "response.failed",
            response={**_response("failed"), "error": {"code": "server_error", "message": "boom"}},
        )
    )
    error = Events().created().add("error", code="rate_limit_exceeded", message="Slow down", param=None)
    with LoopbackServer([failed.reply(), error.reply()]) as server:
        _, first = run_stream(provider.stream, model(server), CONTEXT, opts())
        _, second = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert first["errorMessage"] == "server_error: boom"
    assert second["errorMessage"] == "Error Code rate_limit_exceeded: Slow down"


def test_stream_cut_mid_event_and_stream_without_terminal_event():
    partial = Events().created()
    partial.add("response.output_item.added", output_index=0, item=message_item(None, status="in_progress"))
    partial.add("response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta="Hi")
    cut = Reply(pieces=[*partial.pieces, b'event: response.output_text.delta\ndata: {"type":"resp'], cut=True)
    clean = Reply(pieces=list(partial.pieces))
    with LoopbackServer([cut, clean]) as server:
        _, first = run_stream(provider.stream, model(server), CONTEXT, opts())
        _, second = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert first["stopReason"] == "error" and first["content"][0]["text"] == "Hi"
    assert is_retryable(first) and is_retryable(second)
    assert second["errorMessage"] == "OpenAI Responses stream ended before a terminal response event"


def test_malformed_sse_event():
    reply = Reply(
        pieces=[*Events().created().pieces, b"event: response.output_item.added\ndata: {broken\n\n"]
    )
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Could not parse")


def test_context_overflow_error_text():
    body = {
        "error": {
            "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }
    with LoopbackServer([json_reply(400, body)]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert "exceeds the context window" in message["errorMessage"]
    assert is_context_overflow(message, 400_000)


def test_abort_mid_stream():
    partial = Events().created()
    partial.add("response.output_item.added", output_index=0, item=message_item(None, status="in_progress"))
    partial.add(
        "response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta="Partial"
    )

    async def main(server):
        signal = AbortSignal()
        stream = provider.stream(model(server), CONTEXT, opts(signal=signal))
        async for event in stream:
            if event["type"] == "text_delta":
                signal.abort()
        return await stream.result()

    with LoopbackServer([partial.reply(hang=True)]) as server:
        started = time.monotonic()
        message = asyncio.run(asyncio.wait_for(main(server), 60))
    assert time.monotonic() - started < 30
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "Request was aborted")
    assert message["content"] == [{"type": "text", "text": "Partial"}]


GPT6_COMPAT = {
    "supportsStrictMode": True,
    "supportsAdditionalTools": True,
    "supportsToolSearch": True,
    "supportsMidConvoSystemMessages": True,
    "supportsExplicitPromptCacheMode": True,
    "supportsMidConvoEffort": True,
    "thinkingLevelMap": {"off": None, "xhigh": "xhigh", "max": "max"},
}
WRITE_TOOL = {
    "name": "write",
    "description": "Write a file",
    "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
}


def _reply(level=None):
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "answer", "textSignature": '{"v":1,"id":"msg_9"}'}],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-test",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
    if level:
        message["providerThinkingLevel"] = level
    return message


def _function(tool, strict=False):
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["parameters"],
        "strict": strict,
    }


def test_additional_tools_in_place_and_configuration_update_effort():
    update = {
        "role": "system",
        "content": "",
        "sections": {"rules": "New rules."},
        "toolsAdded": [WRITE_TOOL],
        "toolsRemoved": [{"name": "read"}],
        "timestamp": 3,
    }
    ctx = {
        "messages": [
            system("Base.", [BASH_TOOL, READ_TOOL]),
            user("q"),
            _reply("low"),
            update,
            user("again", 4),
        ]
    }
    built = provider.build_request(model(compat=GPT6_COMPAT), ctx, opts(reasoning="high", session_id="s1"))
    params = built.params
    assert built.provider_thinking_level == "high"
    assert "tools" not in params
    assert params["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert params["prompt_cache_key"] == "s1"
    assert "prompt_cache_retention" not in params and "prompt_cache_options" not in params
    assert params["input"] == [
        {
            "type": "additional_tools",
            "role": "developer",
            "tools": [_function(BASH_TOOL), _function(READ_TOOL)],
        },
        {"role": "developer", "content": "Base."},
        {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "configuration_update", "reasoning": {"effort": "low"}},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "answer", "annotations": []}],
            "status": "completed",
            "id": "msg_9",
        },
        {
            "role": "developer",
            "content": "This is an incremental tools update. Previously declared tools remain available unless "
            "explicitly marked unavailable. A tool declared again here is available again, and its latest "
            "definition replaces the earlier one.",
        },
        {"type": "additional_tools", "role": "developer", "tools": [_function(WRITE_TOOL)]},
        {
            "role": "developer",
            "content": 'Updated system prompt section "rules":\n\nNew rules.\n\n'
            "The following tools are no longer available. Do not call them:\n- read",
        },
        {"role": "user", "content": [{"type": "input_text", "text": "again"}]},
        {"type": "configuration_update", "reasoning": {"effort": "high"}},
    ]


def test_tool_search_additions_when_additional_tools_are_unsupported():
    compat = {"supportsToolSearch": True, "supportsMidConvoSystemMessages": True}
    update = {"role": "system", "content": "", "toolsAdded": [WRITE_TOOL], "timestamp": 3}
    ctx = {"messages": [system("Base.", [BASH_TOOL]), user("q"), _reply(), update, user("again", 4)]}
    params = provider.build_params(model(compat=compat), ctx, opts())
    assert params["tools"] == [
        {
            "type": "function",
            "name": "bash",
            "description": "Run a command",
            "parameters": BASH_TOOL["parameters"],
        }
    ]
    search_call, search_output = params["input"][3:5]
    assert search_call["type"] == "tool_search_call" and search_call["call_id"].startswith("pi_tool_load_")
    assert search_call["arguments"] == {"query": "write", "limit": 1}
    assert search_output == {
        "type": "tool_search_output",
        "call_id": search_call["call_id"],
        "execution": "client",
        "status": "completed",
        "tools": [
            {
                "type": "function",
                "name": "write",
                "description": "Write a file",
                "parameters": WRITE_TOOL["parameters"],
                "defer_loading": True,
            }
        ],
    }


def test_explicit_prompt_cache_mode():
    compat = {"supportsExplicitPromptCacheMode": True}
    none = provider.build_params(model(compat=compat), CONTEXT, opts(session_id="s", cache_retention="none"))
    long = provider.build_params(model(compat=compat), CONTEXT, opts(session_id="s", cache_retention="long"))
    assert none["prompt_cache_options"] == {"mode": "explicit"} and "prompt_cache_key" not in none
    assert long["prompt_cache_options"] == {"ttl": "30m"} and long["prompt_cache_key"] == "s"
    assert "prompt_cache_retention" not in long


def test_configuration_effort_recorded_on_the_reply():
    with LoopbackServer([text_stream("ok").reply()]) as server:
        _, message = run_stream(
            provider.stream, model(server, compat=GPT6_COMPAT), CONTEXT, opts(reasoning="xhigh")
        )
    assert message["providerThinkingLevel"] == "xhigh"
    assert server.captured[0].body["input"][-1] == {
        "type": "configuration_update",
        "reasoning": {"effort": "xhigh"},
    }


def test_malformed_tool_arguments_reported_to_the_model():
    events = Events().created()
    added = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "bash",
        "arguments": "",
        "status": "in_progress",
    }
    events.add("response.output_item.added", output_index=0, item=added)
    events.add("response.function_call_arguments.delta", output_index=0, item_id="fc_1", delta='{"command": ')
    events.add(
        "response.output_item.done",
        output_index=0,
        item={**added, "arguments": '{"command": ', "status": "completed"},
    )
    events.completed([])
    with LoopbackServer([events.reply()]) as server:
        events_out, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    call = message["content"][0]
    assert message["stopReason"] == "toolUse"
    assert call["arguments"] == {}
    assert call["argumentsError"].endswith('Received arguments:\n{"command": ')
    end = next(e for e in events_out if e["type"] == "toolcall_end")
    assert "argumentsError" in end["partial"]["content"][0]


def test_the_sdk_sends_the_built_body_unchanged():
    """New API items (additional_tools, configuration_update) pass through the SDK."""
    update = {
        "role": "system",
        "content": "",
        "toolsAdded": [WRITE_TOOL],
        "toolsRemoved": [{"name": "read"}],
        "timestamp": 3,
    }
    ctx = {
        "messages": [
            system("Base.", [BASH_TOOL, READ_TOOL]),
            user("q"),
            _reply("low"),
            update,
            user("again", 4),
        ]
    }
    with LoopbackServer([text_stream("ok").reply()]) as server:
        m = model(server, compat=GPT6_COMPAT)
        run_stream(provider.stream, m, ctx, opts(reasoning="high", session_id="s1"))
    assert server.captured[0].body == provider.build_params(m, ctx, opts(reasoning="high", session_id="s1"))


def test_a_last_event_without_its_blank_line_is_delivered():
    """Issue 22, item 9: ``response.completed`` as the stream's last bytes, no blank line after it."""
    reply = text_stream("Hi").reply()
    reply.pieces[-1] = reply.pieces[-1].rstrip(b"\n")
    with LoopbackServer([reply]) as server:
        _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["stopReason"] == "stop" and message["content"][0]["text"] == "Hi"


# -- `strict` on custom models (issue 22, item 11; issue 34: as pi) ----------------------------------

OPTIONAL_TOOL = {
    "name": "grep",
    "description": "Search",
    "parameters": {
        "type": "object",
        "required": ["pattern"],
        "properties": {"pattern": {"type": "string"}, "limit": {"type": "number"}},
    },
    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
}


@pytest.mark.parametrize(
    ("compat", "tools"),
    [
        # A models.json model that says nothing: no strict key, as pi (the server may not know it).
        ({}, [{k: v for k, v in _function(t).items() if k != "strict"} for t in (OPTIONAL_TOOL, BASH_TOOL)]),
        # Strict support declared: the constrained tool goes strict with the rewritten schema.
        (
            {"supportsStrictMode": True},
            [
                {
                    **_function(OPTIONAL_TOOL),
                    "parameters": {
                        "type": "object",
                        "required": ["pattern", "limit"],
                        "properties": {
                            "pattern": {"type": "string"},
                            "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                        },
                        "additionalProperties": False,
                    },
                    "strict": True,
                },
                _function(BASH_TOOL),
            ],
        ),
        # Strict support denied outright: left out too.
        (
            {"supportsStrictMode": False},
            [{k: v for k, v in _function(t).items() if k != "strict"} for t in (OPTIONAL_TOOL, BASH_TOOL)],
        ),
    ],
)
def test_custom_model_tools_state_strict_only_with_strict_support(compat, tools):
    for tool in tools:
        tool.pop("constrainedSampling", None)
    context = {"messages": [system("S", [OPTIONAL_TOOL, BASH_TOOL]), user("find it")]}
    with LoopbackServer([text_stream("ok").reply()]) as server:
        custom = model(server, provider="myproxy", reasoning=False, compat=compat)
        run_stream(provider.stream, custom, context, opts())
    assert server.captured[0].body["tools"] == tools


# -- issue 34: service tiers -------------------------------------------------------------------------


def tier_stream(tier):
    """A text reply whose response reports the service tier it ran on (as OpenAI's does)."""
    events = Events()
    created = _response("in_progress")
    created["service_tier"] = "auto"
    events.add("response.created", response=created)
    events.add("response.output_item.added", output_index=0, item=message_item(None, status="in_progress"))
    events.add("response.output_text.delta", output_index=0, item_id="msg_1", content_index=0, delta="ok")
    events.add("response.output_item.done", output_index=0, item=message_item("ok"))
    done = _response("completed", [message_item("ok")], USAGE)
    done["service_tier"] = tier
    return events.add("response.completed", response=done)


@pytest.mark.parametrize(
    ("tier", "model_id", "factor"),
    [
        ("default", "gpt-test", 1),
        ("flex", "gpt-test", 0.5),
        ("priority", "gpt-test", 2),
        ("priority", "gpt-5.5", 2.5),
    ],
)
def test_the_reported_service_tier_prices_the_reply(tier, model_id, factor):
    """Issue 34, item 3: flex at half, priority at twice the standard price (gpt-5.5: 2.5x), as pi."""
    with LoopbackServer([tier_stream(tier).reply()]) as server:
        _, message = run_stream(
            provider.stream, model(server, id=model_id), {"messages": [user("hi")]}, opts()
        )
    cost = message["usage"]["cost"]
    # 200 uncached input at 1.25, 800 cached at 0.125 and 50 output at 10 per million tokens.
    standard = {"input": 250e-6, "cacheRead": 100e-6, "output": 500e-6}
    for key, value in standard.items():
        assert cost[key] == pytest.approx(value * factor)
    assert cost["total"] == pytest.approx(850e-6 * factor)


def test_web_search_items_the_sdk_does_not_model_print_no_serializer_warnings(capfd):
    """Issue 34, item 5: a hosted web search whose action or sources are newer than the SDK's models
    (``find``, an ``api`` source) used to print pydantic serializer-warning blocks on stderr."""
    searched = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "weather", "sources": [{"type": "api", "name": "oai-weather"}]},
    }
    found = {
        "type": "web_search_call",
        "id": "ws_2",
        "status": "completed",
        "action": {"type": "find", "url": "https://example.org", "pattern": "sunny"},
    }
    events = Events().created()
    for index, item in enumerate((searched, found)):
        events.add("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
        events.add("response.web_search_call.completed", output_index=index, item_id=item["id"])
        events.add("response.output_item.done", output_index=index, item=item)
    events.add("response.output_item.added", output_index=2, item=message_item(None, status="in_progress"))
    events.add("response.output_text.delta", output_index=2, item_id="msg_1", content_index=0, delta="Sunny.")
    events.add("response.output_item.done", output_index=2, item=message_item("Sunny."))
    events.completed(output=[searched, found, message_item("Sunny.")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with LoopbackServer([events.reply()]) as server:
            _, message = run_stream(provider.stream, model(server), CONTEXT, opts())
    assert message["content"][0]["text"] == "Sunny."
    assert [str(w.message) for w in caught if "serializ" in str(w.message).lower()] == []
    assert "Pydantic" not in capfd.readouterr().err
