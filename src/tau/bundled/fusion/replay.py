"""Action Fusion in a replay (:mod:`tau.bundled.sol_common.replay`): apply, undo, evidence.

- **apply** rewrites a branch as Action Fusion would have run it: an assistant message whose
  successful ``edit``/``write`` is followed, in the very next request, by a lone ``bash`` call would
  have carried that command as ``then_run``. The ``bash`` request and its result disappear; the
  command's output joins the mutation's result behind the :data:`~tau.bundled.fusion.wire.SUCCEEDED`
  (or :data:`~tau.bundled.fusion.wire.FAILED`) marker, written by the live tool's own
  :mod:`~tau.bundled.fusion.markers`.
- **undo** turns a fused call back into the plain call and its command into one more request, a
  lone ``bash`` call whose result is the command's output; the ``edit``/``write`` declarations of
  the system messages lose ``then_run``.
- Action Fusion makes no decision per request: it has no run.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from tau.bundled.fusion.markers import failed_block, succeeded_block
from tau.bundled.fusion.wire import FAILED, MARKERS, MECHANISM, MUTATIONS, SKIPPED, THEN_RUN, is_fused_call
from tau.bundled.sol_common.replay import ReplayHost, Undone
from tau.common.dataclass import dataclass
from tau.extension import ToolCall, entry_message, message_text, tool_calls

__all__ = ["REPLAY", "FusionReplay", "FusionResult", "count_fused", "fuse_branch", "unfuse_branch"]

Entry = dict[str, Any]


@dataclass
class FusionResult:
    """The fused branch and what was merged: one ``(mutation call id, command)`` per avoided request."""

    branch: list[Entry]
    merged: list[tuple[str, str]] = field(default_factory=list)


def _results_after(branch: list[Entry], start: int, ids: set[str]) -> tuple[dict[str, int], int]:
    """Positions of the tool results for ``ids`` right after ``start``, and the position after them."""
    found: dict[str, int] = {}
    position = start
    while position < len(branch):
        result = entry_message(branch[position], "toolResult")
        if result is None or result.get("toolCallId") not in ids:
            break
        found[str(result["toolCallId"])] = position
        position += 1
    return found, position


def _fusable(branch: list[Entry], index: int) -> tuple[ToolCall, int, int, int] | None:
    """``(mutation call, its result's position, bash call position, bash result position)``, or None."""
    first = entry_message(branch[index], "assistant")
    calls = tool_calls(first) if first is not None else []
    if not calls or first.get("stopReason") != "toolUse":  # type: ignore[union-attr]
        return None
    results, after = _results_after(branch, index + 1, {str(c.get("id")) for c in calls})
    if len(results) != len(calls) or after + 1 >= len(branch):
        return None
    second = entry_message(branch[after], "assistant")
    bash_calls = tool_calls(second) if second is not None else []
    if len(bash_calls) != 1 or bash_calls[0].get("name") != "bash" or second.get("stopReason") != "toolUse":  # type: ignore[union-attr]
        return None
    command = (bash_calls[0].get("arguments") or {}).get("command")
    bash_result = entry_message(branch[after + 1], "toolResult")
    if (
        not isinstance(command, str)
        or bash_result is None
        or bash_result.get("toolCallId") != bash_calls[0].get("id")
    ):
        return None
    mutations = [
        c
        for c in calls
        if c.get("name") in MUTATIONS
        and isinstance(c.get("arguments"), dict)
        and THEN_RUN not in c["arguments"]  # already fused: its command ran inside the call
        and not (entry_message(branch[results[str(c.get("id"))]], "toolResult") or {}).get("isError")
    ]
    if not mutations:
        return None
    mutation = mutations[-1]
    return mutation, results[str(mutation.get("id"))], after, after + 1


def _with_message(entry: Entry, message: dict[str, Any]) -> Entry:
    return {**entry, "message": message}


def _fused_call(
    message: dict[str, Any], call: Mapping[str, Any], bash_args: dict[str, Any]
) -> dict[str, Any]:
    then_run = {"command": bash_args["command"]}
    if isinstance(bash_args.get("timeout"), (int, float)):
        then_run["timeout"] = bash_args["timeout"]
    content = [
        {**block, "arguments": {**block["arguments"], THEN_RUN: then_run}} if block is call else block
        for block in message["content"]
    ]
    return {**message, "content": content}


def _fused_result(result: dict[str, Any], bash_result: dict[str, Any]) -> dict[str, Any]:
    output = message_text(bash_result)
    content = list(result.get("content") or [])
    if bash_result.get("isError"):
        return {**result, "content": [*content, failed_block(output)], "isError": True}
    return {**result, "content": [*content, succeeded_block(output)]}


def fuse_branch(branch: list[Entry]) -> FusionResult:
    """The branch as it would be with Action Fusion: every edit→command round trip merged."""
    fused: list[Entry] = list(branch)
    merged: list[tuple[str, str]] = []
    successor: dict[str, str | None] = {}
    index = 0
    while index < len(fused):
        found = _fusable(fused, index)
        if found is None:
            index += 1
            continue
        call, result_at, bash_at, bash_result_at = found
        bash_args = tool_calls(fused[bash_at]["message"])[0]["arguments"]
        fused[index] = _with_message(fused[index], _fused_call(fused[index]["message"], call, bash_args))
        fused[result_at] = _with_message(
            fused[result_at], _fused_result(fused[result_at]["message"], fused[bash_result_at]["message"])
        )
        merged.append((str(call.get("id")), bash_args["command"]))
        after = str(fused[bash_result_at + 1].get("id")) if bash_result_at + 1 < len(fused) else None
        for position in (bash_at, bash_result_at):
            successor[str(fused[position].get("id"))] = after
        del fused[bash_at : bash_result_at + 1]
        index = bash_at
    return FusionResult(_relinked(fused, successor), merged)


def count_fused(branch: Sequence[Entry]) -> int:
    """Calls in ``branch`` that already carried ``then_run`` (a session tau wrote with Action Fusion on)."""
    return sum(
        1
        for entry in branch
        if (message := entry_message(entry, "assistant")) is not None
        for call in tool_calls(message)
        if is_fused_call(call)
    )


def _relinked(branch: list[Entry], successor: dict[str, str | None]) -> list[Entry]:
    """Compactions that kept from a removed entry keep from the next surviving one."""
    if not successor:
        return branch

    def survivor(entry_id: Any) -> Any:
        while entry_id in successor:
            entry_id = successor[entry_id]
        return entry_id

    return [
        {**entry, "firstKeptEntryId": survivor(entry["firstKeptEntryId"])}
        if entry.get("type") == "compaction" and entry.get("firstKeptEntryId") in successor
        else entry
        for entry in branch
    ]


def _split_fused(content: list[Any]) -> tuple[list[Any], str | None, bool]:
    """``(the mutation's own content, the command's output or None when it never ran, failed)``."""
    for index, block in enumerate(content):
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if not isinstance(text, str):
            continue
        for marker in MARKERS:
            at = text.find(marker)
            if at < 0:
                continue
            before = text[:at].rstrip("\n")
            head = [*content[:index], *([{**block, "text": before}] if before else [])]
            if marker == SKIPPED:
                return head, None, False
            return head, text[at + len(marker) :].lstrip("\n"), marker == FAILED
    return list(content), None, False


def _unfuse(entries: list[Entry], index: int, counter: list[int]) -> list[Entry]:
    """The fused assistant entry at ``index`` with its results, as pi would have run them."""
    entry = entries[index]
    message = entry["message"]
    fused = {str(call.get("id")): call for call in tool_calls(message) if is_fused_call(call)}
    plain_content = [
        {**block, "arguments": {k: v for k, v in block["arguments"].items() if k != THEN_RUN}}
        if isinstance(block, dict) and str(block.get("id")) in fused and block.get("type") == "toolCall"
        else block
        for block in message["content"]
    ]
    out = [{**entry, "message": {**message, "content": plain_content}}]
    position = index + 1
    commands: list[tuple[ToolCall, str, bool, Entry]] = []
    while position < len(entries):
        result = entry_message(entries[position], "toolResult")
        if result is None:
            if entries[position].get("type") != "custom":
                break
            out.append(entries[position])
            position += 1
            continue
        call = fused.get(str(result.get("toolCallId")))
        if call is None:
            out.append(entries[position])
        else:
            mutation, output, failed = _split_fused(list(result.get("content") or []))
            mutation_failed = output is None and result.get("isError")
            out.append(
                {
                    **entries[position],
                    "message": {**result, "content": mutation, "isError": bool(mutation_failed)},
                }
            )
            if output is not None:
                commands.append((call, output, failed, entries[position]))
        position += 1
    for call, output, failed, after in commands:
        counter[0] += 1
        then_run = call["arguments"][THEN_RUN]
        arguments = {"command": then_run.get("command")}
        if isinstance(then_run.get("timeout"), (int, float)):
            arguments["timeout"] = then_run["timeout"]
        call_id = f"{call.get('id')}:then_run"
        request = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": arguments}],
            "api": message.get("api"),
            "provider": message.get("provider"),
            "model": message.get("model"),
            "stopReason": "toolUse",
            "timestamp": message.get("timestamp"),
        }
        bash = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": output}],
            "isError": failed,
            "timestamp": (after.get("message") or {}).get("timestamp"),
        }
        base = str(after.get("id"))
        out.append(
            {
                "type": "message",
                "id": f"{base}~run",
                "parentId": base,
                "timestamp": after.get("timestamp"),
                "message": request,
            }
        )
        out.append(
            {
                "type": "message",
                "id": f"{base}~out",
                "parentId": f"{base}~run",
                "timestamp": after.get("timestamp"),
                "message": bash,
            }
        )
    return out


