""":func:`~.projection.plan_projection` kept between requests: the work proportional to what changed.

A request's decision walks every item of the context (:func:`~.projection.plan_projection`, the
straightforward version and the reference). Between two requests of a run the context only grows,
and most items' outcome cannot change:

- an item without an observation (an image, a checklist, a result with a receipt) never packs;
- an item sent packed on this branch stays packed: its placeholder is re-applied every request;
- a result or argument set that is not large is never due when it is under ``min_tokens`` or when
  its placeholders (one per reason) would save less than half of it;
- only the first ``max_new_objects`` due swaps can be applied per request: after them, an item
  matters only if it is large (its full sends are recorded) or its swap was recorded before (it may
  be on the branch).

So the planner keeps, per context scan, the items still to decide in order, the large ones, the
packed ones, and the items whose observation has a recorded swap (found through
:attr:`~.projection.Applied.journal`); each request visits the packed items (their placeholders),
the candidates up to the cap, and the large and recorded ones. An observation is computed when an
item is first visited, not when it is first seen: a resumed session hashes the results its first
request decides, not all of them. Each visit runs the same per-item rules as the reference.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from tau.bundled.obspack.economy import Economy
from tau.bundled.obspack.observation import (
    Observation,
    arguments_observation,
    observation_of,
    text_observation,
)
from tau.bundled.obspack.placeholder import placeholder_for
from tau.bundled.obspack.projection import (
    SUPERSEDED,
    Applied,
    ContextScan,
    Item,
    PackRules,
    ProjectionPlan,
    SendCounts,
    _Archive,
    _arguments_placeholder,
    _decide,
    _large_swap,
    _memo,
    _result_placeholder,
    _saved_by,
    _sent_before,
    _stale_arguments,
    _stale_result,
    _Swap,
    identity_of,
    old_reason,
    plan_projection,
    request_economy,
    sizes_needed,
)
from tau.bundled.obspack.stale import KEPT_TOOLS

__all__ = ["Planner"]

_POSITION = "position"


class Planner:
    """One context's decisions, request after request (one per ``context`` handler instance).

    The callables given to :meth:`plan` must be the same from one request to the next (their
    results are kept per item); another ``applied``, ``send_counts`` or ``rules`` starts over.
    """

    def __init__(self) -> None:
        self.scan = ContextScan()
        self._key: tuple[Any, ...] | None = None
        self._reset(0)

    def _reset(self, journal: int) -> None:
        for item in self.scan.items:  # filed again below: other rules (a wider window), same scan
            item.memo.pop("filed", None)
        self._read = 0  # scan items filed so far
        self._open: list[Item] = []  # items that may become due, in order
        self._large: list[Item] = []  # items with a large observation, not packed, in order
        self._packed: list[Item] = []  # items sent packed on this branch, in order
        self._packed_obs: list[str] = []  # their observation ids
        self._replaced: list[tuple[int, int]] = []  # (message position, tokens saved) of packed results
        self._replaced_sums: list[int] | None = None
        self._recorded: dict[int, Item] = {}  # position → unpacked item whose observation has a recorded swap
        self._by_obs: dict[str, list[Item]] = {}  # observation id → its unpacked items
        self._unobserved: dict[str, list[Item]] = {}  # identity → items whose observation is not computed yet
        # Open items not yet put under their identity: filed while no swap was recorded (a resumed
        # session's first request), so nothing can look them up until the journal has a record.
        self._unindexed: list[Item] = []
        self._journal = journal  # records of ``applied.journal`` followed so far

    def plan(
        self,
        messages: list[dict[str, Any]],
        *,
        store: Callable[[Observation], None],
        send_counts: SendCounts,
        branch_ids: Callable[[], set[str]],
        rules: PackRules,
        applied: Applied,
        write_read_ratio: float = 12.5,
        observe: Callable[[dict[str, Any]], Observation | None] = observation_of,
        placeholder: Callable[[Observation, int, int], str] = placeholder_for,
        scanned: bool = False,
    ) -> ProjectionPlan:
        """What :func:`~.projection.plan_projection` decides for ``messages`` with ``scan=self.scan``.

        ``scanned``: the caller already passed ``messages`` through :attr:`scan` for this request
        (to look at the new calls before choosing the rules).
        """
        if rules.max_new_objects < 1:  # no cap to stop at: the reference walks every item
            self._key = None
            return plan_projection(
                messages,
                store=store,
                send_counts=send_counts,
                branch_ids=branch_ids,
                rules=rules,
                applied=applied,
                write_read_ratio=write_read_ratio,
                observe=observe,
                placeholder=placeholder,
                scan=self.scan,
                scanned=scanned,
            )
        context = self.scan if scanned else self.scan(messages, sized=sizes_needed(rules))
        key = (id(applied), id(send_counts), rules, applied.anonymous)
        if context.fresh or key != self._key:
            # Filing the items below reads what the journal holds so far.
            self._reset(len(applied.journal))
            self._key = key
        request = _Request(self, context, rules, applied, observe, placeholder, branch_ids)
        request.archive = _Archive(store, applied, rules.max_new_objects)
        request.send_counts = send_counts
        request.file_from(context.items, self._read)
        self._read = len(context.items)
        request.follow_journal()
        request.find_packed()
        request.economy = request_economy(context, rules, applied, write_read_ratio, self._replaced_from)
        request.walk()
        _decide(
            request.plan,
            request.due,
            context,
            rules,
            applied,
            request.archive,
            request.number,
            write_read_ratio,
            self._replaced_from,
        )
        return request.plan

    def pack(self, item: Item, obs_id: str, saved: int | None) -> None:
        """``item`` was sent packed on this branch: it stays so while the scan keeps it."""
        position = item.memo[_POSITION]
        at = bisect_left(self._packed, position, key=_position)
        self._packed.insert(at, item)
        self._packed_obs.insert(at, obs_id)
        if saved is not None:
            insort(self._replaced, (item.index, saved))
            self._replaced_sums = None
        self._recorded.pop(position, None)
        items = [other for other in self._by_obs.pop(obs_id, ()) if other is not item]
        if items:
            self._by_obs[obs_id] = items
        _remove(self._open, item)
        _remove(self._large, item)

    def _replaced_from(self, start: int) -> int:
        """The tokens the packed results from message position ``start`` on save."""
        if self._replaced_sums is None:
            self._replaced_sums = [0, *accumulate(tokens for _, tokens in reversed(self._replaced))]
        after = len(self._replaced) - bisect_left(self._replaced, (start, -1))
        return self._replaced_sums[after]


class _Request:
    """One request's pass over the planner's lists, with the reference's per-item rules."""

    archive: _Archive
    send_counts: SendCounts
    economy: Economy | None = None

    def __init__(
        self,
        planner: Planner,
        context: ContextScan,
        rules: PackRules,
        applied: Applied,
        observe: Callable[[dict[str, Any]], Observation | None],
        placeholder: Callable[[Observation, int, int], str],
        branch_ids: Callable[[], set[str]],
    ) -> None:
        self.planner, self.context, self.rules, self.applied = planner, context, rules, applied
        self.observe, self.placeholder, self.branch_ids = observe, placeholder, branch_ids
        self.plan = ProjectionPlan()
        self.due: list[_Swap] = []
        self.counted: dict[str, int] = {}
        self.number = context.turns + 1

    # -- filing the items ----------------------------------------------------------------------------

    def file_from(self, items: list[Item], start: int) -> None:
        """File the new items, ``items[start:]``: never packed, large, or open (its observation
        computed when needed)."""
        stale, observe, large_items = self.rules.stale, self.observe, self.planner._large
        for position in range(start, len(items)):  # (every item of a resumed context: kept lean)
            item = items[position]
            item.memo[_POSITION] = position
            if item.block is not None:
                if stale:
                    self._open(item)
                continue
            large = _memo(item, "large", observe, item.message)
            if large is not None:
                large_items.append(item)
                self._known(item, large)
            elif stale and str(item.message.get("toolName")) not in KEPT_TOOLS:
                self._open(item)

    def _open(self, item: Item) -> None:
        planner, applied = self.planner, self.applied
        planner._open.append(item)
        if not applied.anonymous and not applied.identities:
            planner._unindexed.append(item)  # no swap recorded: looked up by identity once one is
            return
        self._index_unobserved()
        identity = identity_of(item)
        if applied.anonymous or identity in applied.identities:
            self.observation(item)  # a swap of this identity was recorded: it may be this item's
        else:
            planner._unobserved.setdefault(identity, []).append(item)

    def _index_unobserved(self) -> None:
        """Put the items filed while no swap was recorded under their identities, in order."""
        planner = self.planner
        if planner._unindexed:
            unobserved = planner._unobserved
            for item in planner._unindexed:
                unobserved.setdefault(identity_of(item), []).append(item)
            planner._unindexed = []

    def observation(self, item: Item) -> Observation | None:
        """The item's observation (as the reference derives it), filed by its id once known."""
        if item.block is not None:
            observation = _memo(item, "arguments", arguments_observation, item.call or {})
        else:
            observation = item.memo.get("large") or _memo(item, "text", text_observation, item.message)
        if observation is not None and "filed" not in item.memo:
            self._known(item, observation)
        return observation

    def _known(self, item: Item, observation: Observation) -> None:
        item.memo["filed"] = True
        self.planner._by_obs.setdefault(observation.id, []).append(item)
        if observation.id in self.applied.leaves:
            self.planner._recorded[item.memo[_POSITION]] = item

    def follow_journal(self) -> None:
        """Mark the items of the swaps recorded since the last request: they may be on the branch."""
        planner, journal = self.planner, self.applied.journal
        if len(journal) > planner._journal:
            self._index_unobserved()
        for obs_id, identity in journal[planner._journal :]:
            for item in planner._unobserved.pop(identity or "", ()):
                self.observation(item)
            for item in planner._by_obs.get(obs_id, ()):
                planner._recorded[item.memo[_POSITION]] = item
        planner._journal = len(journal)

    # -- this request --------------------------------------------------------------------------------

    def find_packed(self) -> None:
        """Move the recorded items sent on this branch to the packed ones; every packed item is kept."""
        planner, applied = self.planner, self.applied
        for position in sorted(planner._recorded):
            item = planner._recorded[position]
            observation = self.observation(item)
            if observation is None or not _sent_before(item, observation, applied, self.branch_ids):
                continue
            content = applied.content[observation.id]
            saved = None if item.block is not None else _memo(item, "saved", _saved_by, observation, content)
            planner.pack(item, observation.id, saved)
        content = applied.content
        self.plan.kept = [
            (item, content[obs_id]) for item, obs_id in zip(planner._packed, planner._packed_obs, strict=True)
        ]

    def walk(self) -> None:
        """The open items in order until the cap's due swaps are found, the large ones all along."""
        planner, cap = self.planner, self.rules.max_new_objects
        large = list(planner._large)
        next_large = index = 0
        open_items = planner._open
        while index < len(open_items) and len(self.due) < cap:
            item = open_items[index]
            position = item.memo[_POSITION]
            while next_large < len(large) and large[next_large].memo[_POSITION] < position:
                self._visit_large(large[next_large])
                next_large += 1
            if self._visit_open(item):
                index += 1
            else:
                del open_items[index]
        for item in large[next_large:]:
            self._visit_large(item)

    def _visit_open(self, item: Item) -> bool:
        """The reference's rules for an item without a large observation; whether it may still be due."""
        observation = self.observation(item)
        if observation is None or observation.tokens < self.rules.min_tokens:
            return False  # never due: nothing to pack, or under the stale floor
        if item.block is not None:
            swap = _stale_arguments(item, observation, self.context, self.rules, self.economy)
        else:
            swap = _stale_result(item, observation, self.context, self.rules, self.economy)
        if swap is not None:
            self.due.append(swap)
            return True
        return not self._never_due(item, observation)

    def _never_due(self, item: Item, observation: Observation) -> bool:
        """Whether no later request can make this item (not due now) due.

        A placeholder's saving depends only on its reason: a call's arguments have one reason (old),
        a result two (superseded, else old), and a superseded result stays superseded (newer calls
        only add up while the scan keeps the item). An item whose placeholders all save under half
        its tokens is never due.
        """
        rules = self.rules
        old = old_reason(rules.after_turns)
        if item.block is not None:
            return not _pays(item, observation, old, _arguments_placeholder)
        superseded = any(self.context.latest.get(key, -1) > item.turn for key in item.keys)
        reasons = (SUPERSEDED,) if superseded else (SUPERSEDED, old)
        return not any(_pays(item, observation, reason, _result_placeholder) for reason in reasons)

    def _visit_large(self, item: Item) -> None:
        """The reference's rules for a large result: a stale swap first, else its full sends."""
        large: Observation = item.memo["large"]
        swap = _stale_result(item, large, self.context, self.rules, self.economy) if self.rules.stale else None
        if swap is None:
            swap = _large_swap(
                item,
                large,
                self.context,
                self.rules,
                self.archive,
                self.plan,
                self.counted,
                self.send_counts,
                self.branch_ids,
                self.placeholder,
            )
        if swap is not None:
            self.due.append(swap)


def _pays(item: Item, observation: Observation, reason: str, make: Callable[..., tuple[Any, int]]) -> bool:
    """Whether the item's placeholder for ``reason`` saves half its tokens or more (the reference's test)."""
    _, saved = _memo(item, (observation.id, reason), make, item, observation, reason)
    return bool(saved * 2 >= observation.tokens)


def _position(item: Item) -> int:
    return item.memo[_POSITION]


def _remove(items: list[Item], item: Item) -> None:
    """Remove ``item`` from a list kept in position order."""
    at = bisect_left(items, item.memo[_POSITION], key=_position)
    if at < len(items) and items[at] is item:
        del items[at]
