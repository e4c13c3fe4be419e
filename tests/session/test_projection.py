"""Projection rules of pi 1.6 (``session-manager.ts``, ``messages.ts``) on small hand-made branches."""

from __future__ import annotations

from tau.session.projection import (
    build_context_entries,
    build_session_context,
    build_session_projection,
    convert_to_llm,
)

TS = "2026-11-29T23:42:14.169Z"
TS_MS = 1795995734169


class Branch:
    """Builds a linear root→leaf branch of entries with ids e1, e2, ..."""

    def __init__(self) -> None:
        self.entries: list[dict] = []

    def add(self, kind: str, **fields) -> str:
        entry_id = fields.pop("id", f"e{len(self.entries) + 1}")
        parent = self.entries[-1]["id"] if self.entries else None
        self.entries.append({"type": kind, "id": entry_id, "parentId": parent, "timestamp": TS, **fields})
        return entry_id

    def user(self, text: str) -> str:
        return self.add("message", message={"role": "user", "content": text, "timestamp": 1})

    def assistant(self, text: str, model: str = "m1", provider: str = "p1") -> str:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "provider": provider,
            "model": model,
            "stopReason": "stop",
            "timestamp": 2,
        }
        return self.add("message", message=message)

    def tool_result(self, text: str) -> str:
        message = {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 3,
        }
        return self.add("message", message=message)

    def system(self, text: str = "") -> str:
        return self.add("message", message={"role": "system", "content": text, "timestamp": 0})

    def compaction(self, first_kept: str | None, summary: str = "S", **fields) -> str:
        entry_id = f"e{len(self.entries) + 1}"
        return self.add(
            "compaction",
            id=entry_id,
            summary=summary,
            firstKeptEntryId=first_kept or entry_id,
            tokensBefore=100,
            **fields,
        )


def texts(messages: list[dict]) -> list[str]:
    """One short label per model message: role and its first text."""
    out = []
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else (content[0]["text"] if content else "")
        out.append(f"{message['role']}:{text}")
    return out


def context_texts(branch: Branch) -> list[str]:
    return texts(convert_to_llm(build_session_context(branch.entries)["messages"]))


SUMMARY_TEXT = "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"


# --- build_context_entries -------------------------------------------------------------------


def test_without_compaction_the_whole_branch_is_the_context():
    b = Branch()
    b.add("model_change", provider="p", modelId="m")
    b.user("hi")
    b.assistant("hello")
    assert build_context_entries(b.entries) == b.entries


def test_compaction_keeps_from_first_kept_entry_and_everything_after():
    b = Branch()
    b.user("old")
    b.assistant("old reply")
    kept = b.user("kept")
    b.assistant("kept reply")
    b.compaction(kept)
    b.user("new")

    ids = [entry["id"] for entry in build_context_entries(b.entries)]

    assert ids == ["e5", "e3", "e4", "e6"]
    assert context_texts(b) == [f"user:{SUMMARY_TEXT}", "user:kept", "assistant:kept reply", "user:new"]


def test_system_messages_in_the_kept_range_are_left_out_but_the_checkpoint_is_replayed():
    b = Branch()
    kept = b.system("old prompt")
    b.user("kept")
    checkpoint = {"role": "system", "content": "checkpoint", "timestamp": 5}
    b.compaction(kept, systemMessage=checkpoint)
    b.system("later prompt")

    messages = build_session_context(b.entries)["messages"]

    assert [m["role"] for m in messages] == ["system", "compactionSummary", "user", "system"]
    assert messages[0] is checkpoint
    assert messages[3]["content"] == "later prompt"


def test_retain_none_compaction_keeps_nothing_before_it():
    b = Branch()
    b.user("a")
    b.assistant("b")
    b.compaction(None)  # firstKeptEntryId = its own id
    b.user("c")
    assert context_texts(b) == [f"user:{SUMMARY_TEXT}", "user:c"]


