"""The command line of ``tau [options] [@files...] [messages...]``, parsed as pi 1.6 parses its own.

pi does not parse POSIX-style: its short options are words of their own (``-nt``, ``-nbt``, ``-xt``,
``-ne``, ``-nc``, ``-na``), so ``-nbt`` is ``--no-builtin-tools``, never ``-n bt``. A value option
takes the next argument whatever it looks like (``--tools -edit``); ``-p`` takes the next argument as
a message unless it starts with ``-`` or ``@``; ``@path`` is a file for the first message; ``--``
ends the options. An unknown short option is an error at once; an unknown long one (``--plan``) may
be an extension's flag (``tau.register_flag``), so it is kept, with the next argument as its value
when that does not start with ``-`` or ``@``, and is an error only if no extension declares it.

:data:`FLAGS` is the one table of options: the parser, ``--help``, and the test that every option
reaching a session is also an SDK keyword all read it. Nothing heavy is imported here.
"""

from __future__ import annotations

import argparse
from typing import Any

from tau.common.dataclass import dataclass

__all__ = ["FLAGS", "Flag", "help_text", "parse_args"]


@dataclass(frozen=True)
class Flag:
    """One option.

    Attributes:
        names: Its spellings, the long one first (``("--tools", "-t")``).
        dest: The attribute of the parsed namespace.
        kind: ``bool``; ``value`` (takes the next argument); ``list`` (a repeatable value);
            ``split`` (a comma-separated value, repeatable); ``const`` (sets ``const``).
        help: One line for ``--help``.
        metavar: The value's name in ``--help``.
        runtime: Whether the option reaches the session (a :class:`~tau.modes.runtime.RuntimeOptions`
            field, so also an SDK keyword), as opposed to what the CLI does itself.
        unsupported: For pi options tau has no counterpart of: the warning printed when given
            (``""``: accepted silently, as there is nothing to turn off).
    """

    names: tuple[str, ...]
    dest: str
    kind: str = "bool"
    help: str = ""
    metavar: str = ""
    runtime: bool = True
    const: Any = None
    unsupported: str | None = None


FLAGS: tuple[Flag, ...] = (
    Flag(("--help", "-h"), "help", help="show this help and exit", runtime=False),
    Flag(("--version", "-v"), "version", help="print the version and exit", runtime=False),
    Flag(("--print", "-p"), "print", help="run the prompts, print the final answer, exit", runtime=False),
    Flag(("--mode",), "mode", "value", "output mode: text (default), json or rpc", "MODE", runtime=False),
    Flag(
        ("--model",),
        "model",
        "value",
        'model pattern or id ("provider/id", optional ":<thinking>")',
        "PATTERN",
    ),
    Flag(
        ("--models",),
        "models",
        "split",
        "comma-separated model patterns (globs, :thinking) for Ctrl+P cycling",
        "PATTERNS",
    ),
    Flag(("--provider",), "provider", "value", "provider of --model", "NAME"),
    Flag(
        ("--api-key",), "api_key", "value", "API key of the selected model's provider (this run only)", "KEY"
    ),
    Flag(("--thinking",), "thinking", "value", "off, minimal, low, medium, high, xhigh or max", "LEVEL"),
    Flag(
        ("--list-models",),
        "list_models",
        help="list known models (with an optional search) and exit",
        runtime=False,
    ),
    Flag(("--continue", "-c"), "continue_", help="continue the most recent session of this directory"),
    Flag(("--resume", "-r"), "resume", help="pick a session to resume", runtime=False),
    Flag(("--session",), "session", "value", "open a session by file path or full/partial id", "PATH|ID"),
    Flag(
        ("--session-id",),
        "session_id",
        "value",
        "this directory's session with the id, created if absent",
        "ID",
    ),
    Flag(
        ("--fork",),
        "fork",
        "value",
        "fork a session (path or full/partial id) into this directory",
        "PATH|ID",
    ),
    Flag(("--session-dir",), "session_dir", "value", "where sessions are stored and looked up", "DIR"),
    Flag(("--no-session",), "no_session", help="keep the session in memory only"),
    Flag(("--name", "-n"), "name", "value", "session display name", "NAME"),
    Flag(
        ("--export",),
        "export",
        "value",
        "export a session file to HTML and exit (output: next argument)",
        "FILE",
        runtime=False,
    ),
    Flag(
        ("--tools", "-t"), "tools", "value", "comma-separated allowlist, or only +name/-name changes", "LIST"
    ),
    Flag(
        ("--exclude-tools", "-xt"),
        "exclude_tools",
        "split",
        "comma-separated tools (or * patterns) to disable",
        "LIST",
    ),
    Flag(("--no-tools", "-nt"), "no_tools", help="no tools at all"),
    Flag(("--no-builtin-tools", "-nbt"), "no_builtin_tools", help="no built-in tools; extension tools stay"),
    Flag(("--extension", "-e"), "extension", "list", "load an extension file (repeatable)", "PATH"),
    Flag(("--no-extensions", "-ne"), "no_extensions", help="load only -e extensions (bundled ones off too)"),
    Flag(
        ("--disable-extension",),
        "disable_extension",
        "list",
        "skip an extension by name (repeatable)",
        "NAME",
    ),
    Flag(("--no-mcp",), "no_mcp", help="no MCP servers and no MCP tools for this run (docs/mcp.md)"),
    Flag(
        ("--system-prompt",),
        "system_prompt",
        "value",
        "replace the system prompt (text or file)",
        "TEXT|FILE",
    ),
    Flag(
        ("--append-system-prompt",),
        "append_system_prompt",
        "list",
        "append text or a file to the system prompt (repeatable)",
        "TEXT|FILE",
    ),
    Flag(("--no-context-files", "-nc"), "no_context_files", help="do not load AGENTS.md / CLAUDE.md"),
    Flag(("--skill",), "skill", "list", "load a skill file or folder (repeatable)", "PATH"),
    Flag(
        ("--no-skills", "-ns"), "no_skills", help="no discovered or configured skills (--skill still loads)"
    ),
    Flag(
        ("--prompt-template",),
        "prompt_template",
        "list",
        "load a prompt-template file or folder (repeatable)",
        "PATH",
    ),
    Flag(
        ("--no-prompt-templates", "-np"),
        "no_prompt_templates",
        help="no discovered or configured prompt templates (--prompt-template still loads)",
    ),
    Flag(
        ("--verbose",), "verbose", help="show the startup details (context files, extensions)", runtime=False
    ),
    Flag(("--approve", "-a"), "approve", "const", "trust this project's files for this run", const=True),
    Flag(("--no-approve", "-na"), "approve", "const", "ignore this project's trust-gated files", const=False),
    Flag(("--offline",), "offline", help="no network except the model provider"),
    Flag(
        ("--faux-script",),
        "faux_script",
        "value",
        "script of the faux provider (--model faux/faux-1)",
        "FILE",
    ),
    Flag(("--theme",), "theme", "list", "load a theme file or folder (repeatable)", "PATH", runtime=False),
    Flag(
        ("--use-theme",),
        "use_theme",
        "value",
        "the terminal's theme for this run (a name, or light/dark)",
        "NAME",
        runtime=False,
    ),
    Flag(
        ("--no-themes",),
        "no_themes",
        help="no discovered or configured themes (--theme still loads)",
        runtime=False,
    ),
    # pi 1.6 options for what tau does not have yet: parsed as pi parses them, then ignored.
    Flag(("--tui-mode",), "tui_mode", "value", runtime=False, unsupported=""),
)

