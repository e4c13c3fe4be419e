"""Issue 17: faux's usage and payload kept per message between calls equal the ones made afresh.

A run's calls send the host's copies of the messages: the same objects again plus new ones, some
edited in place by ``context`` handlers (and restored by the host), and the payload handed to
``before_provider_request`` handlers, which may change it in place. Generated runs (hypothesis)
drive a provider's memos and the plain functions side by side.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.common import jsjson
from tau.llm.providers.faux import chat_completions_payload, estimate_usage, message_memo
from tau.llm.types import Model

MODEL = Model(id="faux-1", name="faux", api="faux", provider="faux", base_url="", max_tokens=100)


def _message(kind: str, number: int) -> dict[str, Any]:
    if kind == "system":
        tool = {"name": f"t{number % 3}", "description": "d", "parameters": {"type": "object"}}
        return {"role": "system", "content": f"prompt {number}", "toolsAdded": [tool], "timestamp": 0}
    if kind == "user":
        return {
            "role": "user",
            "content": [{"type": "text", "text": f"question {number} é😀"}],
            "timestamp": number,
        }
    if kind == "image":
        image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        return {"role": "user", "content": [{"type": "text", "text": "see"}, image], "timestamp": number}
    if kind == "assistant":
        call = {
            "type": "toolCall",
            "id": f"c{number}",
            "name": "bash",
            "arguments": {"command": f"ls {number}"},
        }
        return {"role": "assistant", "content": [{"type": "text", "text": f"answer {number}"}, call]}
    return {"role": "toolResult", "toolCallId": f"c{number}", "toolName": "bash", "content": [{"type": "text", "text": "x" * number}]}  # fmt: skip


STEP = st.tuples(
    st.lists(st.sampled_from(["user", "image", "assistant", "tool", "system"]), max_size=4),
    st.sampled_from(["none", "edit", "edit_block", "restore", "drop_head", "payload_edit", "payload_list"]),
    st.integers(0, 99),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=12))
def test_usage_and_payload_kept_between_calls_equal_fresh_ones(steps):
    messages: list[dict[str, Any]] = [_message("system", 0)]
    sources: dict[int, Any] = {}
    memo = message_memo()
    cache_kept: dict[str, list[str]] = {}
    cache_fresh: dict[str, list[str]] = {}
    for number, (added, edit, pick) in enumerate(steps):
        messages = [*messages, *(_message(kind, number * 10 + i) for i, kind in enumerate(added))]
        target = messages[pick % len(messages)]
        if edit == "edit":  # a context handler replaces a copy's content
            sources.setdefault(id(target), jsjson.loads(jsjson.dumps(target)))
            target["content"] = [{"type": "text", "text": f"[packed {pick}]"}]
        elif edit == "edit_block" and isinstance(target.get("content"), list) and target["content"]:
            sources.setdefault(id(target), jsjson.loads(jsjson.dumps(target)))
            target["content"][0]["text"] = f"edited {pick}"
        elif edit == "restore":  # the host restores an edited copy in place
            for message in messages:
                if id(message) in sources:
                    message.clear()
                    message.update(jsjson.loads(jsjson.dumps(sources.pop(id(message)))))
        elif edit == "drop_head" and len(messages) > 2:  # a compaction: another list
            messages = [messages[0], *messages[2:]]
        context = {"messages": list(messages)}
        memo.refresh(context["messages"])  # what a provider's call does first
        if pick % 4 == 3:  # no before_provider_request hook: no payload this call
            kept = {"messages": []}
        else:
            kept = chat_completions_payload(MODEL, context, memo)
            assert jsjson.dumps(kept) == jsjson.dumps(chat_completions_payload(MODEL, context))
        if edit == "payload_edit" and kept["messages"]:  # a before_provider_request handler
            kept["messages"][pick % len(kept["messages"])]["content"] = "changed by a handler"
        elif edit == "payload_list" and kept["messages"]:
            item = kept["messages"][pick % len(kept["messages"])]
            if isinstance(item.get("content"), list) and item["content"]:
                item["content"][0]["text"] = "changed in place"
        reply = [{"type": "text", "text": "done"}]
        got = estimate_usage(messages, reply, session_id="s", prompt_cache=cache_kept, memo=memo)
        assert got == estimate_usage(messages, reply, session_id="s", prompt_cache=cache_fresh)