def test_first_kept_entry_not_on_the_branch_keeps_nothing_before_the_compaction():
    b = Branch()
    b.user("a")
    b.compaction("elsewhere")
    b.user("c")
    assert context_texts(b) == [f"user:{SUMMARY_TEXT}", "user:c"]


def test_only_the_latest_compaction_counts_and_an_older_one_in_the_kept_range_gives_nothing():
    b = Branch()
    b.user("a")
    kept = b.user("b")
    older = b.compaction(None, summary="old summary")
    b.user("c")
    b.compaction(kept, summary="S")
    b.user("d")

    projection = build_session_projection(b.entries)

    assert [(p["sourceEntry"]["id"], [m["role"] for m in p["messages"]]) for p in projection["entries"]] == [
        ("e5", ["compactionSummary"]),
        ("e2", ["user"]),
        (older, []),
        ("e4", ["user"]),
        ("e6", ["user"]),
    ]


def test_empty_branch_projects_to_nothing():
    assert build_session_projection([]) == {
        "entries": [],
        "messages": [],
        "thinkingLevel": "off",
        "model": None,
    }


# --- context edits ---------------------------------------------------------------------------


def test_null_edit_omits_its_target_and_keeps_the_entry_in_the_map():
    b = Branch()
    b.user("q")
    failed = b.assistant("error")
    b.add("context_edit", targetId=failed, replacement=None)
    b.assistant("ok")

    projection = build_session_projection(b.entries)

    assert [(p["sourceEntry"]["id"], len(p["messages"])) for p in projection["entries"]] == [
        ("e1", 1),
        (failed, 0),
        ("e3", 0),
        ("e4", 1),
    ]
    assert context_texts(b) == ["user:q", "assistant:ok"]


def test_latest_edit_of_a_target_wins():
    b = Branch()
    target = b.user("original")
    b.add("context_edit", targetId=target, replacement=None)
    b.add("context_edit", targetId=target, replacement={"content": "second"})
    assert context_texts(b) == ["user:second"]


def test_string_replacement_becomes_a_text_block_on_assistant_and_tool_results_only():
    b = Branch()
    user = b.user("u")
    assistant = b.assistant("a")
    result = b.tool_result("r")
    b.add("context_edit", targetId=user, replacement={"content": "U"})
    b.add("context_edit", targetId=assistant, replacement={"content": "A"})
    b.add("context_edit", targetId=result, replacement={"content": "R"})

    messages = build_session_context(b.entries)["messages"]

    assert [m["content"] for m in messages] == [
        "U",
        [{"type": "text", "text": "A"}],
        [{"type": "text", "text": "R"}],
    ]
    assert messages[1]["model"] == "m1" and messages[2]["toolCallId"] == "call_1"
    assert b.entries[1]["message"]["content"] == [{"type": "text", "text": "a"}], (
        "the stored message is untouched"
    )


def test_edit_replaces_custom_message_content():
    b = Branch()
    target = b.add("custom_message", customType="x", content="old", display=True)
    b.add("context_edit", targetId=target, replacement={"content": [{"type": "text", "text": "new"}]})
    assert context_texts(b) == ["user:new"]


def test_edit_off_the_active_branch_has_no_effect():
    b = Branch()
    target = b.user("q")
    b.assistant("a")
    side = {"type": "context_edit", "id": "side", "parentId": target, "timestamp": TS, "targetId": target}
    side["replacement"] = None
    # ``side`` is a sibling branch: not in the root→leaf list handed to the projection.
    assert side not in b.entries
    assert context_texts(b) == ["user:q", "assistant:a"]


def test_edit_before_the_kept_range_is_not_applied():
    b = Branch()
    target = b.user("kept")
    b.add("context_edit", targetId=target, replacement=None)
    b.assistant("a")
    b.compaction(target)  # kept range starts at the target, so the edit (e2) is kept too
    assert context_texts(b) == [f"user:{SUMMARY_TEXT}", "assistant:a"]

    b2 = Branch()
    b2.user("q")
    target2 = b2.user("kept")
    b2.add("context_edit", targetId="e1", replacement=None)  # before the kept range: dropped
    b2.compaction(target2)
    assert context_texts(b2) == [f"user:{SUMMARY_TEXT}", "user:kept"]


