"""Benchmark: how far back real sessions reach for evidence, and what keeping it costs.

Issue 25 asks for at most 2 evidence misses per 100 requests on the real pi sessions. A miss is a
request whose tool-call arguments use a distinctive token that only hidden content held
(``docs/savings.md``). Whatever packs by age, the question is how long after its last use a result
is needed again. This script answers it from the recorded sessions themselves, without any
mechanism, for the simplest family of rules and for a rule that knows the future:

- **keep W turns from the last use**: a tool result (or an ``edit``/``write`` call's arguments) of
  at least 120 tokens stays in full until W requests have passed since the request that made it or
  last used it (used = a later call's arguments carry one of its distinctive tokens and it is the
  newest message holding that token: the judge's rule), then it is a 40-token placeholder; a use
  after that is a miss, and brings it back (a refetch);
- **foresight**: each one stays exactly until its last use (and its first two sends): no miss, the
  fewest tokens any rule with no misses can carry.

Per rule: misses per 100 requests and the tokens all requests carry over the tokens they carry with
nothing packed (compaction, the system prompt and cache pricing left out: this is the shape of the
trade-off, not a bill; ``tau savings`` gives the bill).

Usage: ``.venv/bin/python bench/evidence_horizon.py [FILE.jsonl ...]`` (default: the real pi sessions
of the fixtures).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from savings_replay import fixture_files  # noqa: E402
from tau.modes.savings.misses import TokenCache, call_tokens, message_pieces, text_tokens  # noqa: E402
from tau.session import SessionManager, projection  # noqa: E402
from tau.session.messages import convert_to_llm  # noqa: E402

WINDOWS = (2, 4, 6, 8, 12, 16, 24, 32, 48, 64)
MIN_TOKENS = 120  # stale packing's floor
PLACEHOLDER_TOKENS = 40
FIRST_SENDS = 2


@dataclass
class Held:
    """One message of the branch: its size, whether a rule may pack it, when it entered."""

    tokens: int
    packable: bool
    created: int  # the first request that carries it
    uses: list[int]  # the requests whose calls take a token from it


def _packable(message: dict[str, Any]) -> bool:
    if message.get("role") == "toolResult":
        return True
    content = message.get("content")
    return message.get("role") == "assistant" and any(
        isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") in ("edit", "write")
        for block in (content if isinstance(content, list) else ())
    )


def open_branch(path: Path) -> list[dict[str, Any]]:
    manager = SessionManager.open(path, read_only=True)
    try:
        return manager.get_branch()
    finally:
        manager.close()


def held_messages(branch: list[dict[str, Any]], cache: TokenCache) -> tuple[list[Held], int]:
    """The branch's messages with their uses, and the number of requests."""
    held: list[Held] = []
    newest: dict[str, int] = {}
    requests = 0
    for entry in branch:
        messages = [m for m in projection.entry_to_messages(entry) if isinstance(m, dict)]
        for message in convert_to_llm(messages):
            if message.get("role") == "assistant":
                for index in {newest[t] for t in call_tokens(message, cache) if t in newest}:
                    held[index].uses.append(requests)
                requests += 1
            pieces = [piece for piece in message_pieces(message) if piece]
            tokens = frozenset().union(*(cache.tokens(p) for p in pieces)) if pieces else frozenset()
            held.append(Held(sum(text_tokens(p) for p in pieces), _packable(message), requests, []))
            for token in tokens:
                newest[token] = len(held) - 1
    return held, requests


def window_rule(held: list[Held], requests: int, window: int | None) -> tuple[float, float]:
    """Misses per 100 requests and the share of tokens carried, keeping ``window`` turns from the
    last use (``None``: foresight)."""
    carried = [0] * requests  # tokens each request carries
    full = [0] * requests
    missed: set[int] = set()
    for item in held:
        for request in range(item.created, requests):
            full[request] += item.tokens
        if not item.packable or item.tokens < MIN_TOKENS:
            for request in range(item.created, requests):
                carried[request] += item.tokens
            continue
        last, uses = item.created, iter(item.uses)
        following = next(uses, None)
        final = item.uses[-1] if item.uses else item.created
        for request in range(item.created, requests):
            while following is not None and following < request:
                last, following = following, next(uses, None)
            if window is None:
                keep = request <= final or request < item.created + FIRST_SENDS
            else:
                keep = request - last <= window or request < item.created + FIRST_SENDS
            carried[request] += item.tokens if keep else PLACEHOLDER_TOKENS
        if window is not None:
            previous = item.created
            for use in item.uses:
                if use - previous > window and use >= item.created + FIRST_SENDS:
                    missed.add(use)
                previous = use
    return 100 * len(missed) / requests, sum(carried) / max(1, sum(full))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    cache = TokenCache()
    for path in args.files or fixture_files():
        held, requests = held_messages(open_branch(path), cache)
        print(f"{path.name}: {requests} requests")
        print(f"  {'rule':<28} {'misses/100':>10} {'tokens carried':>15}")
        for window in (*WINDOWS, None):
            misses, share = window_rule(held, requests, window)
            name = "foresight (no miss)" if window is None else f"keep {window} turns from last use"
            print(f"  {name:<28} {misses:>10.1f} {share:>14.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
