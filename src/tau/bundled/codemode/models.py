"""``models.*`` in scripts (pi's model catalog API), over tau's model registry.

tau's catalog has chat models only: ``getModelsOfType("chat")`` and friends list them (without
``headers``, which may carry credentials), ``"classifier"`` and ``"image"`` list nothing, and
``models.classify()`` / ``models.generateImages()`` reject with an error that says tau runs no
classifier or image models. The argument checks and their messages are pi's.
"""

from __future__ import annotations

from typing import Any

from tau.bundled.codemode.sandbox import UNDEFINED, SandboxGlobal, ScriptCallError
from tau.common import jsjson

__all__ = ["model_globals"]

MODEL_TYPES = ("chat", "image", "classifier")
_UNSUPPORTED = {
    "classifier": "tau has no classifier models, so models.classify() cannot run here",
    "image": "tau has no image models, so models.generateImages() cannot run here",
}


def _arguments(args: Any, count: int) -> list[Any]:
    """A spread call's first ``count`` arguments, missing ones as ``None``."""
    values = list(args or [])
    return [*values, *([None] * count)][:count]


def _model_type(value: Any) -> str:
    if isinstance(value, str) and value in MODEL_TYPES:
        return value
    raise ScriptCallError(
        f'Unknown model type {jsjson.dumps_str(value)}. Use "chat", "image", or "classifier".'
    )


def _provider(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ScriptCallError("provider must be a string")
    return value


def _article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an empty array" if not value else "an array"
    if isinstance(value, dict):
        keys = list(value)
        if not keys:
            return "{}"
        return "{ " + ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "") + " }"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _info(model: Any) -> dict[str, Any]:
    info = {"type": "chat", **model.to_json()}
    info.pop("headers", None)
    info.setdefault("contextWindow", model.context_window)
    return info


def model_globals(registry: Any) -> list[SandboxGlobal]:
    def of_type(kind: str, provider: str | None, available: bool) -> list[dict[str, Any]]:
        if kind != "chat" or registry is None:
            return []
        models = registry.get_available() if available else registry.get_all()
        return [_info(m) for m in models if provider is None or m.provider == provider]

    def get_models_of_type(args: Any, signal: Any) -> Any:
        kind, provider = _arguments(args, 2)
        return of_type(_model_type(kind), _provider(provider), False)

    def get_available_of_type(args: Any, signal: Any) -> Any:
        kind, provider = _arguments(args, 2)
        return of_type(_model_type(kind), _provider(provider), True)

    def get_model_of_type(args: Any, signal: Any) -> Any:
        values = list(args or [])
        kind, provider, model_id = _arguments(values, 3)
        if not isinstance(provider, str) or not isinstance(model_id, str):
            shown = ", ".join(_describe(v) for v in values)
            raise ScriptCallError(
                f"models.getModelOfType(type, provider, id) expects three strings, got ({shown}). The provider "
                "and the id are separate arguments, for example "
                'models.getModelOfType("classifier", "typesafe", "jev-latest").'
            )
        kind = _model_type(kind)
        found = [m for m in of_type(kind, None, False) if m["provider"] == provider and m["id"] == model_id]
        return found[0] if found else UNDEFINED

    def run_model(name: str, kind: str) -> Any:
        def execute(args: Any, signal: Any) -> Any:
            model = _arguments(args, 1)[0]
            hint = f'List the {kind} models you can use with models.getAvailableOfType("{kind}").'
            if (
                not isinstance(model, dict)
                or not isinstance(model.get("provider"), str)
                or not isinstance(model.get("id"), str)
            ):
                undefined_hint = (
                    " models.getModelOfType() returns undefined for an unknown provider or id."
                    if model is None
                    else ""
                )
                raise ScriptCallError(
                    f"{name}() expects {_article(kind)} model as its first argument, got {_describe(model)}."
                    f"{undefined_hint} {hint}"
                )
            ref = f"{model['provider']}/{model['id']}"
            is_chat = registry is not None and registry.find(model["provider"], model["id"]) is not None
            if is_chat:
                raise ScriptCallError(
                    f'"{ref}" is a chat model, not {_article(kind)} model. {hint} {_UNSUPPORTED[kind]}.'
                )
            raise ScriptCallError(f'Unknown {kind} model "{ref}". {hint} {_UNSUPPORTED[kind]}.')

        return execute

    return [
        SandboxGlobal("models.getModelsOfType", get_models_of_type),
        SandboxGlobal("models.getAvailableOfType", get_available_of_type),
        SandboxGlobal("models.getModelOfType", get_model_of_type),
        SandboxGlobal("models.classify", run_model("models.classify", "classifier")),
        SandboxGlobal("models.generateImages", run_model("models.generateImages", "image")),
    ]
