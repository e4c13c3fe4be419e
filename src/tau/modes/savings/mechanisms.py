"""The context-economy mechanisms as a replay sees them.

- **Action Fusion** rewrites the branch: an assistant message whose successful ``edit``/``write``
  is followed, in the very next request, by a lone ``bash`` call would have carried that command as
  ``then_run``. The ``bash`` request and its result disappear; the command's output joins the
  mutation's result behind the ``[then_run:succeeded]`` (or ``[then_run:failed]``) marker.
- **ObservationPack** rewrites each request's messages with the bundled extension's own projection
  (:class:`tau.bundled.obspack.planner.Planner`, deciding as
  :func:`tau.bundled.obspack.projection.plan_projection` does), send counts carried from request to
  request, nothing stored: the originals stay in the session file, which is what ``obs_recall``
  restores from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tau.bundled.fusion.markers import failed_block, succeeded_block
from tau.bundled.obspack.observation import Observation, observation_of
from tau.bundled.obspack.planner import Planner
from tau.bundled.obspack.projection import ROOT_LEAF, Applied, PackRules, SendCounts
from tau.bundled.obspack.window import Window
from tau.extension.context_copies import ContextCopies
from tau.llm.messages import ToolCall, entry_message, message_text, tool_calls

__all__ = ["FusionResult", "PackState", "count_fused", "fuse_branch"]

Entry = dict[str, Any]
MUTATIONS = ("edit", "write")


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
        and "then_run" not in c["arguments"]  # already fused: its command ran inside the call
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
        {**block, "arguments": {**block["arguments"], "then_run": then_run}} if block is call else block
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


def count_fused(branch: list[Entry]) -> int:
    """Calls in ``branch`` that already carried ``then_run`` (a session tau wrote with Action Fusion on)."""
    return sum(
        1
        for entry in branch
        if (message := entry_message(entry, "assistant")) is not None
        for call in tool_calls(message)
        if call.get("name") in MUTATIONS and isinstance((call.get("arguments") or {}).get("then_run"), dict)
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


@dataclass
class PackState:
    """ObservationPack across one replay, with the state the live extension keeps: send counts and
    swaps per leaf, the context scan, and editable copies of the messages that keep their identity
    from request to request (as the host's copies do), so every decision is the live one."""

    head_bytes: int = 512
    tail_bytes: int = 512
    rules: PackRules = field(init=False)
    counts: SendCounts = field(default_factory=SendCounts)
    applied: Applied = field(default_factory=Applied)
    planner: Planner = field(default_factory=Planner)
    copies: ContextCopies = field(default_factory=ContextCopies)
    placeholders: set[str] = field(default_factory=set)
    observations: dict[int, tuple[Any, Observation | None]] = field(default_factory=dict)  # content, found
    originals: dict[str, bytes] = field(default_factory=dict)
    max_turns: int = 12
    window: Window | None = None

    def __post_init__(self) -> None:
        self.rules = PackRules(head_bytes=self.head_bytes, tail_bytes=self.tail_bytes)
        if self.window is None:
            self.window = Window(self.rules.after_turns, self.max_turns)

    def observe(self, message: dict[str, Any]) -> Observation | None:
        key = id(message)
        cached = self.observations.get(key)
        content = message.get("content")
        if cached is not None and cached[0] is content:
            return cached[1]
        observation = observation_of(message)
        self.observations[key] = (content, observation)
        return observation

    def project(
        self, messages: list[dict[str, Any]], branch: list[Entry], end: int, ratio: float = 12.5
    ) -> list[dict[str, Any]]:
        """The messages of the request made after ``branch[:end]``, as ObservationPack sends them."""
        given = self.copies.copy(messages)
        visible = [message for message in given if message.get("role") != "system"]
        ids: dict[str, set[str]] = {}

        def branch_ids() -> set[str]:
            if "ids" not in ids:
                ids["ids"] = {str(entry.get("id")) for entry in branch[:end]}
            return ids["ids"]

        def store(observation: Observation) -> None:
            # Nothing is written: the original stays in the session file, where recall restores it from.
            self.originals.setdefault(observation.id, observation.data)

        scan = self.planner.scan(visible)
        window = self.window
        assert window is not None
        if self.rules.stale:
            window.note_calls(scan.new_calls)
        rules = self.rules
        if window.turns != rules.after_turns:
            rules = dataclasses.replace(rules, after_turns=window.turns)
        plan = self.planner.plan(
            visible,
            store=store,
            send_counts=self.counts,
            branch_ids=branch_ids,
            rules=rules,
            applied=self.applied,
            write_read_ratio=ratio,
            observe=self.observe,
            scanned=True,
        )
        leaf = str(branch[end - 1].get("id")) if end > 0 else ROOT_LEAF
        plan.apply(leaf, self.counts, self.applied)
        window.note_swaps(plan)
        for record in plan.records:
            if record.get("event") == "placeholder":
                self.placeholders.add(record["id"])
        return given