# --- entry → agent message -------------------------------------------------------------------


def test_null_content_is_repaired():
    b = Branch()
    b.add("message", message={"role": "user", "content": None, "timestamp": 1})
    b.add("message", message={"role": "assistant", "timestamp": 2})
    b.add("message", message={"role": "system", "content": None, "timestamp": 3})
    messages = build_session_context(b.entries)["messages"]
    assert messages == [
        {"role": "user", "content": [], "timestamp": 1},
        {"role": "assistant", "timestamp": 2, "content": []},
        {"role": "system", "content": "", "timestamp": 3},
    ]


def test_stored_messages_are_reused_not_copied():
    b = Branch()
    b.user("hi")
    b.assistant("hello")
    messages = convert_to_llm(build_session_context(b.entries)["messages"])
    assert messages[0] is b.entries[0]["message"] and messages[1] is b.entries[1]["message"]


def test_custom_message_entry_becomes_a_custom_agent_message_with_ms_timestamp():
    b = Branch()
    b.add("custom_message", customType="nudge", content="go on", display=False, details={"n": 1})
    b.add("custom_message", customType="plain", display=True)
    assert build_session_context(b.entries)["messages"] == [
        {
            "role": "custom",
            "customType": "nudge",
            "content": "go on",
            "display": False,
            "details": {"n": 1},
            "timestamp": TS_MS,
        },
        {"role": "custom", "customType": "plain", "content": [], "display": True, "timestamp": TS_MS},
    ]


def test_branch_summary_with_text_becomes_a_branch_summary_message():
    b = Branch()
    b.add("branch_summary", fromId="x", summary="went elsewhere")
    b.add("branch_summary", fromId="y", summary="")
    assert build_session_context(b.entries)["messages"] == [
        {"role": "branchSummary", "summary": "went elsewhere", "fromId": "x", "timestamp": TS_MS}
    ]
    assert context_texts(b) == [
        "user:The following is a summary of a branch that this conversation came back from:\n\n"
        "<summary>\nwent elsewhere</summary>"
    ]


def test_other_entry_types_contribute_nothing():
    b = Branch()
    for kind in (
        "model_change",
        "thinking_level_change",
        "usage",
        "custom",
        "label",
        "session_info",
        "future_x",
    ):
        b.add(kind)
    b.user("only")
    projection = build_session_projection(b.entries)
    assert [len(p["messages"]) for p in projection["entries"]] == [0] * 7 + [1]


# --- thinking level and model ----------------------------------------------------------------


def test_thinking_level_and_model_come_from_the_whole_branch():
    b = Branch()
    b.add("thinking_level_change", thinkingLevel="high")
    b.add("model_change", provider="anthropic", modelId="claude")
    b.user("q")
    b.assistant("a", model="gpt", provider="openai")
    b.compaction(None)
    context = build_session_context(b.entries)
    assert (context["thinkingLevel"], context["model"]) == ("high", {"provider": "openai", "modelId": "gpt"})

    b.add("model_change", provider="anthropic", modelId="claude")
    assert build_session_context(b.entries)["model"] == {"provider": "anthropic", "modelId": "claude"}


# --- convert_to_llm --------------------------------------------------------------------------


def bash(**fields) -> dict:
    return {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 7, **fields}  # fmt: skip


def bash_text(**fields) -> str:
    return convert_to_llm([bash(**fields)])[0]["content"][0]["text"]


