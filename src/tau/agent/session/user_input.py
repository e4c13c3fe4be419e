"""The messages a session makes of its input: a prompt's user message, an extension's custom message.

pi 1.6 normalizes a prompt's images (converted, resized, or left out with a note in the text) both
for a prompt that starts a run and for one queued while streaming; an extension's custom message
gets the same fields whether it is sent alone or added by ``before_agent_start``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tau.common.jsstr import js_trim, ms_now

__all__ = [
    "NO_MODEL_MESSAGE",
    "custom_message",
    "last_assistant",
    "last_assistant_text",
    "normalize_prompt_images",
    "user_message",
]

NO_MODEL_MESSAGE = (
    "No model selected. Use --model provider/id (or set defaultProvider/defaultModel in settings.json); "
    "`--model faux/faux-1 --faux-script FILE` runs offline."
)


def normalize_prompt_images(images: Any, auto_resize: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """A prompt's image blocks as pi 1.6 sends them: converted and resized, or left out with a note."""
    if not images:
        return [], []
    import base64
    import binascii

    from tau.tools.images import prepare_image

    normalized: list[dict[str, Any]] = []
    hints: list[str] = []
    for image in images:
        try:
            data = base64.b64decode(image.get("data") or "")
        except (binascii.Error, ValueError):
            data = b""
        prepared = prepare_image(data, str(image.get("mimeType") or ""), auto_resize=bool(auto_resize))
        if prepared.omitted:
            hints.append(prepared.omitted)
            continue
        normalized.append({"type": "image", "data": prepared.data, "mimeType": prepared.mime_type})
        hints += prepared.hints
    return normalized, hints


def user_message(text: str, images: Any, auto_resize: bool) -> dict[str, Any]:
    """The user message of a prompt: its text (with a note for each image left out) and its images."""
    sent_images, hints = normalize_prompt_images(images, auto_resize)
    sent = f"{text}\n\n" + "\n".join(hints) if hints else text
    content: list[dict[str, Any]] = [{"type": "text", "text": sent}, *sent_images]
    return {"role": "user", "content": content, "timestamp": ms_now()}


def custom_message(spec: dict[str, Any]) -> dict[str, Any]:
    """An extension's custom message (``customType``, ``content``, ``display``, ``details``) as sent."""
    custom = {
        "role": "custom",
        "customType": spec["customType"],
        "content": spec.get("content") if spec.get("content") is not None else [],
        "display": spec.get("display", True),
        "details": spec.get("details"),
        "timestamp": ms_now(),
    }
    if custom["details"] is None:
        del custom["details"]
    return custom


def last_assistant(messages: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return message
    return None


def last_assistant_text(messages: Sequence[dict[str, Any]]) -> str | None:
    """The text of the last reply (pi: replies without text that did not end with ``stop`` are skipped)."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        texts = [b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text"]
        if message.get("stopReason") != "stop" and not any(js_trim(text) for text in texts):
            continue
        return js_trim("".join(texts)) or None
    return None
