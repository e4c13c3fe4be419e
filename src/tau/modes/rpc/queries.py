"""What the RPC queries report about a session (pi 1.6 ``AgentSession`` getters the session lacks).

``session_state`` is pi's ``RpcSessionState``; ``session_stats`` its ``getSessionStats``;
``fork_messages`` its ``getUserMessagesForForking``. Keys pi would leave ``undefined`` are omitted.
"""

from __future__ import annotations

from typing import Any

from tau.llm.messages import content_text, entry_message, tool_calls

__all__ = ["fork_messages", "session_state", "session_stats"]


def session_state(session: Any) -> dict[str, Any]:
    """pi's ``RpcSessionState`` (keys that would be ``undefined`` are left out)."""
    state: dict[str, Any] = {}
    if session.model is not None:
        state["model"] = session.model.to_json()
    state.update(
        thinkingLevel=session.thinking_level,
        isStreaming=bool(session.is_streaming),
        isCompacting=bool(session.is_compacting),
        steeringMode=session.agent.steering_mode,
        followUpMode=session.agent.follow_up_mode,
    )
    if session.session_file is not None:
        state["sessionFile"] = session.session_file
    state["sessionId"] = session.session_id
    name = session.get_session_name()
    if name is not None:
        state["sessionName"] = name
    state.update(
        autoCompactionEnabled=bool(session.settings.get("compaction.enabled", True)),
        messageCount=len(session.messages),
        pendingMessageCount=session.pending_message_count,
    )
    return state


def _usage_totals(totals: dict[str, float], usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        totals[key] += usage.get(key) or 0
    totals["cost"] += (usage.get("cost") or {}).get("total") or 0


def session_stats(session: Any) -> dict[str, Any]:
    """pi's ``getSessionStats``: counts and usage over every entry of the file (compacted history too)."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0, "toolCalls": 0, "total": 0}
    totals: dict[str, float] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0}
    for entry in session.session_manager.get_entries():
        kind = entry.get("type")
        if kind == "usage" or (kind in ("branch_summary", "compaction") and entry.get("usage")):
            _usage_totals(totals, entry.get("usage"))
        if kind != "message":
            continue
        counts["total"] += 1
        message = entry.get("message") or {}
        role = message.get("role")
        if role == "user":
            counts["user"] += 1
        elif role == "toolResult":
            counts["toolResult"] += 1
            _usage_totals(totals, message.get("usage"))
        elif role == "assistant":
            counts["assistant"] += 1
            counts["toolCalls"] += len(tool_calls(message))
            _usage_totals(totals, message.get("usage"))
    stats: dict[str, Any] = {}
    if session.session_file is not None:
        stats["sessionFile"] = session.session_file
    stats.update(
        sessionId=session.session_id,
        userMessages=counts["user"],
        assistantMessages=counts["assistant"],
        toolCalls=counts["toolCalls"],
        toolResults=counts["toolResult"],
        totalMessages=counts["total"],
        tokens={
            "input": totals["input"],
            "output": totals["output"],
            "cacheRead": totals["cacheRead"],
            "cacheWrite": totals["cacheWrite"],
            "total": totals["input"] + totals["output"] + totals["cacheRead"] + totals["cacheWrite"],
        },
        cost=totals["cost"],
    )
    usage = session.get_context_usage()
    if usage is not None:
        stats["contextUsage"] = usage
    return stats


def fork_messages(session: Any) -> list[dict[str, str]]:
    """pi's ``getUserMessagesForForking``: every user message with text, in file order."""
    found = []
    for entry in session.session_manager.get_entries():
        message = entry_message(entry, "user")
        if message is None:
            continue
        text = content_text(message.get("content") or "", "")
        if text:
            found.append({"entryId": entry["id"], "text": text})
    return found
