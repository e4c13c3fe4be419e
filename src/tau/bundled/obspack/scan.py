"""The context as ObservationPack reads it: packable items, turns, the newest call per key, and what
each assistant turn used.

:class:`ContextScan` reads only the messages appended since the previous request (the leading
messages that are the same objects as last time keep their reading); any other change of the list
(compaction, branch switch, a removed message) reads it all again and sets ``fresh``.

**Use** (issue 25): an assistant turn *uses* an earlier result when its text or tool-call arguments
carry one of the result's distinctive tokens (:mod:`tau.bundled.sol_common.evidence`) that the call
which made the result did not already carry, and the result is the newest one that holds the token
(the model takes it from the latest place it saw it: an old read whose names a newer grep repeats
is not kept for them). ``edit``/``write`` arguments are sources too, and so are results over 10 KiB:
SoL-Pi's rule packs them after two sends, counted from their last use (a 40 KB module the model
splits into six files over six turns stays while it does). A result's age counts from the last turn
that used it (:meth:`ContextScan.unused_for`), so a result the model keeps working from stays.

Every result and turn is read for its tokens once, when it enters the context; a fresh read (a
resumed session, after a compaction) reads only the last :data:`USE_TURNS` turns for them, so the
first request of a long resumed session does not tokenize its whole history.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import field
from itertools import repeat
from typing import Any

from tau.bundled.obspack.stale import MUTATIONS, Key, argument_chars, call_keys, message_tokens, tokens_of
from tau.bundled.sol_common.evidence import distinctive_tokens, message_evidence_text
from tau.common.dataclass import dataclass
from tau.common.positions import positions
from tau.extension import unchanged_prefix

__all__ = ["CHECKLIST_TOOL", "USE_TURNS", "ContextScan", "Item", "evidence_of", "item_evidence"]

CHECKLIST_TOOL = "todo"  # its newest successful result is never packed (seed 002: the current list)

USE_TURNS = 64  # a fresh read credits uses only within this many of the newest turns


@dataclass
class Item:
    """Something of the context a placeholder may replace: a tool result, or a call's arguments."""

    message: dict[str, Any]
    index: int  # position in the request's messages
    turn: int  # assistant messages before the one holding the call
    keys: tuple[Key, ...]
    block: int | None = None  # for arguments: the call's index in the assistant message's content
    call: dict[str, Any] | None = None  # for arguments: the call; for a result: the call that made it
    # What was derived from the message once (its observations, its stale placeholders): the scan
    # keeps an item only while its message is the same object with its source's content.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)


def _argument_text(arguments: Any) -> str:
    return message_evidence_text({"content": [{"type": "toolCall", "arguments": arguments}]})


def evidence_of(item: Item, text: str) -> frozenset[str]:
    """The distinctive tokens of an item's ``text`` that its call did not already carry (a ``read``
    result does not count as used because a later call names the file it read)."""
    tokens = distinctive_tokens(text)
    arguments = (item.call or {}).get("arguments")
    if item.block is not None:  # a call's arguments: its path is the call's, not what it carries
        path = arguments.get("path") if isinstance(arguments, dict) else None
        tokens -= distinctive_tokens(path) if isinstance(path, str) else set()
    elif arguments is not None:
        tokens -= distinctive_tokens(_argument_text(arguments))
    return frozenset(tokens)


def item_evidence(item: Item) -> frozenset[str] | None:
    """:func:`evidence_of` an item (a result's text, or a call's argument strings); ``None`` for a
    result that is no source of tokens (not only text)."""
    if item.block is not None:
        return evidence_of(item, _argument_text((item.call or {}).get("arguments")))
    content = item.message.get("content")
    blocks = content if isinstance(content, list) else []
    texts = [
        text
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(text := b.get("text"), str)
    ]
    if not texts or len(texts) != len(blocks):  # (a block that is not text with a string: not a source)
        return None
    return evidence_of(item, "\n".join(texts))


