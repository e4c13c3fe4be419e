"""What a session's calls were billed, from the usage they recorded (decisions.md, "The economy wave").

Three kinds of call leave their usage in a session file:

- **agent requests**: every assistant message on the branch (an aborted or failed one costs what
  its usage says: nothing when the provider was never called);
- **reducer calls**: the Evidence-Preserving Reducer's ``provider_response`` journal entries;
- **summary calls**: compaction and branch-summary entries (pi 1.6 stores their usage too).

Each is priced cache-aware at its own model's prices (uncached input 1x, cache read 0.1x, cache
write 1.25x of the input price; output at the output price), or at ``--price``.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.reducer.wire import JOURNAL_TYPE as REDUCER_JOURNAL
from tau.llm.messages import entry_message
from tau.modes.savings.cost_model import CacheBreaks, Figures, PriceBook, add_figures, empty_figures
from tau.modes.savings.replay import count_recorded

__all__ = ["billed_parts", "is_tau_session", "total"]

Entry = dict[str, Any]
_TAU_PROMPT = "running inside tau"


def _model(message: dict[str, Any]) -> tuple[str, str]:
    return str(message.get("provider", "")), str(message.get("model", ""))


def billed_parts(branch: list[Entry], book: PriceBook) -> dict[str, Figures]:
    """``{"requests", "reducer", "summaries"}``: the recorded calls of ``branch``, priced."""
    parts = {"requests": empty_figures(), "reducer": empty_figures(), "summaries": empty_figures()}
    model: tuple[str, str] = ("", "")
    breaks = CacheBreaks()
    for entry in branch:
        kind = entry.get("type")
        message = entry.get("message") if kind == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            model = _model(message)
            usage = found_usage if isinstance(found_usage := message.get("usage"), dict) else {}
            count_recorded(parts["requests"], usage, book.prices(*model))
            read = _tokens(usage.get("cacheRead"))
            prompt = read + _tokens(usage.get("input")) + _tokens(usage.get("cacheWrite"))
            if prompt:  # a request that never reached the provider breaks nothing
                breaks.request(parts["requests"], read, prompt, _time(message), model)
        elif kind in ("compaction", "branch_summary") and isinstance(entry.get("usage"), dict):
            count_recorded(parts["summaries"], entry["usage"], book.prices(*model))
        elif kind == "custom" and entry.get("customType") == REDUCER_JOURNAL:
            data = entry.get("data")
            if (
                isinstance(data, dict)
                and data.get("kind") == "provider_response"
                and isinstance(data.get("usage"), dict)
            ):
                rates = book.prices(str(data.get("provider", "")), str(data.get("model", "")))
                count_recorded(parts["reducer"], data["usage"], rates)
    return parts


def _tokens(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _time(message: dict[str, Any]) -> int | None:
    stamp = message.get("timestamp")
    return int(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None


def total(parts: dict[str, Figures]) -> Figures:
    """All parts together (``requests`` then counts every call)."""
    combined = empty_figures()
    for part in parts.values():
        add_figures(combined, part)
    return combined


def is_tau_session(branch: list[Entry], evidence: dict[str, int], has_archive: bool) -> bool:
    """Whether tau ran this session: a mechanism left traces, it has a ``sol/`` archive, or its
    system prompt is tau's."""
    if evidence or has_archive:
        return True
    for entry in branch:
        message = entry_message(entry)
        if isinstance(message, dict) and message.get("role") == "system":
            sections = message.get("sections")
            texts = [message.get("content")] + (list(sections.values()) if isinstance(sections, dict) else [])
            return any(isinstance(text, str) and _TAU_PROMPT in text for text in texts)
    return False
