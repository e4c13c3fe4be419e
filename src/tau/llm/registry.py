"""The model registry: which models exist, which have credentials, how to call them.

- Models: the built-in catalogue (:mod:`tau.llm.catalog`) with ``<agentDir>/models.json`` laid over
  it, re-read when the file changes.
- Credentials, in decisions.md's order: ``--api-key`` (:meth:`ModelRegistry.set_runtime_api_key`),
  then ``auth.json``, then the models.json provider's ``apiKey``, then the provider's environment
  variable (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``).
- Calls: :func:`stream` dispatches on ``Model.api`` to an adapter module imported on first use
  (``tau.llm.providers.<name>``, each exposing ``stream(model, context, options)``);
  :meth:`ModelRegistry.stream` adds the credentials and headers first, and answers ``faux`` models
  from the registry's own faux provider (:meth:`ModelRegistry.faux_provider`; no script is the process's).
- ``tau --list-models`` prints the registry's models (:mod:`tau.llm.model_list`).
- ``--model`` patterns (:meth:`ModelRegistry.resolve`): ``provider/id``, a bare id, a part of an id
  or name, each optionally followed by ``:<thinking level>``, as pi's model resolver reads them.

Errors: :class:`~tau.llm.models_json.ModelsConfigError` (a broken models.json; the registry keeps the
built-ins and reports it in :attr:`ModelRegistry.error`), :class:`ModelNotFoundError` (a pattern
that names no model, or several), :class:`MissingCredentialsError` (no API key for a provider).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.common.dataclass import dataclass
from tau.common.lazy_regex import lazy_pattern
from tau.llm.auth import AuthFileError, AuthStore, agent_dir, resolve_config_value_or_raise, resolve_headers
from tau.llm.builder import MessageBuilder, aborted_before_request
from tau.llm.catalog import BUILTIN_MODELS, BUILTIN_PROVIDERS
from tau.llm.models_json import ModelsConfigError, compose_models, load_models_json
from tau.llm.stream import AssistantMessageEventStream, StreamOptions
from tau.llm.transcript import normalize_context
from tau.llm.types import AssistantMessage, Model, TranscriptContext

if TYPE_CHECKING:
    from tau.llm.providers.faux import FauxProvider

__all__ = [
    "API_MODULES",
    "THINKING_LEVELS",
    "MissingCredentialsError",
    "ModelChoice",
    "ModelNotFoundError",
    "ModelRegistry",
    "RequestAuth",
    "clamp_thinking_level",
    "complete",
    "stream",
    "supported_thinking_levels",
]

API_MODULES: dict[str, str] = {
    "anthropic-messages": "tau.llm.providers.anthropic",
    "openai-responses": "tau.llm.providers.openai_responses",
    "openai-completions": "tau.llm.providers.openai_completions",
    "faux": "tau.llm.providers.faux",
}

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class ModelNotFoundError(ValueError):
    """A ``--model`` pattern that names no model, or more than one."""


class MissingCredentialsError(ValueError):
    """No API key for a provider; the message says where tau looked."""


@dataclass(frozen=True)
class RequestAuth:
    """What a request needs besides the model: the API key (if any) and extra headers."""

    api_key: str | None
    headers: dict[str, str]
    source: str | None = None


@dataclass(frozen=True)
class ModelChoice:
    """A resolved ``--model`` pattern: the model, the ``:<level>`` suffix if any, and a warning."""

    model: Model
    thinking_level: str | None = None
    warning: str | None = None


# -- thinking levels (pi-ai models.ts) --------------------------------------------------------


def supported_thinking_levels(model: Model) -> list[str]:
    """The thinking levels a model accepts: ``off`` only for non-reasoning models.

    ``compat["thinkingLevelMap"]`` maps a level to ``None`` to drop it; ``xhigh`` and ``max`` must be
    mapped explicitly to be offered.
    """
    if not model.reasoning:
        return ["off"]
    level_map = model.compat.get("thinkingLevelMap") or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in ("xhigh", "max") and level not in level_map:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """``level`` if supported, else the nearest higher supported level, else the nearest lower one."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if candidate in available:
            return candidate
    return "off"


# -- dispatch --------------------------------------------------------------------------------