def test_bash_execution_rendering():
    assert convert_to_llm([bash(output="a\nb")]) == [
        {"role": "user", "content": [{"type": "text", "text": "Ran `ls`\n```\na\nb\n```"}], "timestamp": 7}
    ]
    assert bash_text() == "Ran `ls`\n(no output)"
    assert bash_text(exitCode=2) == "Ran `ls`\n(no output)\n\nCommand exited with code 2"
    assert bash_text(exitCode=None) == "Ran `ls`\n(no output)"
    assert bash_text(cancelled=True, exitCode=1) == "Ran `ls`\n(no output)\n\n(command cancelled)"
    assert bash_text(output="x", truncated=True, fullOutputPath="/tmp/o.log") == (
        "Ran `ls`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/o.log]"
    )
    assert bash_text(truncated=True) == "Ran `ls`\n(no output)"


def test_bash_execution_excluded_from_context_is_dropped():
    assert convert_to_llm([bash(excludeFromContext=True), bash(excludeFromContext=False)]) == [
        {"role": "user", "content": [{"type": "text", "text": "Ran `ls`\n(no output)"}], "timestamp": 7}
    ]


def test_custom_and_summary_messages_become_user_messages():
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    messages = [
        {"role": "custom", "customType": "t", "content": "hi", "display": True, "details": 1, "timestamp": 1},
        {"role": "custom", "customType": "t", "content": [image], "display": False, "timestamp": 2},
        {"role": "compactionSummary", "summary": "S", "tokensBefore": 9, "timestamp": 3},
        {"role": "branchSummary", "summary": "B", "fromId": "root", "timestamp": 4},
        {"role": "somethingElse", "timestamp": 5},
    ]
    assert convert_to_llm(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
        {"role": "user", "content": [image], "timestamp": 2},
        {"role": "user", "content": [{"type": "text", "text": SUMMARY_TEXT}], "timestamp": 3},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The following is a summary of a branch that this conversation came back from:"
                    "\n\n<summary>\nB</summary>",
                }
            ],
            "timestamp": 4,
        },
    ]


def test_blocked_images_become_one_text_per_run():
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    text = {"type": "text", "text": "look"}
    disabled = {"type": "text", "text": "Image reading is disabled."}
    user = {"role": "user", "content": [image, image, text, image], "timestamp": 1}
    result = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "read",
        "content": [image],
        "isError": False,
    }
    assistant = {"role": "assistant", "content": [text], "timestamp": 2}
    plain = {"role": "user", "content": [text], "timestamp": 3}

    converted = convert_to_llm([user, result, assistant, plain], block_images=True)

    assert converted == [
        {"role": "user", "content": [disabled, text, disabled], "timestamp": 1},
        {**result, "content": [disabled]},
        assistant,
        plain,
    ]
    assert converted[3] is plain and user["content"][0] is image, "inputs are not modified"
    assert convert_to_llm([user])[0] is user, "images pass when not blocked"


# --- timestamps as ``new Date(x).getTime()`` ------------------------------------------------------


def test_entry_timestamps_become_milliseconds_as_javascript_reads_them():
    from tau.session.messages import js_date_ms

    assert js_date_ms(TS) == TS_MS
    assert js_date_ms("2026-11-29T23:42:14Z") == TS_MS - 169
    assert js_date_ms("2026-11-30T00:42:14.169+01:00") == TS_MS
    assert js_date_ms("2026-11-29T23:42:14.1699Z") == TS_MS, "digits past milliseconds are cut"
    assert js_date_ms("1970-01-01") == 0
    assert js_date_ms("+001970-01-01T00:00:00.000Z") == 0
    assert js_date_ms(1234.9) == 1234
    assert (js_date_ms(None), js_date_ms(True), js_date_ms([TS])) == (0, 1, TS_MS), "JavaScript's ToNumber"
    for bad in ("yesterday", "2026-13-01T00:00:00Z", "", [], {}):
        assert js_date_ms(bad) is None, bad

    b = Branch()
    b.add("custom_message", customType="x", content="c", display=True)
    b.entries[-1]["timestamp"] = "not a date"
    b.add("branch_summary", fromId="x", summary="s")
    del b.entries[-1]["timestamp"]
    assert [m["timestamp"] for m in build_session_context(b.entries)["messages"]] == [None, None]
