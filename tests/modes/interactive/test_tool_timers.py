"""The timing line of bash and codemode rows, as pi's: ``Elapsed 4.2s`` while the call runs (redrawn
every second), ``Took 4.2s`` once it finished; the duration the tool loop recorded (``durationMs``,
kept in the session file) wins over the row's own clock; no start time and no recorded duration: no
line. Every timing here comes from a fake clock or a recorded duration, never from how fast the
machine is."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from interactive_support import Screen, faux_session

from tau.bundled.codemode.render import render_codemode_call, render_codemode_result
from tau.modes.interactive.model import ChatController, ToolBlock
from tau.modes.interactive.render import BlockRenderer
from tau.modes.interactive.tool_timer import format_tool_duration
from tau.session.manager import SessionManager

ENTER = "\r"
CODEMODE = SimpleNamespace(
    render_call=render_codemode_call, render_result=render_codemode_result, renders_collapsed=True
)


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def rows(controller: ChatController, clock: FakeClock, width: int = 80) -> list[str]:
    definitions = {"codemode": CODEMODE}
    renderer = BlockRenderer(tool_definition=definitions.get, clock=clock)
    return [
        line.rstrip()
        for line in renderer.render(controller.blocks, width, color=False).rstrip("\n").split("\n")
    ]


def start(controller: ChatController, name: str = "bash", args: Any = None) -> None:
    args = {"command": "echo hi"} if args is None else args
    controller.handle_event(
        {"type": "tool_execution_start", "toolCallId": "t1", "toolName": name, "args": args}
    )


def update(controller: ChatController, text: str = "", details: Any = None) -> None:
    partial = {"content": [{"type": "text", "text": text}] if text else [], "details": details}
    controller.handle_event({"type": "tool_execution_update", "toolCallId": "t1", "partialResult": partial})


def end(controller: ChatController, text: str, duration_ms: Any = None, **result: Any) -> None:
    event: dict[str, Any] = {
        "type": "tool_execution_end",
        "toolCallId": "t1",
        "result": {"content": [{"type": "text", "text": text}], **result},
        "isError": False,
    }
    if duration_ms is not None:
        event["durationMs"] = duration_ms
    controller.handle_event(event)


def test_a_finished_bash_row_shows_the_recorded_duration_not_its_own_clock():
    clock = FakeClock()
    controller = ChatController(clock=clock)
    start(controller)
    update(controller)
    clock.now += 7.0  # the row's clock says 7 s; the tool loop measured 1.5 s
    end(controller, "hi\n", 1500)
    assert rows(controller, clock) == ["✓ $ echo hi", "  hi", "", "  Took 1.5s"]
    clock.now += 60.0
    assert rows(controller, clock)[-1] == "  Took 1.5s"


def test_a_running_row_shows_elapsed_then_took_from_its_own_clock_without_a_recorded_duration():
    clock = FakeClock()
    controller = ChatController(clock=clock)
    start(controller)
    assert rows(controller, clock) == ["⋯ $ echo hi"]  # no result yet: no body, no timer (as pi)
    update(controller)  # bash sends an empty result as it starts
    assert rows(controller, clock) == ["⋯ $ echo hi", "", "  Elapsed 0.0s"]
    clock.now += 4.2
    update(controller, "line 1\n")
    assert rows(controller, clock) == ["⋯ $ echo hi", "  line 1", "", "  Elapsed 4.2s"]
    clock.now += 1.0
    end(controller, "line 1\n")  # e.g. a result stored without a duration
    clock.now += 30.0  # the finished row's time stands still
    assert rows(controller, clock)[-1] == "  Took 5.2s"


def test_the_timer_stays_below_a_collapsed_bash_row():
    clock = FakeClock()
    controller = ChatController(clock=clock)
    start(controller)
    end(controller, "\n".join(f"line {n}" for n in range(1, 21)), 90_000)
    shown = rows(controller, clock)
    assert shown[1] == "  … 12 more lines (ctrl+o to expand)"
    assert shown[-3:] == ["  line 20", "", "  Took 1m 30s"]


def test_rows_without_a_start_or_a_recorded_duration_have_no_timer_line():
    clock = FakeClock()
    loaded = ChatController(clock=clock)
    loaded.load_messages(
        [
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls"}}],
                "stopReason": "toolUse",
            },
            {"role": "toolResult", "toolCallId": "t1", "toolName": "bash", "content": [], "isError": False},
        ]
    )
    assert rows(loaded, clock) == ["✓ $ ls"]
    # Tools other than bash and codemode show no timer, as in pi.
    live = ChatController(clock=clock)
    start(live, "read", {"path": "a.txt"})
    clock.now += 2.0
    end(live, "alpha", 2000)
    assert rows(live, clock) == ["✓ read a.txt", "  alpha"]


def test_a_resumed_sessions_bash_row_shows_the_duration_stored_in_the_session_file(tmp_path):
    """pi stores ``durationMs`` on the tool result and its resumed rows show ``Took``; tau's too."""
    session = faux_session(tmp_path, [{"bash": "echo hi"}, {"text": "done"}])
    run(session.prompt("go"))
    reopened = SessionManager.open(Path(session.session_file), read_only=True)
    messages = reopened.build_session_context()["messages"]
    result = next(m for m in messages if m["role"] == "toolResult")
    assert isinstance(result["durationMs"], int)
    clock = FakeClock()
    controller = ChatController(clock=clock)
    controller.load_messages(messages)
    shown = rows(controller, clock)
    assert shown[shown.index("✓ $ echo hi") + 1 :][:3] == [
        "  hi",
        "",
        f"  Took {format_tool_duration(result['durationMs'])}",
    ]


