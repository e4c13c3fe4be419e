"""The built-in models: a small hand-kept catalogue of current Anthropic and OpenAI models, and faux.

Prices are USD per million tokens, taken with context windows, output caps and compatibility
flags from pi-ai 1.6's generated catalogue (``providers/data/anthropic.json``, ``openai.json``).
``compat`` also carries pi's ``thinkingLevelMap`` (a level mapped to ``None`` is unsupported).
Anything else is one ``models.json`` entry away (see ``docs/models.md`` and
:mod:`tau.llm.models_json`).
"""

from __future__ import annotations

from typing import Any

from tau.common.dataclass import dataclass
from tau.llm.types import Model, ModelCost

__all__ = [
    "BUILTIN_MODELS",
    "BUILTIN_PROVIDERS",
    "FAUX_MINI_MODEL",
    "FAUX_MODEL",
    "ProviderInfo",
    "builtin_models",
]


@dataclass(frozen=True)
class ProviderInfo:
    """A built-in provider: display name, default base URL, credential variable, default model."""

    id: str
    name: str
    base_url: str
    env_var: str | None
    default_model: str | None


BUILTIN_PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        "anthropic", "Anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "claude-opus-5-5"
    ),
    "openai": ProviderInfo("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-6.2-sol"),
    "faux": ProviderInfo("faux", "Faux (scripted)", "http://localhost:0", None, "faux-1"),
}

_APIS = {"anthropic": "anthropic-messages", "openai": "openai-responses"}


def _chat(
    provider: str,
    model_id: str,
    name: str,
    cost: ModelCost,
    *,
    context: int,
    max_out: int,
    reasoning: bool,
    compat: dict[str, Any],
    images: bool = True,
) -> Model:
    return Model(
        id=model_id,
        provider=provider,
        api=_APIS[provider],
        name=name,
        base_url=BUILTIN_PROVIDERS[provider].base_url,
        reasoning=reasoning,
        input=("text", "image") if images else ("text",),
        cost=cost,
        context_window=context,
        max_tokens=max_out,
        compat=compat,
    )


FAUX_MODEL = Model(
    id="faux-1",
    provider="faux",
    api="faux",
    name="Faux Model",
    base_url="http://localhost:0",
    input=("text", "image"),
    context_window=128_000,
    max_tokens=16_384,
)

# faux-1's cheaper sibling, priced (faux-1 is not, as in pi): what the Evidence-Preserving Reducer
# takes as "the cheapest model of the session's provider" in faux sessions, so benchmarks and tests
# see the automatic choice at work. Its prices are a third of claude-sonnet-4-6's, the benchmark's
# reference (bench/economy prices the session model's calls at those). Its id is dated, so a bare
# ``--model faux`` still picks faux-1 (aliases before dated ids).
FAUX_MINI_MODEL = Model(
    id="faux-mini-20261206",
    provider="faux",
    api="faux",
    name="Faux Model (mini)",
    base_url="http://localhost:0",
    input=("text", "image"),
    cost=ModelCost(1, 5, 0.1, 1.25),
    context_window=128_000,
    max_tokens=16_384,
)

