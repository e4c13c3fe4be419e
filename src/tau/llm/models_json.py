"""``models.json``: reading and checking it, and laying it over the built-in models (pi's rules).

A built-in provider id modifies that provider, an unknown id adds one (it needs ``baseUrl`` and
``api``), ``modelOverrides`` come last. Errors name the file and the field (``docs/models.md``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tau.common.lazy_regex import lazy_pattern
from tau.llm.catalog import BUILTIN_MODELS
from tau.llm.types import Model, ModelCost

__all__ = ["ModelsConfigError", "compose_models", "load_models_json"]


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
    except RecursionError as exc:
        raise ModelsConfigError(f"Failed to parse models.json: JSON nested too deeply\n\nFile: {file}") from exc
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
