"""Is a failed (or suspiciously full) response a context overflow? pi-ai ``utils/overflow.ts``.

Three cases: an error whose text matches a known provider overflow message (unless it reads as
throttling), a ``stop`` whose input exceeds the context window (providers that overflow silently),
and a ``length`` stop with no output and an input that fills the window.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["OVERFLOW_PATTERNS", "is_context_overflow", "is_recoverable_length", "js_regex"]

_JS_DOT = "[^\n\r\u2028\u2029]"


def js_regex(pattern: str) -> re.Pattern[str]:
    """Compile a JavaScript ``/pattern/i`` with JS meaning: ``.`` stops at any line terminator,
    ``$`` is the end of the text, ``\\d`` and ``\\w`` are ASCII."""
    out: list[str] = []
    in_class = escaped = False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif in_class:
            out.append(char)
            in_class = char != "]"
        elif char == "[":
            out.append(char)
            in_class = True
        elif char == ".":
            out.append(_JS_DOT)
        elif char == "$":
            out.append(r"\Z")
        else:
            out.append(char)
    return re.compile("".join(out), re.IGNORECASE | re.ASCII)


# The provider each pattern was written for, with an example message, is in tests/llm/test_overflow.py.
# Compiled on first use (only an error message is matched): see :func:`_compiled`.
_OVERFLOW_SOURCES: tuple[str, ...] = (
    r"prompt (?:is )?too long",  # Anthropic, z.ai
    r"prompt exceeds max length",  # z.ai CN
    r"request_too_large",  # Anthropic request byte size (HTTP 413)
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI (Completions and Responses)
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",  # LiteLLM
    r"context window exceeded",  # LiteLLM pre-call check
    r"input token count.*exceeds the maximum",  # Google Gemini
    r"maximum prompt length is \d+",  # xAI
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenRouter
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",  # OpenRouter/Poolside
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",  # Together AI
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi For Coding
    r"too large for model with \d+ maximum context length",  # Mistral
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",  # DS4
    r"model_context_window_exceeded",  # z.ai finish reason as error text
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
    r"range of input length should be",  # DashScope / Qwen
    r"context[_ ]length[_ ]exceeded",  # generic
    r"too many tokens",  # generic
    r"token limit exceeded",  # generic
    # HTTP 413 is a request-size overflow whatever the body says (SDK text or "<X> API error (413):").
    r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
)

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...]  # the compiled _OVERFLOW_SOURCES, made by __getattr__

_CEREBRAS_BODYLESS = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)"

# Throttling that happens to mention tokens ("Too many tokens, please wait") is not an overflow.
_NOT_OVERFLOW = (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")


@functools.cache
def _compiled(sources: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(js_regex(pattern) for pattern in sources)


def __getattr__(name: str) -> Any:
    if name == "OVERFLOW_PATTERNS":  # compiled on first use: most runs never see an error message
        return _compiled(_OVERFLOW_SOURCES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _matches_overflow_text(text: str, provider: str | None) -> bool:
    if any(pattern.search(text) for pattern in _compiled(_NOT_OVERFLOW)):
        return False
    if any(pattern.search(text) for pattern in _compiled(_OVERFLOW_SOURCES)):
        return True
    return provider == "cerebras" and _compiled((_CEREBRAS_BODYLESS,))[0].search(text) is not None


def is_context_overflow(message: Mapping[str, Any] | str, context_window: int | None = None) -> bool:
    """Whether an assistant message (or an error text) is a context overflow.

    Args:
        message: the assistant message; a plain string is read as the ``errorMessage`` of an error.
        context_window: the model's window, to detect silent overflow (``stop`` with input above
            the window) and a ``length`` stop with no output and a full window; 0/None skips both.
    """
    if isinstance(message, str):
        return _matches_overflow_text(message, None)
    stop_reason = message.get("stopReason")
    error = message.get("errorMessage")
    if stop_reason == "error" and error and _matches_overflow_text(error, message.get("provider")):
        return True
    if not context_window:
        return False
    usage = message.get("usage") or {}
    input_tokens = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if stop_reason == "stop" and input_tokens > context_window:
        return True
    return stop_reason == "length" and usage.get("output") == 0 and input_tokens >= context_window * 0.99


def is_recoverable_length(message: Mapping[str, Any], desired_max_output: int) -> bool:
    """A ``length`` stop below the intended output limit (worth one compact-and-retry)."""
    usage = message.get("usage") or {}
    return (
        message.get("stopReason") == "length"
        and desired_max_output > 0
        and (usage.get("output") or 0) < desired_max_output
    )
