"""The complete example of docs/extensions.md works as the document says."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from faux_model import FauxModel

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import ExtensionRunner, load_factory  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"


def example_source() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## A complete example", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_documented_example_runs(tmp_path, capsys):
    namespace: dict = {}
    exec(compile(example_source(), "words.py", "exec"), namespace)
    steps = [{"tool": "word_count", "args": {"text": "one two three"}}, {"text": "Three words."}]
    scripted = FauxModel(steps, record=None)
    manager = SessionManager.in_memory(str(tmp_path))
    session = session_module.AgentSession(
        manager, Settings.in_memory(), scripted.registry, scripted.model, cwd=str(tmp_path)
    )
    runner = ExtensionRunner(cwd=str(tmp_path), mode="print")

    async def scenario() -> None:
        await load_factory(runner, namespace["extension"], path="words.py")
        runner.bind(session)
        await session.prompt("how many words in 'one two three'?")
        await session.prompt("/words a b c")

    asyncio.run(scenario())
    entries = manager.get_entries()
    result = next(e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult")
    assert result["content"] == [{"type": "text", "text": "3 words"}]
    assert [e["data"] for e in entries if e.get("customType") == "word-count:turn"] == [
        {"turn": 1},
        {"turn": 2},
    ]
    assert capsys.readouterr().err == "3 words, 2 turns so far\n"
