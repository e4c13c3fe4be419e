"""The RPC command table (pi-host §8.3; pi 1.6 ``rpc-mode.ts`` ``handleCommand``).

Each handler takes the command record and returns the response record, or ``None`` when it
answers by itself (``prompt`` answers once the prompt is accepted, which may be long before the
run ends). A handler that raises is answered with ``success: false`` and the exception's text by
the caller. The query helpers (state, session stats, fork messages) are in :mod:`.queries`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tau.common.jsstr import js_trim
from tau.modes.rpc.queries import fork_messages, session_state, session_stats
from tau.modes.rpc.responses import MISSING, error, success, unsupported

if TYPE_CHECKING:
    from tau.modes.rpc.mode import RpcMode

__all__ = ["COMMANDS", "UNSUPPORTED"]

Handler = Callable[["RpcMode", dict[str, Any]], Awaitable[dict[str, Any] | None]]

# pi commands outside tau (answered `not supported by tau: <command>`); none at the moment.
UNSUPPORTED: frozenset[str] = frozenset()


def _id(command: dict[str, Any]) -> Any:
    return command.get("id", MISSING)


def _string(command: dict[str, Any], field: str, *, optional: bool = False) -> str | None:
    value = command.get(field)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{command.get('type')}: {field!r} must be a string, got {value!r}")
    return value


def _images(command: dict[str, Any]) -> list[dict[str, Any]] | None:
    images = command.get("images")
    if images is None:
        return None
    if not isinstance(images, list) or not all(isinstance(image, dict) for image in images):
        raise ValueError(f"{command.get('type')}: 'images' must be a list of image blocks, got {images!r}")
    return images


# -- prompting ---------------------------------------------------------------------------------


async def _prompt(mode: RpcMode, command: dict[str, Any]) -> None:
    text = _string(command, "message")
    behavior = _string(command, "streamingBehavior", optional=True)
    mode.start_prompt(_id(command), text or "", _images(command), behavior)
    return None


async def _steer(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    text = _string(command, "message") or ""
    mode.refuse_extension_command(text)
    disposition = await mode.session.steer(text, _images(command))
    return success(_id(command), "steer", {"disposition": disposition})


async def _follow_up(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    text = _string(command, "message") or ""
    mode.refuse_extension_command(text)
    disposition = await mode.session.follow_up(text, _images(command))
    return success(_id(command), "follow_up", {"disposition": disposition})


async def _abort(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    await mode.session.abort()
    return success(_id(command), "abort")


async def _clear_queue(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    return success(_id(command), "clear_queue", mode.session.clear_queue())


async def _new_session(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    parent = _string(command, "parentSession", optional=True)
    result = await mode.session.new_session(parent_session=parent or None)
    return success(_id(command), "new_session", {"cancelled": bool(result.get("cancelled"))})


# -- state -------------------------------------------------------------------------------------


async def _get_state(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    return success(_id(command), "get_state", session_state(mode.session))


async def _get_messages(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    return success(_id(command), "get_messages", {"messages": mode.session.messages})


# -- model and thinking level ------------------------------------------------------------------


async def _set_model(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    provider, model_id = command.get("provider"), command.get("modelId")
    models = mode.session.model_registry.get_available()
    model = next((m for m in models if m.provider == provider and m.id == model_id), None)
    if model is None:
        return error(_id(command), "set_model", f"Model not found: {provider}/{model_id}")
    await mode.session.set_model(model)
    return success(_id(command), "set_model", model.to_json())


async def _cycle_model(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    # pi: the scope's models (--models), else every model with credentials; null when nowhere to go
    result = await mode.session.cycle_model()
    if result is None:
        return success(_id(command), "cycle_model", None)
    data = {**result, "model": result["model"].to_json()}
    return success(_id(command), "cycle_model", data)


async def _get_available_models(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    models = [model.to_json() for model in mode.session.model_registry.get_available()]
    return success(_id(command), "get_available_models", {"models": models})


async def _set_thinking_level(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.set_thinking_level(_string(command, "level"))
    return success(_id(command), "set_thinking_level")


async def _cycle_thinking_level(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    session = mode.session
    if session.model is None or not session.model.reasoning:
        return success(_id(command), "cycle_thinking_level", None)
    levels = session.get_available_thinking_levels()
    current = session.thinking_level
    following = levels[(levels.index(current) + 1) % len(levels) if current in levels else 0]
    session.set_thinking_level(following)
    return success(_id(command), "cycle_thinking_level", {"level": following})


async def _get_available_thinking_levels(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    levels = mode.session.get_available_thinking_levels()
    return success(_id(command), "get_available_thinking_levels", {"levels": levels})


# -- queue modes, compaction, retry -----------------------------------------------------------


def _queue_mode(command: dict[str, Any]) -> str:
    value = command.get("mode")
    if value not in ("all", "one-at-a-time"):
        raise ValueError(f'{command.get("type")}: \'mode\' must be "all" or "one-at-a-time", got {value!r}')
    return str(value)


async def _set_steering_mode(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.set_steering_mode(_queue_mode(command))
    return success(_id(command), "set_steering_mode")


async def _set_follow_up_mode(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.set_follow_up_mode(_queue_mode(command))
    return success(_id(command), "set_follow_up_mode")


async def _compact(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    result = await mode.session.compact(_string(command, "customInstructions", optional=True))
    return success(_id(command), "compact", result)


async def _set_auto_compaction(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.set_auto_compaction(bool(command.get("enabled")))
    return success(_id(command), "set_auto_compaction")


async def _set_auto_retry(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.set_auto_retry(bool(command.get("enabled")))
    return success(_id(command), "set_auto_retry")


async def _abort_retry(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.session.abort_retry()
    return success(_id(command), "abort_retry")


# -- bash --------------------------------------------------------------------------------------


async def _bash(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    text = _string(command, "command") or ""
    result = await mode.bash.run(
        text, exclude_from_context=bool(command.get("excludeFromContext")), request_id=_id(command)
    )
    return success(_id(command), "bash", result)


async def _abort_bash(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    mode.bash.abort()
    return success(_id(command), "abort_bash")


# -- session -----------------------------------------------------------------------------------


async def _get_session_stats(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    return success(_id(command), "get_session_stats", session_stats(mode.session))


async def _switch_session(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    path = _string(command, "sessionPath")
    switch = getattr(mode.session, "switch_session", None)
    if switch is None:  # an embedding's session without it
        return unsupported(_id(command), "switch_session")
    result = await switch(path)
    return success(_id(command), "switch_session", {"cancelled": bool((result or {}).get("cancelled"))})


async def _fork(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    result = await mode.session.fork(_string(command, "entryId"))
    data: dict[str, Any] = {}
    if result.get("selectedText") is not None:
        data["text"] = result["selectedText"]
    data["cancelled"] = bool(result.get("cancelled"))
    return success(_id(command), "fork", data)


async def _clone(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    leaf = mode.session.session_manager.get_leaf_id()
    if not leaf:
        return error(_id(command), "clone", "Cannot clone session: no current entry selected")
    result = await mode.session.fork(leaf, position="at")
    return success(_id(command), "clone", {"cancelled": bool(result.get("cancelled"))})


async def _get_fork_messages(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    return success(_id(command), "get_fork_messages", {"messages": fork_messages(mode.session)})


async def _get_entries(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    manager = mode.session.session_manager
    entries = manager.get_entries()
    if "since" in command and command["since"] is not None:
        since = command["since"]
        index = next((i for i, entry in enumerate(entries) if entry.get("id") == since), None)
        if index is None:
            return error(_id(command), "get_entries", f"Entry not found: {since}")
        entries = entries[index + 1 :]
    return success(_id(command), "get_entries", {"entries": entries, "leafId": manager.get_leaf_id()})


async def _get_tree(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    manager = mode.session.session_manager
    return success(_id(command), "get_tree", {"tree": manager.get_tree(), "leafId": manager.get_leaf_id()})


async def _get_last_assistant_text(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    text = mode.session.get_last_assistant_text()
    return success(_id(command), "get_last_assistant_text", {} if text is None else {"text": text})


async def _set_session_name(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    name = js_trim(_string(command, "name") or "")
    if not name:
        return error(_id(command), "set_session_name", "Session name cannot be empty")
    mode.session.set_session_name(name)
    return success(_id(command), "set_session_name")


# -- commands ----------------------------------------------------------------------------------


# tau's extension sources as pi's SourceInfo {source, scope, origin}.
_SOURCES = {
    "cli": ("cli", "temporary", "top-level"),
    "project": ("local", "project", "top-level"),
    "user": ("local", "user", "top-level"),
    "package": ("package", "user", "package"),
    "bundled": ("bundled", "user", "package"),
}


def _source_info(runner: Any, command: Any) -> dict[str, Any]:
    path = command.extension_path or ""
    owner = next((ext for ext in runner.extensions if ext.path == path), None)
    kind = getattr(owner, "source", None) or "inline"
    source, scope, origin = _SOURCES.get(kind, (kind, "temporary", "top-level"))
    return {"path": path, "source": source, "scope": scope, "origin": origin}


async def _get_commands(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    commands = []
    runner = mode.runner
    for registered in runner.resolved_commands() if runner is not None else []:
        entry: dict[str, Any] = {"name": registered.invocation_name}
        if getattr(registered, "description", None):
            entry["description"] = registered.description
        entry["source"] = "extension"
        entry["sourceInfo"] = _source_info(runner, registered)
        commands.append(entry)
    # Then the prompt templates and the skills (listed whatever enableSkillCommands says, as in pi).
    resources = getattr(mode.session, "resources", None)
    if resources is not None:
        commands += resources.commands()
    return success(_id(command), "get_commands", {"commands": commands})


async def _export_html(mode: RpcMode, command: dict[str, Any]) -> dict[str, Any]:
    from tau.modes.export_html import export_session

    path = export_session(mode.session, _string(command, "outputPath", optional=True) or None)
    return success(_id(command), "export_html", {"path": path})


COMMANDS: dict[str, Handler] = {
    "export_html": _export_html,
    "prompt": _prompt,
    "steer": _steer,
    "follow_up": _follow_up,
    "abort": _abort,
    "clear_queue": _clear_queue,
    "new_session": _new_session,
    "get_state": _get_state,
    "set_model": _set_model,
    "cycle_model": _cycle_model,
    "get_available_models": _get_available_models,
    "set_thinking_level": _set_thinking_level,
    "cycle_thinking_level": _cycle_thinking_level,
    "get_available_thinking_levels": _get_available_thinking_levels,
    "set_steering_mode": _set_steering_mode,
    "set_follow_up_mode": _set_follow_up_mode,
    "compact": _compact,
    "set_auto_compaction": _set_auto_compaction,
    "set_auto_retry": _set_auto_retry,
    "abort_retry": _abort_retry,
    "bash": _bash,
    "abort_bash": _abort_bash,
    "get_session_stats": _get_session_stats,
    "switch_session": _switch_session,
    "fork": _fork,
    "clone": _clone,
    "get_fork_messages": _get_fork_messages,
    "get_entries": _get_entries,
    "get_tree": _get_tree,
    "get_last_assistant_text": _get_last_assistant_text,
    "set_session_name": _set_session_name,
    "get_messages": _get_messages,
    "get_commands": _get_commands,
}
