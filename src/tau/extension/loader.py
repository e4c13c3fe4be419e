"""Finding and loading extensions (pi-host §5.1, decisions.md "Product").

An extension is a Python module (a ``.py`` file or a package directory with ``__init__.py``) that
defines ``def extension(tau)`` or ``async def extension(tau)``. Load order, which is also handler
order:

1. ``-e PATH`` in the order given (a file, a package directory, or a directory to scan;
   ``builtin:NAME`` or ``bundled:NAME`` for one bundled extension);
2. when the project is trusted, the paths of its ``extensions`` setting, then ``<cwd>/.tau/extensions/``;
3. the paths of the user's ``extensions`` setting, then ``<agentDir>/extensions/``;
4. the entry-point group ``tau.extensions`` (installed packages);
5. the bundled (pi: built-in) extensions, in :data:`BUNDLED_EXTENSIONS` order.

A directory is scanned one level deep: ``*.py`` files and ``<dir>/__init__.py`` packages, by name.
The ``extensions`` setting's patterns turn extensions off and on, the bundled ones as
``builtin:NAME`` (:mod:`tau.extension.configured`). ``--no-extensions`` keeps only ``-e``;
``--disable-extension NAME`` and the ``disabledExtensions`` setting drop bundled extensions by
name. A module that fails to import, has no factory, or whose factory raises is reported
(``Failed to load extension "<path>": <error>``) and the others load. The bundled ``codemode``,
``tool-search`` and ``mcp`` are replaceable (pi): one whose tool, command or flag another extension
registers too is left out, with a warning.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tau.agent.hooks import resolve
from tau.common.dataclass import dataclass
from tau.common.paths import agent_dir, project_config_dir
from tau.extension.api import ExtensionAPI
from tau.extension.configured import (
    BUILTIN_PREFIX,
    PI_ONLY_BUILTINS,
    builtin_state,
    conventional_enabled,
    extension_settings,
    settings_paths,
)
from tau.extension.runner import Extension, ExtensionRunner
from tau.extension.ui import ExtensionUI

__all__ = [
    "BUNDLED_EXTENSIONS",
    "ENTRY_POINT_GROUP",
    "REPLACEABLE_EXTENSIONS",
    "Candidate",
    "ExtensionSource",
    "discover_extensions",
    "extension_inventory",
    "load_extension",
    "load_extension_factory",
    "load_extensions",
    "load_factory",
    "unknown_builtin_warnings",
]

ENTRY_POINT_GROUP = "tau.extensions"

# Bundled extension name → candidate modules (the first that exists is loaded); order = load order.
BUNDLED_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "todo": ("tau.bundled.todo",),
    "todo-loop": ("tau.bundled.todo_loop",),
    "action-fusion": ("tau.bundled.action_fusion", "tau.bundled.fusion"),
    "observation-pack": ("tau.bundled.observation_pack", "tau.bundled.obspack"),
    "evidence-reducer": ("tau.bundled.evidence_reducer", "tau.bundled.reducer"),
    "online-compact": ("tau.bundled.online_compact", "tau.bundled.occ"),
    "codemode": ("tau.bundled.codemode",),
    "tool-search": ("tau.bundled.tool_search",),
    "mcp": ("tau.bundled.mcp",),
}
# pi's replaceable built-ins: left out when another extension registers a tool, command or flag of theirs.
REPLACEABLE_EXTENSIONS = ("codemode", "tool-search", "mcp")
# ``-e builtin:NAME`` (pi's spelling) or ``-e bundled:NAME`` loads one bundled extension explicitly,
# also under ``--no-extensions``.
_EXPLICIT_BUNDLED = ("builtin:", "bundled:")

Factory = Callable[[ExtensionAPI], Any]


@dataclass
class ExtensionSource:
    """One extension to load.

    Attributes:
        path: What errors name it by: a file path, ``entry-point:NAME`` or ``bundled:NAME``.
        source: ``cli``, ``project``, ``user``, ``package`` or ``bundled``.
        name: The short name (file stem, entry-point name, bundled name).
        load: Returns the factory; raises when the module cannot be imported.
    """

    path: str
    source: str
    name: str
    load: Callable[[], Factory]


# -- modules from files -----------------------------------------------------------------------


def _module_name(path: Path) -> str:
    import hashlib  # only for a file or directory given to -e

    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem if path.name != "__init__.py") or "pkg"
    return f"tau_extension_{stem}_{digest}"


def _import_file(path: Path) -> Any:
    """Import a ``.py`` file or a package directory under a private module name."""
    if path.is_dir():
        init = path / "__init__.py"
        name = _module_name(path)
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
    else:
        name = _module_name(path)
        spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _factory_of(module: Any, where: str) -> Factory:
    factory = getattr(module, "extension", None)
    if not callable(factory):
        raise TypeError(f"{where} does not define extension(tau)")
    return factory


def load_extension_factory(path: str | os.PathLike[str]) -> Factory:
    """The ``extension`` function of a ``.py`` file or package directory."""
    resolved = Path(path)
    return _factory_of(_import_file(resolved), str(path))


def _file_source(path: Path, source: str) -> ExtensionSource:
    name = path.name if path.is_dir() else path.stem
    return ExtensionSource(str(path), source, name, lambda: load_extension_factory(path))


def _is_extension_file(path: Path) -> bool:
    return path.suffix == ".py" and path.is_file() and not path.name.startswith((".", "_"))


def _scan(directory: Path, source: str) -> list[ExtensionSource]:
    """``*.py`` files and ``<dir>/__init__.py`` packages directly inside ``directory``, by name."""
    if not directory.is_dir():
        return []
    found = []
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        is_package = child.is_dir() and (child / "__init__.py").is_file()
        if is_package or _is_extension_file(child):
            found.append(_file_source(child, source))
    return found


def _inline_source(factory: Factory) -> ExtensionSource:
    module = getattr(factory, "__module__", None) or "inline"
    name = getattr(factory, "__qualname__", None) or type(factory).__name__
    return ExtensionSource(f"inline:{module}.{name}", "inline", name, lambda: factory)


def _cli_sources(paths: Iterable[str | os.PathLike[str] | Factory], cwd: Path) -> list[ExtensionSource]:
    found = []
    for given in paths:
        if callable(given):
            found.append(_inline_source(given))
            continue
        if isinstance(given, str) and given.startswith(_EXPLICIT_BUNDLED):
            found.append(_explicit_bundled(given))
            continue
        path = Path(given).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.is_dir() and not (path / "__init__.py").is_file():
            found.extend(_scan(path, "cli"))
        else:
            found.append(_file_source(path, "cli"))
    return found


# -- entry points and bundled modules ----------------------------------------------------------


def _entry_point_factory(entry_point: Any) -> Factory:
    loaded = entry_point.load()
    if callable(loaded) and not isinstance(loaded, types.ModuleType):
        return loaded
    return _factory_of(loaded, f"entry point {entry_point.name!r} ({entry_point.value})")


def _may_declare_entry_points(group: str) -> bool:
    """Whether an installed distribution may declare ``group``: False only when none can.

    Importing :mod:`importlib.metadata` (with ``email``, ``zipfile``, ``csv``) and letting it parse every
    distribution costs ~20 ms at each start, and usually finds nothing. This reads the same
    ``*.dist-info``/``*.egg-info`` ``entry_points.txt`` files on ``sys.path`` and looks for the section
    header; anything it cannot read as plainly (a zip on the path, a distribution finder other than
    the standard path finder) answers True, and :mod:`importlib.metadata` decides.
    """
    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "find_distributions"):
            return True
    header = f"[{group}]"
    for entry in sys.path:
        folder = entry or "."
        try:
            with os.scandir(folder) as found:
                names = [item.name for item in found if item.name.endswith((".dist-info", ".egg-info"))]
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            try:
                with open(
                    os.path.join(folder, name, "entry_points.txt"), encoding="utf-8", errors="replace"
                ) as file:
                    if header in file.read():
                        return True
            except OSError:
                continue
    return False


def _entry_point_sources() -> list[ExtensionSource]:
    if not _may_declare_entry_points(ENTRY_POINT_GROUP):
        return []
    import importlib.metadata

    entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return [
        ExtensionSource(
            f"entry-point:{ep.name}", "package", ep.name, functools.partial(_entry_point_factory, ep)
        )
        for ep in sorted(entry_points, key=lambda ep: ep.name)
    ]


def _bundled_module(candidates: Sequence[str]) -> str | None:
    for module in candidates:
        try:
            if importlib.util.find_spec(module) is not None:
                return module
        except ModuleNotFoundError:
            continue
    return None


def _bundled_factory(module: str) -> Factory:
    return _factory_of(importlib.import_module(module), module)


def _bundled_sources() -> list[ExtensionSource]:
    found = []
    for name, candidates in BUNDLED_EXTENSIONS.items():
        module = _bundled_module(candidates)
        if module is not None:
            found.append(
                ExtensionSource(
                    f"bundled:{name}",
                    "bundled",
                    name,
                    functools.partial(_bundled_factory, module),
                )
            )
    return found


def _explicit_bundled(given: str) -> ExtensionSource:
    name = given.split(":", 1)[1]
    candidates = BUNDLED_EXTENSIONS.get(name)
    module = _bundled_module(candidates) if candidates else None

    def load() -> Factory:
        if module is None:
            known = ", ".join(BUNDLED_EXTENSIONS)
            raise ImportError(f"no bundled extension named {name!r} (known: {known})")
        return _factory_of(importlib.import_module(module), module)

    return ExtensionSource(f"bundled:{name}", "bundled", name, load)


@dataclass
class Candidate:
    """An extension the settings and folders offer, whether it loads, and the group ``tau config``
    lists it under (pi's ``pi config`` labels: ``Built-in``, ``User settings``, ``Project (.tau/)``, …)."""

    source: ExtensionSource
    enabled: bool
    group: str


def _collect(folder: str) -> list[str]:
    """The extensions of a folder a settings entry names: the folder itself when it is a package."""
    path = Path(folder)
    if (path / "__init__.py").is_file():
        return [folder]
    return [source.path for source in _scan(path, "settings")]


def extension_inventory(
    *,
    cwd: str | os.PathLike[str] = ".",
    trusted: bool = False,
    settings: Any = None,
    disabled: Iterable[str] = (),
    directory: Path | None = None,
) -> list[Candidate]:
    """Every extension the settings, the conventional folders, installed packages and the bundle
    offer, in load order, each with whether it loads (``-e`` paths are not among them)."""
    base = Path(cwd).resolve()
    agent = directory or agent_dir()
    project_base = project_config_dir(base)
    entries = extension_settings(settings, str(agent), str(project_base))
    if not trusted:  # an untrusted project's settings are never read
        entries.project = []
    found: list[Candidate] = []
    scopes = [("project", project_base, entries.project, "Project")] if trusted else []
    scopes.append(("user", agent, entries.user, "User"))
    for scope, folder, scope_entries, label in scopes:
        for path, on in settings_paths(scope_entries, str(folder), _collect):
            found.append(Candidate(_file_source(Path(path), scope), on, f"{label} settings"))
        shown = ".tau/" if scope == "project" else f"{folder}/"
        for source in _scan(folder / "extensions", scope):
            on = conventional_enabled(source.path, scope_entries, str(folder))
            found.append(Candidate(source, on, f"{label} ({shown})"))
    found += [Candidate(source, True, "Installed packages") for source in _entry_point_sources()]
    off = set(disabled)
    for source in _bundled_sources():
        on, scope = builtin_state(source.name, entries)
        group = "Built-in" if scope == "user" else "Built-in (project override)"
        found.append(Candidate(source, on and source.name not in off, group))
    return found


def discover_extensions(
    *,
    cli_paths: Sequence[str | os.PathLike[str] | Factory] = (),
    cwd: str | os.PathLike[str] = ".",
    trusted: bool = False,
    no_extensions: bool = False,
    disabled: Iterable[str] = (),
    directory: Path | None = None,
    settings: Any = None,
) -> list[ExtensionSource]:
    """Every extension to load, in load order, each path once."""
    base = Path(cwd).resolve()
    skipped = set(disabled)
    # A disabled bundled extension stays off when named with -e too (``--no-mcp -e builtin:mcp``);
    # the ``extensions`` setting does not stop an explicit -e (pi).
    sources = [s for s in _cli_sources(cli_paths, base) if not (s.source == "bundled" and s.name in skipped)]
    if not no_extensions:
        inventory = extension_inventory(
            cwd=base, trusted=trusted, settings=settings, disabled=skipped, directory=directory
        )
        sources += [candidate.source for candidate in inventory if candidate.enabled]
    unique: dict[Any, ExtensionSource] = {}
    for source in sources:
        key: Any = source.path
        if source.source in ("cli", "project", "user", "settings"):
            key = str(Path(source.path).resolve())
        elif source.source == "inline":  # two lambdas share a name, never an identity
            key = id(source)
        unique.setdefault(key, source)
    return list(unique.values())


# -- loading -----------------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def load_extension(runner: ExtensionRunner, source: ExtensionSource) -> Extension | None:
    """Import one extension and run its factory; a failure is reported and ``None`` returned."""
    extension = Extension(path=source.path, name=source.name, source=source.source)
    flags_before = dict(runner.flag_values)
    try:
        factory = source.load()
        await resolve(factory(ExtensionAPI(runner, extension)))
    except Exception as exc:
        # nothing a failed factory registered stays behind (pi discards the extension)
        runner.event_bus.drop_owner(source.path)
        runner.flag_values = flags_before
        if isinstance(exc, FileNotFoundError) and source.source == "cli" and not os.path.exists(source.path):
            error = f"Failed to load extension: Extension path does not exist: {source.path}"
        else:
            error = f"Failed to load extension: {_describe(exc)}"
        runner.load_errors.append({"path": source.path, "error": error})
        runner.emit_error(source.path, "load", error)
        return None
    runner.extensions.append(extension)
    for definition in extension.tools.values():
        runner.apply_tool(extension, definition)
    return extension


async def load_factory(
    runner: ExtensionRunner, factory: Factory, *, path: str = "<inline>"
) -> Extension | None:
    """Load an extension from a function (tests, embedding); ``path`` names it in errors."""
    return await load_extension(runner, ExtensionSource(path, "inline", path, lambda: factory))


def _disabled_names(disabled: Iterable[str], settings: Any) -> set[str]:
    names = set(disabled)
    if settings is not None:
        configured = settings.get("disabledExtensions") if hasattr(settings, "get") else None
        if isinstance(configured, list):
            names.update(name for name in configured if isinstance(name, str))
    return names


async def load_extensions(
    session: Any = None,
    *,
    cli_paths: Sequence[str | os.PathLike[str] | Factory] = (),
    cwd: str | os.PathLike[str] | None = None,
    trusted: bool = False,
    no_extensions: bool = False,
    disabled: Iterable[str] = (),
    settings: Any = None,
    mode: str = "print",
    ui: ExtensionUI | None = None,
    directory: Path | None = None,
) -> ExtensionRunner:
    """Load every extension and bind the runner to ``session`` (the CLI's one entry point).

    Args:
        session: The :class:`~tau.agent.session.AgentSession`; ``None`` to bind later with
            :meth:`ExtensionRunner.bind`.
        cli_paths: The ``-e`` paths, in order; an extension function (``def extension(tau)``) may
            stand in for a path (the SDK's ``extensions=[...]``).
        cwd: The working directory (default: the session's, else the process's).
        trusted: Whether the project is trusted (``.tau/extensions`` loads only then).
        no_extensions: ``--no-extensions``: only the ``-e`` paths load.
        disabled: ``--disable-extension`` names (bundled extensions); ``disabledExtensions`` in
            ``settings`` adds to them.
        settings: The effective settings (a ``Settings`` or a dict); default: the session's.
        mode: ``"tui" | "rpc" | "json" | "print" | "sdk"``.
        ui: The mode's UI (default: the non-interactive UI of ``mode``).
        directory: The agent dir (default: :func:`tau.common.paths.agent_dir`).

    Returns:
        The runner, bound to ``session`` when one was given. Load failures are in
        ``runner.load_errors`` and were reported through ``emit_error`` (event ``load``).
    """
    if cwd is None:
        cwd = getattr(session, "cwd", None) or os.getcwd()
    if settings is None and session is not None:
        settings = getattr(session, "settings", None)
    runner = ExtensionRunner(cwd=str(cwd), mode=mode, ui=ui, trusted=trusted)
    if session is not None:
        runner.bind(session)
    disabled_names = _disabled_names(disabled, settings)
    unknown = sorted(disabled_names - set(BUNDLED_EXTENSIONS))
    if unknown:
        known = ", ".join(BUNDLED_EXTENSIONS)
        print(
            f"Warning: no bundled extension named {', '.join(unknown)} to disable (known: {known})",
            file=sys.stderr,
        )
    runner.load_warnings += unknown_builtin_warnings(settings)
    sources = discover_extensions(
        cli_paths=cli_paths,
        cwd=cwd,
        trusted=trusted,
        no_extensions=no_extensions,
        disabled=disabled_names,
        directory=directory,
        settings=settings,
    )
    for source in sources:
        await load_extension(runner, source)
    _omit_replaced(runner)
    return runner


def unknown_builtin_warnings(settings: Any) -> list[str]:
    """A warning per ``builtin:NAME`` of the ``extensions`` setting that names no built-in extension."""
    entries = extension_settings(settings, "", "")
    named = []
    for entry in [*entries.user, *entries.project]:
        target = entry[1:] if entry[:1] in ("+", "-", "!") else entry
        if target.startswith(BUILTIN_PREFIX) and not any(ch in target for ch in "*?["):
            named.append(target[len(BUILTIN_PREFIX) :])
    unknown = [n for n in dict.fromkeys(named) if n not in BUNDLED_EXTENSIONS and n not in PI_ONLY_BUILTINS]
    known = ", ".join(BUNDLED_EXTENSIONS)
    return [f'extensions setting: no built-in extension named "{name}" (known: {known})' for name in unknown]


# -- replaceable built-ins -------------------------------------------------------------------


def _registered_names(extension: Extension) -> list[str]:
    return [
        *(f"tool:{name}" for name in extension.tools),
        *(f"command:{name}" for name in extension.commands),
        *(f"flag:{name}" for name in extension.flags),
    ]


def _is_replaceable(extension: Extension) -> bool:
    return extension.source == "bundled" and extension.name in REPLACEABLE_EXTENSIONS


def _omit_replaced(runner: ExtensionRunner) -> None:
    """Leave out each replaceable bundled extension that registers a tool, command or flag another
    extension registers too (pi): a third-party ``/mcp`` replaces the bundled MCP support instead of
    both connecting the same servers; one ``tool_search`` or ``codemode`` tool replaces the bundled one."""
    taken = {
        name: extension
        for extension in runner.extensions
        if not _is_replaceable(extension)
        for name in _registered_names(extension)
    }
    for extension in [e for e in runner.extensions if _is_replaceable(e)]:
        clash = next((name for name in _registered_names(extension) if name in taken), None)
        if clash is None:
            continue
        _unload(runner, extension)
        kind, raw = clash.split(":", 1)
        shown = {"command": f"/{raw}", "flag": f"--{raw}"}.get(kind, raw)
        runner.load_warnings.append(
            f"Extension {taken[clash].path} registers {kind} `{shown}`, so built-in extension "
            f"`{extension.name}` was not loaded. To use `{extension.name}`, check that `tau config` lists "
            "it as on under Built-in, then disable or remove the other extension. We recommend only "
            "having one or the other loaded at a time."
        )


def _unload(runner: ExtensionRunner, extension: Extension) -> None:
    """Take a loaded extension out again: its handlers, bus subscriptions, servers and tools."""
    owned = [name for name in extension.tools if runner.tool_owner(name) is extension]
    runner.extensions.remove(extension)
    runner.event_bus.drop_owner(extension.path)
    for server in runner.mcp_servers.list():
        if server["extensionPath"] == extension.path:
            runner.mcp_servers.unregister(server["name"], extension.path)
    host = runner.host
    if host is None:
        return
    for name in owned:
        owner = runner.tool_owner(name)
        if owner is None:
            host.unregister_tool(name)
        else:
            host.register_tool(runner.wrap_tool(owner.tools[name]))
