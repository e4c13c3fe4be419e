"""The built-in models: a small hand-kept catalogue of current Anthropic and OpenAI models, and faux.

Prices are USD per million tokens, taken with context windows, output caps and compatibility
flags from pi-ai 1.6's generated catalogue (``providers/data/anthropic.json``, ``openai.json``).
``compat`` also carries pi's ``thinkingLevelMap`` (a level mapped to ``None`` is unsupported).
Anything else is one ``models.json`` entry away (see ``docs/models.md``): :func:`load_models_json`
reads and checks that file, :func:`compose_models` lays it over the built-ins (pi's rules: a
built-in provider id modifies that provider, an unknown id adds one, ``modelOverrides`` come last).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.common.lazy_regex import lazy_pattern
from tau.llm.types import Model, ModelCost

__all__ = [
    "BUILTIN_MODELS",
    "BUILTIN_PROVIDERS",
    "FAUX_MODEL",
    "ModelsConfigError",
    "ProviderInfo",
    "builtin_models",
    "compose_models",
    "load_models_json",
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
)


def builtin_models(provider: str | None = None) -> list[Model]:
    """The built-in models, all or one provider's."""
    return [model for model in BUILTIN_MODELS if provider is None or model.provider == provider]


# -- models.json -----------------------------------------------------------------------------


class ModelsConfigError(ValueError):
    """``models.json`` cannot be read, is not valid JSON, or breaks the schema; names file and field."""


_Check = Callable[[Any], str | None]


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be a non-empty string"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _positive(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return None if ok else "must be a number greater than 0"


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else "must be an object"


