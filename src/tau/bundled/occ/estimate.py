"""What OCC measures before deciding (extensions.md §5.6.3): context size and removable history.

Both are priced on the *observed* projection, the messages OCC's ``context`` handler saw last, after
every other context transformer (ObservationPack placeholders count at their small projected
size). What is removable is what the host's compaction will remove: the messages
:func:`~tau.extension.prepare_compaction` summarizes, the history before the cut and, for a cut
inside a turn, the turn's prefix (pi 1.6 summarizes that prefix apart and drops it too). A message
OCC cannot match to exactly one observed message counts nothing: the estimate never substitutes raw
sizes, so it can only underestimate the saving.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from tau.common.dataclass import dataclass
from tau.common.jsstr import js_len
from tau.extension import CompactionSettings as HostCompactionSettings
from tau.extension import (
    estimate_tokens,
    is_assistant,
    message_key,
    tool_calls,
    unchanged_prefix,
)

if TYPE_CHECKING:
    from tau.extension import ChangeLog

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "CompactionSettings",
    "ObservedTokens",
    "boundary_keep_tokens",
    "compaction_settings",
    "context_tokens",
    "keep_from",
    "removable_tokens",
]

DEFAULT_KEEP_RECENT_TOKENS = 20_000
DEFAULT_RESERVE_TOKENS = 16_384


@dataclass(frozen=True)
class CompactionSettings:
    """The compaction sizes OCC plans with: recent tokens kept, tokens reserved for the reply."""

    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def compaction_settings(settings: dict[str, Any], model: Any) -> CompactionSettings:
    """``compaction.keepRecentTokens`` / ``reserveTokens``, a ``modelOverrides["<provider>/<id>"]``
    entry for the current model first, each falling back to the defaults on its own."""
    block = settings.get("compaction") if isinstance(settings, dict) else None
    block = block if isinstance(block, dict) else {}
    overrides = block.get("modelOverrides")
    key = f"{getattr(model, 'provider', '')}/{getattr(model, 'id', '')}"
    override = overrides.get(key) if isinstance(overrides, dict) and model is not None else None
    override = override if isinstance(override, dict) else {}

    def pick(name: str, default: int) -> int:
        for source in (override, block):
            if _positive(source.get(name)):
                return source[name]
        return default

    return CompactionSettings(
        pick("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS), pick("reserveTokens", DEFAULT_RESERVE_TOKENS)
    )


def context_tokens(
    observed: list[dict[str, Any]],
    system_prompt: Any,
    reported: Any,
    messages: ObservedTokens | None = None,
    changes: ChangeLog | None = None,
) -> float:
    """``max(provider-reported tokens, estimate of the observed messages + the system prompt)``.

    ``messages`` (kept between requests) adds up the messages' estimates without estimating again
    the ones that did not change (``changes``: the feed of the host's tracked copies, which says
    which ones may have).
    """
    if isinstance(system_prompt, list):
        system_prompt = "\n".join(str(part) for part in system_prompt)
    prompt_tokens = math.ceil(len(str(system_prompt or "").encode("utf-8", "replace")) / 4)
    total = messages.total(observed, changes) if messages is not None else sum(map(estimate_tokens, observed))
    estimate = total + prompt_tokens
    usable = _positive(reported)
    return max(reported, estimate) if usable else estimate


def _frozen(message: Any) -> Any:
    # What the estimate reads, copied as deep as a context handler may edit in place (the message
    # and its content blocks); deeper values are replaced, never changed.
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [dict(b) if isinstance(b, dict) else b for b in content]}
    return dict(message)


class ObservedTokens:
    """The sum of ``estimate_tokens`` over the observed messages, kept between requests.

    A request's messages are mostly the same objects as last time (a run appends). The host's
    copies are tracked (``ContextEvent.changes``): only the copies the feed names as changed since
    the last sum, the copies still edited (a value a handler set in one is not tracked), and the
    messages that are not such copies (in a list a handler returned) are compared with a copy of
    what was estimated; only those that differ, or are new, are estimated
    again. Without a feed (or one that forgot that far back) every message is compared (one C-level
    comparison each). The first sum keeps nothing (a run of one request takes no copies); the second
    one estimates every message again and keeps them.
    """

    def __init__(self) -> None:
        self._seen: list[Any] = []
        self._copies: list[Any] = []
        self._tokens: list[int] = []
        self._sums = 0
        self._changes: ChangeLog | None = None
        self._mark = 0
        self._where: dict[int, int] = {}  # id of a tracked copy among ``_seen`` → its position
        self._untracked: list[int] = []  # positions in ``_seen`` of the other messages, in order
        self.compared = 0  # snapshot comparisons made (what the feed saves is every other one)

    def total(self, observed: list[dict[str, Any]], changes: ChangeLog | None = None) -> int:
        self._sums += 1
        if self._sums == 1:
            return sum(map(estimate_tokens, observed))
        same = unchanged_prefix(observed, self._seen)
        copies, tokens = self._copies, self._tokens  # updated in place: no list copied per request
        candidates = self._candidates(observed, same, changes)
        previous, self._seen = (
            self._seen,
            [],
        )  # until the lists agree again (an estimate that raises starts over)
        del copies[same:], tokens[same:]
        self.compared += len(candidates)
        for index in candidates:
            if copies[index] != observed[index]:
                copies[index], tokens[index] = _frozen(observed[index]), estimate_tokens(observed[index])
        for message in observed[same:]:
            copies.append(_frozen(message))
            tokens.append(estimate_tokens(message))
        self._follow(previous, observed, same, changes)
        self._seen = list(observed)
        return sum(tokens)

    def _candidates(self, observed: list[Any], same: int, changes: ChangeLog | None) -> list[int] | range:
        """The positions below ``same`` whose message may differ from what was estimated."""
        changed = changes.since(self._mark) if changes is not None and changes is self._changes else None
        if changed is None or changes is None:
            return range(same)
        where = self._where
        # The copies edited since their restore too: a value a handler set in one (a new content
        # list) is not tracked, and may have been changed since without a report.
        positions = {where[id(message)] for message in (*changed, *changes.dirty) if id(message) in where}
        positions.update(self._untracked[: bisect_left(self._untracked, same)])
        return sorted(index for index in positions if index < same)

    def _follow(self, previous: list[Any], observed: list[Any], same: int, changes: ChangeLog | None) -> None:
        """Remember where the tracked copies are, from ``same`` on, and the feed's mark."""
        if changes is not self._changes or changes is None:
            self._where, self._untracked, same = {}, [], 0
        where, untracked = self._where, self._untracked
        for message in previous[same:]:
            if where.get(id(message), -1) >= same:
                del where[id(message)]
        del untracked[bisect_left(untracked, same) :]
        for index in range(same, len(observed)):
            message = observed[index]
            if changes is not None and changes.owns(message) and id(message) not in where:
                where[id(message)] = index
            else:
                untracked.append(index)
        self._changes = changes
        self._mark = changes.mark if changes is not None else 0