def _without_then_run(message: dict[str, Any]) -> dict[str, Any]:
    """A system message whose ``edit``/``write`` declarations lose the ``then_run`` property."""
    tools = message.get("toolsAdded")
    if not isinstance(tools, list):
        return message
    stock = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        properties = (
            (tool.get("parameters") or {}).get("properties") if tool.get("name") in MUTATIONS else None
        )
        if isinstance(properties, dict) and THEN_RUN in properties:
            tool = copy.deepcopy(tool)
            del tool["parameters"]["properties"][THEN_RUN]
        stock.append(tool)
    return {**message, "toolsAdded": stock}


def unfuse_branch(branch: list[Entry]) -> tuple[list[Entry], int]:
    """``branch`` with every fused call split back into the call and a ``bash`` request; how many."""
    entries = list(branch)
    out: list[Entry] = []
    counter = [0]
    index = 0
    while index < len(entries):
        entry = entries[index]
        message = entry_message(entry)
        role = message.get("role") if message is not None else None
        if message is not None and role == "system":
            out.append({**entry, "message": _without_then_run(message)})
        elif (
            message is not None and role == "assistant" and any(is_fused_call(c) for c in tool_calls(message))
        ):
            end = index + 1
            while end < len(entries) and (
                entry_message(entries[end], "toolResult") is not None or entries[end].get("type") == "custom"
            ):
                end += 1
            out.extend(_unfuse(entries[:end], index, counter))
            index = end
            continue
        else:
            out.append(entry)
        index += 1
    return out, counter[0]


class FusionReplay:
    name = MECHANISM
    undo_rank = 3  # last: a fused result's log is back (the reducer's undo) before it is split
    not_measured: str | None = None

    def evidence(self, branch: Sequence[Entry]) -> int:
        """The fused calls in ``branch``."""
        return count_fused(branch)

    def undo(self, branch: list[Entry], host: ReplayHost) -> Undone:
        undone, unfused = unfuse_branch(branch)
        return Undone(undone, {"unfused": unfused})

    def apply(self, branch: list[Entry]) -> tuple[list[Entry], dict[str, Any]]:
        fusion = fuse_branch(branch)
        return fusion.branch, {"merged": len(fusion.merged), "alreadyFused": count_fused(branch)}

    def start(self, branch: list[Entry], host: ReplayHost) -> None:
        return None


REPLAY = FusionReplay()
