"""Choosing what a new :class:`~tau.agent.session.AgentSession` starts with: model, tools, prompt files.

Shared by the run modes (print, JSON, RPC, interactive):

- :func:`select_model`: pi-host §9.2 order: ``--model``/``--provider``, then the session's latest
  model (when it has credentials), then ``defaultProvider``/``defaultModel``, then the first
  available model (faux, the test provider, only when named);
- :func:`tool_selection`: ``--tools`` (allowlist or ``+x``/``-x``), ``--no-tools``, ``defaultTools``;
- :func:`context_files`, :func:`prompt_file_text`: ``AGENTS.md``/``CLAUDE.md``, ``SYSTEM.md``,
  ``APPEND_SYSTEM.md``, ``--system-prompt TEXT|FILE``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tau.agent.session_tools import Allowlist, name_matcher
from tau.agent.settings import Settings, apply_tool_modifiers, tool_list_error
from tau.common.dataclass import dataclass
from tau.common.paths import git_root
from tau.llm.catalog import BUILTIN_PROVIDERS
from tau.llm.messages import entry_message
from tau.llm.registry import ModelChoice, ModelNotFoundError, ModelRegistry
from tau.llm.types import Model

__all__ = [
    "NO_MODEL_HELP",
    "ModelSelection",
    "ToolSelection",
    "context_files",
    "prompt_file_text",
    "select_model",
    "tool_selection",
    "unknown_tools_warning",
]

# The example is the provider's default model, so `tau --list-models` lists what the hint names.
NO_MODEL_HELP = (
    "No model configured. Pick one with --model provider/id "
    f"(for example --model anthropic/{BUILTIN_PROVIDERS['anthropic'].default_model}) "
    "after setting its API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, --api-key, or ~/.tau/agent/auth.json), "
    'or set "defaultProvider" and "defaultModel" in ~/.tau/agent/settings.json. '
    "To run offline with a scripted model: --model faux/faux-1 --faux-script FILE. "
    "See `tau --list-models`."
)


@dataclass
class ModelSelection:
    """The chosen model (``None``: none configured), a ``:level`` suffix, and a warning to show."""

    model: Model | None
    thinking_level: str | None = None
    warning: str | None = None


def session_model(branch: Sequence[dict[str, Any]]) -> tuple[Any, Any] | None:
    """The ``(provider, model id)`` the branch last used, as its file holds them."""
    for entry in reversed(branch):
        if entry.get("type") == "model_change":
            return entry.get("provider"), entry.get("modelId")
        message = entry_message(entry)
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("provider"):
            return message.get("provider"), message.get("model")
    return None


def select_model(
    registry: ModelRegistry,
    settings: Settings,
    *,
    pattern: str | None = None,
    provider: str | None = None,
    api_key_given: bool = False,
    session_branch: Sequence[dict[str, Any]] = (),
    scoped: Sequence[Any] = (),
) -> ModelSelection:
    """The model a run starts with. Raises :class:`~tau.llm.registry.ModelNotFoundError` for a bad ``--model``.

    ``scoped`` (:class:`~tau.llm.model_scope.ScopedModel`, from ``--models``): a session without
    messages starts with the default model when it is in the scope, else the scope's first (pi 1.6).
    """
    if pattern:
        choice: ModelChoice = registry.resolve(pattern, provider, api_key_given=api_key_given)
        return ModelSelection(choice.model, choice.thinking_level, choice.warning)
    if provider:
        return ModelSelection(_provider_default(registry, provider))
    if scoped and not any(entry.get("type") == "message" for entry in session_branch):
        default = (settings.get("defaultProvider"), settings.get("defaultModel"))
        chosen = next((s for s in scoped if (s.model.provider, s.model.id) == default), scoped[0])
        return ModelSelection(chosen.model, chosen.thinking_level)
    recorded = session_model(session_branch)
    warning = None
    if recorded:
        model = registry.find(*recorded)
        if model is not None and registry.has_configured_auth(model):
            return ModelSelection(model)
        warning = f"Could not restore model {recorded[0]}/{recorded[1]}"
    default_provider, default_model = settings.get("defaultProvider"), settings.get("defaultModel")
    if default_provider and default_model:
        model = registry.find(default_provider, default_model)
        if model is not None and registry.has_configured_auth(model):
            return ModelSelection(model, warning=warning)
    available = [m for m in registry.get_available() if m.provider != "faux"]
    return ModelSelection(available[0] if available else None, warning=warning)


def _provider_default(registry: ModelRegistry, provider: str) -> Model:
    from tau.llm.catalog import BUILTIN_PROVIDERS

    models = [m for m in registry.get_all() if m.provider.lower() == provider.lower()]
    if not models:
        raise ModelNotFoundError(
            f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
        )
    info = BUILTIN_PROVIDERS.get(models[0].provider)
    return next((m for m in models if info and m.id == info.default_model), models[0])


@dataclass
class ToolSelection:
    """Initial active tools (a ``"*"`` entry: every allowed tool, after the names listed), the
    allowlist, modifiers for a restored loadout, and whether to restore the loadout a resumed
    session recorded."""

    active: list[str]
    allowed: Callable[[str], bool] | None
    modifiers: list[str]
    restore: bool
    excluded: Callable[[str], bool] | None = None  # --exclude-tools: never usable, whatever else says


def tool_selection(
    settings: Settings,
    tools: Sequence[str] | None,
    no_tools: bool,
    *,
    no_builtin_tools: bool = False,
    exclude: Sequence[str] | None = None,
) -> ToolSelection:
    """``--tools`` / ``--no-tools`` / ``--no-builtin-tools`` / ``--exclude-tools`` over ``defaultTools``.

    As pi 1.6: ``--no-builtin-tools`` empties the defaults but keeps extension tools; the excluded
    names and patterns are disabled after everything else. Raises ``ValueError`` for a mixed list.
    """
    selection = _selection(settings, tools, no_tools, no_builtin_tools)
    if not exclude:
        return selection
    excluded = name_matcher(list(exclude))
    selection.active = [name for name in selection.active if name == "*" or not excluded(name)]
    selection.excluded = excluded
    return selection


def _selection(
    settings: Settings, tools: Sequence[str] | None, no_tools: bool, no_builtin_tools: bool
) -> ToolSelection:
    defaults = [] if no_tools or no_builtin_tools else settings.default_tools()
    restore = not (no_tools or no_builtin_tools)
    if tools is None:
        # With --no-builtin-tools, a tool replacing a built-in (Action Fusion's `edit`) stays as
        # inactive as the built-in (ToolSet.register).
        return ToolSelection(defaults, Allowlist([]) if no_tools else None, [], restore)
    entries = [entry for entry in tools if entry]
    error = tool_list_error(entries)
    if error:
        raise ValueError(f"Invalid --tools: {error}")
    if entries and all(entry[:1] in "+-" for entry in entries):
        active = apply_tool_modifiers(defaults, entries)
        return ToolSelection(active, Allowlist(active) if no_tools else None, entries, restore)
    # An allowlist activates every registered tool it names or matches (MCP tools: see Allowlist),
    # those it names in its order first: the order declarations reach the model in (pi).
    named = [entry for entry in entries if "*" not in entry]
    return ToolSelection([*named, "*"], Allowlist(entries), [], False)


def unknown_tools_warning(entries: Sequence[str], offered: set[str]) -> str | None:
    """A warning for the ``--tools`` entries that name or match no tool, or ``None``.

    pi 1.6 accepts such entries silently; tau warns (decisions.md), and runs without them.
    """
    unmatched = []
    for entry in entries:
        name = entry[1:] if entry[:1] in "+-" else entry
        if name and not any(name_matcher([name])(tool) for tool in offered):
            unmatched.append(name)
    if not unmatched:
        return None
    quoted = ", ".join(f'"{name}"' for name in unmatched)
    return f"--tools: no tool named {quoted}; the tools are {', '.join(sorted(offered))}"


# pi 1.6's names, in its order: the first that is a file is the directory's context file.
_CONTEXT_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


def _context_file(directory: Path) -> Path | None:
    return next((directory / name for name in _CONTEXT_NAMES if (directory / name).is_file()), None)


def context_files(cwd: str | Path, agent_dir: Path) -> list[tuple[str, str]]:
    """The context file (``AGENTS.override.md``, ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md`` or
    ``CLAUDE.MD``) of the agent dir, then of every directory from ``/`` down to ``cwd``.

    As pi: in a linked git worktree nested inside its main checkout, the main checkout's file is
    left out when the worktree has its own (both cover the same repository; loading both would give
    the model the same instructions twice).
    """
    found: list[Path] = []
    global_file = _context_file(agent_dir)
    if global_file:
        found.append(global_file)
    directory = Path(cwd).resolve()
    shadowed = _shadowed_context_file(directory)
    chain = [directory, *directory.parents]
    for folder in reversed(chain):
        local = _context_file(folder)
        if local and local not in found and (shadowed is None or _real(folder) / local.name != shadowed):
            found.append(local)
    files = []
    for path in found:
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
            files.append((str(path), text.removeprefix("\ufeff")))
        except OSError:
            continue
    return files


def _real(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except OSError:
        return path


def _shadowed_context_file(cwd: Path) -> Path | None:
    """The main checkout's context file that a nested linked worktree's own file shadows, if any."""
    root = git_root(cwd)
    if root is None or not Path(root, ".git").is_file():
        return None  # not a linked worktree (an ordinary repository has a .git directory)
    worktree = Path(root)
    try:
        line = (worktree / ".git").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    git_dir = Path(worktree, line.removeprefix("gitdir:").strip())
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return None  # a submodule's git dir has no commondir
    common_dir = _real(git_dir / common)
    main_root = common_dir.parent
    worktree_root = _real(worktree)
    if main_root == worktree_root or main_root not in worktree_root.parents:
        return None  # a sibling worktree: its main checkout is no ancestor
    if _real(main_root / ".git") != common_dir:
        return None  # a bare layout: the folder holding the git dir tracks nothing
    own = _context_file(worktree_root)
    return main_root / own.name if own else None


def prompt_file_text(value: str | None, cwd: str | Path, fallbacks: Sequence[Path]) -> str | None:
    """``--system-prompt`` style text: an existing file's content, else the text; else the first fallback file."""
    if value is not None:
        candidate = Path(cwd) / value
        if len(value) < 4096 and "\n" not in value and candidate.is_file():
            return candidate.read_text(encoding="utf-8")
        return value
    for path in fallbacks:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None