class ContextScan:
    """The context's packable items, call turns and newest call per key, remembered between
    requests for the leading messages that are the same objects as last time (the host reuses its
    copies and restores edited ones in place, so such a message still has its source's content
    when the handler sees it); only new messages are read. Any other change of the list
    (compaction, branch switch, a removed message) reads it all again and sets :attr:`fresh`.
    Message sizes are estimated when first asked for (:meth:`suffix_tokens`), or by a fresh read
    told they will be (``sized``: in the same pass, each message touched once); each turn's uses are
    credited as it is read (:meth:`last_use`). :attr:`new_calls` are the tool calls read by the
    last pass (every call after a fresh read).
    """

    def __init__(self) -> None:
        self._given: list[Any] = []  # the messages read, hidden extension messages left out
        self._all: list[Any] = []  # the messages given, as given
        self._custom: list[int] = []  # positions in ``_all`` of the hidden extension messages
        self.items: list[Item] = []
        self._sizes: list[int] = []  # the estimates of ``_given[self._sized :]``
        self._sized = 0
        self.latest: dict[Key, int] = {}
        self.turns = 0
        self._calls: dict[str, tuple[int, tuple[Key, ...], dict[str, Any]]] = {}
        self._source: dict[str, Item] = {}  # token → the newest item that holds it
        self._used: dict[int, int] = {}  # id(item) → the last turn that used it
        self.new_calls: list[dict[str, Any]] = []
        self.checklist = -1  # position of the newest successful ``todo`` result (never packed)
        self.fresh = True

    def __call__(self, messages: list[dict[str, Any]], *, sized: bool = False) -> ContextScan:
        """Read the request's ``messages``. ``sized``: the message sizes will be asked for
        (:meth:`suffix_tokens`); a fresh read then estimates them in the same pass."""
        # Hidden extension messages (a checklist block, a loop's nudge) are left out: they move or
        # are new objects from one request to the next, and they are never packed. The leading
        # messages that are the same objects as last time keep their place among the others.
        shared = unchanged_prefix(messages, self._all)
        custom = self._custom[: bisect_left(self._custom, shared)]
        known = shared - len(custom)
        tail = messages[shared:]
        roles = _roles(tail)
        hidden = positions(roles, "custom")
        custom += (shared + index for index in hidden)
        self._all, self._custom = list(messages), custom
        given = self._given[:known]
        given += [message for message in tail if message.get("role") != "custom"] if hidden else tail
        same = known + unchanged_prefix(given[known:], self._given[known:])
        self.fresh = same < len(self._given) or not self._given
        if same < len(self._given):
            self._reset()
            self.fresh = True
        self.new_calls = []
        start = len(self._given)
        if start >= known:  # the roles of ``given[start:]``: those of the tail without the hidden ones
            if hidden:
                roles = [role for role in roles if role != "custom"]
            roles = roles[start - known :] if start > known else roles
        else:
            roles = _roles(given[start:])
        # (a fresh read reads every message: ``roles`` are all of them)
        credit_from = max(0, roles.count("assistant") - USE_TURNS) if self.fresh else 0
        sizes: list[int] | None = [] if sized and self.fresh else None
        self._read_from(given, start, roles, credit_from, sizes)
        if sizes is not None:  # (a fresh read starts at the first message)
            self._sizes, self._sized = sizes, 0
        self._given = given
        return self

    def _reset(self) -> None:
        self._given, self.items, self._sizes, self._sized = [], [], [], 0
        self.latest, self.turns, self._calls, self.checklist = {}, 0, {}, -1
        self._source, self._used = {}, {}

    @property
    def sizes(self) -> list[int]:
        """Every message's estimate (:func:`message_tokens`), in order."""
        self.suffix_tokens(0)
        return list(self._sizes)

    def suffix_tokens(self, start: int) -> int:
        """The estimated tokens of the messages from position ``start`` on.

        Estimated once per message, when first needed.
        """
        if not self._sizes:
            self._sized = start
        if start < self._sized:
            self._sizes[:0] = map(message_tokens, self._given[start : self._sized])
            self._sized = start
        end = self._sized + len(self._sizes)
        if end < len(self._given):
            self._sizes += map(message_tokens, self._given[end:])
        return sum(self._sizes[start - self._sized :])

    def last_use(self, item: Item) -> int:
        """The last assistant turn that used the item (its call's turn when none did)."""
        return self._used.get(id(item), item.turn)

    def unused_for(self, item: Item, window: int) -> bool:
        """Whether ``window`` assistant turns have passed since the item's call and its last use."""
        return self.turns - 1 - self.last_use(item) >= window

    def used_within(self, item: Item, window: int) -> bool:
        """Whether a turn after the item's call used it, fewer than ``window`` turns ago."""
        last = self.last_use(item)
        return last > item.turn and self.turns - 1 - last < window

    def _credit(self, message: dict[str, Any], turn: int) -> None:
        """The turn ``turn`` (``message``) uses the newest item holding each of its tokens."""
        used = self._used
        for token in distinctive_tokens(message_evidence_text(message)):
            item = self._source.get(token)
            if item is not None:
                used[id(item)] = turn

    def _index(self, item: Item) -> None:
        """The item becomes the newest source of its tokens."""
        tokens = item_evidence(item)
        item.memo["evidence"] = tokens
        source = self._source
        for token in tokens or ():
            source[token] = item

    def _read_from(
        self, given: list[dict[str, Any]], start: int, roles: list[Any], credit_from: int, sizes: list[int] | None
    ) -> None:
        """Read the messages of ``given`` from position ``start`` on (the new ones, whose roles are
        ``roles``); uses are credited from turn ``credit_from`` on. Each message's
        :func:`message_tokens` is appended to ``sizes`` unless it is ``None``."""
        items, calls, latest, turns = self.items, self._calls, self.latest, self.turns
        noted = self.new_calls.append
        # (the loop is every message of a resumed context: only what a message's role needs is read,
        # and an assistant message is sized as its blocks are walked for its calls)
        for index, role in enumerate(roles, start):
            if role == "assistant":
                message = given[index]
                counted = turns >= credit_from
                if counted:
                    self._credit(message, turns)
                content = message.get("content") or []
                chars = 0  # (message_tokens's characters of a content list, when sized)
                for position, block in enumerate(content):
                    if not isinstance(block, dict):
                        continue
                    get = block.get
                    if sizes is not None:
                        text = get("text")
                        if isinstance(text, str):
                            chars += len(text)
                        text = get("thinking")
                        if isinstance(text, str):
                            chars += len(text)
                    if get("type") != "toolCall":
                        continue
                    name, arguments = get("name"), get("arguments")
                    if sizes is not None:
                        chars += 64 + argument_chars(arguments)
                    keys = call_keys(str(name), arguments)
                    calls[str(get("id"))] = (turns, keys, block)
                    noted(block)
                    for key in keys:
                        latest[key] = turns
                    if name in MUTATIONS:
                        item = Item(message, index, turns, keys, position, block)
                        items.append(item)
                        if counted:
                            self._index(item)
                turns += 1
                if sizes is not None:
                    sizes.append(tokens_of(chars, message) if isinstance(content, list) else message_tokens(message))
                continue
            if sizes is not None:
                sizes.append(message_tokens(given[index]))
            if role == "toolResult":
                message = given[index]
                made = calls.get(str(message.get("toolCallId")))
                if made is None:
                    item = Item(message, index, turns - 1, ())
                else:
                    item = Item(message, index, made[0], made[1], None, made[2])
                items.append(item)
                if turns >= credit_from:
                    self._index(item)
                if message.get("toolName") == CHECKLIST_TOOL and not message.get("isError"):
                    self.checklist = index
        self.turns = turns


def _roles(messages: list[Any]) -> list[Any]:
    """The role of each message (one C-level pass for dicts)."""
    try:
        return list(map(dict.get, messages, repeat("role")))
    except TypeError:  # a message that is not a dict: as the straightforward pass would fail
        return [message.get("role") for message in messages]
