"""What a session has used, from the usage recorded on its assistant messages.

One small function, :func:`recorded_usage`, so that the SDK's ``usage()``, ``tau batch``'s result
lines and ``tau savings`` count a session's requests and tokens the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tau.common.dataclass import dataclass
from tau.llm.messages import entry_message

__all__ = ["Usage", "recorded_usage"]


@dataclass(frozen=True)
class Usage:
    """Totals over a session's model requests.

    Attributes:
        requests: Assistant messages (one per request; failed and aborted requests included).
        input_tokens: Uncached prompt tokens.
        cache_read_tokens: Prompt tokens read from the provider's cache.
        cache_write_tokens: Prompt tokens written to the provider's cache.
        output_tokens: Generated tokens.
        cost: What the provider billed, in dollars, as each message recorded it.
    """

    requests: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0


def _number(value: Any) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def recorded_usage(entries: Iterable[dict[str, Any]]) -> Usage:
    """The :class:`Usage` of the assistant messages among ``entries`` (a session's active branch)."""
    requests = input_tokens = cache_read = cache_write = output = 0
    cost = 0.0
    for entry in entries:
        message = entry_message(entry)
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        usage = found_usage if isinstance(found_usage := message.get("usage"), dict) else {}
        requests += 1
        input_tokens += int(_number(usage.get("input")))
        cache_read += int(_number(usage.get("cacheRead")))
        cache_write += int(_number(usage.get("cacheWrite")))
        output += int(_number(usage.get("output")))
        billed = usage.get("cost")
        cost += _number(billed.get("total")) if isinstance(billed, dict) else 0
    return Usage(requests, input_tokens, cache_read, cache_write, output, cost)
