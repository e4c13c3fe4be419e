"""Issue 32's acceptance: docs/cli.md lists every option and docs/interactive.md every command, each
in a table row that has a pi 1.6 column."""

from __future__ import annotations

import re
from pathlib import Path

from tau.modes.cli_args import FLAGS
from tau.modes.interactive.commands import BUILTIN_COMMANDS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def rows(page: str) -> list[str]:
    """The table rows of a page with three or more cells (the last one: pi 1.6's counterpart)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("| ") and line.count(" | ") >= 2]


def named(table: list[str], name: str) -> bool:
    """Whether a row names ``name`` in code, whole: `` `--mode json` `` names ``--mode``, `` `--models` `` does not."""
    whole = re.compile("`" + re.escape(name) + r"(?![\w-])")
    return any(whole.search(row) for row in table)


def test_every_option_has_a_row_in_cli_md():
    table = rows("cli.md")
    assert [name for flag in FLAGS for name in flag.names if not named(table, name)] == []


def test_every_command_has_a_row_in_interactive_md():
    table = rows("interactive.md")
    assert [name for name in BUILTIN_COMMANDS if not named(table, f"/{name}")] == []


def test_a_longer_name_does_not_stand_for_a_shorter_one():
    assert named(["| `--models PATTERNS` | scope | same |"], "--models")
    assert not named(["| `--models PATTERNS` | scope | same |"], "--mode")
    assert named(["| `--mode text|json` | mode | same |", "| `/session` | info | same |"], "/session")
    assert not named(["| `/sessions` | list | same |"], "/session")