def _string_map(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return "must be an object of strings"
    return None


def _modalities(value: Any) -> str | None:
    if not isinstance(value, list) or not all(item in ("text", "image") for item in value):
        return 'must be a list of "text" and "image"'
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _cost(required: bool) -> _Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return "must be an object"
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            if key not in value:
                if required:
                    return f'needs "{key}" (USD per million tokens)'
            elif not _number(value[key]):
                return f'"{key}" must be a number (USD per million tokens)'
        tiers = value.get("tiers")
        if tiers is not None and not (
            isinstance(tiers, list)
            and all(isinstance(t, dict) and _number(t.get("inputTokensAbove")) for t in tiers)
        ):
            return 'tiers must be a list of objects with "inputTokensAbove"'
        return None

    return check


_MODEL_FIELDS: dict[str, _Check] = {
    "id": _string,
    "name": _string,
    "api": _string,
    "baseUrl": _string,
    "reasoning": _boolean,
    "thinkingLevelMap": _object,
    "input": _modalities,
    "cost": _cost(required=True),
    "contextWindow": _positive,
    "maxTokens": _positive,
    "samplingParams": _object,
    "headers": _string_map,
    "compat": _object,
}
_OVERRIDE_FIELDS: dict[str, _Check] = {
    **{k: v for k, v in _MODEL_FIELDS.items() if k not in ("id", "api", "baseUrl")},
    "cost": _cost(required=False),
}
_PROVIDER_FIELDS: dict[str, _Check] = {
    "name": _string,
    "baseUrl": _string,
    "apiKey": _string,
    "api": _string,
    "headers": _string_map,
    "compat": _object,
    "authHeader": _boolean,
}


def _check_fields(value: Any, fields: Mapping[str, _Check], path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: must be an object")
        return
    for key, check in fields.items():
        if key in value:
            problem = check(value[key])
            if problem:
                problems.append(f"{path}.{key}: {problem}")


def _schema_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["root: must be an object"]
    providers = data.get("providers")
    if not isinstance(providers, dict):
        return ['providers: must be an object of provider ids (e.g. {"providers": {"ollama": {...}}})']
    problems: list[str] = []
    for provider_id, provider in providers.items():
        path = f"providers.{provider_id}"
        _check_fields(provider, _PROVIDER_FIELDS, path, problems)
        if not isinstance(provider, dict):
            continue
        models = provider.get("models", [])
        if not isinstance(models, list):
            problems.append(f"{path}.models: must be a list")
            models = []
        for index, model in enumerate(models):
            if isinstance(model, dict) and "id" not in model:
                problems.append(f"{path}.models.{index}.id: is required")
            _check_fields(model, _MODEL_FIELDS, f"{path}.models.{index}", problems)
        overrides = provider.get("modelOverrides", {})
        if not isinstance(overrides, dict):
            problems.append(f"{path}.modelOverrides: must be an object of model ids")
            overrides = {}
        for model_id, override in overrides.items():
            _check_fields(override, _OVERRIDE_FIELDS, f"{path}.modelOverrides.{model_id}", problems)
    return problems


_JSON_COMMENT = lazy_pattern(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _strip_comments(text: str) -> str:
    return _JSON_COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def load_models_json(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The ``providers`` of a models.json file (``{}`` when it does not exist).

    Comments (``//``, ``/* */``) and a BOM are accepted, as pi accepts them. Raises
    :class:`ModelsConfigError` naming the file and each bad field.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ModelsConfigError(f"Failed to load models.json: {exc.strerror}\n\nFile: {file}") from exc
    try:
        data = json.loads(_strip_comments(text)) if text.strip() else {"providers": {}}
    except ValueError as exc:
        raise ModelsConfigError(f"Failed to parse models.json: {exc}\n\nFile: {file}") from exc
    problems = _schema_problems(data)
    if problems:
        listed = "\n".join(f"  - {problem}" for problem in problems)
        raise ModelsConfigError(f"Invalid models.json schema:\n{listed}\n\nFile: {file}")
    return data["providers"]


def _merged_compat(base: Mapping[str, Any], override: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**base, **(override or {})}


def _cost_from(value: Mapping[str, Any] | None, base: ModelCost | None = None) -> ModelCost:
    base = base or ModelCost()
    if not value:
        return base
    tiers = value.get("tiers")
    return ModelCost(
        value.get("input", base.input),
        value.get("output", base.output),
        value.get("cacheRead", base.cacheRead),
        value.get("cacheWrite", base.cacheWrite),
        tiers=tuple(tiers) if tiers is not None else base.tiers,
    )


def _with_level_map(compat: dict[str, Any], level_map: Mapping[str, Any] | None) -> dict[str, Any]:
    if level_map:
        compat["thinkingLevelMap"] = {**(compat.get("thinkingLevelMap") or {}), **level_map}
    return compat


def _model_from_json(provider_id: str, definition: Mapping[str, Any], config: Mapping[str, Any]) -> Model:
    model_id = definition["id"]
    api = definition.get("api") or config.get("api")
    if not api:
        raise ModelsConfigError(
            f'Provider {provider_id}, model {model_id}: no "api" specified. Set at provider or model level '
            '(e.g. "api": "openai-completions").'
        )
    base_url = definition.get("baseUrl") or config.get("baseUrl")
    if not base_url and api != "faux":
        raise ModelsConfigError(f'Provider {provider_id}: "baseUrl" is required when defining custom models.')
    compat = _merged_compat(config.get("compat") or {}, definition.get("compat"))
    return Model(
        id=model_id,
        provider=provider_id,
        api=api,
        name=definition.get("name") or model_id,
        base_url=base_url,
        reasoning=bool(definition.get("reasoning", False)),
        input=tuple(definition.get("input") or ("text",)),
        cost=_cost_from(definition.get("cost")),
        context_window=int(definition.get("contextWindow", 128_000)),
        max_tokens=int(definition.get("maxTokens", 16_384)),
        headers=dict(definition.get("headers") or {}),
        compat=_with_level_map(compat, definition.get("thinkingLevelMap")),
    )


def _apply_override(model: Model, override: Mapping[str, Any]) -> Model:
    compat = _merged_compat(model.compat, override.get("compat"))
    return dataclasses.replace(
        model,
        name=override.get("name", model.name),
        reasoning=override.get("reasoning", model.reasoning),
        input=tuple(override["input"]) if "input" in override else model.input,
        cost=_cost_from(override.get("cost"), model.cost),
        context_window=int(override.get("contextWindow", model.context_window)),
        max_tokens=int(override.get("maxTokens", model.max_tokens)),
        headers={**model.headers, **(override.get("headers") or {})},
        compat=_with_level_map(compat, override.get("thinkingLevelMap")),
    )


def _compose_provider(provider_id: str, base: Sequence[Model], config: Mapping[str, Any]) -> list[Model]:
    models = [
        dataclasses.replace(
            model,
            base_url=config.get("baseUrl") or model.base_url,
            compat=_merged_compat(model.compat, config.get("compat")),
        )
        for model in base
    ]
    if not base and not config.get("models"):
        raise ModelsConfigError(
            f'Provider {provider_id}: a new provider needs "models" (each with an "id"), plus "baseUrl" and "api".'
        )
    for definition in config.get("models") or []:
        model = _model_from_json(provider_id, definition, config)
        index = next((i for i, existing in enumerate(models) if existing.id == model.id), None)
        if index is None:
            models.append(model)
        else:
            models[index] = model
    overrides = config.get("modelOverrides") or {}
    return [
        _apply_override(model, overrides[model.id]) if model.id in overrides else model for model in models
    ]


def compose_models(
    providers: Mapping[str, Mapping[str, Any]], base: Sequence[Model] = BUILTIN_MODELS
) -> tuple[list[Model], list[str]]:
    """The built-in models with models.json laid over them: ``(models, problems)``.

    A provider whose entry cannot be applied keeps its built-in models and adds a problem.
    """
    problems: list[str] = []
    result: list[Model] = []
    seen: list[str] = []
    for model in base:
        if model.provider not in seen:
            seen.append(model.provider)
    for provider_id in [*seen, *(p for p in providers if p not in seen)]:
        own = [model for model in base if model.provider == provider_id]
        config = providers.get(provider_id)
        if config is None:
            result.extend(own)
            continue
        try:
            result.extend(_compose_provider(provider_id, own, config))
        except ModelsConfigError as exc:
            problems.append(str(exc))
            result.extend(own)
    return result, problems
