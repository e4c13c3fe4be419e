"""One setup for every way a session starts: the CLI modes (``tau.modes.run``) and the SDK (``tau.sdk``).

:class:`RuntimeOptions` holds everything a run can set; the CLI fills it from its flags
(:func:`tau.modes.run.options_from_args`), the SDK from its keyword arguments. :func:`open_runtime`
turns it into a started :class:`~tau.agent.session.AgentSession`: settings and trust, the model
registry and model, the session file, tools, prompt files, and the extensions. Heavy modules are
imported inside the functions, so importing this module costs nothing at ``tau --version``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from tau.common.dataclass import dataclass
from tau.modes.session_open import open_session_file

__all__ = [
    "ExtensionLoadError",
    "Runtime",
    "RuntimeOptions",
    "apply_extension_flags",
    "configured_session_dir",
    "load_extensions",
    "load_settings",
    "open_runtime",
    "tool_names",
]


@dataclass
class RuntimeOptions:
    """What a run starts with. Field names follow the command-line flags (``continue_`` is ``-c``).

    Attributes:
        cwd: The working directory (settings, trust, context files, a new session's cwd).
        model: ``--model``: ``provider/id[:thinking]``, an id, or part of one.
        models: ``--models``: the model scope (patterns, globs, ``:thinking``); ``None``: the setting
            ``enabledModels``. A new session starts with its first model (or the default model, when
            the scope holds it) unless ``model`` is given; Ctrl+P and RPC ``cycle_model`` go through it.
        provider: ``--provider``.
        api_key: ``--api-key`` for the selected model's provider (this run only).
        thinking: ``--thinking`` level.
        tools: ``--tools`` entries (an allowlist, or ``+name``/``-name`` changes); ``None``: the defaults.
        no_tools: ``--no-tools``.
        no_builtin_tools: ``--no-builtin-tools``: no built-in tool is active; extension tools are.
        exclude_tools: ``--exclude-tools`` names or ``*`` patterns, disabled after everything else.
        session: ``--session PATH|ID``.
        continue_: ``-c``: the most recent session of ``cwd``.
        session_dir: ``--session-dir``.
        no_session: ``--no-session``: in memory only.
        session_id: ``--session-id``: this directory's session with the id (created when there is none;
            with ``fork``, the id of the fork).
        fork: ``--fork PATH|ID``: a copy of that session, in a new file of ``cwd``.
        name: ``--name``: the session's display name.
        system_prompt: ``--system-prompt TEXT|FILE``.
        append_system_prompt: ``--append-system-prompt TEXT|FILE`` (a list: each, joined by a blank line).
        no_context_files: ``--no-context-files``.
        offline: ``--offline``.
        faux_script: ``--faux-script``: a script file, or a list of steps; this session's faux script
            (its registry's own provider; without it, the registry reads ``$TAU_FAUX_SCRIPT`` for itself).
        approve: ``--approve`` (``True``) / ``--no-approve`` (``False``); ``None``: the saved decision.
        extensions: ``-e``: paths, or extension functions (``def extension(tau)``), loaded first, in order.
        no_extensions: ``--no-extensions``: only :attr:`extensions` load.
        disable_extensions: ``--disable-extension`` names.
        no_mcp: ``--no-mcp``: the bundled ``mcp`` extension stays off (no MCP servers, no MCP tools).
        flags: Extension flags (``--plan``, ``--level high``): name to value (``True`` for a bare flag);
            a name no loaded extension declares is an error.
        settings: Settings merged over the user's and the project's files for this run (never saved).
        skills: ``--skill``: skill files or folders, loaded whatever ``no_skills`` says.
        no_skills: ``--no-skills``: no discovered or configured skills.
        prompt_templates: ``--prompt-template``: template files or folders.
        no_prompt_templates: ``--no-prompt-templates``: no discovered or configured templates.
    """

    cwd: str = field(default_factory=os.getcwd)
    model: str | None = None
    models: list[str] | None = None
    provider: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    tools: list[str] | None = None
    no_tools: bool = False
    no_builtin_tools: bool = False
    exclude_tools: list[str] | None = None
    session: str | None = None
    continue_: bool = False
    session_dir: str | None = None
    no_session: bool = False
    session_id: str | None = None
    fork: str | None = None
    name: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | list[str] | None = None
    no_context_files: bool = False
    offline: bool = False
    faux_script: Any = None
    approve: bool | None = None
    extensions: list[Any] = field(default_factory=list)
    no_extensions: bool = False
    disable_extensions: list[str] = field(default_factory=list)
    no_mcp: bool = False
    flags: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    skills: list[str] = field(default_factory=list)
    no_skills: bool = False
    prompt_templates: list[str] = field(default_factory=list)
    no_prompt_templates: bool = False


@dataclass
class Runtime:
    """What the modes need: the session, the extension runtime (if any), and startup warnings."""

    session: Any
    extensions: Any = None
    warnings: list[str] = field(default_factory=list)


class ExtensionLoadError(ValueError):
    """Extensions failed to load, and the run stops before its session starts (the CLI, as pi 1.6).

    Attributes:
        failures: ``{"path", "error"}`` of each.
    """

    def __init__(self, failures: list[dict[str, str]]) -> None:
        self.failures = failures
        super().__init__("\n".join(f"Extension error ({f['path']}): {f['error']}" for f in failures))


async def open_runtime(
    options: RuntimeOptions,
    mode: str,
    before_start: Callable[[Any, Any], None] | None = None,
    *,
    session_class: type | None = None,
    stop_on_load_errors: bool = False,
    questions: Any = None,
    load_only: bool = False,
    start_reason: str = "startup",
) -> Runtime:
    """Settings, trust, models, the session file and the session, started.

    Args:
        options: What to start with.
        mode: ``"print" | "json" | "rpc" | "tui" | "sdk"`` (what extensions see as their mode).
        before_start: ``before_start(session, runner)`` runs once the extensions are bound and before
            ``session_start`` is emitted, so a mode can subscribe to the events its handlers cause.
        session_class: The session type to build (an :class:`~tau.agent.session.AgentSession` subclass).
        stop_on_load_errors: Raise :class:`ExtensionLoadError` when an extension fails to load, before
            the session starts (the CLI); otherwise the failures are in the runner's ``load_errors``.
        questions: How to ask the user before the session starts (a session of another directory, a
            session whose directory is gone): a :class:`~tau.modes.session_open.StartupQuestions`;
            ``None`` asks nothing (the SDK).
        load_only: Stop once the extensions are loaded: the session is not started and the
            extensions' flags are not applied (``tau --help`` lists the flags they declare).
        start_reason: ``session_start``'s reason: ``startup``, or ``reload``/``resume`` when the
            interactive mode starts again on a session (``resources_discover`` then says ``reload``
            after a reload, as pi's does).

    The session runs in the directory its file names (a resumed session of another directory runs
    there, as in pi): that directory's settings, trust, context files and resources apply.

    Raises:
        ValueError, RuntimeError, OSError: a bad option or an unusable file, with a message for the user.
        SessionNotOpened: the user chose not to go on.
    """
    from tau.agent.session import AgentSession
    from tau.agent.session_setup import select_model, tool_selection, unknown_tools_warning
    from tau.agent.settings_schema import check_settings
    from tau.llm.registry import THINKING_LEVELS, ModelRegistry

    if options.offline:
        os.environ["TAU_OFFLINE"] = "1"
    faux = _faux_provider(options.faux_script, options.cwd) if options.faux_script is not None else None
    started_in = str(Path(options.cwd).resolve())
    settings, trusted = load_settings(started_in, options.approve)
    warnings: list[str] = []
    session_dir = configured_session_dir(options.session_dir, started_in, settings)
    manager = open_session_file(
        options, started_in, session_dir, warnings, questions, continue_when_gone=mode == "sdk"
    )
    cwd = str(Path(manager.get_cwd()).resolve())
    if cwd != started_in:
        # pi 1.6 runs a session in its own directory: its settings, trust, context files and
        # resources; the command line's paths still mean what they meant where tau was started.
        settings, trusted = load_settings(cwd, options.approve)
        options = _anchored_paths(options, started_in)
    warnings[:0] = settings.problems
    if options.settings:
        overrides, problems = check_settings(options.settings, "settings", {})
        settings.apply_overrides(overrides)
        warnings += problems
    registry = ModelRegistry(faux=faux)
    if registry.error:
        warnings.append(registry.error)
    if options.name is not None:
        # pi names the session before the model and thinking level are recorded.
        if not " ".join(options.name.split()).strip():
            raise ValueError("Error: --name requires a non-empty value")
        manager.append_session_info(options.name)
    thinking = options.thinking
    if thinking is not None and thinking not in THINKING_LEVELS:
        manager.close()
        raise ValueError(
            f'Error: Invalid thinking level "{thinking}". Valid values: {", ".join(THINKING_LEVELS)}'
        )
    scoped = _model_scope(options, settings, registry, warnings)
    selection = select_model(
        registry,
        settings,
        pattern=options.model,
        provider=options.provider,
        api_key_given=bool(options.api_key),
        session_branch=manager.get_branch() if not options.model else (),
        scoped=scoped,
    )
    if selection.warning:
        warnings.append(selection.warning)
    if options.api_key and selection.model is not None:
        registry.set_runtime_api_key(selection.model.provider, options.api_key)
    tools = tool_selection(
        settings,
        options.tools,
        options.no_tools,
        no_builtin_tools=options.no_builtin_tools,
        exclude=options.exclude_tools,
    )
    resources = _resources(options, cwd, settings, trusted)
    warnings += resources.warnings()
    prompt = _prompt_settings(options, cwd, trusted)
    prompt.skills = list(resources.skills)
    session = (session_class or AgentSession)(
        manager,
        settings,
        registry,
        selection.model,
        cwd=manager.get_cwd(),
        thinking_level=thinking or selection.thinking_level,
        active_tools=tools.active,
        tool_modifiers=tools.modifiers,
        restore_tools=tools.restore,
        allowed_tools=tools.allowed,
        excluded_tools=tools.excluded,
        prompt=prompt,
        resources=resources,
    )
    session.scoped_models = scoped
    session.project_trusted = trusted
    extensions = await load_extensions(session, options, mode, trusted)
    warnings += list(getattr(extensions, "load_warnings", None) or [])
    if load_only:
        return Runtime(session, extensions, warnings)
    failures = list(getattr(extensions, "load_errors", None) or [])
    if stop_on_load_errors and failures:
        manager.close()
        raise ExtensionLoadError(failures)
    if options.flags:
        problem = apply_extension_flags(extensions, options.flags)
        if problem:
            manager.close()
            raise ValueError(problem)
    if before_start is not None:
        before_start(session, extensions)
    await session.start(start_reason)
    reason = "reload" if start_reason == "reload" else "startup"
    warnings += await _discover_resources(session, extensions, reason)
    if options.tools:  # after session_start: extensions may register tools there
        unknown = unknown_tools_warning(options.tools, session.get_offered_tool_names())
        warnings += [unknown] if unknown else []
    return Runtime(session, extensions, warnings)


def _model_scope(options: RuntimeOptions, settings: Any, registry: Any, warnings: list[str]) -> list[Any]:
    """The models of ``--models`` (else ``enabledModels``) that have credentials; what matches nothing is warned about."""
    patterns = options.models if options.models is not None else settings.get("enabledModels")
    if not patterns:
        return []
    from tau.llm.model_scope import resolve_scope

    scoped, problems = resolve_scope(list(patterns), registry.get_available())
    warnings += problems
    return scoped


def apply_extension_flags(runner: Any, given: dict[str, Any]) -> str | None:
    """Give the loaded extensions their flags' values (pi's rules); the error for the rest, or ``None``.

    A boolean flag given a value is just set (pi parses ``--plan x`` as the flag with a value, then
    keeps ``true``); a string flag given without a value is an error; a name no extension declares is
    an unknown option.
    """
    declared = runner.get_flags() if runner is not None else {}
    unknown = [name for name in given if name not in declared]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        return f"Error: Unknown option{plural}: {', '.join('--' + name for name in unknown)}"
    for name, value in given.items():
        if declared[name].get("type") == "boolean":
            runner.set_flag_value(name, True)
        elif isinstance(value, str):
            runner.set_flag_value(name, value)
        else:
            return f'Error: Extension flag "--{name}" requires a value'
    return None


def load_settings(cwd: str, approve: bool | None) -> tuple[Any, bool]:
    """The settings of a run in ``cwd`` (the project file only when trusted) and the trust decision."""
    from tau.agent.settings import Settings
    from tau.agent.trust import resolve_trust

    user_settings = Settings.load(cwd, project_trusted=False)
    trusted = resolve_trust(
        cwd, approve=approve, default_policy=str(user_settings.get("defaultProjectTrust", "ask"))
    )
    return (Settings.load(cwd, project_trusted=trusted) if trusted else user_settings), trusted


def _resources(options: RuntimeOptions, cwd: str, settings: Any, trusted: bool) -> Any:
    """The run's skills and prompt templates (user, trusted project, ``--skill``/``--prompt-template``)."""
    from tau.agent.resources import ResourceOptions, load_resources
    from tau.common.paths import agent_dir

    return load_resources(
        ResourceOptions(
            cwd=cwd,
            agent_dir=str(agent_dir()),
            trusted=trusted,
            user_settings=dict(settings.global_settings),
            project_settings=dict(settings.project_settings) if trusted else {},
            skill_paths=list(options.skills),
            prompt_paths=list(options.prompt_templates),
            no_skills=options.no_skills,
            no_prompt_templates=options.no_prompt_templates,
        )
    )


async def _discover_resources(session: Any, extensions: Any, reason: str = "startup") -> list[str]:
    """pi's ``resources_discover`` after ``session_start``: extensions add skill, template and theme paths."""
    if extensions is None or not extensions.has_handlers("resources_discover"):
        return []
    from tau.agent.resources import extend_resources

    found = (
        await extensions.emit({"type": "resources_discover", "cwd": session.cwd, "reason": reason}) or {}
    )
    skills = [item["path"] for item in found.get("skillPaths") or ()]
    prompts = [item["path"] for item in found.get("promptPaths") or ()]
    # Themes belong to the terminal: the interactive mode loads these (``InteractiveMode.add_theme_paths``).
    session.resources.theme_paths = [item["path"] for item in found.get("themePaths") or ()]
    warnings = extend_resources(session.resources, skills, prompts, cwd=session.cwd)
    session.set_skills(session.resources.skills)
    return warnings


def _faux_provider(script: Any, cwd: str) -> Any:
    """The session's own faux provider: its registry answers from it, other sessions of the process do not."""
    from tau.llm.providers import faux

    if isinstance(script, str | os.PathLike):
        script = Path(cwd, script).resolve()
    return faux.provider_for(script)


def _prompt_settings(options: RuntimeOptions, cwd: str, trusted: bool) -> Any:
    from tau.agent.session_setup import context_files, prompt_file_text
    from tau.agent.session_tools import PromptSettings
    from tau.common.paths import agent_dir, project_config_dir

    directory = agent_dir()
    project = project_config_dir(cwd)
    appended = options.append_system_prompt
    fallbacks = [project / "APPEND_SYSTEM.md"] * trusted + [directory / "APPEND_SYSTEM.md"]
    if isinstance(appended, list) and appended:
        # pi: each --append-system-prompt (text or file), joined by a blank line.
        append_prompt = "\n\n".join(prompt_file_text(value, cwd, ()) or "" for value in appended)
    else:
        given = appended if isinstance(appended, str) and appended else None
        append_prompt = prompt_file_text(given, cwd, fallbacks) or ""
    return PromptSettings(
        custom_prompt=prompt_file_text(
            options.system_prompt, cwd, [project / "SYSTEM.md"] * trusted + [directory / "SYSTEM.md"]
        ),
        append_prompt=append_prompt,
        context_files=[] if options.no_context_files else context_files(cwd, directory),
    )


# -- the session file ------------------------------------------------------------------------


def configured_session_dir(flag: str | None, cwd: str, settings: Any) -> str | None:
    """Where sessions go: ``--session-dir``, then ``TAU_SESSION_DIR``, then ``sessionDir`` (``None``: the default)."""
    configured = flag or os.environ.get("TAU_SESSION_DIR") or settings.get("sessionDir")
    if not configured:
        return None
    return str((Path(cwd) / os.path.expanduser(str(configured))).resolve())


def _anchored_paths(options: RuntimeOptions, base: str) -> RuntimeOptions:
    """``options`` with its relative file arguments made absolute against ``base``."""
    import dataclasses

    from tau.modes.session_open import anchored

    appended = options.append_system_prompt
    return dataclasses.replace(
        options,
        cwd=base,
        system_prompt=anchored(options.system_prompt, base),
        append_system_prompt=(
            [anchored(value, base) for value in appended]
            if isinstance(appended, list)
            else anchored(appended, base)
        ),
        extensions=[anchored(value, base) for value in options.extensions],
        skills=[anchored(value, base) for value in options.skills],
        prompt_templates=[anchored(value, base) for value in options.prompt_templates],
    )


# -- extensions ------------------------------------------------------------------------------


async def load_extensions(session: Any, options: RuntimeOptions, mode: str, trusted: bool) -> Any:
    """Load the extensions (``-e``, project, user, entry points, bundled) and bind them to ``session``.

    Returns the runner (``None`` when nothing is to be loaded, or the extension layer is missing).
    RPC, interactive and SDK sessions always get a runner: their clients and commands talk to it.
    """
    if options.no_extensions and not options.extensions and mode in ("print", "json"):
        return None  # nothing to load: keep the extension layer out of the import time
    try:
        from tau.extension.loader import load_extensions as load
    except ImportError:
        if options.extensions:
            print("Warning: extensions are not available in this build; ignoring -e", file=sys.stderr)
        return None
    return await load(
        session,
        cli_paths=list(options.extensions),
        cwd=session.cwd,
        trusted=trusted,
        no_extensions=bool(options.no_extensions),
        disabled=[*options.disable_extensions, *(["mcp"] if options.no_mcp else [])],
        settings=session.settings,
        mode=mode,
    )


def tool_names(value: Sequence[str] | str | None) -> list[str] | None:
    """``--tools a,b`` as a list (``None`` stays ``None``: the defaults)."""
    if value is None:
        return None
    return value.split(",") if isinstance(value, str) else list(value)
