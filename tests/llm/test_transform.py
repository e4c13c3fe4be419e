"""pi-ai's transformMessages, as tau's adapters apply it before serializing a request."""

from __future__ import annotations

from tau.llm.transform import sanitize_surrogates, split_error_tool_result_images, transform_messages
from tau.llm.types import Model

MODEL = Model(id="m1", provider="p", api="anthropic-messages", input=("text", "image"))


def assistant(*content, stop="toolUse", model="m1", provider="p", api="anthropic-messages"):
    return {
        "role": "assistant",
        "content": list(content),
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {},
        "stopReason": stop,
        "timestamp": 1,
    }


def call(call_id, name="bash", **extra):
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {}, **extra}


def result(call_id, text="ok", name="bash"):
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 2,
    }


def user(text):
    return {"role": "user", "content": text, "timestamp": 3}


def system(text):
    return {"role": "system", "content": text, "timestamp": 4}


def shape(messages):
    out = []
    for m in messages:
        if m["role"] == "toolResult":
            out.append(("toolResult", m["toolCallId"], m["content"][0]["text"], m["isError"]))
        elif m["role"] == "assistant":
            out.append(("assistant", [b["type"] for b in m["content"]]))
        else:
            out.append((m["role"], m["content"]))
    return out


def test_error_and_aborted_assistants_are_dropped():
    msgs = [
        user("a"),
        assistant({"type": "text", "text": "half"}, stop="error"),
        assistant({"type": "text", "text": "cut"}, stop="aborted"),
        user("b"),
    ]
    assert shape(transform_messages(msgs, MODEL)) == [("user", "a"), ("user", "b")]


def test_orphaned_tool_call_gets_synthetic_result_before_next_user():
    msgs = [user("a"), assistant(call("c1"), call("c2")), result("c1"), user("b")]
    out = transform_messages(msgs, MODEL)
    assert shape(out) == [
        ("user", "a"),
        ("assistant", ["toolCall", "toolCall"]),
        ("toolResult", "c1", "ok", False),
        ("toolResult", "c2", "No result provided", True),
        ("user", "b"),
    ]
    synthetic = out[3]
    assert synthetic["toolName"] == "bash"
    assert synthetic["content"] == [{"type": "text", "text": "No result provided"}]


def test_trailing_orphan_and_orphan_before_next_assistant():
    msgs = [assistant(call("c1")), assistant(call("c2"))]
    out = transform_messages(msgs, MODEL)
    assert shape(out) == [
        ("assistant", ["toolCall"]),
        ("toolResult", "c1", "No result provided", True),
        ("assistant", ["toolCall"]),
        ("toolResult", "c2", "No result provided", True),
    ]


def test_orphan_of_dropped_error_assistant_is_not_synthesized():
    msgs = [user("a"), assistant(call("c1"), stop="error"), user("b")]
    assert shape(transform_messages(msgs, MODEL)) == [("user", "a"), ("user", "b")]


def test_system_message_between_call_and_results_is_held_until_after_them():
    msgs = [assistant(call("c1"), call("c2")), system("update"), result("c1"), result("c2"), user("x")]
    assert shape(transform_messages(msgs, MODEL)) == [
        ("assistant", ["toolCall", "toolCall"]),
        ("toolResult", "c1", "ok", False),
        ("toolResult", "c2", "ok", False),
        ("system", "update"),
        ("user", "x"),
    ]


def test_held_system_message_follows_synthetic_results():
    msgs = [assistant(call("c1")), system("update"), user("x")]
    assert shape(transform_messages(msgs, MODEL)) == [
        ("assistant", ["toolCall"]),
        ("toolResult", "c1", "No result provided", True),
        ("system", "update"),
        ("user", "x"),
    ]


def test_thinking_from_another_model_is_dropped_and_signatures_stripped():
    other = assistant(
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
        {"type": "text", "text": "hi", "textSignature": "ts"},
        call("call|weird id", thoughtSignature="t"),
        model="other",
    )
    out = transform_messages(
        [other, result("call|weird id")],
        MODEL,
        lambda i, _m, _src: i.replace("|", "_").replace(" ", "_"),
    )
    assert out[0]["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "toolCall", "id": "call_weird_id", "name": "bash", "arguments": {}},
    ]
    assert out[1]["toolCallId"] == "call_weird_id"


def test_same_model_thinking_kept_when_signed_or_nonblank():
    msg = assistant(
        {"type": "thinking", "thinking": "", "thinkingSignature": "enc"},
        {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "x", "redacted": True},
        {"type": "thinking", "thinking": "plain"},
        {"type": "thinking", "thinking": "   "},
        {"type": "text", "text": "t", "textSignature": "ts"},
        stop="stop",
    )
    out = transform_messages([msg], MODEL)[0]["content"]
    assert [b.get("thinking") for b in out[:3]] == ["", "[Reasoning redacted]", "plain"]
    assert out[3] == {"type": "text", "text": "t", "textSignature": "ts"}
    assert len(out) == 4


def test_images_downgraded_for_text_only_model():
    text_model = Model(id="m1", provider="p", api="anthropic-messages")
    img = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, img, img], "timestamp": 1},
        {**result("c"), "content": [img]},
    ]
    out = transform_messages(msgs, text_model)
    assert out[0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "text", "text": "(image omitted: model does not support images)"},
    ]
    assert out[1]["content"] == [
        {"type": "text", "text": "(tool image omitted: model does not support images)"}
    ]


def test_inputs_not_mutated_and_null_content_repaired():
    msgs = [{"role": "user", "content": None, "timestamp": 1}, assistant(call("c1"))]
    out = transform_messages(msgs, MODEL)
    assert out[0]["content"] == []
    assert msgs[0]["content"] is None
    assert len(msgs) == 2


def test_split_error_tool_result_images():
    img = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    msg = {**result("c9", "boom"), "isError": True}
    msg["content"] = [{"type": "text", "text": "boom"}, img]
    content, caption, images = split_error_tool_result_images(msg)
    assert content == [
        {"type": "text", "text": "boom"},
        {"type": "text", "text": "(image attached after the tool results)"},
    ]
    assert caption == "Images from the error result of tool call c9 (bash):"
    assert images == [img]
    assert split_error_tool_result_images(result("c1")) is None


def test_sanitize_surrogates():
    assert sanitize_surrogates("Hello 🙈 World") == "Hello 🙈 World"
    assert sanitize_surrogates("a\ud83d b") == "a b"
    assert sanitize_surrogates("a\ude48b") == "ab"
    assert sanitize_surrogates("\ud83d\ude48") == "🙈"


def test_thinking_level_clamped_as_pi_does():
    from tau.llm.providers._common import clamp_thinking_level

    plain = Model(id="m", provider="p", api="x", reasoning=True)
    assert [clamp_thinking_level(plain, lvl) for lvl in (None, "off", "high", "xhigh", "max")] == [
        None,
        None,
        "high",
        "high",
        "high",
    ]
    mapped = Model(
        id="m",
        provider="p",
        api="x",
        reasoning=True,
        compat={"thinkingLevelMap": {"off": None, "minimal": None, "max": "max"}},
    )
    assert [clamp_thinking_level(mapped, lvl) for lvl in ("off", "minimal", "xhigh")] == ["low", "low", "max"]
    assert clamp_thinking_level(Model(id="m", provider="p", api="x"), "high") is None
