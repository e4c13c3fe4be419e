"""``bench/evidence_horizon.py``: a result used again after a long gap is a miss for a short window,
none for a window that spans the gap or for foresight, and keeping it costs tokens."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import evidence_horizon  # noqa: E402
from tau.modes.savings.misses import TokenCache  # noqa: E402

SOURCE = "\n".join(f"def helper_{n}(value):\n    return compute_total_{n}(value) * 3" for n in range(40))


def _branch(gap: int) -> list[dict]:
    """Read a module, do ``gap`` unrelated steps, then edit using a name only the read held."""
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "refactor"}]}]

    def call(n: int, name: str, args: dict, result: str) -> None:
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": f"c{n}", "name": name, "arguments": args}],
            }
        )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": name,
                "content": [{"type": "text", "text": result}],
                "isError": False,
            }
        )

    call(0, "read", {"path": "mod.py"}, SOURCE)
    for n in range(1, gap + 1):
        call(n, "bash", {"command": f"echo step{n}"}, f"step{n}")
    call(
        gap + 1,
        "edit",
        {"path": "mod.py", "edits": [{"oldText": "compute_total_17", "newText": "total_17"}]},
        "ok",
    )
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return [
        {"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "message": m}
        for i, m in enumerate(messages)
    ]


def test_a_use_after_a_gap_longer_than_the_window_is_a_miss():
    held, requests = evidence_horizon.held_messages(_branch(gap=10), TokenCache())
    short_misses, short_tokens = evidence_horizon.window_rule(held, requests, 4)
    long_misses, long_tokens = evidence_horizon.window_rule(held, requests, 12)
    foresight_misses, foresight_tokens = evidence_horizon.window_rule(held, requests, None)
    assert short_misses == 100 / requests  # the edit, one request of the run
    assert long_misses == 0 and foresight_misses == 0
    assert short_tokens < foresight_tokens <= long_tokens <= 1.0
