"""``/settings`` as pi 1.6's settings list (issue 32's audit), in a real terminal.

pi's rows for the settings tau has, each with its value; Enter moves a row to its next value and
saves it at once; "Default thinking level per model" opens the models, then their levels (an override
for the current model applies now); "Hide thinking" shows thoughts as one ``Thinking...`` line. The
startup lists what was loaded by default, as pi's ``quietStartup: false`` does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_interactive_pty import ENTER, ESC, TIMEOUT, Tau

pexpect = pytest.importorskip("pexpect")

DOWN = "\x1b[B"
PI_ROWS = [
    "Auto-compact",
    "Auto-resize images",
    "Block images",
    "Skill commands",
    "Steering mode",
    "Follow-up mode",
    "Hide thinking",
    "Quiet startup",
    "Default project trust",
    "Default thinking level per model",
]


def agent_dir() -> Path:
    path = Path(os.environ["TAU_AGENT_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def start(tmp_path: Path, steps: list[dict]) -> Tau:
    shape = {"api": "faux", "baseUrl": "http://localhost:0", "reasoning": True, "input": ["text", "image"]}
    (agent_dir() / "models.json").write_text(
        json.dumps({"providers": {"faux": {"models": [{"id": "faux-1", "name": "faux-1", **shape}]}}})
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Tau(work, script)


def selected(tau: Tau) -> str:
    return next((line for line in tau.text().splitlines() if line.startswith("›")), "")


def test_settings_lists_pis_rows_and_saves_each_change(tmp_path):
    tau = start(tmp_path, [{"thinking": "secret deliberation", "text": "the visible answer"}])
    try:
        tau.wait_text("faux/faux-1 • medium")
        assert "[Tools]" in tau.text()  # pi's default startup lists what was loaded
        tau.send("/settings" + ENTER)
        tau.wait_text("enter/space change")
        screen = tau.text()
        assert [row for row in PI_ROWS if row not in screen] == []
        assert "Automatically compact context when it gets too large" in screen  # the row's description

        tau.send("per model")
        tau.wait(lambda: "Default thinking level per model" in selected(tau), "the per-model row")
        tau.send(ENTER)
        tau.wait_text("Per-Model Thinking Level")
        tau.wait(lambda: "faux/faux-1" in selected(tau), "the current model first")
        tau.send(ENTER)
        tau.wait_text("Thinking Level for faux/faux-1")
        tau.wait_text("Deep reasoning")
        rows = [line.replace("›", "").replace("✓", "") for line in tau.text().splitlines()]
        levels = [row.split()[0] for row in rows if "reasoning" in row.lower()]
        tau.send(DOWN * levels.index("high"))  # from "off", the first
        tau.wait(lambda: selected(tau).split()[1:2] == ["high"], "high")
        tau.send(ENTER)  # saved; the current model's level changes now
        tau.wait_text("faux/faux-1  (high)")
        tau.send(ESC)  # back to the list
        tau.wait_text("1 override")
        tau.send("\x7f" * len("per model") + "hide")
        tau.wait(lambda: "Hide thinking" in selected(tau), "the hide-thinking row")
        tau.send(" ")  # Space on a search is text; Enter changes
        tau.send("\x7f" + ENTER)
        tau.wait(lambda: selected(tau).rstrip().endswith("true"), "hide thinking on")
        tau.send(ESC)
        tau.wait(lambda: "Hide thinking: true" in " ".join(tau.text().split()), "the saved notice")
        tau.wait_text("faux/faux-1 • high")

        tau.send("think about it" + ENTER)
        tau.wait_text("the visible answer")
        assert "Thinking..." in tau.text() and "secret deliberation" not in tau.text()
        tau.send("/quit" + ENTER)
        tau.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        tau.close()
    saved = json.loads((agent_dir() / "settings.json").read_text())
    assert saved == {"modelThinkingLevels": {"faux/faux-1": "high"}, "hideThinkingBlock": True}
