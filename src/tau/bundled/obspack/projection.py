"""The ``context`` projection: which tool results (and old edit arguments) a request carries packed.

Three rules make an observation *due* for its placeholder:

- **large** (SoL-Pi's rule): a successful, text-only result over 10 KiB, after its first two full
  sends (the assistant messages after it, or the larger count recorded on the branch) and two
  sends after the last turn that used it (issue 25: age from last use, :mod:`.scan`);
- **superseded** (stale packing): a later call has one of the result's keys (a later run of the
  same command, a later read, edit or write of the same path, see :mod:`.stale`); the newest
  output of a command or path is never superseded;
- **old** (stale packing): ``after_turns`` assistant turns (the window) have passed since the call
  and since the last turn that used it (its distinctive tokens in the turn's text or tool-call
  arguments, :mod:`.scan`); results and ``edit``/``write`` arguments of at least ``min_tokens``,
  whose placeholder saves half or more, and whose packing pays for the refetch it may cost
  (:func:`.economy.pays_to_pack`, against the context as sent).

The newest successful ``todo`` result is never packed, whatever its size or age: it is how the model
sees its current checklist (seed 002), and ``todo`` adds no snapshot while a result shows the list.

A swap, once sent, stays: every later request carries the same placeholder bytes. Due swaps wait
until applying them pays (:func:`swaps_pay`): each one breaks the provider's cached prefix at its
position, so the suffix after the earliest is written again, while the tokens saved are not read
by each later request. With ``batch`` off every due swap is applied at once. The batch of ledger
records is appended once; only then are the messages edited in place and the state advanced, so a
failed append changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import field
from typing import Any

from tau.bundled.obspack.economy import REFETCH_CHANCE, Economy, expected_remaining, swaps_pay
from tau.bundled.obspack.ledger import full_record, placeholder_record
from tau.bundled.obspack.observation import (
    FULL_SENDS,
    THRESHOLD_BYTES,
    Observation,
    arguments_observation,
    estimate_tokens,
    observation_of,
    text_observation,
)
from tau.bundled.obspack.placeholder import arguments_placeholder, compact_placeholder, placeholder_for
from tau.bundled.obspack.scan import ContextScan, Item
from tau.bundled.obspack.stale import KEPT_TOOLS
from tau.common import jsjson
from tau.common.dataclass import dataclass

__all__ = [
    "ROOT_LEAF",
    "Applied",
    "ContextScan",
    "Item",
    "PackRules",
    "ProjectionPlan",
    "SendCounts",
    "expected_remaining",
    "identity_of",
    "plan_projection",
    "swaps_pay",
]

ROOT_LEAF = "<root>"
SUPERSEDED = "superseded by a later call on the same command or path"


def old_reason(turns: int) -> str:
    return f"unused for {turns} assistant turns"


def is_old_reason(reason: str) -> bool:
    """Whether a swap's reason is the old rule's (whatever the window was)."""
    return reason.startswith("unused for ")


@dataclass(frozen=True)
class PackRules:
    """The settings of the projection (``sol`` keys in ``docs/extensions/sol.md``)."""

    head_bytes: int = 512
    tail_bytes: int = 512
    stale: bool = True
    batch: bool = True
    after_turns: int = 4  # the window: turns without use after which a result is old
    min_tokens: int = 120  # the smallest result stale packing ever replaces
    max_new_objects: int = 32  # archive work per request: the rest waits for the next requests
    refetch_chance: float = REFETCH_CHANCE  # the economic floor's p (economy.py); 0: no floor


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
class Applied:
    """The swaps sent so far: observation id → its placeholder content and the leaves it was sent at.

    ``journal`` lists each recorded swap's observation id and identity (tool name and call id, as
    :func:`identity_of` gives them) in order, and ``identities`` holds those identities, so that an
    incremental pass finds the items a record concerns without computing every observation.
    """

    leaves: dict[str, set[str]] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    archived: set[str] = field(default_factory=set)  # observations stored (or verified) already
    journal: list[tuple[str, str | None]] = field(default_factory=list)
    identities: set[str] = field(default_factory=set)
    anonymous: bool = False  # a swap was recorded without its identity

    def on_branch(self, obs_id: str, branch_ids: Callable[[], set[str]]) -> bool:
        leaves = self.leaves.get(obs_id)
        if not leaves:
            return False
        return ROOT_LEAF in leaves or not leaves.isdisjoint(branch_ids())

    def record(self, leaf: str, obs_id: str, content: Any, identity: str | None = None) -> None:
        self.leaves.setdefault(obs_id, set()).add(leaf)
        self.content[obs_id] = content
        self.journal.append((obs_id, identity))
        if identity is None:
            self.anonymous = True
        else:
            self.identities.add(identity)


def identity_of(item: Item) -> str:
    """What an item's observation id is derived from besides its text: the tool name and call id
    (``observation_id``'s first two parts, for a call's arguments the call id with ``#arguments``)."""
    if item.block is not None:
        call = item.call or {}
        return f"{call.get('name', '')}\0{call.get('id', '')}#arguments"
    return f"{item.message.get('toolName', '')}\0{item.message.get('toolCallId', '')}"


@dataclass
class _Swap:
    item: Item
    observation: Observation
    content: Any  # the message's new content, or the call's new arguments
    reason: str
    saved: int
    sends: int | None = None  # for the large rule: the full sends it had


@dataclass
class ProjectionPlan:
    """What one ``context`` event will do once its ledger batch is written."""

    records: list[dict[str, Any]] = field(default_factory=list)
    kept: list[tuple[Item, Any]] = field(default_factory=list)  # swaps sent before: applied every time
    edits: list[tuple[Item, Any]] = field(default_factory=list)
    counts: list[tuple[str, int]] = field(default_factory=list)
    first_savings: list[dict[str, Any]] = field(default_factory=list)  # the placeholder records of new swaps
    applied: list[tuple[str, Any, str]] = field(default_factory=list)  # (observation id, content, identity)
    swapped: list[tuple[Item, str, str]] = field(default_factory=list)  # (item, observation id, reason) of new swaps

    def apply_kept(self) -> None:
        """Edit in the swaps sent before (they need no ledger line: their bytes never change)."""
        for item, content in self.kept:  # every placeholder, every request: the result's edit inlined
            if item.block is None:
                item.message["content"] = [{"type": "text", "text": content}]
            else:
                _edit(item, content)

    def apply(self, leaf: str, send_counts: SendCounts, applied: Applied | None = None) -> None:
        """Edit the messages in place and advance the state (after the ledger append)."""
        self.apply_kept()
        for item, content in self.edits:
            _edit(item, content)
        for obs_id, count in self.counts:
            send_counts.record(leaf, obs_id, count)
        if applied is not None:
            for obs_id, content, identity in self.applied:
                applied.record(leaf, obs_id, content, identity)


def _edit(item: Item, content: Any) -> None:
    if item.block is None:
        item.message["content"] = [{"type": "text", "text": content}]
        return
    blocks = list(item.message.get("content") or [])
    blocks[item.block] = {**blocks[item.block], "arguments": content}
    item.message["content"] = blocks


def _content_tokens(content: Any) -> int:
    return estimate_tokens(content if isinstance(content, str) else jsjson.dumps_str(content))


def _large_sends(
    item: Item,
    observation: Observation,
    after: int,
    request: int,
    plan: ProjectionPlan,
    pending: dict[str, int],
    send_counts: SendCounts,
    branch_ids: Callable[[], set[str]],
) -> int:
    """The sends this large result had before this request (recording this one when it is sent in full)."""
    previous = max(
        after, pending.get(observation.id, 0), send_counts.on_branch(observation.id, after, branch_ids)
    )
    if previous < FULL_SENDS:
        plan.records.append(full_record(observation, request))
        advanced = previous + 1
        pending[observation.id] = max(pending.get(observation.id, 0), advanced)
        if advanced > after:
            plan.counts.append((observation.id, advanced))
    return previous


def plan_projection(
    messages: list[dict[str, Any]],
    *,
    store: Callable[[Observation], None],
    send_counts: SendCounts,
    branch_ids: Callable[[], set[str]],
    head_bytes: int = 512,
    tail_bytes: int = 512,
    rules: PackRules | None = None,
    applied: Applied | None = None,
    write_read_ratio: float = 12.5,
    observe: Callable[[dict[str, Any]], Observation | None] = observation_of,
    placeholder: Callable[[Observation, int, int], str] = placeholder_for,
    scan: ContextScan | None = None,
    scanned: bool = False,
) -> ProjectionPlan:
    """Decide every item of ``messages``; nothing is changed yet.

    ``scan`` keeps its work between requests (``scanned``: it has read ``messages`` already);
    ``applied`` remembers the swaps already sent (without it, only SoL-Pi's large rule applies and
    each swap is made as soon as it is due).
    """
    rules = rules or PackRules(head_bytes=head_bytes, tail_bytes=tail_bytes, stale=False, batch=False)
    archive = _Archive(store, applied, rules.max_new_objects)
    context = scan if scan is not None and scanned else (scan or ContextScan())(messages)
    plan = ProjectionPlan()
    request = context.turns + 1
    counted: dict[str, int] = {}
    due: list[_Swap] = []
    replaced: list[tuple[int, int]] = []  # (position, tokens) replaced by swaps sent before
    # Only the first ``max_new_objects`` due swaps can be applied by this request (:func:`_decide`);
    # once that many are found, a later item matters only if it was sent packed before or is large
    # (its archive and full sends are recorded). A resumed session with thousands of due results
    # is then read at the cost of a dictionary lookup per item, not a decision.
    cap = rules.max_new_objects if applied is not None else -1
    # First what was sent packed before (every request carries it again), then the decisions: the
    # economic floor weighs a refetch against the context as sent, placeholders included.
    open_items: list[tuple[Item, Observation, Observation | None]] = []
    for item in context.items:
        if item.block is not None:
            if not rules.stale or applied is None:
                continue
            observation = _memo(item, "arguments", arguments_observation, item.call or {})
            if observation is None:
                continue
            if _sent_before(item, observation, applied, branch_ids):
                plan.kept.append((item, applied.content[observation.id]))
                continue
            open_items.append((item, observation, None))
            continue
        large = _memo(item, "large", observe, item.message)
        observation = large
        if observation is None and rules.stale and applied is not None:
            if str(item.message.get("toolName")) in KEPT_TOOLS:
                continue
            observation = _memo(item, "text", text_observation, item.message)
        if observation is None:
            continue
        if applied is not None and _sent_before(item, observation, applied, branch_ids):
            content = applied.content[observation.id]
            plan.kept.append((item, content))
            saved = _memo(item, "saved", _saved_by, observation, content)
            replaced.append((item.index, saved))
            continue
        open_items.append((item, observation, large))
    economy = request_economy(context, rules, applied, write_read_ratio, _replaced_from(replaced))
    for item, observation, large in open_items:
        if item.block is not None:
            if len(due) < cap or cap < 0:
                swap = _stale_arguments(item, observation, context, rules, economy)
                if swap is not None:
                    due.append(swap)
            continue
        if large is None and len(due) == cap:
            continue
        swap = None
        if rules.stale and applied is not None:
            swap = _stale_result(item, observation, context, rules, economy)
        if swap is None and large is not None:
            swap = _large_swap(
                item, large, context, rules, archive, plan, counted, send_counts, branch_ids, placeholder
            )
        if swap is not None:
            due.append(swap)
    _decide(plan, due, context, rules, applied, archive, request, write_read_ratio, _replaced_from(replaced))
    return plan


def sizes_needed(rules: PackRules) -> bool:
    """Whether a request's decision estimates every message (the economic floor's context)."""
    return rules.stale and rules.refetch_chance > 0


def request_economy(
    context: ContextScan,
    rules: PackRules,
    applied: Applied | None,
    write_read_ratio: float,
    replaced_from: Callable[[int], int],
) -> Economy | None:
    """This request's figures for the economic floor of old results (``None``: no floor)."""
    if not sizes_needed(rules) or applied is None:
        return None
    sent = context.suffix_tokens(0) - replaced_from(0)
    return Economy(sent, expected_remaining(context.turns), write_read_ratio, rules.refetch_chance)


def _replaced_from(replaced: list[tuple[int, int]]) -> Callable[[int], int]:
    """The tokens the swaps sent before save from a position on."""
    return lambda start: sum(tokens for index, tokens in replaced if index >= start)


def _large_swap(
    item: Item,
    large: Observation,
    context: ContextScan,
    rules: PackRules,
    archive: Callable[[Observation], bool],
    plan: ProjectionPlan,
    counted: dict[str, int],
    send_counts: SendCounts,
    branch_ids: Callable[[], set[str]],
    placeholder: Callable[[Observation, int, int], str],
) -> _Swap | None:
    """SoL-Pi's large rule: the swap of a large result after its first full sends (recorded here).

    A large result is archived when first seen: recallable at once. A session resumed with many of
    them archives them over several requests, sent in full until then (no swap while it is not).
    """
    if item.index == context.checklist or not archive(large):
        return None
    after = context.turns - 1 - item.turn
    request = context.turns + 1
    previous = _large_sends(item, large, after, request, plan, counted, send_counts, branch_ids)
    if previous < FULL_SENDS or context.used_within(item, FULL_SENDS):
        return None  # sent in full twice, and twice since the model last used it (issue 25)
    text = placeholder(large, rules.head_bytes, rules.tail_bytes)
    reason = f"after its first {FULL_SENDS} provider requests"
    return _Swap(item, large, text, reason, large.tokens - estimate_tokens(text), previous)


def _stale_result(
    item: Item, observation: Observation, context: ContextScan, rules: PackRules, economy: Economy | None
) -> _Swap | None:
    """A superseded result's swap, or an old one's: unused for the window, when packing it pays."""
    if observation.tokens < rules.min_tokens or item.index == context.checklist:
        return None
    superseded = any(context.latest.get(key, -1) > item.turn for key in item.keys)
    if not superseded and not _unused(item, observation, context, rules):
        return None
    reason = SUPERSEDED if superseded else old_reason(rules.after_turns)
    text, saved = _memo(item, (observation.id, reason), _result_placeholder, item, observation, reason)
    if saved * 2 < observation.tokens:
        return None
    if not superseded and economy is not None and not economy.pays(saved, observation.tokens):
        return None
    return _Swap(item, observation, text, reason, saved)


def _stale_arguments(
    item: Item, observation: Observation, context: ContextScan, rules: PackRules, economy: Economy | None
) -> _Swap | None:
    """An edit's or write's arguments unused for the window, when packing them pays."""
    if observation.tokens < rules.min_tokens or not _unused(item, observation, context, rules):
        return None
    reason = old_reason(rules.after_turns)
    arguments, saved = _memo(
        item, (observation.id, reason), _arguments_placeholder, item, observation, reason
    )
    if saved * 2 < observation.tokens or (economy is not None and not economy.pays(saved, observation.tokens)):
        return None
    return _Swap(item, observation, arguments, reason, saved)


def _unused(item: Item, observation: Observation, context: ContextScan, rules: PackRules) -> bool:
    """Whether ``rules.after_turns`` turns have passed since the item's call and its last use."""
    return context.unused_for(item, rules.after_turns)


def _result_placeholder(item: Item, observation: Observation, reason: str) -> tuple[str, int]:
    text = compact_placeholder(observation, reason, failed=bool(item.message.get("isError")))
    return text, observation.tokens - estimate_tokens(text)


def _arguments_placeholder(item: Item, observation: Observation, reason: str) -> tuple[Any, int]:
    arguments = arguments_placeholder(observation, (item.call or {}).get("arguments") or {}, reason)
    return arguments, observation.tokens - _content_tokens(arguments)


def _sent_before(
    item: Item, observation: Observation, applied: Applied, branch_ids: Callable[[], set[str]]
) -> bool:
    """Whether the item's swap was sent on this branch. Once it was, it stays so while the scan keeps
    the item: a branch switch changes the context's messages, and the scan then starts again."""
    if item.memo.get("sent") == observation.id:
        return True
    if applied.on_branch(observation.id, branch_ids):
        item.memo["sent"] = observation.id
        return True
    return False


def _memo(item: Item, key: Any, compute: Callable[..., Any], *args: Any) -> Any:
    """``compute(*args)`` once per item (its message does not change while the scan keeps it)."""
    # (no KeyError raised on a first look: a resumed context's first request looks at every item)
    value = item.memo.get(key, _UNSET)
    if value is _UNSET:
        value = item.memo[key] = compute(*args)
    return value


_UNSET: Any = object()


def _saved_by(observation: Observation, content: Any) -> int:
    return max(0, observation.tokens - _content_tokens(content))


def _decide(
    plan: ProjectionPlan,
    due: list[_Swap],
    context: ContextScan,
    rules: PackRules,
    applied: Applied | None,
    store: Callable[[Observation], bool],
    request: int,
    ratio: float,
    replaced_from: Callable[[int], int],
) -> None:
    """Apply the due swaps together when that pays (always on a fresh context: nothing is cached)."""
    chosen = due[: rules.max_new_objects] if applied is not None else due
    if chosen and rules.batch and applied is not None and not context.fresh:
        start = min(swap.item.index for swap in chosen)
        suffix = context.suffix_tokens(start) - replaced_from(start)
        saved = sum(swap.saved for swap in chosen)
        if not swaps_pay(saved, suffix, expected_remaining(context.turns), ratio):
            _record_waiting(plan, chosen, request)
            return
    for swap in chosen:
        if not store(swap.observation):
            continue
        sends = swap.sends
        record = placeholder_record(
            swap.observation, request, (sends if sends is not None else 0) + 1, _as_text(swap.content)
        )
        record["reason"] = swap.reason
        plan.records.append(record)
        plan.edits.append((swap.item, swap.content))
        plan.applied.append((swap.observation.id, swap.content, identity_of(swap.item)))
        plan.swapped.append((swap.item, swap.observation.id, swap.reason))
        if sends is not None:
            plan.counts.append((swap.observation.id, min(FULL_SENDS + 1, sends + 1)))
        if sends is None or sends == FULL_SENDS:
            plan.first_savings.append(record)


def _record_waiting(plan: ProjectionPlan, waiting: list[_Swap], request: int) -> None:
    """A large result whose swap waits is sent in full once more: its send is recorded."""
    for swap in waiting:
        if swap.sends is not None:
            plan.records.append(full_record(swap.observation, request))


class _Archive:
    """``store`` with this request's budget of new objects (no budget without ``applied``)."""

    def __init__(self, store: Callable[[Observation], None], applied: Applied | None, budget: int) -> None:
        self.store, self.applied, self.left = store, applied, budget

    def __call__(self, observation: Observation) -> bool:
        """Whether the observation is archived (now or before); a failure is logged and fails open."""
        known = self.applied.archived if self.applied is not None else None
        if known is not None and observation.id in known:
            return True
        if known is not None and self.left <= 0:
            return False  # over this request's budget: it waits for a later request
        try:
            self.store(observation)
        except Exception as exc:  # fail open: a packing failure never costs the agent its observation
            sys.stderr.write(f"[observationpack] fail-open for tool result: {exc}\n")
            return False
        if known is not None:
            known.add(observation.id)
            self.left -= 1
        return True


def _as_text(content: Any) -> str:
    """A content as one string: a string as it is, anything else as its JSON (blocks and all)."""
    return content if isinstance(content, str) else jsjson.dumps_str(content)


__all__ += ["THRESHOLD_BYTES", "is_old_reason", "old_reason", "request_economy", "sizes_needed"]
