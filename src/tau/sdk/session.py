"""``create_agent_session``: a started tau session in your program, set up exactly as the CLI sets one up.

The options are the command line's (``docs/sdk.md`` has the table); they become a
:class:`~tau.modes.runtime.RuntimeOptions` and go through :func:`~tau.modes.runtime.open_runtime`,
the one setup path the CLI modes use too.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tau.agent.session import AgentSession as _RuntimeSession
from tau.llm.registry import THINKING_LEVELS
from tau.modes.runtime import RuntimeOptions, open_runtime
from tau.sdk.usage import Usage, recorded_usage
from tau.sdk.wording import in_sdk_words

__all__ = ["AgentSession", "create_agent_session", "open_session"]

PathLike = str | os.PathLike[str]
Extension = PathLike | Callable[[Any], Any]


class AgentSession(_RuntimeSession):
    """A session made by :func:`create_agent_session`: tau's run-time session plus the SDK's calls.

    Everything of the run-time session is there (``prompt``, ``steer``, ``follow_up``, ``abort``,
    ``subscribe``, ``messages``, ``session_file``, ``compact``, ...); this class adds
    :meth:`last_assistant_text`, :meth:`usage`, :meth:`close` and ``async with``.

    Attributes:
        warnings: What the CLI would have printed as ``Warning:`` lines at start (a broken
            ``models.json``, a model that could not be restored, an extension that failed to load).
    """

    warnings: list[str]
    _closed: bool = False

    async def prompt(self, text: str, images: Sequence[dict[str, Any]] | None = None, **options: Any) -> None:
        """Run ``text`` (with ``images``, pi's image blocks) to the end of the agent's run.

        While a run is going, pass ``streaming_behavior="steer"`` or ``"followUp"`` (or call
        :meth:`steer` / :meth:`follow_up`). Raises ``RuntimeError`` when the prompt cannot be sent
        (no model is configured, no API key for its provider); a request that fails does not raise.
        """
        try:
            await super().prompt(text, images=images, **options)
        except RuntimeError as exc:
            reworded = in_sdk_words(str(exc))
            if reworded == str(exc):
                raise
            raise RuntimeError(reworded) from exc

    def last_assistant_text(self) -> str | None:
        """The text of the last reply (replies without text that did not end normally are skipped)."""
        return self.get_last_assistant_text()

    def usage(self) -> Usage:
        """Requests, tokens and cost of this session so far, as recorded on its assistant messages."""
        return recorded_usage(self.session_manager.get_branch())

    async def close(self) -> None:
        """Abort any run, tell the extensions (``session_shutdown``) and release the session file."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.shutdown()
        finally:
            self.session_manager.close()

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _session_options(session: PathLike | None, cwd: str) -> dict[str, Any]:
    if session is None:
        return {"no_session": True}
    if isinstance(session, str) and session in ("continue", "new"):
        return {"continue_": True} if session == "continue" else {}
    if isinstance(session, os.PathLike):
        return {"session": str(Path(cwd, session).resolve())}
    if isinstance(session, str) and session:
        return {"session": session}
    raise TypeError(f'session must be None, "continue", "new", a path or a session id, not {session!r}')


def _extension_options(extensions: bool | Sequence[Extension] | None, no_extensions: bool) -> dict[str, Any]:
    if extensions is True or extensions is None:  # None: the default, as for the other options
        return {"extensions": [], "no_extensions": no_extensions}
    if extensions is False:
        return {"extensions": [], "no_extensions": True}
    if isinstance(extensions, str | os.PathLike) or not isinstance(extensions, Sequence):
        raise TypeError(
            f"extensions must be True, False or a list of paths and functions, not {extensions!r}"
        )
    return {"extensions": list(extensions), "no_extensions": no_extensions}


def _paths(value: Any, keyword: str) -> list[Any]:
    if isinstance(value, str | os.PathLike):
        raise TypeError(f"{keyword} must be a list of paths, not the single path {os.fspath(value)!r}")
    return list(value)


def _runtime_options(given: dict[str, Any]) -> RuntimeOptions:
    """The :class:`~tau.modes.runtime.RuntimeOptions` of :func:`create_agent_session`'s keywords.

    Raises ``ValueError`` / ``TypeError`` for a value the CLI would reject or warn about.
    """
    values = dict(given)
    cwd = values.pop("cwd")
    where = str(Path(cwd if cwd is not None else os.getcwd()).resolve())
    if not os.path.isdir(where):
        raise ValueError(f"cwd {str(cwd)!r} is not a directory")
    thinking, tools, faux_script = values["thinking"], values.pop("tools"), values.pop("faux_script")
    if thinking is not None and thinking not in THINKING_LEVELS:
        raise ValueError(f"thinking must be one of {', '.join(THINKING_LEVELS)}, not {thinking!r}")
    if isinstance(tools, str):
        raise TypeError(f"tools must be a list of tool names, not the string {tools!r}")
    if isinstance(faux_script, Sequence) and not isinstance(faux_script, str):
        faux_script = list(faux_script)
    elif faux_script is not None and not isinstance(faux_script, str | os.PathLike):
        raise TypeError(f"faux_script must be a path or a list of steps, not {faux_script!r}")
    settings, session_dir = values.pop("settings"), values.pop("session_dir")
    appended, flags, fork = values.pop("append_system_prompt"), values.pop("flags"), values.pop("fork")
    exclude, models = values.pop("exclude_tools"), values.pop("models")
    if isinstance(models, str):
        raise TypeError(f"models must be a list of patterns, not the string {models!r}")
    if isinstance(exclude, str):
        raise TypeError(f"exclude_tools must be a list of tool names, not the string {exclude!r}")
    if fork is not None:
        # A fork is written to a new file: a session that is kept, as session="new".
        if values["session"] is not None and values["session"] != "new":
            raise ValueError("fork cannot be combined with session (other than 'new')")
        values["session"] = "new"
    return RuntimeOptions(
        cwd=where,
        tools=list(tools) if tools else None,
        no_tools=tools is not None and not tools,
        faux_script=faux_script,
        settings=dict(settings) if settings is not None else None,
        session_dir=os.fspath(session_dir) if session_dir is not None else None,
        disable_extensions=list(values.pop("disable_extensions")),
        skills=[os.fspath(path) for path in _paths(values.pop("skills"), "skills")],
        prompt_templates=[
            os.fspath(path) for path in _paths(values.pop("prompt_templates"), "prompt_templates")
        ],
        append_system_prompt=appended if isinstance(appended, str | None) else list(appended),
        flags=dict(flags) if flags else None,
        fork=os.fspath(fork) if fork is not None else None,
        exclude_tools=list(exclude) if exclude is not None else None,
        models=list(models) if models is not None else None,
        **_session_options(values.pop("session"), where),
        **_extension_options(values.pop("extensions"), values.pop("no_extensions")),
        **values,
    )


async def create_agent_session(
    *,
    cwd: PathLike | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    thinking: str | None = None,
    session: PathLike | None = None,
    settings: Mapping[str, Any] | None = None,
    extensions: bool | Sequence[Extension] | None = True,
    tools: Sequence[str] | None = None,
    no_builtin_tools: bool = False,
    exclude_tools: Sequence[str] | None = None,
    faux_script: PathLike | Sequence[Mapping[str, Any]] | None = None,
    provider: str | None = None,
    api_key: str | None = None,
    session_dir: PathLike | None = None,
    session_id: str | None = None,
    fork: PathLike | None = None,
    name: str | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | Sequence[str] | None = None,
    no_context_files: bool = False,
    offline: bool = False,
    approve: bool | None = None,
    no_extensions: bool = False,
    disable_extensions: Sequence[str] = (),
    no_mcp: bool = False,
    flags: Mapping[str, bool | str] | None = None,
    skills: Sequence[PathLike] = (),
    no_skills: bool = False,
    prompt_templates: Sequence[PathLike] = (),
    no_prompt_templates: bool = False,
) -> AgentSession:
    """Start a session, set up as ``tau`` sets one up for the same options.

    Args:
        cwd: The working directory (default: the process's).
        model: As ``--model``: ``"anthropic/claude-sonnet-4-6"``, ``"faux/faux-1"``, an id or part of one
            (``:level`` sets the thinking level). Default: the session's, then the settings'.
        models: As ``--models``: the model scope (patterns, globs, ``:level``); without ``model``, a new
            session starts with its first model; ``cycle_model()`` goes through it.
        thinking: ``off | minimal | low | medium | high | xhigh | max``.
        session: ``None``: in memory only; ``"continue"``: the latest session of ``cwd``; ``"new"``: a new
            file in the session directory; a path: that file, opened or created (a string without a
            ``/`` that does not end in ``.jsonl`` is a session id, as ``--session`` takes it).
        settings: Merged over the user's (and a trusted project's) ``settings.json``; never saved.
        extensions: ``True`` (or ``None``): the user's, the project's, installed and bundled ones, as the
            CLI loads them; ``False``: none; a list of paths and ``extension(tau)`` functions: those
            first, then the rest.
        tools: Tool names (``--tools``; ``+name``/``-name`` changes the defaults; ``[]``: no tools).
        no_builtin_tools: ``--no-builtin-tools``: no built-in tool is active; extension tools are.
        exclude_tools: ``--exclude-tools``: names or ``*`` patterns disabled after everything else.
        fork: ``--fork``: a session (path, id or id prefix) copied into a new session of ``cwd``
            (written to the session directory; ``session_id`` names the copy).
        flags: Extension flags, as ``--name [value]`` would give them: ``{"plan": True}``; a name no
            loaded extension declares raises ``ValueError``.
        skills, prompt_templates: ``--skill`` / ``--prompt-template``: skill and template files or folders
            (relative to ``cwd``), loaded whatever ``no_skills`` / ``no_prompt_templates`` say.
        no_skills, no_prompt_templates: ``--no-skills`` / ``--no-prompt-templates``: none discovered or
            configured (``docs/skills.md``, ``docs/prompt-templates.md``).
        faux_script: For ``model="faux/faux-1"``: the script (a file or a list of steps), as ``--faux-script``.
            It is the process's script: sessions of one process share it.
        provider, api_key, session_dir, session_id, name, system_prompt, append_system_prompt,
            no_context_files, offline, approve, no_extensions, disable_extensions, no_mcp: as the flags
            of the same names (``docs/sdk.md``).

    Raises:
        ValueError: a bad option (an unknown model, a bad ``thinking``, a session that cannot be found).
        TypeError: an option of the wrong type.
        OSError: a settings or session file that cannot be used.
    """
    # locals() here are exactly the keywords above: one list of options, not two.
    options = _runtime_options(locals())
    return await open_session(options)


async def open_session(options: RuntimeOptions) -> AgentSession:
    """A started :class:`AgentSession` for ``options`` (what :func:`create_agent_session` returns)."""
    try:
        runtime = await open_runtime(options, "sdk", session_class=AgentSession)
    except (ValueError, RuntimeError) as exc:
        reworded = in_sdk_words(str(exc))
        if reworded == str(exc):
            raise
        raise type(exc)(reworded) from exc
    session: AgentSession = runtime.session
    failures = getattr(runtime.extensions, "load_errors", None) or []
    session.warnings = [
        *(in_sdk_words(warning) for warning in runtime.warnings),
        *(f"Extension error ({failure['path']}): {failure['error']}" for failure in failures),
    ]
    for warning in session.warnings:
        warnings.warn(warning, RuntimeWarning, stacklevel=3)
    return session
