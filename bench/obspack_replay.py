"""Benchmark: what ObservationPack saves on real pi sessions, and what its projection costs.

1. **Replay** every ``/work/shared/fixtures/pi/real/*.v3.jsonl`` (or the files given): each
   assistant message on the active branch is one request, whose context is the session projected
   up to it. Each request goes through ObservationPack's ``context`` handler in order (a fresh
   archive in a temp dir), and the script reports per file the tokens the requests would carry
   with and without ObservationPack (characters / 4, pi's estimate) and a cache-aware input cost:
   the messages a request shares, as a prefix, with the previous request are cache reads (0.1 x the
   input price), the rest cache writes (1.25 x). Costs are in units of "input tokens".
2. **Overhead**: the projection's added time per request on the 10,000-entry session of
   ``bench/session_open.py`` (target <= 2 ms, median of >= 5 runs after a warm-up), as generated
   (no result is over 10 KiB) and with every tenth tool result inflated to 12 KiB. As in a run, a
   question and an answer are appended before each request, and the handler gets the host's
   editable copies (``ContextCopies``: reused while unchanged, edited ones restored in place).

Usage: ``.venv/bin/python bench/obspack_replay.py [--runs N] [FILE.v3.jsonl ...]``
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from session_open import generate  # noqa: E402
from tau.bundled.obspack.pack import ObservationPack  # noqa: E402
from tau.bundled.sol_common import SolSettings  # noqa: E402
from tau.common import jsjson  # noqa: E402
from tau.extension.context_copies import ContextCopies  # noqa: E402
from tau.session import SessionManager, projection  # noqa: E402

FIXTURES = Path("/work/shared/fixtures/pi/real")
TARGET_MS = 2.0
CACHE_WRITE, CACHE_READ = 1.25, 0.1


class _UI:
    def notify(self, *args: Any) -> None: ...

    def set_status(self, *args: Any) -> None: ...


class _Manager:
    def __init__(self, session_dir: str, session_id: str, branch: list[dict[str, Any]]) -> None:
        self.session_dir, self.session_id, self.branch, self.leaf = session_dir, session_id, branch, None

    def get_session_dir(self) -> str:
        return self.session_dir

    def get_session_id(self) -> str:
        return self.session_id

    def get_leaf_id(self) -> str | None:
        return self.leaf

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        return self.branch


class _Tau:
    def register_tool(self, definition: Any) -> None: ...

    def on(self, event: str, handler: Any) -> None: ...


def _pack(session_dir: str, session_id: str, branch: list[dict[str, Any]]) -> tuple[ObservationPack, Any]:
    pack = ObservationPack(_Tau(), SolSettings())
    ctx = SimpleNamespace(session_manager=_Manager(session_dir, session_id, branch), mode="json", ui=_UI())
    return pack, ctx


def _tokens(message: dict[str, Any]) -> int:
    return math.ceil(len(jsjson.dumps(message)) / 4)


def _cost(messages: list[dict[str, Any]], previous: list[bytes]) -> tuple[int, float, list[bytes]]:
    """Tokens and cache-aware cost of one request; the prefix shared with ``previous`` is read."""
    serialized = [jsjson.dumps(message) for message in messages]
    shared = 0
    while shared < min(len(serialized), len(previous)) and serialized[shared] == previous[shared]:
        shared += 1
    sizes = [math.ceil(len(item) / 4) for item in serialized]
    read, written = sum(sizes[:shared]), sum(sizes[shared:])
    return read + written, read * CACHE_READ + written * CACHE_WRITE, serialized


def replay(path: Path) -> dict[str, Any]:
    manager = SessionManager.open(path, read_only=True)
    branch = manager.get_branch()
    session_id = manager.get_session_id()
    manager.close()
    requests = [
        index for index, entry in enumerate(branch) if (entry.get("message") or {}).get("role") == "assistant"
    ]
    totals = {"requests": len(requests), "plain": 0, "packed": 0, "plainCost": 0.0, "packedCost": 0.0}
    previous_plain: list[bytes] = []
    previous_packed: list[bytes] = []
    with tempfile.TemporaryDirectory() as session_dir:
        pack, ctx = _pack(session_dir, session_id, branch)
        for index in requests:
            prefix = branch[:index]
            messages = projection.build_session_context(prefix)["messages"]
            ctx.session_manager.leaf = prefix[-1]["id"] if prefix else None
            tokens, cost, previous_plain = _cost(messages, previous_plain)
            totals["plain"] += tokens
            totals["plainCost"] += cost
            packed = copy.deepcopy(messages)
            visible = [message for message in packed if message.get("role") != "system"]
            asyncio.run(pack.on_context(SimpleNamespace(messages=visible), ctx))
            tokens, cost, previous_packed = _cost(packed, previous_packed)
            totals["packed"] += tokens
            totals["packedCost"] += cost
    return totals


def overhead(runs: int, inflate: bool) -> tuple[float, float]:
    """Median ms the ``context`` handler adds to one request of the 10,000-entry session, and the
    median ms of a bare pass reading each message's role (what any ``context`` handler pays)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.jsonl"
        generate(path)
        manager = SessionManager.open(path, read_only=True)
        messages = manager.build_session_context()["messages"]
        session_id = manager.get_session_id()
        manager.close()
        if inflate:
            results = [m for m in messages if m.get("role") == "toolResult"]
            for n, message in enumerate(results[::10]):
                message["content"] = [{"type": "text", "text": f"{n}\n" + "inflated output line\n" * 600}]
        pack, ctx = _pack(directory, session_id, [])
        visible = [message for message in messages if message.get("role") != "system"]

        host = ContextCopies()

        async def measure() -> tuple[list[float], list[float]]:
            timings, bare = [], []
            for run in range(runs + 1):
                # As in a run: a question and an answer appended since the last request, and the
                # host's editable copies (reused while unchanged; not the projection's cost).
                visible.append({"role": "user", "content": [{"type": "text", "text": f"q{run}"}]})
                visible.append({"role": "assistant", "content": [{"type": "text", "text": f"a{run}"}]})
                copies = host.copy(visible)
                start = time.perf_counter()
                for message in copies:
                    message.get("role")
                bare.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                await pack.on_context(SimpleNamespace(messages=copies), ctx)
                timings.append((time.perf_counter() - start) * 1000)
            return timings[1:], bare[1:]

        timings, bare = asyncio.run(measure())
        return statistics.median(timings), statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    files = args.files or sorted(FIXTURES.glob("*.v3.jsonl"))
    print("replay (tokens carried by all requests; cost in input-token units, write 1.25x, read 0.1x)")
    print(
        f"{'file':32} {'requests':>8} {'tokens without':>15} {'tokens with':>12} {'saved':>7} {'cost without':>13} {'cost with':>11} {'saved':>7}"
    )
    for path in files:
        t = replay(path)
        saved = 1 - t["packed"] / t["plain"] if t["plain"] else 0.0
        saved_cost = 1 - t["packedCost"] / t["plainCost"] if t["plainCost"] else 0.0
        print(
            f"{path.name:32} {t['requests']:>8} {t['plain']:>15,} {t['packed']:>12,} {saved:>7.1%} "
            f"{t['plainCost']:>13,.0f} {t['packedCost']:>11,.0f} {saved_cost:>7.1%}"
        )
    print()
    for inflate in (False, True):
        label = (
            "10,000-entry session, every 10th result 12 KiB"
            if inflate
            else "10,000-entry session as generated"
        )
        ms, bare = overhead(max(5, args.runs), inflate)
        print(
            f"projection overhead per request ({label}): {ms:.2f} ms (target <= {TARGET_MS:.0f} ms); "
            f"a bare pass over the same messages: {bare:.2f} ms"
        )


if __name__ == "__main__":
    main()
