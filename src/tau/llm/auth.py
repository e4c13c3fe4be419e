"""Credentials: ``<agentDir>/auth.json``, config values (``$ENV``, ``${ENV}``, ``!command``), env vars.

Resolution order for a provider's API key (decisions.md, "Credentials"): ``--api-key`` (runtime
only), then ``auth.json``, then the ``models.json`` provider's ``apiKey``, then the provider's usual
environment variable (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``). :class:`~tau.llm.registry.ModelRegistry`
applies the order; this module reads each source.

``auth.json`` is pi's format::

    {"anthropic": {"type": "api_key", "key": "sk-ant-...", "env": {"NAME": "value"}},
     "openai": {"type": "api_key", "key": "!pass show openai"}}

A ``key`` may be a literal, ``$NAME`` / ``${NAME}`` (interpolated, ``$$`` is a literal ``$``) or
``!command`` (its trimmed stdout, run once per process). OAuth entries are read but not used:
tau has no OAuth logins.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tau.common.lazy_regex import lazy_pattern
from tau.common.paths import agent_dir

__all__ = [
    "AuthFileError",
    "AuthStore",
    "agent_dir",
    "clear_command_cache",
    "config_value_env_names",
    "resolve_config_value",
    "resolve_config_value_or_raise",
    "resolve_headers",
]

_ENV_NAME = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMAND_TIMEOUT_S = 10
_command_cache: dict[str, str | None] = {}


class AuthFileError(ValueError):
    """``auth.json`` cannot be read or has a malformed entry; the message names the file."""


# -- config values ---------------------------------------------------------------------------


def _template_parts(config: str) -> list[tuple[str, str]]:
    """Split ``config`` into ``("literal", text)`` and ``("env", NAME)`` parts (pi's rules)."""
    parts: list[tuple[str, str]] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and parts[-1][0] == "literal":
            parts[-1] = ("literal", parts[-1][1] + text)
        else:
            parts.append(("literal", text))

    index = 0
    while index < len(config):
        dollar = config.find("$", index)
        if dollar < 0:
            literal(config[index:])
            break
        literal(config[index:dollar])
        nxt = config[dollar + 1 : dollar + 2]
        if nxt in ("$", "!"):
            literal(nxt)
            index = dollar + 2
        elif nxt == "{":
            end = config.find("}", dollar + 2)
            if end < 0:
                literal("$")
                index = dollar + 1
                continue
            name = config[dollar + 2 : end]
            if _ENV_NAME.fullmatch(name):
                parts.append(("env", name))
            else:
                literal(config[dollar : end + 1])
            index = end + 1
        else:
            match = _ENV_NAME.match(config, dollar + 1)
            if match:
                parts.append(("env", match.group(0)))
                index = match.end()
            else:
                literal("$")
                index = dollar + 1
    return parts


def config_value_env_names(config: str) -> list[str]:
    """The environment variables a config value refers to (none for ``!command``)."""
    if config.startswith("!"):
        return []
    names: list[str] = []
    for kind, value in _template_parts(config):
        if kind == "env" and value not in names:
            names.append(value)
    return names


def _env_value(name: str, env: Mapping[str, str] | None) -> str | None:
    return (env or {}).get(name) or os.environ.get(name) or None


def _run_command(command: str) -> str | None:
    try:
        result = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=_COMMAND_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def resolve_config_value(
    config: str, env: Mapping[str, str] | None = None, *, cached: bool = True
) -> str | None:
    """A literal, ``$NAME``/``${NAME}`` interpolation, or ``!command`` output; ``None`` if unset.

    A command's output is cached for the process unless ``cached`` is false (MCP ``env`` and
    ``headers`` run theirs on every connect, as pi does).
    """
    if config.startswith("!"):
        if not cached:
            return _run_command(config[1:])
        if config not in _command_cache:
            _command_cache[config] = _run_command(config[1:])
        return _command_cache[config]
    resolved = []
    for kind, value in _template_parts(config):
        if kind == "literal":
            resolved.append(value)
            continue
        env_value = _env_value(value, env)
        if env_value is None:
            return None
        resolved.append(env_value)
    return "".join(resolved)


def resolve_config_value_or_raise(
    config: str, description: str, env: Mapping[str, str] | None = None, *, cached: bool = True
) -> str:
    """Like :func:`resolve_config_value`, raising ``ValueError`` that says what could not be resolved."""
    value = resolve_config_value(config, env, cached=cached)
    if value is not None:
        return value
    if config.startswith("!"):
        raise ValueError(f"Failed to resolve {description} from shell command: {config[1:]}")
    missing = [name for name in config_value_env_names(config) if _env_value(name, env) is None]
    if len(missing) == 1:
        raise ValueError(f"Failed to resolve {description} from environment variable: {missing[0]}")
    if missing:
        raise ValueError(f"Failed to resolve {description} from environment variables: {', '.join(missing)}")
    raise ValueError(f"Failed to resolve {description}")


def resolve_headers(headers: Mapping[str, str] | None, description: str) -> dict[str, str]:
    """Resolve every header value like an API key; raises ``ValueError`` naming the header."""
    return {
        name: resolve_config_value_or_raise(value, f'{description} header "{name}"')
        for name, value in (headers or {}).items()
    }


def clear_command_cache() -> None:
    """Forget ``!command`` results (tests)."""
    _command_cache.clear()


# -- auth.json -------------------------------------------------------------------------------


class AuthStore:
    """``<agentDir>/auth.json``: stored credentials per provider id.

    Read on every lookup (the file is small and may change while tau runs); written with mode 0600.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else agent_dir() / "auth.json"

    def load(self) -> dict[str, dict[str, Any]]:
        """The whole file (``{}`` when it does not exist); :class:`AuthFileError` when malformed."""
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise AuthFileError(f"cannot read {self.path}: {exc.strerror}") from exc
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise AuthFileError(f"{self.path} is not valid JSON: {exc}") from exc
        except RecursionError as exc:
            raise AuthFileError(f"{self.path} is not valid JSON: nested too deeply") from exc
        if not isinstance(data, dict):
            raise AuthFileError(f"Invalid auth.json: expected an object ({self.path})")
        for provider, credential in data.items():
            if not _valid_credential(credential):
                raise AuthFileError(
                    f'Invalid auth.json credential for provider "{provider}" ({self.path}): '
                    'expected {"type": "api_key", "key": "..."}'
                )
        return data

    def credential(self, provider: str) -> dict[str, Any] | None:
        """The stored entry for ``provider``, if any."""
        return self.load().get(provider)

    def api_key(self, provider: str) -> str | None:
        """The resolved API key stored for ``provider`` (``None`` without one, or for OAuth entries)."""
        credential = self.credential(provider)
        if not credential or credential.get("type") != "api_key" or not credential.get("key"):
            return None
        return resolve_config_value(credential["key"], credential.get("env"))

    def set_api_key(self, provider: str, key: str) -> None:
        """Store an API key for ``provider`` (creates the file, mode 0600)."""
        data = self.load()
        data[provider] = {"type": "api_key", "key": key}
        self._write(data)

    def remove(self, provider: str) -> bool:
        """Forget ``provider``'s credential; whether there was one."""
        data = self.load()
        if data.pop(provider, None) is None:
            return False
        self._write(data)
        return True

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, ensure_ascii=False))
        os.replace(tmp, self.path)


def _valid_credential(credential: Any) -> bool:
    if not isinstance(credential, dict):
        return False
    if credential.get("type") == "api_key":
        env = credential.get("env")
        return (credential.get("key") is None or isinstance(credential["key"], str)) and (
            env is None or (isinstance(env, dict) and all(isinstance(v, str) for v in env.values()))
        )
    if credential.get("type") == "oauth":
        return isinstance(credential.get("access"), str) and isinstance(credential.get("refresh"), str)
    return False