def test_a_codemode_row_ends_with_elapsed_while_it_runs_and_the_recorded_duration_after():
    clock = FakeClock()
    controller = ChatController(clock=clock)
    start(controller, "codemode", {"code": "return 1;"})
    calls = [{"id": "t1/1", "name": "read", "args": '{"path":"a"}', "status": "running"}]
    update(controller, details={"calls": calls})
    clock.now += 3.0
    assert rows(controller, clock) == [
        "⋯ codemode",
        "  return 1;",
        "",
        '  … read {"path":"a"}',
        "",
        "  Elapsed 3.0s",
    ]
    output = "Script completed\nWall time 0.1 seconds\nOutput:\n"
    controller.handle_event(
        {
            "type": "tool_execution_end",
            "toolCallId": "t1",
            "result": {
                "content": [
                    {"type": "text", "text": output},
                    {"type": "text", "text": "1\n2\n3\n4\n5\n6\n7"},
                ],
                "details": {"calls": [{**calls[0], "status": "ok", "durationMs": 12}]},
            },
            "isError": False,
            "durationMs": 2350,
        }
    )
    shown = rows(controller, clock)
    # Collapsed, the output folds to 5 lines; the timer (rounded as pi rounds) is never folded away.
    assert shown[-4:] == ["  5", "  … 2 more lines (ctrl+o to expand)", "", "  Took 2.4s"]


def test_durations_read_as_pi_writes_them():
    assert [format_tool_duration(ms) for ms in (0, 42, 1250, 4200, 59_999, 90_000, 7_384_000)] == [
        "0.0s",
        "0.0s",
        "1.3s",  # half up, as JavaScript's toFixed
        "4.2s",
        "60.0s",
        "1m 30s",
        "2h 3m 4s",
    ]


def test_a_running_bash_row_is_redrawn_every_second_without_any_event(tmp_path):
    """The live area redraws the timer on its own: no output arrives while the command waits."""
    gate = tmp_path / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo released"
    session = faux_session(tmp_path, [{"bash": command}, {"text": "done"}])

    async def scenario() -> str:
        screen = Screen(session)
        clock = FakeClock()
        screen.mode.controller.clock = clock
        await screen.start()
        screen.send("run it" + ENTER)
        await screen.wait_text("Elapsed 0.0s")
        clock.now += 3.0  # nothing else happens: only the one-second redraw can show it
        await screen.wait_text("Elapsed 3.0s")
        clock.now += 60.0
        await screen.wait_text("Elapsed 1m 3s")
        gate.touch()
        await screen.wait_for(lambda: session.is_idle() and "done" in screen.text())
        text = screen.text()
        await screen.quit()
        return text

    text = run(scenario())
    # Finished, the row shows what the tool loop measured (real time, so only its form is checked).
    took = [line.strip() for line in text.split("\n") if line.strip().startswith("Took ")]
    assert len(took) == 1 and took[0].endswith("s") and "Elapsed" not in text


# -- against real pi ---------------------------------------------------------------------------

_PI_SCRIPT = """
const dist = process.argv[1];
const { initTheme } = await import(dist + "/modes/interactive/theme/theme.js");
const { createShellRenderers } = await import(dist + "/core/tools/renderers/bash.js");
const { formatToolDuration } = await import(dist + "/core/tools/render-utils.js");
const input = JSON.parse(process.argv[2]);
initTheme("dark");
const shell = createShellRenderers("$");
const strip = (line) => line.replace(/\\x1b\\[[0-9;]*m/g, "").trimEnd();
const rows = input.rows.map(({ text, durationMs }) => {
  const context = {
    args: { command: "echo hi" }, toolCallId: "t1", invalidate() {}, lastComponent: undefined, state: {},
    cwd: "/", executionStarted: false, argsComplete: true, isPartial: false, expanded: false,
    showImages: false, isError: false, durationMs, outputPad: 1, keyText: (k) => k, keyHint: (k, d) => d,
  };
  const result = { content: [{ type: "text", text }], details: undefined };
  return shell.renderResult(result, { expanded: false, isPartial: false }, undefined, context).render(80).map(strip);
});
console.log(JSON.stringify({ durations: input.durations.map(formatToolDuration), rows }));
"""


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_finished_bash_rows_and_durations_match_real_pi():
    """pi's own bash renderer and duration formatting (run from the installed package) against tau's:
    the lines under the title, from the first output line (pi's row puts a spacer line above the output,
    tau's rows never do)."""
    bin_dir = Path(os.environ["PI_BIN"]).parent
    dist = bin_dir.parent / "@earendil-works" / "pi-coding-agent" / "dist"
    durations = [0, 49, 50, 950, 1050, 1250, 2350, 4200, 59_949, 59_950, 59_999, 60_000, 3_599_999, 7_384_000]
    cases = [("hi\n", 1500), ("one\ntwo\n", 61_000), ("done\n", 1250)]
    done = subprocess.run(
        [
            str(bin_dir / "node"),
            "--input-type=module",
            "-e",
            _PI_SCRIPT,
            str(dist),
            json.dumps({"durations": durations, "rows": [{"text": t, "durationMs": d} for t, d in cases]}),
        ],
        cwd=bin_dir.parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    pi = json.loads(done.stdout)
    assert [format_tool_duration(ms) for ms in durations] == pi["durations"]
    renderer = BlockRenderer(clock=FakeClock())
    for (text, duration), pi_row in zip(cases, pi["rows"], strict=True):
        block = ToolBlock(
            "t1", "bash", {"command": "echo hi"}, status="done", output=text, duration_ms=duration
        )
        block.result = {"content": [{"type": "text", "text": text}], "isError": False}
        ours = renderer.render([block], 80, color=False).rstrip("\n").split("\n")[1:]
        assert [line.rstrip()[2:] for line in ours] == pi_row[1:]
