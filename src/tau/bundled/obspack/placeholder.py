"""The placeholder that replaces a large tool result after its full sends (extensions.md §5.4).

Its bytes must never change for a given observation and excerpt sizes: every later request
carries it, and a changed byte would break the provider's cached prefix.
"""

from __future__ import annotations

from tau.bundled.obspack.observation import FULL_SENDS, Observation, estimate_tokens

__all__ = [
    "DEFAULT_HEAD_BYTES",
    "DEFAULT_TAIL_BYTES",
    "EDGE_LINE_BYTES",
    "arguments_placeholder",
    "compact_placeholder",
    "placeholder_for",
]

DEFAULT_HEAD_BYTES = 512
DEFAULT_TAIL_BYTES = 512
EDGE_LINE_BYTES = 100  # the first and last line a compact placeholder keeps, at most
_STATUS_PREFIXES = ("Command exited with code", "Command timed out", "Command aborted", "Command terminated")


def _utf8_start(data: bytes, index: int) -> int:
    """``index`` moved forward to the start of a code point."""
    while index < len(data) and data[index] & 0xC0 == 0x80:
        index += 1
    return index


def _utf8_end(data: bytes, index: int) -> int:
    """``index`` moved back so that ``data[:index]`` ends on a whole code point."""
    while 0 < index < len(data) and data[index] & 0xC0 == 0x80:
        index -= 1
    return index


def _head(data: bytes, budget: int) -> int:
    """End offset of the leading whole lines that fit ``budget`` bytes (0 when none does)."""
    end = 0
    while end < len(data):
        newline = data.find(b"\n", end)
        line_end = len(data) if newline < 0 else newline + 1
        if line_end > budget:
            break
        end = line_end
    return end


def _tail(data: bytes, budget: int) -> int:
    """Start offset of the trailing whole lines that fit ``budget`` bytes (``len`` when none does)."""
    start = len(data)
    while start > 0:
        previous = data.rfind(b"\n", 0, start - 1) if start >= 2 else -1
        line_start = previous + 1
        if len(data) - line_start > budget:
            break
        start = line_start
    return start


def placeholder_for(
    observation: Observation, head_bytes: int = DEFAULT_HEAD_BYTES, tail_bytes: int = DEFAULT_TAIL_BYTES
) -> str:
    """The placeholder text: header lines, then the head and tail excerpts.

    Excerpts are whole lines within the budget. A payload whose first (last) line alone exceeds
    the budget shows its first (last) ``head_bytes`` (``tail_bytes``) instead, cut on a code-point
    boundary, under a header that says so.
    """
    data = observation.data
    head_end = _head(data, head_bytes)
    head_label = f"[first complete lines, up to {head_bytes} bytes]"
    if head_end == 0:
        head_end = _utf8_end(data, min(head_bytes, len(data)))
        head_label = f"[no complete line fits; first {head_bytes} bytes]"
    tail_start = _tail(data, tail_bytes)
    tail_label = f"[middle omitted; last complete lines, up to {tail_bytes} bytes]"
    if tail_start == len(data):
        tail_start = _utf8_start(data, max(0, len(data) - tail_bytes))
        tail_label = f"[middle omitted; no complete line fits; last {tail_bytes} bytes]"
    head = data[:head_end].decode("utf-8", "replace")
    tail = data[tail_start:].decode("utf-8", "replace")
    oid = observation.id
    return "\n".join(
        [
            f"[large tool result replaced after its first {FULL_SENDS} provider requests]",
            f"id: {oid}",
            f"tool: {observation.tool_name}",
            f"original_bytes: {observation.bytes}",
            f"original_lines: {observation.lines}",
            f"estimated_tokens: {observation.tokens}",
            f'retrieve: call obs_recall with {{"id":"{oid}","offset":0}}; continue with returned next_offset',
            head_label,
            head,
            tail_label,
            tail,
            f"[{observation.bytes} original bytes omitted]",
        ]
    )


def placeholder_tokens(text: str) -> int:
    return estimate_tokens(text)


def _edge_line(line: str) -> str:
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= EDGE_LINE_BYTES:
        return line
    return data[: _utf8_end(data, EDGE_LINE_BYTES)].decode("utf-8", "replace") + " …"


def _status(text: str) -> str | None:
    """A failed command's final status paragraph (bash's ``Command exited with code N`` and kin)."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    return last if last.startswith(_STATUS_PREFIXES) else None


def compact_placeholder(observation: Observation, reason: str, *, failed: bool) -> str:
    """The placeholder of stale context: why it went and how to get it back, its size, a failed
    command's exit status, then its first and last line (each cut at ``EDGE_LINE_BYTES``).

    Kept short (stale results are often small: the placeholder must save most of them) and
    byte-stable like :func:`placeholder_for`: it depends on the observation and the reason only.
    """
    oid = observation.id
    lines = observation.text.rstrip("\n").split("\n")
    facts = [observation.tool_name, f"{observation.bytes} bytes", f"{observation.lines} lines"]
    status = _status(observation.text) if failed else None
    if status is not None:
        facts.append(status)
    out = [
        f'[tool result packed: {reason}; obs_recall {{"id":"{oid}"}} returns it]',
        " · ".join(facts),
        f"first: {_edge_line(lines[0])}",
    ]
    if len(lines) > 1:
        out.append(f"last: {_edge_line(lines[-1])}")
    return "\n".join(out)


def arguments_placeholder(observation: Observation, arguments: dict, reason: str) -> dict:
    """The arguments an old ``edit``/``write`` call is sent with: its path, and where the rest is."""
    kept = {key: arguments[key] for key in ("path",) if isinstance(arguments.get(key), str)}
    edits = arguments.get("edits")
    what = f"{len(edits)} edit(s), " if isinstance(edits, list) else ""
    kept["packed"] = (
        f"{observation.tool_name} arguments packed ({reason}): {what}{observation.bytes} bytes; "
        f'obs_recall {{"id":"{observation.id}"}} returns them'
    )
    return kept