def _as_transcript(context: Mapping[str, Any]) -> TranscriptContext:
    """Accept pi's ``{systemPrompt, messages, tools}`` context as well as a transcript."""
    if "systemPrompt" in context or "tools" in context:
        return normalize_context(context)
    return {"messages": list(context["messages"])}


def _error_stream(model: Model, text: str) -> AssistantMessageEventStream:
    builder = MessageBuilder(model)
    builder.fail(text)
    return builder.stream


def stream(
    model: Model,
    context: Mapping[str, Any],
    options: StreamOptions | None = None,
    *,
    faux: FauxProvider | None = None,
) -> AssistantMessageEventStream:
    """Start a request with the adapter for ``model.api``; the options are used as given.

    ``faux`` answers a ``faux`` model's call (there is no script of the process: without it the call
    fails saying where a script goes; :meth:`ModelRegistry.stream` always gives its own).
    Never raises: an unknown api or a missing adapter ends the stream with an ``error`` event.
    An already-aborted ``options.signal`` ends it as aborted before any of that.
    """
    aborted = aborted_before_request(model, options.signal if options else None)
    if aborted is not None:
        return aborted
    if faux is not None and model.api == "faux":
        return faux.stream(model, _as_transcript(context), options)
    module_name = API_MODULES.get(model.api)
    if module_name is None:
        return _error_stream(model, f"No API provider registered for api: {model.api}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        return _error_stream(model, f"No API provider registered for api: {model.api} ({exc})")
    return module.stream(model, _as_transcript(context), options)


async def complete(
    model: Model, context: Mapping[str, Any], options: StreamOptions | None = None
) -> AssistantMessage:
    """Run a request to the end and return the final assistant message."""
    return await stream(model, context, options).result()


# -- the registry ----------------------------------------------------------------------------


class ModelRegistry:
    """Models (built-in plus models.json), their credentials, and credentialed calls.

    Args:
        agent_dir: where ``models.json`` and ``auth.json`` live (default ``$TAU_AGENT_DIR`` or
            ``~/.tau/agent``).
        env: the environment to read provider key variables from (default ``os.environ``).
        faux: the faux provider this registry's ``faux`` models answer from (``--faux-script``,
            the SDK's ``faux_script=``); ``None``: a provider of this registry's own for
            ``$TAU_FAUX_SCRIPT``, read when the first faux call is made (:meth:`faux_provider`).
            Kept in :attr:`faux`, which may be set later.
    """

    def __init__(
        self,
        agent_dir: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        *,
        faux: FauxProvider | None = None,
    ) -> None:
        self.faux = faux
        self.agent_dir = Path(agent_dir) if agent_dir is not None else _default_agent_dir()
        self.models_path = self.agent_dir / "models.json"
        self.auth = AuthStore(self.agent_dir / "auth.json")
        self._env = env
        self._runtime_keys: dict[str, str] = {}
        self._providers_config: dict[str, dict[str, Any]] = {}
        self._models: list[Model] = list(BUILTIN_MODELS)
        self._stamp: tuple[float, int] | None = None
        self.error: str | None = None
        self.refresh()

    # -- models ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read models.json; on an error keep the built-ins and set :attr:`error`."""
        self._stamp = self._file_stamp()
        errors: list[str] = []
        try:
            self._providers_config = load_models_json(self.models_path)
        except ModelsConfigError as exc:
            self._providers_config = {}
            errors.append(str(exc))
        self._models, problems = compose_models(self._providers_config)
        errors.extend(f"{problem}\n\nFile: {self.models_path}" for problem in problems)
        self.error = "\n\n".join(errors) or None

    def _file_stamp(self) -> tuple[float, int] | None:
        try:
            stat = self.models_path.stat()
        except OSError:
            return None
        return (stat.st_mtime, stat.st_size)

    def _current(self) -> list[Model]:
        if self._file_stamp() != self._stamp:  # models.json is hot-reloaded, as in pi
            self.refresh()
        return self._models

    def get_all(self) -> list[Model]:
        """Every known model, built-in and configured."""
        return list(self._current())

    def get_available(self) -> list[Model]:
        """The models whose provider has credentials (faux always does)."""
        return [model for model in self._current() if self.has_configured_auth(model)]

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model ``provider/model_id``, if known."""
        return next((m for m in self._current() if m.provider == provider and m.id == model_id), None)

    def provider_ids(self) -> list[str]:
        """Every provider with at least one model, in catalogue order."""
        seen: list[str] = []
        for model in self._current():
            if model.provider not in seen:
                seen.append(model.provider)
        return seen

    # -- credentials -------------------------------------------------------------------------

    def set_runtime_api_key(self, provider: str, key: str) -> None:
        """Use ``key`` for ``provider`` for this process (``--api-key``); it wins over every file."""
        self._runtime_keys[provider] = key

    def _environment(self) -> Mapping[str, str]:
        return self._env if self._env is not None else os.environ

    def api_key(self, provider: str) -> tuple[str | None, str | None]:
        """``(key, source)`` for ``provider`` in decisions.md's order; ``(None, None)`` without one.

        Raises :class:`~tau.llm.auth.AuthFileError` for a malformed auth.json and ``ValueError`` for a
        models.json ``apiKey`` that cannot be resolved.
        """
        if provider in self._runtime_keys:
            return self._runtime_keys[provider], "--api-key"
        key = self.auth.api_key(provider)
        if key:
            return key, str(self.auth.path)
        configured = self._providers_config.get(provider, {}).get("apiKey")
        if configured:
            value = resolve_config_value_or_raise(configured, f'API key for provider "{provider}"')
            return value, f"{self.models_path} (apiKey)"
        info = BUILTIN_PROVIDERS.get(provider)
        if info and info.env_var and self._environment().get(info.env_var):
            return self._environment()[info.env_var], info.env_var
        return None, None

    def has_configured_auth(self, model: Model | str) -> bool:
        """Whether a request to this model's provider can be authenticated.

        faux needs nothing; a models.json provider without ``apiKey`` (a local server) needs nothing.
        """
        provider = model if isinstance(model, str) else model.provider
        if provider == "faux" or self._is_keyless_custom(provider):
            return True
        try:
            return self.api_key(provider)[0] is not None
        except (AuthFileError, ValueError):
            return False

    def _is_keyless_custom(self, provider: str) -> bool:
        config = self._providers_config.get(provider)
        return provider not in BUILTIN_PROVIDERS and config is not None and not config.get("apiKey")

    def request_auth(self, model: Model) -> RequestAuth:
        """The key and headers for a request to ``model`` (provider headers, then the model's).

        Raises :class:`MissingCredentialsError` when a provider that needs a key has none.
        """
        config = self._providers_config.get(model.provider, {})
        if model.provider == "faux":
            return RequestAuth(None, resolve_headers(model.headers, f'model "faux/{model.id}"'))
        key, source = self.api_key(model.provider)
        if key is None and not (model.provider == "faux" or self._is_keyless_custom(model.provider)):
            raise MissingCredentialsError(_missing_key_message(model.provider, self.agent_dir))
        headers = resolve_headers(config.get("headers"), f'provider "{model.provider}"')
        headers.update(resolve_headers(model.headers, f'model "{model.provider}/{model.id}"'))
        if config.get("authHeader"):
            if not key:
                raise MissingCredentialsError(f'No API key found for "{model.provider}"')
            headers["Authorization"] = f"Bearer {key}"
        return RequestAuth(key, headers, source)

    def get_api_key_and_headers(self, model: Model) -> dict[str, Any]:
        """pi's ``getApiKeyAndHeaders``: ``{"ok": True, "apiKey", "headers"}`` or ``{"ok": False, "error"}``."""
        try:
            auth = self.request_auth(model)
        except (MissingCredentialsError, AuthFileError, ValueError) as exc:
            return {"ok": False, "error": str(exc)}
        result: dict[str, Any] = {"ok": True}
        if auth.api_key is not None:
            result["apiKey"] = auth.api_key
        if auth.headers:
            result["headers"] = auth.headers
        return result

    def get_api_key_for_provider(self, provider: str) -> str | None:
        """pi's ``getApiKeyForProvider``: the key, or ``None`` (also when a source is broken)."""
        try:
            return self.api_key(provider)[0]
        except (AuthFileError, ValueError):
            return None

    # -- calls -------------------------------------------------------------------------------

    def stream(
        self, model: Model, context: Mapping[str, Any], options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Start a request with the model's credentials and headers (never raises)."""
        options = options or StreamOptions()
        aborted = aborted_before_request(model, options.signal)
        if aborted is not None:
            return aborted
        try:
            auth = self.request_auth(model)
        except (MissingCredentialsError, AuthFileError, ValueError) as exc:
            return _error_stream(model, str(exc))
        options = dataclasses.replace(
            options,
            api_key=options.api_key or auth.api_key,
            headers={**auth.headers, **options.headers},
        )
        faux = None
        if model.api == "faux":
            from tau.llm.providers.faux import FauxScriptError

            try:
                faux = self.faux_provider()
            except FauxScriptError as exc:  # $TAU_FAUX_SCRIPT names a missing or broken script
                return _error_stream(model, str(exc))
        return stream(model, context, options, faux=faux)

    def faux_provider(self) -> FauxProvider:
        """The faux provider of this registry: the one given, else ``$TAU_FAUX_SCRIPT`` read now, once.

        Each registry reads the file for itself, so two sessions started from one script each begin
        at its first step and never take each other's steps.
        """
        if self.faux is None:
            from tau.llm.providers.faux import FauxProvider

            self.faux = FauxProvider.from_env()
        return self.faux

    async def complete(
        self, model: Model, context: Mapping[str, Any], options: StreamOptions | None = None
    ) -> AssistantMessage:
        """Run a credentialed request to the end; the final assistant message."""
        return await self.stream(model, context, options).result()

    # -- --model patterns --------------------------------------------------------------------

    def resolve(
        self, pattern: str, provider: str | None = None, *, api_key_given: bool = False
    ) -> ModelChoice:
        """Resolve a ``--model`` pattern (with an optional ``--provider``) to a model.

        A unique exact id wins; ``provider/id`` names the provider; otherwise the pattern is looked
        up as a part of ids and names (aliases before dated ids, then the latest). A trailing
        ``:<level>`` is a thinking level. ``provider/unknown-id`` gives that provider's model shape
        under the new id, with a warning. Raises :class:`ModelNotFoundError` with pi's messages.
        """
        models = self._current()
        if provider is not None:
            match = next((m.provider for m in models if m.provider.lower() == provider.lower()), None)
            if match is None:
                raise ModelNotFoundError(
                    f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
                )
            provider = match
        pool = [m for m in models if provider is None or m.provider == provider]

        def usable(provider_id: str) -> bool:
            return not api_key_given and self.has_configured_auth(provider_id)

        text = pattern.strip()
        found = _resolve_text(text, pool, usable)
        if isinstance(found, ModelChoice):
            return found
        if found:
            names = ", ".join(sorted(f"{m.provider}/{m.id}" for m in found))
            hint = (
                "--api-key does not choose a provider."
                if api_key_given
                else "No matching provider is authenticated."
                if not any(usable(m.provider) for m in found)
                else "More than one matching provider is authenticated."
            )
            raise ModelNotFoundError(
                f'Model "{pattern}" is ambiguous across providers: {names}. {hint} Use --provider or provider/model.'
            )
        return self._custom_model(pattern, text, pool, provider)

    def _custom_model(self, pattern: str, text: str, pool: list[Model], provider: str | None) -> ModelChoice:
        split = _split_provider(text, pool)
        anchor_provider = provider or (split[0] if split else None)
        provider_models = [m for m in pool if m.provider == anchor_provider]
        if not provider_models:
            raise ModelNotFoundError(
                f'Model "{pattern}" not found. Use --list-models to see available models.'
            )
        model_text = split[1] if split else text
        base_id, level = _split_thinking(model_text) or (model_text, None)
        info = BUILTIN_PROVIDERS.get(provider_models[0].provider)
        template = next(
            (m for m in provider_models if info and m.id == info.default_model), provider_models[0]
        )
        model = dataclasses.replace(template, id=base_id, name=base_id)
        if level and level != "off":
            model = dataclasses.replace(model, reasoning=True)
        warning = f'Model "{base_id}" not found for provider "{model.provider}". Using custom model id.'
        return ModelChoice(model, level, warning)


def _default_agent_dir() -> Path:
    return agent_dir()


def _missing_key_message(provider: str, directory: Path) -> str:
    info = BUILTIN_PROVIDERS.get(provider)
    where = f"set {info.env_var}, " if info and info.env_var else ""
    return (
        f'No API key found for "{provider}": {where}pass --api-key, add it to {directory / "auth.json"} '
        f'({{"{provider}": {{"type": "api_key", "key": "..."}}}}), or set "apiKey" in {directory / "models.json"}.'
    )


# -- pattern matching (pi's model-resolver) ---------------------------------------------------

_DATED = lazy_pattern(r"-\d{8}$")


def _split_thinking(text: str) -> tuple[str, str] | None:
    base, colon, suffix = text.rpartition(":")
    if not colon or suffix not in THINKING_LEVELS:
        return None
    return base, suffix


def _split_provider(text: str, models: Sequence[Model]) -> tuple[str, str] | None:
    """``(provider, rest)`` when ``text`` starts with a known provider id and a slash (longest id wins)."""
    lower = text.lower()
    best: tuple[str, str] | None = None
    for provider in {m.provider for m in models}:
        prefix = provider.strip().lower()
        if not prefix or (best and len(best[0]) >= len(provider)):
            continue
        slash = lower.find("/", len(prefix))
        if slash == -1 or lower[:slash].strip() != prefix:
            continue
        rest = text[slash + 1 :].strip()
        if rest:
            best = (provider, rest)
    return best


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def _best_fuzzy(matches: Sequence[Model]) -> Model | None:
    aliases = [m for m in matches if _is_alias(m.id)]
    candidates = sorted(aliases or matches, key=lambda m: m.id, reverse=True)
    return candidates[0] if candidates else None


def _fuzzy(text: str, models: Sequence[Model]) -> list[Model]:
    lower = text.lower()
    return [m for m in models if lower in m.id.lower() or lower in (m.name or "").lower()]


def _select_exact(text: str, pool: Sequence[Model], usable: Any) -> ModelChoice | list[Model] | None:
    lower = text.lower()
    raw = [m for m in pool if m.id.lower() == lower]
    named: Model | None = None
    split = _split_provider(text, pool)
    if split:
        own = [m for m in pool if m.provider == split[0]]
        rest = split[1].lower()
        named = (
            next((m for m in own if m.id.lower() == rest), None)
            or next((m for m in raw if m.provider == split[0]), None)
            or _best_fuzzy(_fuzzy(split[1], own))
        )
    others = [m for m in raw if m is not named]
    candidates = [named, *others] if named else others
    if not candidates:
        return None
    if len({m.provider for m in candidates}) == 1:
        return ModelChoice(candidates[0])
    if named and usable(named.provider):
        return ModelChoice(named)
    usable_others = [m for m in others if usable(m.provider)]
    if len(usable_others) == 1:
        return ModelChoice(usable_others[0])
    if not usable_others and named:
        return ModelChoice(named)
    return candidates


def _select_fuzzy(matches: list[Model], usable: Any) -> ModelChoice | list[Model] | None:
    if not matches:
        return None
    several = len({m.provider for m in matches}) > 1
    usable_matches = [m for m in matches if usable(m.provider)] if several else []
    pool = usable_matches or matches
    best = _best_fuzzy(pool)
    if best is None:
        return None
    tied = [m for m in pool if m.id == best.id]
    if len({m.provider for m in tied}) == 1:
        return ModelChoice(best)
    return tied


def _resolve_text(text: str, pool: Sequence[Model], usable: Any) -> ModelChoice | list[Model] | None:
    """A choice, a list of ambiguous candidates, or ``None`` (strict thinking suffix, fuzzy on)."""
    if not text:
        return None
    found = _select_exact(text, pool, usable) or _select_fuzzy(_fuzzy(text, pool), usable)
    if found:
        return found
    thinking = _split_thinking(text)
    if thinking:
        inner = _resolve_text(thinking[0], pool, usable)
        if isinstance(inner, ModelChoice):
            return dataclasses.replace(inner, thinking_level=None if inner.warning else thinking[1])
        return inner
    return None
