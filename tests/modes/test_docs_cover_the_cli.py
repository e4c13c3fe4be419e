"""Issue 32's acceptance: docs/cli.md lists every option and docs/interactive.md every command, each
in a table row that has a pi 1.6 column."""

from __future__ import annotations

from pathlib import Path

from tau.modes.cli_args import FLAGS
from tau.modes.interactive.commands import BUILTIN_COMMANDS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def rows(page: str) -> list[str]:
    """The table rows of a page with three or more cells (the last one: pi 1.6's counterpart)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("| ") and line.count(" | ") >= 2]


def test_every_option_has_a_row_in_cli_md():
    table = rows("cli.md")
    missing = [name for flag in FLAGS for name in flag.names if not any(f"`{name}" in row for row in table)]
    assert missing == []


def test_every_command_has_a_row_in_interactive_md():
    table = rows("interactive.md")
    assert [name for name in BUILTIN_COMMANDS if not any(f"`/{name}" in row for row in table)] == []
