"""The ``context`` projection: two full sends of a large tool result, then its placeholder.

For each eligible message, in order: store the object (a failure leaves that message as it is),
count the sends it already had (the assistant messages after it in the projected list, or the
larger count recorded for it on the current branch), then send it in full or replace its content
by the placeholder. The batch of ledger records is appended once; only then are the messages
edited in place and the send counts advanced, so a failed append changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau.bundled.obspack.ledger import full_record, placeholder_record
from tau.bundled.obspack.observation import FULL_SENDS, THRESHOLD_BYTES, Observation, observation_of
from tau.bundled.obspack.placeholder import placeholder_for
from tau.extension import unchanged_prefix

__all__ = ["CandidateScan", "ProjectionPlan", "SendCounts", "plan_projection"]

ROOT_LEAF = "<root>"


@dataclass
class SendCounts:
    """Send counts per ``leaf entry id → observation id`` of one runtime root."""

    by_leaf: dict[str, dict[str, int]] = field(default_factory=dict)

    def on_branch(self, obs_id: str, above: int, branch_ids: Callable[[], set[str]]) -> int:
        """The largest count for ``obs_id`` recorded under an entry of the current branch, if above ``above``."""
        best = above
        candidates = [
            (leaf, counts[obs_id]) for leaf, counts in self.by_leaf.items() if counts.get(obs_id, 0) > above
        ]
        for leaf, count in candidates:
            if count > best and (leaf == ROOT_LEAF or leaf in branch_ids()):
                best = count
        return best

    def record(self, leaf: str, obs_id: str, count: int) -> None:
        counts = self.by_leaf.setdefault(leaf, {})
        counts[obs_id] = max(counts.get(obs_id, 0), count)


@dataclass
class ProjectionPlan:
    """What one ``context`` event will do once its ledger batch is written."""

    records: list[dict[str, Any]] = field(default_factory=list)
    edits: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    counts: list[tuple[str, int]] = field(default_factory=list)
    first_savings: list[int] = field(default_factory=list)

    def apply(self, leaf: str, send_counts: SendCounts) -> None:
        """Edit the messages in place and advance the counts (after the ledger append)."""
        for message, text in self.edits:
            message["content"] = [{"type": "text", "text": text}]
        for obs_id, count in self.counts:
            send_counts.record(leaf, obs_id, count)


def _large(message: dict[str, Any], limit: int) -> bool:
    content = message.get("content")
    if not isinstance(content, list):
        return False
    size = len(content)
    for block in content:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str):
            size += len(text)
    return size > limit


class CandidateScan:
    """:func:`_candidates`, remembered between requests for the leading messages that are the same
    objects as last time (the host reuses its copies and restores edited ones in place, so such a
    message still has its source's content when the handler sees it); only new messages are read.
    Any other change of the list (compaction, branch switch, a removed message) reads it all again.
    """

    def __init__(self) -> None:
        self._given: list[Any] = []
        self._found: list[tuple[dict[str, Any], int]] = []  # (message, assistants before it)
        self._assistants = 0

    def __call__(self, messages: list[dict[str, Any]]) -> tuple[list[tuple[dict[str, Any], int]], int]:
        if unchanged_prefix(messages, self._given) < len(self._given):
            self._given, self._found, self._assistants = [], [], 0
        limit = THRESHOLD_BYTES // 4
        assistants = self._assistants
        found = self._found
        for index in range(len(self._given), len(messages)):
            message = messages[index]
            role = message.get("role")
            if role == "assistant":
                assistants += 1
            elif role == "toolResult" and _large(message, limit):
                found.append((message, assistants))
        self._given, self._assistants = list(messages), assistants
        return [(message, assistants - before) for message, before in found], assistants + 1


def _candidates(messages: list[dict[str, Any]]) -> tuple[list[tuple[dict[str, Any], int]], int]:
    """The tool results that may be large, each with the number of assistant messages after it,
    and the request number. One pass touching each message once: this runs on every request, so a
    result is dismissed by its length alone when even 4 UTF-8 bytes per character stay under the
    threshold."""
    found: list[tuple[dict[str, Any], int]] = []
    after = 0
    limit = THRESHOLD_BYTES // 4
    for message in reversed(messages):
        role = message.get("role")
        if role == "assistant":
            after += 1
        elif role == "toolResult":
            content = message.get("content")
            if isinstance(content, list):
                size = len(content)
                for block in content:
                    text = block.get("text") if isinstance(block, dict) else None
                    if isinstance(text, str):
                        size += len(text)
                if size > limit:
                    found.append((message, after))
    found.reverse()
    return found, after + 1


def plan_projection(
    messages: list[dict[str, Any]],
    *,
    store: Callable[[Observation], None],
    send_counts: SendCounts,
    branch_ids: Callable[[], set[str]],
    head_bytes: int,
    tail_bytes: int,
    observe: Callable[[dict[str, Any]], Observation | None] = observation_of,
    placeholder: Callable[[Observation, int, int], str] = placeholder_for,
    scan: Callable[[list[dict[str, Any]]], tuple[list[tuple[dict[str, Any], int]], int]] = _candidates,
) -> ProjectionPlan:
    """Decide every eligible message of ``messages``; nothing is changed yet.

    ``scan`` finds the candidates (a :class:`CandidateScan` keeps its work between requests).
    """
    plan = ProjectionPlan()
    candidates, request = scan(messages)
    pending: dict[str, int] = {}
    for message, sends in candidates:
        try:
            observation = observe(message)
            if observation is None:
                continue
            store(observation)
        except Exception as exc:  # fail open: a packing failure never costs the agent its observation
            sys.stderr.write(f"[observationpack] fail-open for tool result: {exc}\n")
            continue
        previous = max(
            sends, pending.get(observation.id, 0), send_counts.on_branch(observation.id, sends, branch_ids)
        )
        if previous < FULL_SENDS:
            plan.records.append(full_record(observation, request))
            advanced = previous + 1
        else:
            text = placeholder(observation, head_bytes, tail_bytes)
            record = placeholder_record(observation, request, previous + 1, text)
            plan.records.append(record)
            plan.edits.append((message, text))
            if previous == FULL_SENDS:
                plan.first_savings.append(record["removedTokens"])
            advanced = min(FULL_SENDS + 1, previous + 1)
        pending[observation.id] = max(pending.get(observation.id, 0), advanced)
        if advanced > sends:
            plan.counts.append((observation.id, advanced))
    return plan
