"""Tool rows on their theme's backgrounds (issue 32's audit, left out: pi's tool boxes take
``toolPendingBg``, ``toolSuccessBg`` and ``toolErrorBg``; tau read the tokens and drew nothing).

A running row is on ``toolPendingBg``, a finished one on ``toolSuccessBg``, a failed one on
``toolErrorBg``, the whole width of the screen as pi's boxes are; the ``system`` theme has none, so its
rows are drawn as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyte
import pytest

from tau.modes.interactive.model import ToolBlock
from tau.modes.interactive.render import BlockRenderer
from tau.modes.themes import SYSTEM, builtin_theme, load_theme_file
from tau.modes.themes.tokens import FALLBACKS, TOKENS

WIDTH = 60


@pytest.fixture(autouse=True)
def truecolor(monkeypatch):
    monkeypatch.setenv("COLORTERM", "truecolor")


def rows_theme(tmp_path: Path):
    colors = {token: "#c0c0c0" for token in TOKENS if token not in FALLBACKS}
    colors.update(toolPendingBg="#111122", toolSuccessBg="#112211", toolErrorBg="#221111")
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"name": "rows", "colors": colors}))
    return load_theme_file(path)


def tool_block(status: str) -> ToolBlock:
    block = ToolBlock("t1", "bash", {"command": "echo hi"}, status=status, output="hi\nthere\n")
    if status != "running":
        block.result = {"content": [{"type": "text", "text": "hi\nthere\n"}], "isError": status == "error"}
    return block


def cell_backgrounds(text: str) -> list[set[str]]:
    """Each drawn line's background colours, over the whole width."""
    screen = pyte.Screen(WIDTH, 12)
    pyte.Stream(screen).feed(text.replace("\n", "\r\n"))
    drawn = [row for row in range(12) if screen.display[row].strip()]
    return [{screen.buffer[row][column].bg for column in range(WIDTH)} for row in drawn]


@pytest.mark.parametrize(
    ("status", "background"), [("running", "111122"), ("done", "112211"), ("error", "221111")]
)
def test_a_tool_row_is_on_its_status_background_across_the_screen(tmp_path, status, background):
    theme = rows_theme(tmp_path)
    text = BlockRenderer(theme=lambda: theme).render([tool_block(status)], WIDTH)
    lines = cell_backgrounds(text)
    assert len(lines) >= 2  # the title and the output
    assert all(line == {background} for line in lines)


def test_the_system_theme_draws_its_rows_without_a_background(tmp_path):
    system = builtin_theme(SYSTEM)
    assert system is not None
    text = BlockRenderer(theme=lambda: system).render([tool_block("done")], WIDTH)
    assert all(line == {"default"} for line in cell_backgrounds(text))