BUILTIN_MODELS: tuple[Model, ...] = (
    _chat(
        "anthropic",
        "claude-opus-5-5",
        "Claude Opus 5.5",
        ModelCost(4, 20, 0.2, 5),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsMidConvoEffort": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "anthropic",
        "claude-sonnet-5-5",
        "Claude Sonnet 5.5",
        ModelCost(2, 10, 0.1, 2.5),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsMidConvoEffort": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "anthropic",
        "claude-haiku-5-5",
        "Claude Haiku 5.5",
        ModelCost(
            0.1,
            0.5,
            0.01,
            0.125,
            tiers=(
                {
                    "inputTokensAbove": 100000,
                    "input": 0.5,
                    "output": 2.5,
                    "cacheRead": 0.05,
                    "cacheWrite": 0.625,
                },
            ),
        ),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsMidConvoEffort": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "anthropic",
        "claude-fable-5-2",
        "Claude Fable 5.2",
        ModelCost(8, 40, 0.2, 10),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsMidConvoEffort": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {"off": None, "xhigh": "xhigh", "max": "max"},
        },
    ),
    _chat(
        "anthropic",
        "claude-opus-5",
        "Claude Opus 5",
        ModelCost(5, 25, 0.5, 6.25),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsMidConvoEffort": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"},
        },
    ),
    _chat(
        "anthropic",
        "claude-sonnet-5",
        "Claude Sonnet 5",
        ModelCost(2, 10, 0.2, 2.5),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsStrictTools": True,
            "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"},
        },
    ),
    _chat(
        "anthropic",
        "claude-opus-4-8",
        "Claude Opus 4.8",
        ModelCost(5, 25, 0.5, 6.25),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsTemperature": False,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"},
        },
    ),
    _chat(
        "anthropic",
        "claude-sonnet-4-6",
        "Claude Sonnet 4.6",
        ModelCost(3, 15, 0.3, 3.75),
        context=1_000_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "forceAdaptiveThinking": True,
            "supportsStrictTools": True,
            "thinkingLevelMap": {"max": "max"},
        },
    ),
    _chat(
        "anthropic",
        "claude-haiku-4-5",
        "Claude Haiku 4.5 (latest)",
        ModelCost(1, 5, 0.1, 1.25),
        context=200_000,
        max_out=64_000,
        reasoning=True,
        compat={"supportsStrictTools": True},
    ),
    _chat(
        "openai",
        "gpt-6.2-sol",
        "GPT-6.2 Sol",
        ModelCost(
            2,
            10,
            0.1,
            2.5,
            tiers=(
                {"inputTokensAbove": 272000, "input": 4, "output": 15, "cacheRead": 0.2, "cacheWrite": 5},
            ),
        ),
        context=272_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsAdditionalTools": True,
            "supportsToolSearch": True,
            "supportsMidConvoSystemMessages": True,
            "supportsExplicitPromptCacheMode": True,
            "supportsMidConvoEffort": True,
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "openai",
        "gpt-6.2-astra",
        "GPT-6.2 Astra",
        ModelCost(
            8,
            40,
            0.4,
            10,
            tiers=(
                {"inputTokensAbove": 272000, "input": 16, "output": 60, "cacheRead": 0.8, "cacheWrite": 20},
            ),
        ),
        context=272_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsAdditionalTools": True,
            "supportsToolSearch": True,
            "supportsMidConvoSystemMessages": True,
            "supportsExplicitPromptCacheMode": True,
            "supportsMidConvoEffort": True,
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "openai",
        "gpt-6.1-terra",
        "GPT-6.1 Terra",
        ModelCost(
            1,
            5,
            0.05,
            1.25,
            tiers=(
                {"inputTokensAbove": 272000, "input": 2, "output": 7.5, "cacheRead": 0.1, "cacheWrite": 2.5},
            ),
        ),
        context=272_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsAdditionalTools": True,
            "supportsToolSearch": True,
            "supportsMidConvoSystemMessages": True,
            "supportsExplicitPromptCacheMode": True,
            "supportsMidConvoEffort": True,
            "thinkingLevelMap": {
                "off": "none",
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "openai",
        "gpt-6-luna",
        "GPT-6 Luna",
        ModelCost(
            0.1,
            0.5,
            0.01,
            0.125,
            tiers=(
                {
                    "inputTokensAbove": 272000,
                    "input": 0.2,
                    "output": 0.75,
                    "cacheRead": 0.02,
                    "cacheWrite": 0.25,
                },
            ),
        ),
        context=272_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsAdditionalTools": True,
            "supportsToolSearch": True,
            "supportsMidConvoSystemMessages": True,
            "supportsExplicitPromptCacheMode": True,
            "supportsMidConvoEffort": True,
            "thinkingLevelMap": {
                "off": "none",
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": "max",
            },
        },
    ),
    _chat(
        "openai",
        "gpt-5.5",
        "GPT-5.5",
        ModelCost(
            5,
            30,
            0.5,
            0,
            tiers=({"inputTokensAbove": 272000, "input": 10, "output": 45, "cacheRead": 1, "cacheWrite": 0},),
        ),
        context=272_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsMidConvoSystemMessages": True,
            "thinkingLevelMap": {
                "off": "none",
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": None,
            },
        },
    ),
    _chat(
        "openai",
        "gpt-5.4-mini",
        "GPT-5.4 mini",
        ModelCost(0.75, 4.5, 0.075, 0),
        context=400_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsMidConvoSystemMessages": True,
            "thinkingLevelMap": {
                "off": "none",
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": None,
            },
        },
    ),
    _chat(
        "openai",
        "gpt-5.4-nano",
        "GPT-5.4 nano",
        ModelCost(0.2, 1.25, 0.02, 0),
        context=400_000,
        max_out=128_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "thinkingLevelMap": {
                "off": "none",
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": "xhigh",
                "max": None,
            },
        },
    ),
    _chat(
        "openai",
        "gpt-4.1",
        "GPT-4.1",
        ModelCost(2, 8, 0.5, 0),
        context=1_047_576,
        max_out=32_768,
        reasoning=False,
        compat={"supportsStrictMode": True},
    ),
    _chat(
        "openai",
        "o4-mini",
        "o4-mini",
        ModelCost(1.1, 4.4, 0.275, 0),
        context=200_000,
        max_out=100_000,
        reasoning=True,
        compat={
            "supportsStrictMode": True,
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
                "xhigh": None,
                "max": None,
            },
        },
    ),
    FAUX_MODEL,
    FAUX_MINI_MODEL,
)


def builtin_models(provider: str | None = None) -> list[Model]:
    """The built-in models, all or one provider's."""
    return [model for model in BUILTIN_MODELS if provider is None or model.provider == provider]
