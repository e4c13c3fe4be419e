"""Benchmark: todo-loop's per-request read of the task list and the anchor on a long session.

The session is ``session_open.py``'s 10,000-entry benchmark session with one ``pi-todo:state``
entry spliced into its branch at a chosen distance from the newest end (or none). The reader walks
the branch backwards from the leaf through the public read-only session view
(``ctx.session_manager``: ``get_leaf_id``, ``get_entry``) and stops at the first valid list (and
the newest human message); later reads walk only what was appended since.

Measured (medians of ``--runs`` after a warm-up, wall time):

- **per request**: one autonomous turn is appended (assistant with a bash call, its result, a final
  answer: 3 entries), then the read. Target <= 2 ms.
- **first read** of the open session (nothing remembered yet): the walk back to the list, or the
  whole branch when there is none. Printed for reference.
- **context hook**: the marker check on the session's full model context (every request), next to
  one pass of the host's own per-handler filter over the same messages (``role != "system"``),
  which the host runs before every ``context`` handler anyway. Printed for reference.

Usage: ``.venv/bin/python bench/todo_loop_read.py [--runs N] [--keep FILE]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from session_open import generate  # noqa: E402
from tau.bundled.todo_loop.branch import BranchReader  # noqa: E402
from tau.bundled.todo_loop.marker import without_markers_next_to_human  # noqa: E402
from tau.common import jsjson  # noqa: E402
from tau.extension import ReadonlySessionManager  # noqa: E402
from tau.session import SessionManager  # noqa: E402
from tau.session.messages import convert_to_llm  # noqa: E402

TARGET_MS = 2.0
TASKS = [
    {"id": f"task-{n}", "title": f"Part {n} of the work", "description": "", "status": s, "dependencies": []}
    for n, s in enumerate(["completed"] * 5 + ["in_progress"] + ["pending"] * 14)
]


def with_task_list(source: Path, target: Path, depth: int | None) -> None:
    """Copy ``source`` with a ``pi-todo:state`` entry spliced in ``depth`` entries before the leaf."""
    lines = source.read_bytes().splitlines()
    if depth is None:
        target.write_bytes(b"\n".join(lines) + b"\n")
        return
    entries = [jsjson.loads(line) for line in lines]
    at = len(entries) - depth  # the new entry goes before entries[at]
    parent = entries[at - 1]
    state = {
        "type": "custom",
        "customType": "pi-todo:state",
        "data": {"schemaVersion": 1, "revision": 7, "tasks": TASKS},
        "id": "feedf00d",
        "parentId": parent["id"],
        "timestamp": parent["timestamp"],
    }
    entries[at]["parentId"] = "feedf00d"
    entries.insert(at, state)
    target.write_bytes(b"".join(jsjson.dumps(entry) + b"\n" for entry in entries))


def autonomous_turn(manager: SessionManager, n: int) -> None:
    call = {"type": "toolCall", "id": f"call_b{n}", "name": "bash", "arguments": {"command": "make test"}}
    assistant = {
        "role": "assistant",
        "content": [{"type": "text", "text": "running the tests"}, call],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "toolUse",
        "timestamp": 1,
    }
    manager.append_message(assistant)
    manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": f"call_b{n}",
            "toolName": "bash",
            "content": [{"type": "text", "text": "ok"}],
            "isError": False,
            "timestamp": 1,
        }
    )
    manager.append_message({**assistant, "content": [{"type": "text", "text": "done"}], "stopReason": "stop"})


def measure(path: Path, runs: int) -> tuple[float, float, float, float, str]:
    """(first read ms, per-request read ms, context hook ms, host filter ms, what was found)."""
    manager = SessionManager.open(path)
    try:
        messages = convert_to_llm(manager.build_session_context()["messages"])  # as the host does first
        view = ReadonlySessionManager(lambda: manager)
        firsts = []
        for _ in range(runs + 1):
            reader = BranchReader()
            start = time.perf_counter()
            scan = reader.read(view)
            firsts.append(time.perf_counter() - start)
        found = "no list" if scan.tasks is None else f"{scan.tasks.open_count}/{scan.tasks.total} open"
        per_request = []
        for n in range(runs + 1):
            autonomous_turn(manager, n)
            start = time.perf_counter()
            reader.read(view)
            per_request.append(time.perf_counter() - start)
        hooks, host = [], []
        for _ in range(runs + 1):
            start = time.perf_counter()
            without_markers_next_to_human(messages)
            hooks.append(time.perf_counter() - start)
            start = time.perf_counter()
            [message for message in messages if message.get("role") != "system"]
            host.append(time.perf_counter() - start)
    finally:
        manager.close()
    ms = [statistics.median(values[1:]) * 1000 for values in (firsts, per_request, hooks, host)]
    return ms[0], ms[1], ms[2], ms[3], found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", type=Path, help="write the base session there and reuse it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp) / "base.jsonl"
        if not base.exists():
            generate(base)
        cases = [
            ("list 4 entries back", 4),
            ("list 100 entries back", 100),
            ("list 5,000 entries back", 5_000),
            ("list 9,990 entries back", 9_990),
            ("no list", None),
        ]
        print(
            f"todo-loop read, 10,000-entry session, median of {args.runs} runs (target per request <= {TARGET_MS} ms)"
        )
        print(
            f"{'case':<26}{'found':>12}{'first read':>14}{'per request':>14}{'context hook':>15}{'host filter':>14}"
        )
        worst = 0.0
        for name, depth in cases:
            path = Path(tmp) / "case.jsonl"
            with_task_list(base, path, depth)
            first, per_request, hook, host, found = measure(path, args.runs)
            worst = max(worst, per_request)
            print(
                f"{name:<26}{found:>12}{first:>11.3f} ms{per_request:>11.3f} ms{hook:>12.3f} ms{host:>11.3f} ms"
            )
        verdict = "ok" if worst <= TARGET_MS else "MISSED"
        print(f"worst per-request read: {worst:.3f} ms (target <= {TARGET_MS} ms): {verdict}")


if __name__ == "__main__":
    main()
