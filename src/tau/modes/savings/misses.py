"""Evidence misses: requests whose tool calls use what the model could no longer see.

A request's tool-call arguments carry *distinctive tokens* (paths, identifiers, numbers, hashes:
:mod:`tau.bundled.sol_common.evidence`). One of them is *missed* at that request when it occurred
earlier on the branch as stored (a tool result, a message of the user or of the model) and occurs
nowhere in the request as it was sent: at that moment only packed, reduced or compacted content held
it, so a model that saw only the request could not have taken it from there (decisions.md, "The
evidence wave"). A token never seen before (a file the model creates) is no miss, nor is one still
visible anywhere in the request (a placeholder's excerpt, a receipt's quote, a summary, the user's
prompt), as a token of a text or as a word of its own within one (``calc.py`` in ``src/calc.py``).
``obs_recall`` calls are left out: a recall is the refetch a miss stands for.

``misses`` counts the requests with at least one missed token. Each is priced as one extra request
at that point (``miss_adjusted_cost``): the request's context read from the cache, and the hidden
messages that held the missed tokens (the newest one per token) written, as a recall, a re-read or
a re-run would bring them back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from tau.bundled.obspack.wire import RECALL_TOOL
from tau.bundled.sol_common.evidence import distinctive_tokens
from tau.common.dataclass import dataclass
from tau.modes.savings.cost_model import Prices
from tau.session import projection
from tau.session.messages import convert_to_llm

__all__ = ["MissCounter", "TokenCache", "call_tokens", "message_pieces", "miss_figures", "text_tokens"]

Entry = dict[str, Any]
# How a message's text is counted (a token per 4 UTF-16 code units, as the replay counts requests).
_UNITS_PER_TOKEN = 4


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def message_pieces(message: dict[str, Any]) -> list[str]:
    """The texts of a model message, as the model reads them: text, thinking, tool calls (name and
    argument strings), tool results; a system message's sections and tool declarations."""
    content = message.get("content")
    pieces: list[str] = []
    if isinstance(content, str):
        pieces.append(content)
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            pieces.append(block["thinking"])
        elif kind == "toolCall":
            pieces.append(str(block.get("name", "")))
            pieces.extend(_strings(block.get("arguments")))
    if message.get("role") == "system":
        pieces.extend(_strings(message.get("sections")))
        pieces.extend(_strings(message.get("toolsAdded")))
    return pieces


def text_tokens(text: str) -> int:
    return -(-len(text.encode("utf-16-le", "surrogatepass")) // (2 * _UNITS_PER_TOKEN))


def _occurs(token: str, visible: list[_Seen]) -> bool:
    """Whether ``token`` stands as a word of its own in a visible text (``calc.py`` in
    ``src/calc.py`` does, ``412`` in ``4123`` does not) though the text's own tokens differ."""
    pattern: re.Pattern[str] | None = None
    for seen in visible:
        for piece in seen.pieces:
            if token not in piece:
                continue
            if pattern is None:
                pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])")
            if pattern.search(piece):
                return True
    return False


@dataclass
class _Seen:
    """One message as the model reads it: its texts, their distinctive tokens, its size."""

    message: Any  # kept alive so that its id is not reused while memoised
    content: Any
    pieces: list[str]
    tokens: frozenset[str]
    size: int


@dataclass
class TokenCache:
    """Distinctive tokens by text, shared by the replays of one report (the same texts recur in the
    baseline, each mechanism and the combined replay; only placeholders and receipts are new)."""

    _by_text: dict[str, frozenset[str]] = field(default_factory=dict)

    def tokens(self, text: str) -> frozenset[str]:
        found = self._by_text.get(text)
        if found is None:
            found = self._by_text[text] = frozenset(distinctive_tokens(text))
        return found


@dataclass
class MissCounter:
    """Counts the evidence misses of one replay, request by request.

    ``originals`` maps an entry id to the message that entry stood for when it was made (a tool
    result whose receipt replaced its log: the log), for the history; the request sees the entry
    as stored.
    """

    cache: TokenCache = field(default_factory=TokenCache)
    originals: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    misses: int = 0
    missed_tokens: int = 0
    refetched_tokens: int = 0
    extra_cost: float = 0.0
    _seen: dict[int, _Seen] = field(default_factory=dict)
    _sources: list[int] = field(default_factory=list)  # size of each history message, in order
    _newest: dict[str, int] = field(default_factory=dict)  # token -> the newest history message holding it
    _scanned: int = 0

    def _read(self, message: dict[str, Any]) -> _Seen:
        """``message`` as the model reads it, memoised while its content stays the same object."""
        seen = self._seen.get(id(message))
        content = message.get("content")
        if seen is not None and seen.message is message and seen.content is content:
            return seen
        pieces = [piece for piece in message_pieces(message) if piece]
        tokens = frozenset().union(*(self.cache.tokens(piece) for piece in pieces)) if pieces else frozenset()
        seen = _Seen(message, content, pieces, tokens, sum(text_tokens(piece) for piece in pieces))
        self._seen[id(message)] = seen
        return seen

    def _remember(self, entries: list[Entry]) -> None:
        """Add the messages of ``entries`` (as they were made) to the history."""
        for entry in entries:
            original = self.originals.get(str(entry.get("id")))
            messages = [original] if original is not None else projection.entry_to_messages(entry)
            for message in convert_to_llm([m for m in messages if isinstance(m, dict)]):
                seen = self._read(message)
                index = len(self._sources)
                self._sources.append(seen.size)
                for token in seen.tokens:
                    self._newest[token] = index

    def request(
        self,
        work: list[Entry],
        index: int,
        sent: list[dict[str, Any]],
        prompt_tokens: int,
        prices: Prices,
    ) -> None:
        """Count the request whose answer is ``work[index]``, sent as ``sent`` (agent messages)."""
        if index > self._scanned:
            self._remember(work[self._scanned : index])
            self._scanned = index
        message = work[index].get("message") or {}
        wanted = call_tokens(message, self.cache)
        candidates = [token for token in wanted if token in self._newest]
        if not candidates:
            return
        visible = [self._read(m) for m in convert_to_llm(sent)]
        missed = [
            token
            for token in candidates
            if not any(token in seen.tokens for seen in visible) and not _occurs(token, visible)
        ]
        if not missed:
            return
        refetched = sum(self._sources[source] for source in {self._newest[token] for token in missed})
        self.misses += 1
        self.missed_tokens += len(missed)
        self.refetched_tokens += refetched
        self.extra_cost += prices.cost(prompt_tokens, refetched, 0)



def call_tokens(message: dict[str, Any], cache: TokenCache) -> set[str]:
    """The distinctive tokens of a model message's tool-call arguments (``obs_recall`` left out: a
    recall is the refetch a miss stands for)."""
    content = message.get("content")
    found: set[str] = set()
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") != RECALL_TOOL:
            for text in _strings(block.get("arguments")):
                found |= cache.tokens(text)
    return found


def miss_figures(counter: MissCounter | None, requests: int, cost: float) -> dict[str, Any]:
    """The report's keys for one set of requests: ``misses``, ``misses_per_100`` and
    ``miss_adjusted_cost`` (``cost`` plus one extra request per miss), and the refetched tokens."""
    if counter is None:
        return {}
    return {
        "misses": counter.misses,
        "misses_per_100": round(100 * counter.misses / requests, 2) if requests else 0.0,
        "miss_adjusted_cost": cost + counter.extra_cost,
        "refetchedTokens": counter.refetched_tokens,
    }