def _observed_index(observed: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    index: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for message in observed:
        if isinstance(message, dict):
            index.setdefault(message_key(message), []).append(message)
    return index


def boundary_keep_tokens(projection: dict[str, Any], tool_call_id: str, keep_recent_tokens: int) -> int:
    """The tail a boundary compaction keeps: the boundary's plan call and what follows it.

    At a plan boundary the finished step is history; the message that completed it (and its
    results) stays verbatim, so the current plan is still in the context. The token count is the
    host's estimate of that tail as the host projects it, so its cut lands on that message; never
    more than ``keep_recent_tokens``, and ``keep_recent_tokens`` when the call is not in
    ``projection`` (the session's projection of the branch).
    """
    projected = projection.get("entries") or []
    for index in range(len(projected) - 1, -1, -1):
        if any(_calls(message, tool_call_id) for message in projected[index]["messages"]):
            return keep_from(projected, index, keep_recent_tokens)
    return keep_recent_tokens


def keep_from(projected: list[dict[str, Any]], index: int, keep_recent_tokens: int) -> int:
    """The tokens of the projected entries from ``index`` on (at least 1, at most ``keep_recent_tokens``)."""
    tail = sum(estimate_tokens(m) for item in projected[index:] for m in item["messages"])
    return max(1, min(keep_recent_tokens, tail))


def _calls(message: dict[str, Any], tool_call_id: str) -> bool:
    return is_assistant(message) and any(call.get("id") == tool_call_id for call in tool_calls(message))


_PENDING_ABORT = {
    "type": "message",
    "id": "occ-pending-abort",
    "timestamp": "1970-01-01T00:00:00.000Z",
    "message": {"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": 0},
}


def removable_tokens(
    branch: list[dict[str, Any]], observed: list[dict[str, Any]], keep_recent_tokens: int
) -> int:
    """Tokens the next compaction would remove: what it summarizes, plus the previous summary.

    The branch gets a trailing aborted assistant entry, the one the boundary stop will leave, so
    the cut is the one the compaction after that stop makes.
    """
    from tau.extension import prepare_compaction  # the compaction planner: loaded by the first plan

    entries = [*branch, {**_PENDING_ABORT, "parentId": branch[-1].get("id") if branch else None}]
    preparation = prepare_compaction(entries, HostCompactionSettings(keep_recent_tokens=keep_recent_tokens))
    if preparation is None:
        return 0
    index = _observed_index(observed)
    total = 0
    for message in [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]:
        matches = index.get(message_key(message), [])
        if len(matches) == 1:
            total += estimate_tokens(matches[0])
    summary = preparation.previous_summary
    return total + (math.ceil(js_len(summary) / 4) if summary else 0)
