"""The codemode result the model reads (pi ``codemode/execute.ts``).

``Script completed`` or ``Script failed``, the wall time, then the script's output: text and image
items in order (``==> text N/M <==`` before each when there are several), ``console`` lines in one
``<console_output>`` block, and for a failure ``Script error:`` with the stack and the calls made
before it. Output over the token budget keeps its start and end and is written whole to a temp file;
each image is saved to a temp file too, its path on a line before it.
"""

from __future__ import annotations

import base64
import math
import os
from typing import Any

from tau.bundled.codemode.sandbox import UNDEFINED, ScriptError
from tau.common import jsjson
from tau.extension import create_output_file, format_size

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "call_summary",
    "format_error",
    "format_output",
    "join_adjacent_text",
    "save_images",
    "truncate_output",
    "value_text",
]

DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_CHARS_PER_TOKEN = 4
FILE_PREFIX = "tau-codemode"
_IMAGE_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def value_text(value: Any) -> str:
    """A returned value as ``text()`` adds it: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    return jsjson.dumps_str(value)


def format_output(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Number the text items when there are several; ``console`` lines go last, in one block."""
    total = sum(1 for item in output if item["type"] == "text" and not item.get("console"))
    items: list[dict[str, Any]] = []
    console_lines: list[str] = []
    index = 0
    for item in output:
        if item["type"] == "image":
            items.append(item)
        elif item.get("console"):
            console_lines.append(item["text"])
        else:
            index += 1
            text = f"==> text {index}/{total} <==\n{item['text']}" if total > 1 else item["text"]
            items.append({"type": "text", "text": text})
    if console_lines:
        items.append(
            {"type": "text", "text": "<console_output>\n" + "\n".join(console_lines) + "\n</console_output>"}
        )
    return items


def join_adjacent_text(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent text items as one, each part starting on its own line."""
    joined: list[dict[str, Any]] = []
    parts: list[str] = []
    last = ""

    def flush() -> None:
        nonlocal parts, last
        if parts:
            joined.append({"type": "text", "text": "".join(parts)})
        parts, last = [], ""

    for item in items:
        if item["type"] != "text":
            flush()
            joined.append(item)
            continue
        if last and not last.endswith("\n"):
            parts.append("\n")
            last = "\n"
        parts.append(item["text"])
        if item["text"]:
            last = item["text"]
    flush()
    return joined


def call_summary(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "No tool calls were made."
    made = ", ".join(f"{call['name']} ({call['status']})" for call in calls)
    return f"Tool calls made before the failure (they are not undone): {made}"


def format_error(error: ScriptError, calls: list[dict[str, Any]]) -> str:
    if error.kind == "script":
        head = error.stack or f"{error.name or 'Error'}: {error.message}"
    elif error.kind == "timeout":
        head = f"Script timed out: {error.message}"
    elif error.kind == "aborted":
        head = f"Script aborted: {error.message}"
    else:
        head = f"Script sandbox failed: {error.message}"
    return f"{head}\n\n{call_summary(calls)}"


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _from_units(data: bytes) -> str:
    return data.decode("utf-16-le", "surrogatepass")


def _slice_head(text: str, units: int) -> str:
    """At most ``units`` UTF-16 code units from the start, never half a surrogate pair."""
    data = _units(text)
    end = max(0, units) * 2
    if 0 < end < len(data):
        last = int.from_bytes(data[end - 2 : end], "little")
        if 0xD800 <= last <= 0xDBFF:
            end -= 2
    return _from_units(data[:end])


def _slice_tail(text: str, units: int) -> str:
    if units <= 0:
        return ""
    data = _units(text)
    start = max(0, len(data) - units * 2)
    if 0 < start < len(data):
        first = int.from_bytes(data[start : start + 2], "little")
        if 0xDC00 <= first <= 0xDFFF:
            start += 2
    return _from_units(data[start:])


def _js_len(text: str) -> int:
    return len(_units(text)) // 2


def _write_output_file(extension: str, data: bytes) -> str:
    path, fd = create_output_file(FILE_PREFIX, extension)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


def truncate_output(items: list[dict[str, Any]], max_tokens: int) -> tuple[list[dict[str, Any]], str | None]:
    """Over the budget, the text items become one that keeps the start and end; images follow it.
    Returns the items and the path of the full text (``None`` when nothing was cut)."""
    texts = [item["text"] for item in items if item["type"] == "text"]
    combined = "\n".join(texts)
    budget = max_tokens * _CHARS_PER_TOKEN
    length = _js_len(combined)
    if not texts or length <= budget:
        return items, None
    head_chars = budget // 2
    tail_chars = budget - head_chars
    removed = length - head_chars - tail_chars
    text = (
        f"Warning: truncated output (original token count: {math.ceil(length / _CHARS_PER_TOKEN)})\n"
        f"Total output lines: {combined.count(chr(10)) + 1}\n\n"
        f"{_slice_head(combined, head_chars)}…{math.ceil(removed / _CHARS_PER_TOKEN)} tokens truncated…"
        f"{_slice_tail(combined, tail_chars)}"
    )
    path = None
    try:
        path = _write_output_file(".txt", combined.encode("utf-8", "surrogatepass"))
        text += f"\n\n[Full output: {path} (read with offset/limit)]"
    except OSError as exc:
        text += f"\n\n[Could not save the full output: {exc.strerror or exc}]"
    images = [item for item in items if item["type"] == "image"]
    return [{"type": "text", "text": text}, *images], path


def save_images(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each image saved to a temp file (once per distinct image), its label on a line before it."""
    labels: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for item in items:
        if item["type"] != "image":
            out.append(item)
            continue
        label = labels.get(item["data"])
        if label is None:
            label = labels[item["data"]] = _image_label(item)
        out.append({"type": "text", "text": label})
        out.append(item)
    return out


def _image_label(item: dict[str, Any]) -> str:
    data = base64.b64decode(item["data"])
    kind = f"{item['mimeType']}, {format_size(len(data))}"
    extension = _IMAGE_EXTENSIONS.get(item["mimeType"])
    if extension is None:
        return f"[Image ({kind}) could not be saved: No file extension for image type {item['mimeType']}]"
    try:
        return f"[Image saved to {_write_output_file(extension, data)} ({kind})]"
    except OSError as exc:
        return f"[Image ({kind}) could not be saved: {exc.strerror or exc}]"
