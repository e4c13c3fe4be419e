"""Models: message and event types, streaming providers, registry, cost and error classifiers.

The names below are imported on first use, so ``import tau.llm`` stays cheap and never loads a
provider SDK; the adapters themselves (``tau.llm.providers.*``) load when a model of their API is
first called. (The dispatching ``stream`` function lives in :mod:`tau.llm.registry`: here the
name ``stream`` is the :mod:`tau.llm.stream` module.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.common.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from tau.llm.builder import MessageBuilder
    from tau.llm.catalog import BUILTIN_MODELS
    from tau.llm.cost import calculate_cost, context_tokens, total_usage
    from tau.llm.models_json import ModelsConfigError
    from tau.llm.overflow import is_context_overflow
    from tau.llm.providers.faux import FauxProvider
    from tau.llm.registry import (
        MissingCredentialsError,
        ModelChoice,
        ModelNotFoundError,
        ModelRegistry,
        clamp_thinking_level,
        complete,
    )
    from tau.llm.retry import is_retryable
    from tau.llm.stream import AbortSignal, AssistantMessageEventStream, StreamOptions
    from tau.llm.types import (
        AssistantMessage,
        Message,
        Model,
        ModelCost,
        ToolResultMessage,
        TranscriptContext,
        Usage,
        UserMessage,
        empty_usage,
    )

_EXPORTS: dict[str, str] = {
    "AbortSignal": "tau.llm.stream",
    "AssistantMessage": "tau.llm.types",
    "AssistantMessageEventStream": "tau.llm.stream",
    "BUILTIN_MODELS": "tau.llm.catalog",
    "FauxProvider": "tau.llm.providers.faux",
    "Message": "tau.llm.types",
    "MessageBuilder": "tau.llm.builder",
    "MissingCredentialsError": "tau.llm.registry",
    "Model": "tau.llm.types",
    "ModelChoice": "tau.llm.registry",
    "ModelCost": "tau.llm.types",
    "ModelNotFoundError": "tau.llm.registry",
    "ModelRegistry": "tau.llm.registry",
    "ModelsConfigError": "tau.llm.models_json",
    "StreamOptions": "tau.llm.stream",
    "ToolResultMessage": "tau.llm.types",
    "TranscriptContext": "tau.llm.types",
    "Usage": "tau.llm.types",
    "UserMessage": "tau.llm.types",
    "calculate_cost": "tau.llm.cost",
    "clamp_thinking_level": "tau.llm.registry",
    "complete": "tau.llm.registry",
    "context_tokens": "tau.llm.cost",
    "empty_usage": "tau.llm.types",
    "is_context_overflow": "tau.llm.overflow",
    "is_retryable": "tau.llm.retry",
    "total_usage": "tau.llm.cost",
}

__all__ = [
    "BUILTIN_MODELS",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageEventStream",
    "FauxProvider",
    "Message",
    "MessageBuilder",
    "MissingCredentialsError",
    "Model",
    "ModelChoice",
    "ModelCost",
    "ModelNotFoundError",
    "ModelRegistry",
    "ModelsConfigError",
    "StreamOptions",
    "ToolResultMessage",
    "TranscriptContext",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "clamp_thinking_level",
    "complete",
    "context_tokens",
    "empty_usage",
    "is_context_overflow",
    "is_retryable",
    "total_usage",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
