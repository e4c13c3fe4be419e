"""The shell settings ``then_run`` depends on, checked before Action Fusion starts (seed 003).

``then_run`` runs through the built-in ``bash`` definition, which takes ``shellPath`` and
``shellCommandPrefix`` from the settings. The host leaves a wrong-typed value out (with a warning) and
falls back to ``/bin/bash``; for the model's fused commands that would silently select another shell
than the one configured, so a malformed value stops Action Fusion's initialization instead, with an
error naming the file and the key. The settings files are read as written (the user file, and the
project file when the project is trusted), then the effective settings (an SDK's in-memory ones).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tau.extension import Settings

__all__ = ["SHELL_KEYS", "ShellSettingsError", "check_shell_settings"]

SHELL_KEYS = ("shellPath", "shellCommandPrefix")


class ShellSettingsError(ValueError):
    """A ``shellPath`` or ``shellCommandPrefix`` that is not a string; the message names file and key."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _check(source: str, data: Any) -> None:
    if not isinstance(data, dict):
        return
    for key in SHELL_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise ShellSettingsError(
                f"{source}: {key} must be a string, got {_shown(value)}; Action Fusion is off "
                f"(then_run would run in another shell than the one configured)"
            )


def _read(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8-sig") or "null")
    except (OSError, ValueError):  # the host reports an unreadable or invalid file itself
        return None


def check_shell_settings(tau: Any, ctx: Any) -> None:
    """Raise :class:`ShellSettingsError` when a settings file, or the effective settings, hold a
    ``shellPath`` or ``shellCommandPrefix`` that is not a string."""
    try:
        files = Settings.load(ctx.cwd, project_trusted=bool(ctx.is_project_trusted()))
    except Exception:  # an unreadable file: the host's loader reports it
        files = None
    if files is not None:
        _check(str(files.global_path), _read(files.global_path))
        if ctx.is_project_trusted():
            _check(str(files.project_path), _read(files.project_path))
    _check("settings", tau.get_settings() or {})