_BY_NAME = {name: flag for flag in FLAGS for name in flag.names}
_MODES = ("text", "json", "rpc")
_TUI_MODES = ("regular", "fullscreen")
_NO_DASH_VALUE = {
    "mode": "text, json, or rpc",
    "tui_mode": "regular or fullscreen",
    "use_theme": "a theme name",
}


def _defaults() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for flag in FLAGS:
        if flag.kind in ("list", "split"):
            values[flag.dest] = (
                [] if flag.dest in ("extension", "disable_extension", "skill", "prompt_template") else None
            )
        elif flag.kind == "bool":
            values[flag.dest] = False
        else:
            values[flag.dest] = None
    values["list_models"] = None
    values.update(messages=[], file_args=[], unknown_flags={}, diagnostics=[], ignored=[])
    return values


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line as a namespace (pi's rules; see the module docstring).

    Problems are not raised: ``diagnostics`` holds ``(kind, message)`` pairs (``kind`` is ``error``
    or ``warning``) for the caller to print, and ``unknown_flags`` the long options no built-in flag
    has (``name -> value or True``), for the extensions to claim.
    """
    values = _defaults()
    errors: list[tuple[str, str]] = values["diagnostics"]
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        flag = _BY_NAME.get(arg)
        if arg == "--":
            for rest in argv[i + 1 :]:
                (values["file_args"] if rest.startswith("@") else values["messages"]).append(
                    rest.removeprefix("@")
                )
            break
        if flag is None:
            if arg.startswith("@"):
                values["file_args"].append(arg[1:])
            elif arg.startswith("--"):
                name, eq, given = arg[2:].partition("=")
                if eq:
                    values["unknown_flags"][name] = given
                elif nxt is not None and not nxt.startswith(("-", "@")):
                    values["unknown_flags"][name] = nxt
                    i += 1
                else:
                    values["unknown_flags"][name] = True
            elif arg.startswith("-") and arg != "-":
                errors.append(("error", f"Unknown option: {arg}"))
            else:
                values["messages"].append(arg)
            i += 1
            continue
        if flag.unsupported is not None:
            values["ignored"].append((arg, flag.unsupported))
        if flag.dest == "print":
            values["print"] = True
            # pi: `-p PROMPT`; a following option or @file is not taken as the prompt.
            if (
                nxt is not None
                and not nxt.startswith("@")
                and (not nxt.startswith("-") or nxt.startswith("---"))
            ):
                values["messages"].append(nxt)
                i += 1
        elif flag.dest == "list_models":
            values["list_models"] = ""
            if nxt is not None and not nxt.startswith(("-", "@")):
                values["list_models"] = nxt
                i += 1
        elif flag.kind == "bool":
            values[flag.dest] = True
        elif flag.kind == "const":
            values[flag.dest] = flag.const
        elif nxt is None or (flag.dest in _NO_DASH_VALUE and nxt.startswith("-")):
            # pi: these three never take an option as their value; the others take whatever follows.
            errors.append(("error", f"{flag.names[0]} requires {_NO_DASH_VALUE.get(flag.dest, 'a value')}"))
        else:
            i += 1
            _take_value(flag, nxt, values, errors)
        i += 1
    return argparse.Namespace(**values)


def _take_value(flag: Flag, value: str, values: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    if flag.dest == "mode" and value not in _MODES:
        errors.append(("error", f'Invalid mode "{value}". Valid values: {", ".join(_MODES)}'))
        return
    if flag.dest == "tui_mode" and value not in _TUI_MODES:
        errors.append(("error", f'Invalid TUI mode "{value}". Valid values: {", ".join(_TUI_MODES)}'))
        return
    if flag.dest == "thinking":
        from tau.llm.registry import THINKING_LEVELS

        if value not in THINKING_LEVELS:
            # pi 1.6 warns and runs on; tau stops before a request is made with a level nobody asked for.
            errors.append(
                ("error", f'Invalid thinking level "{value}". Valid values: {", ".join(THINKING_LEVELS)}')
            )
            return
    if flag.kind == "list":
        values[flag.dest] = [*(values[flag.dest] or []), value]
    elif flag.kind == "split":
        entries = [entry.strip() for entry in value.split(",") if entry.strip()]
        values[flag.dest] = [*(values[flag.dest] or []), *entries]
    else:
        values[flag.dest] = value


_COMMANDS = """\
Commands:
  tau demo                      a scripted session offline, then its savings report
  tau savings FILE_OR_DIR...    what tau saves on existing pi or tau sessions
  tau batch TASKS.jsonl --out DIR
                                many headless sessions at once (local processes or Ray)
  tau session list [--all]      the sessions of this directory (ids for --session)
  tau session info|context|check ID|FILE
                                inspect a session without changing it
  tau config                    the settings files in effect and their values
  tau mcp add|remove|list|login|logout
                                MCP servers in mcp.json and their sign-in (tau mcp --help)

pi's other commands never reach a model; each says what tau offers instead:
  tau install | tau remove | tau uninstall
                                extensions are files (-e PATH, ~/.tau/agent/extensions/)
  tau update                    tau is updated by pip
  tau list                      where extensions, sessions and models are listed
  tau auth                      API keys: environment, --api-key, ~/.tau/agent/auth.json
  tau help                      this help
"""

_EXAMPLES = """\
Examples:
  tau                                        the interactive terminal
  tau -p "List the .py files in src/"        one prompt, the answer printed
  tau @notes.md @screenshot.png "Explain"    files and images in the first message
  tau -c "What did we discuss?"              continue this directory's latest session
  tau --session 01a24d3                      reopen a session by id prefix (tau session list)
  tau --export SESSION.jsonl page.html       a session as one self-contained HTML page
  tau -p --model faux/faux-1 --faux-script SCRIPT.json "hello"
                                             offline, with the scripted model
"""


def help_text(extension_flags: list[dict[str, Any]] | None = None) -> str:
    """``tau --help``: usage, commands, every supported option (extension flags too), examples."""
    lines = [
        "tau: a coding agent compatible with pi 1.6",
        "",
        "Usage:",
        "  tau [options] [--] [@files...] [messages...]",
        "",
        _COMMANDS,
        "Options:",
    ]
    for flag in FLAGS:
        if flag.unsupported is not None or not flag.help:
            continue
        names = ", ".join(flag.names)
        if flag.metavar:
            names += f" {flag.metavar}"
        lines.append(_row(names, flag.help))
    lines.append(_row("--", "end of options: the rest are messages (and @files)"))
    ignored = sorted({name for flag in FLAGS if flag.unsupported is not None for name in flag.names[:1]})
    lines += [
        "",
        "Accepted as pi accepts them, but not in tau yet (ignored, with a warning where it matters):",
    ]
    lines.append("  " + " ".join(ignored))
    if extension_flags:
        lines += ["", "Extension flags:"]
        for declared in extension_flags:
            value = " VALUE" if declared.get("type") == "string" else ""
            described = declared.get("description") or (
                f"registered by {declared.get('extensionPath', 'an extension')}"
            )
            lines.append(_row(f"--{declared['name']}{value}", described))
    lines += ["", _EXAMPLES]
    return "\n".join(lines)


def _row(left: str, right: str) -> str:
    left = f"  {left}"
    if len(left) >= 34:
        return f"{left}\n{' ' * 34}{right}"
    return f"{left.ljust(34)}{right}"
