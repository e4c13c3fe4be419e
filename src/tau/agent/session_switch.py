"""Resuming another session file in place (pi 1.6 ``AgentSessionRuntime.switchSession``, ``/resume``).

pi builds a new runtime around the opened file; tau keeps the same
:class:`~tau.agent.session.AgentSession` and swaps its session manager, then restores what a session
resumed at startup gets: the recorded model (when it still has credentials), the recorded thinking
level, and the tool loadout declared by the file's system messages.
"""

from __future__ import annotations

import os
from typing import Any

from tau.agent.session_setup import _session_model
from tau.session.manager import SessionManager

__all__ = ["SwitchMixin"]


class SwitchMixin:
    """``switch_session`` of :class:`~tau.agent.session.AgentSession`."""

    async def switch_session(self: Any, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Continue in the session file ``path``; returns ``{"cancelled": bool}``.

        ``session_before_switch {reason: "resume", targetSessionFile}`` handlers may cancel. Then,
        as pi: any run is aborted (its turn is kept in the file being left), extensions get
        ``session_shutdown {reason: "resume", targetSessionFile}``, the file is opened, and
        ``session_start {reason: "resume", previousSessionFile}`` announces it. Raises
        ``RuntimeError`` when the file is not a session, is locked by another process, or names a
        working directory that no longer exists (nothing is changed then).
        """
        target = str(path)
        answer = await self._bus.emit_hook(
            {"type": "session_before_switch", "reason": "resume", "targetSessionFile": target}
        )
        if answer and answer.get("cancel"):
            return {"cancelled": True}
        previous_manager: SessionManager = self._store.manager
        previous = previous_manager.get_session_file()
        same_file = previous is not None and os.path.realpath(previous) == os.path.realpath(target)
        if same_file:
            previous_manager.close()  # its lock would refuse the second writer
        manager = _open_session(target, self._store.cwd)
        await self._shutdown("resume", manager.get_session_file())
        if not same_file:
            previous_manager.close()
        self._adopt_manager(manager)
        await self._restart("resume", previous)
        return {"cancelled": False}

    def _adopt_manager(self: Any, manager: SessionManager) -> None:
        self._store.adopt(manager)
        context = manager.build_session_context()
        recorded = _session_model(manager.get_branch())
        model = self._registry.find(*recorded) if recorded else None
        if model is None or not self._registry.has_configured_auth(model):
            model = self.agent.state.model  # pi falls back to the default model; tau keeps the current one
        self.agent.state.model = model
        self.agent.state.thinking_level = self._initial_thinking_level(model, None, context)


def _open_session(path: str, fallback_cwd: str) -> SessionManager:
    try:
        manager = SessionManager.open(path)
    except Exception as exc:  # the file's own error (not a session, locked) says what is wrong
        raise RuntimeError(f"Cannot resume {path}: {exc}") from exc
    cwd = manager.get_cwd()
    if cwd and not os.path.isdir(cwd):
        manager.close()
        raise RuntimeError(
            f"Stored session working directory does not exist: {cwd}\n"
            f"Session file: {path}\nCurrent working directory: {fallback_cwd}"
        )
    return manager
