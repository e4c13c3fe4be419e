"""What the two OpenAI adapters share: the SDK client, credentials, error text, stream errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.common import jsjson
from tau.llm.providers._common import (
    ProviderError,
    has_header,
    is_transport_error,
    lost_stream_text,
    timeout_error,
    truncate_error_text,
)
from tau.llm.providers._sse import http_client
from tau.llm.stream import StreamOptions
from tau.llm.types import Model

__all__ = [
    "DEFAULT_BASE_URL",
    "KEYED_PROVIDERS",
    "api_key_for",
    "auth_extra",
    "make_client",
    "request_error_text",
    "stream_error",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYED_PROVIDERS = {"openai", "anthropic"}  # built-in providers that cannot be called without a key


def api_key_for(model: Model, options: StreamOptions, headers: Mapping[str, str]) -> str | None:
    """The key to give the SDK; ``None`` for a keyless server (no ``Authorization`` is sent then).

    A header that carries the auth gets a stand-in key (the header wins). OpenAI itself needs a
    key; a ``models.json`` server without ``apiKey`` (a local server) does not.
    """
    if options.api_key:
        return options.api_key
    if has_header(headers, "authorization") or has_header(headers, "cf-aig-authorization"):
        return "unused"
    if model.provider in KEYED_PROVIDERS:
        raise ProviderError(f"No API key for provider: {model.provider}")
    return None


def auth_extra(api_key: str | None, sdk: Any) -> dict[str, Any]:
    """Per-request SDK arguments that drop the ``Authorization`` header for a keyless server."""
    return {} if api_key is not None else {"extra_headers": {"Authorization": sdk.Omit()}}


def make_client(model: Model, options: StreamOptions, api_key: str | None, headers: Mapping[str, str]) -> Any:
    import openai  # already imported by the adapter (import_sdk); cheap here

    timeout: dict[str, Any] = {"timeout": options.timeout_ms / 1000} if options.timeout_ms else {}
    return openai.AsyncOpenAI(
        api_key=api_key or "unused",
        base_url=model.base_url or DEFAULT_BASE_URL,
        default_headers=dict(headers),
        max_retries=0,  # retries go through retry_provider_request, which the abort signal interrupts
        **timeout,
        **http_client(openai),  # a stream's unterminated last event is delivered
    )


def request_error_text(exc: Any, prefix: str | None = None) -> str:
    """An HTTP error as pi formats it: ``<status>: <error JSON>``, or ``<prefix> (<status>): ...``.

    Without a JSON error object, the JavaScript SDK's message ``<status> <body text>`` (or
    ``<status> status code (no body)``) is used instead.
    """
    status = exc.status_code
    body = exc.body
    if isinstance(body, Mapping) and body:
        detail = truncate_error_text(jsjson.dumps_str(body))
        return f"{prefix} ({status}): {detail}" if prefix else f"{status}: {detail}"
    text = body.strip() if isinstance(body, str) and body.strip() else ""
    message = f"{status} {text}" if text else f"{status} status code (no body)"
    return f"{prefix} ({status}): {message}" if prefix else message


def stream_error(exc: Exception, sdk: Any) -> ProviderError | None:
    """Translate an exception raised while reading the stream; ``None`` to let it through."""
    timed_out = timeout_error(exc, sdk)
    if timed_out is not None:
        return timed_out
    if isinstance(exc, sdk.APIStatusError):
        return ProviderError(request_error_text(exc))
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(lost_stream_text(exc))
    if isinstance(exc, sdk.APIError):
        # An error object inside the stream: pi reports its message.
        return ProviderError(str(exc))
    if isinstance(exc, ValueError):
        return ProviderError(f"Could not parse the provider's stream: {exc}")
    if is_transport_error(exc):
        return ProviderError(lost_stream_text(exc))
    return None
