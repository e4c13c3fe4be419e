"""The interactive row of a ``codemode`` call, as pi draws it (pi's codemode renderer): the title
``codemode`` and the script, the nested tool calls with their status (also while they run), then
the script's output without the ``Script completed`` / ``Wall time`` / ``Output:`` header. The
nested calls get no rows of their own. Collapsed, the script shows 10 lines, the calls the last 8,
the output 5 lines; Ctrl+O shows everything."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

from interactive_support import BlockRenderer, ChatController, controlled

from tau.modes.interactive.model import ToolBlock
from tau.modes.interactive.tool_rows import tool_row

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bundled" / "codemode"))
from codemode_harness import Harness, code_call


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


SCRIPT = """const a = await tools.read({path: "a.txt"});
console.log("read", a.length);
try {
  await tools.read({path: "missing.txt"});
} catch (e) {
  text("missing failed");
}
return "done";"""


def _session_rows(tmp_path: Path) -> tuple[str, str]:
    """Runs SCRIPT through the faux model; its row collapsed and expanded."""
    (tmp_path / "a.txt").write_text("alpha\n")
    harness = Harness([code_call(SCRIPT), {"text": "ok"}], tmp_path)
    controller = controlled(harness.session)

    async def scenario() -> Any:
        runner = await harness.start()
        await harness.session.prompt("go")
        return runner

    runner = run(scenario())
    definition = runner.get_tool_renderer("codemode", harness.session.get_tool_definition("codemode"))
    renderer = BlockRenderer(tool_definition=lambda name: definition if name == "codemode" else None)
    blocks = [block for block in controller.blocks if isinstance(block, ToolBlock)]
    assert [block.name for block in blocks] == ["codemode"]  # nested calls have no rows of their own
    collapsed = renderer.render(blocks, 100, color=False)
    expanded = renderer.render([dataclasses.replace(blocks[0], expanded=True)], 100, color=False)
    return collapsed, expanded


def test_a_script_row_shows_the_code_the_nested_calls_and_the_output(tmp_path):
    collapsed, expanded = _session_rows(tmp_path)
    lines = [line.rstrip() for line in collapsed.split("\n")]
    assert lines[0] == "✓ codemode"
    assert lines[1:9] == ["  " + line if line else "" for line in SCRIPT.split("\n")]
    calls = [line.strip() for line in lines if line.strip()[:1] in ("✓", "✗") and "read" in line]
    assert len(calls) == 2
    assert calls[0].startswith('✓ read {"path":"a.txt"} ') and calls[0].endswith("ms")
    assert calls[1].startswith('✗ read {"path":"missing.txt"} ')
    assert "Script completed" not in collapsed and "Wall time" not in collapsed
    assert "missing failed" in collapsed and "done" in collapsed and "<console_output>" in collapsed
    # Expanded, a failed call shows its error under it.
    failed = expanded.split("\n").index(next(line for line in expanded.split("\n") if "✗ read" in line))
    assert expanded.split("\n")[failed + 1].strip().startswith("ENOENT: no such file")


def _block(code: str, calls: int, output_lines: int, status: str = "done") -> ToolBlock:
    block = ToolBlock(call_id="c1", name="codemode", args={"code": code})
    block.status = status  # type: ignore[assignment]
    records = [
        {
            "id": f"c1/{n}",
            "name": "bash",
            "args": f'{{"command":"echo {n}"}}',
            "status": "ok",
            "durationMs": 1500,
        }
        for n in range(1, calls + 1)
    ]
    output = "\n".join(f"out {n}" for n in range(1, output_lines + 1))
    block.result = {
        "content": [
            {"type": "text", "text": "Script completed\nWall time 1.6 seconds\nOutput:\n"},
            {"type": "text", "text": output},
        ],
        "details": {"calls": records, "fullOutputPath": "/tmp/full.txt"},
    }
    return block


def _definition(tmp_path: Path) -> Any:
    harness = Harness([], tmp_path)
    runner = run(harness.start())
    return runner.get_tool_renderer("codemode", harness.session.get_tool_definition("codemode"))


def test_collapsed_rows_fold_each_part_and_ctrl_o_shows_everything(tmp_path):
    definition = _definition(tmp_path)
    code = "\n".join(f"line{n};" for n in range(1, 16))
    block = _block(code, calls=10, output_lines=7)
    row = tool_row(block, definition)
    assert row.title == "codemode" and row.hidden == 0 and row.expandable
    assert row.body == [
        *[f"line{n};" for n in range(1, 11)],
        "… 5 more lines (ctrl+o to expand)",
        "",
        "… 2 earlier calls (ctrl+o to expand)",
        *[f'✓ bash {{"command":"echo {n}"}} 1.5s' for n in range(3, 11)],
        "",
        *[f"out {n}" for n in range(1, 6)],
        "… 2 more lines (ctrl+o to expand)",
        "Full output: /tmp/full.txt",
    ]
    full = tool_row(dataclasses.replace(block, expanded=True), definition)
    assert full.body == [
        *[f"line{n};" for n in range(1, 16)],
        "",
        *[f'✓ bash {{"command":"echo {n}"}} 1.5s' for n in range(1, 11)],
        "",
        *[f"out {n}" for n in range(1, 8)],
    ]
    short = _block("return 1", calls=1, output_lines=1)
    del short.result["details"]["fullOutputPath"]
    small = tool_row(short, definition)
    assert not small.expandable and small.body == [
        "return 1",
        "",
        '✓ bash {"command":"echo 1"} 1.5s',
        "",
        "out 1",
    ]


def test_calls_show_while_the_script_runs(tmp_path):
    definition = _definition(tmp_path)
    controller = ChatController()
    events = [
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "codemode", "args": {"code": "x"}},
        {
            "type": "tool_execution_start",
            "toolCallId": "c1/1",
            "toolName": "bash",
            "args": {"command": "sleep 9"},
            "parentToolCallId": "c1",
        },
        {
            "type": "tool_execution_update",
            "toolCallId": "c1",
            "toolName": "codemode",
            "partialResult": {
                "content": [],
                "details": {
                    "calls": [
                        {"id": "c1/?", "name": "bash", "args": '{"command":"sleep 9"}', "status": "running"}
                    ]
                },
            },
        },
    ]
    for event in events:
        controller.handle_event(event)
    blocks = [block for block in controller.blocks if isinstance(block, ToolBlock)]
    assert [block.name for block in blocks] == ["codemode"]
    row = tool_row(blocks[0], definition)
    assert row.body == ["x", "", '… bash {"command":"sleep 9"}']


def test_long_arguments_are_cut_until_expanded_and_bad_code_is_named(tmp_path):
    definition = _definition(tmp_path)
    block = _block("go()", calls=1, output_lines=0)
    long_args = '{"command":"' + "x" * 100 + '"}'
    block.result["details"]["calls"][0]["args"] = long_args
    assert tool_row(block, definition).body[2] == f"✓ bash {long_args[:77]}... 1.5s"
    assert (
        tool_row(dataclasses.replace(block, expanded=True), definition).body[2] == f"✓ bash {long_args} 1.5s"
    )
    bad = ToolBlock(call_id="c2", name="codemode", args={"code": 5})
    assert tool_row(bad, definition).title == "codemode [invalid arg]"


def test_on_screen_ctrl_o_prints_a_folded_script_row_again_in_full(tmp_path):
    from interactive_support import Screen

    from tau.extension import load_extensions

    code = "\n".join(f"const v{n} = {n};" for n in range(1, 16)) + "\nreturn v15;"
    harness = Harness([code_call(code), {"text": "listed"}], tmp_path)

    async def scenario() -> tuple[str, str]:
        runner = await load_extensions(harness.session, cwd=str(tmp_path), mode="tui")
        screen = Screen(harness.session, runner, rows=60)
        await screen.start("run")
        await screen.wait_text("listed")
        before = screen.text()
        screen.send("\x0f")  # Ctrl+O
        await screen.wait_text("ctrl+o: 1 row printed above, in full")
        await screen.wait_text("const v15 = 15;")
        after = screen.text()
        await screen.quit()
        return before, after

    before, after = run(scenario())
    assert "const v10 = 10;" in before and "const v11 = 11;" not in before
    assert "… 6 more lines (ctrl+o to expand)" in before
    assert "  return v15;" in after
