"""pi 1.6's subcommands that tau does not have (``install``, ``remove``, ``update``, ``list``, ``auth``,
``help``): one line each saying what tau offers instead.

Without them a first word such as ``install`` would be a prompt, and ``tau install foo`` a paid model
call for a command that does not exist. Each function takes the arguments after the word and returns
the exit code: 0 where the line answers the question (``list``, ``help``), 1 where the asked-for
action did not happen.
"""

from __future__ import annotations

import sys

__all__ = ["auth", "help", "install", "list_", "remove", "update"]

_EXTENSIONS = (
    "put extension files in ~/.tau/agent/extensions/ (or a trusted project's .tau/extensions/), "
    "load one with -e PATH, or pip-install a package that declares a tau.extensions entry point"
)


def _say(line: str, code: int) -> int:
    print(line, file=sys.stdout if code == 0 else sys.stderr)
    return code


def install(argv: list[str]) -> int:
    return _say(f"tau install: tau has no package manager; {_EXTENSIONS} (docs/extensions.md)", 1)


def remove(argv: list[str]) -> int:
    return _say(
        "tau remove: tau has no package manager; delete the extension file from ~/.tau/agent/extensions/ "
        "or .tau/extensions/, or pip-uninstall its package (docs/extensions.md)",
        1,
    )


def update(argv: list[str]) -> int:
    return _say(
        "tau update: update tau with the tool that installed it (pip install -U …); "
        "its model list ships with it and extensions are files or pip packages",
        1,
    )


def list_(argv: list[str]) -> int:
    return _say(
        "tau list: tau installs no packages; extensions load from ~/.tau/agent/extensions/ and "
        ".tau/extensions/ (tau config shows the settings, tau session list the sessions, "
        "tau --list-models the models)",
        0,
    )


def auth(argv: list[str]) -> int:
    return _say(
        "tau auth: tau has no login; set the provider's key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, …), "
        "pass --api-key, or store the key in ~/.tau/agent/auth.json (docs/models.md)",
        1,
    )


def help(argv: list[str]) -> int:
    return _say("tau help: tau --help lists the options and commands", 0)
