"""ObservationPack in a replay (:mod:`tau.bundled.sol_common.replay`): decide, undo, evidence.

- **decide**: each request's messages are projected by the live extension's own planner
  (:class:`~tau.bundled.obspack.planner.Planner`, with the rules, window and write/read cache ratio
  the live extension derives from the settings and the request's model), send counts and swaps
  carried from request to request, nothing stored: the originals stay in the session file, which is
  what ``obs_recall`` restores from.
- **undo**: placeholders never reach the file; the model's ``obs_recall`` calls are removed with
  their results (a request made only of recalls disappears), and the system messages' declarations
  lose ``obs_recall``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from tau.bundled.obspack.observation import (
    Observation,
    arguments_observation,
    observation_of,
    text_observation,
)
from tau.bundled.obspack.pack import pack_rules, write_read_ratio
from tau.bundled.obspack.planner import Planner
from tau.bundled.obspack.projection import ROOT_LEAF, Applied, PackRules, SendCounts, sizes_needed
from tau.bundled.obspack.window import Window
from tau.bundled.obspack.wire import MECHANISM, RECALL_TOOL
from tau.bundled.sol_common.replay import ReplayHost, Request, Undone
from tau.bundled.sol_common.settings import SolSettings
from tau.common.dataclass import dataclass
from tau.extension import entry_message, tool_calls
from tau.extension.context_copies import ContextCopies

__all__ = ["REPLAY", "ObservationPackReplay", "PackRun", "PackState"]

Entry = dict[str, Any]


@dataclass
class PackState:
    """ObservationPack across one replay, with the state the live extension keeps: send counts and
    swaps per leaf, the context scan, and editable copies of the messages that keep their identity
    from request to request (as the host's copies do), so every decision is the live one."""

    settings: SolSettings = field(default_factory=SolSettings)
    rules: PackRules = field(init=False)
    counts: SendCounts = field(default_factory=SendCounts)
    applied: Applied = field(default_factory=Applied)
    planner: Planner = field(default_factory=Planner)
    copies: ContextCopies = field(default_factory=ContextCopies)
    placeholders: set[str] = field(default_factory=set)
    records: list[dict[str, Any]] = field(default_factory=list)  # the ledger lines the live extension writes
    observations: dict[int, tuple[Any, Observation | None]] = field(default_factory=dict)  # content, found
    originals: dict[str, bytes] = field(default_factory=dict)
    window: Window | None = None

    def __post_init__(self) -> None:
        self.rules = pack_rules(self.settings)
        if self.window is None:
            self.window = Window(self.rules.after_turns, self.settings.stale_max_turns)

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

        scan = self.planner.scan(visible, sized=sizes_needed(self.rules))
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
        self.records += plan.records
        for record in plan.records:
            if record.get("event") == "placeholder":
                self.placeholders.add(record["id"])
        return given


def _recallable(pack: PackState, branch: list[Entry]) -> int:
    """How many replaced results (and arguments) ``obs_recall`` can restore byte for byte from the branch."""
    restorable: dict[str, bytes] = {}
    for entry in branch:
        message = entry_message(entry)
        if not isinstance(message, dict):
            continue
        found = []
        if message.get("role") == "toolResult":
            found = [observation_of(message) or text_observation(message)]
        elif message.get("role") == "assistant":
            found = [arguments_observation(call) for call in tool_calls(message)]
        for observation in found:
            if observation is not None and observation.id in pack.placeholders:
                restorable[observation.id] = observation.data
    return sum(1 for obs_id in pack.placeholders if restorable.get(obs_id) == pack.originals.get(obs_id))


def _without_recalls(message: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message without its ``obs_recall`` calls; None when nothing else is left."""
    content = [
        block
        for block in message.get("content") or []
        if not (
            isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") == RECALL_TOOL
        )
    ]
    if not any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content):
        return None
    return {**message, "content": content}


def _stock_declarations(message: dict[str, Any]) -> dict[str, Any]:
    """A system message without the ``obs_recall`` declaration and its line in the tools section."""
    tools = message.get("toolsAdded")
    if not isinstance(tools, list):
        return message
    stock = [tool for tool in tools if isinstance(tool, dict) and tool.get("name") != RECALL_TOOL]
    sections = message.get("sections")
    if isinstance(sections, dict) and isinstance(sections.get("tools"), str):
        lines = [line for line in sections["tools"].split("\n") if not line.startswith(f"- {RECALL_TOOL}:")]
        sections = {**sections, "tools": "\n".join(lines)}
    return {**message, "toolsAdded": stock, **({"sections": sections} if sections is not None else {})}


def without_recalls(branch: list[Entry]) -> tuple[list[Entry], int]:
    """``branch`` without the ``obs_recall`` calls and their results; how many calls."""
    entries = list(branch)
    out: list[Entry] = []
    removed: set[str] = set()
    recalls = 0
    index = 0
    while index < len(entries):
        entry = entries[index]
        message = entry_message(entry)
        role = message.get("role") if message is not None else None
        if message is not None and role == "system":
            out.append({**entry, "message": _stock_declarations(message)})
        elif (
            message is not None
            and role == "assistant"
            and any(c.get("name") == RECALL_TOOL for c in tool_calls(message))
        ):
            calls = [c for c in tool_calls(message) if c.get("name") == RECALL_TOOL]
            removed |= {str(c.get("id")) for c in calls}
            recalls += len(calls)
            kept = _without_recalls(message)
            if kept is not None:
                entries[index] = {**entry, "message": kept}
                continue
        elif message is not None and role == "toolResult" and str(message.get("toolCallId")) in removed:
            pass
        else:
            out.append(entry)
        index += 1
    return out, recalls


class PackRun:
    """ObservationPack's decisions across one replay."""

    def __init__(self, branch: list[Entry], host: ReplayHost) -> None:
        self.branch = branch
        self.host = host
        self.settings = host.sol_settings()
        self.pack = PackState(self.settings)

    def request(self, messages: list[dict[str, Any]], work: list[Entry], index: int) -> list[dict[str, Any]]:
        message = work[index].get("message") or {}
        model = self.host.model(str(message.get("provider", "")), str(message.get("model", "")))
        ratio = write_read_ratio(model, self.settings.cache_write_read_ratio)
        return self.pack.project(messages, work, index, ratio)

    def sent(self, request: Request) -> None:
        return None

    def after(self, work: list[Entry], index: int) -> Entry | None:
        return None

    def details(self) -> dict[str, Any]:
        return {
            "placeholders": len(self.pack.placeholders),
            "recallable": _recallable(self.pack, self.branch),
        }


class ObservationPackReplay:
    name = MECHANISM
    undo_rank = 2
    not_measured: str | None = None

    def evidence(self, branch: Sequence[Entry]) -> int:
        """The ``obs_recall`` calls in ``branch`` (placeholders never reach a session file)."""
        return sum(
            1
            for entry in branch
            if (message := entry_message(entry, "assistant")) is not None
            for call in tool_calls(message)
            if call.get("name") == RECALL_TOOL
        )

    def undo(self, branch: list[Entry], host: ReplayHost) -> Undone:
        undone, recalls = without_recalls(branch)
        return Undone(undone, {"recalls": recalls})

    def apply(self, branch: list[Entry]) -> tuple[list[Entry], dict[str, Any]]:
        return branch, {}

    def start(self, branch: list[Entry], host: ReplayHost) -> PackRun:
        return PackRun(branch, host)


REPLAY = ObservationPackReplay()
