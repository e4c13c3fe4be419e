"""Issue 7 (todo-loop): docs/extensions/todo-loop.md states the texts and settings the code uses.

The two marker sentences, the marker's type, the ``todo_loop_block`` tool (description, schema,
results), the settings and their messages, the stop reasons and the ``/todoloop`` status lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tau.bundled.todo_loop import loop, marker, state
from tau.common import jsjson

DOC = (Path(__file__).resolve().parents[2] / "docs" / "extensions" / "todo-loop.md").read_text(
    encoding="utf-8"
)
FLAT = " ".join(DOC.split())


def test_the_marker_and_its_two_sentences():
    assert f'`customType: "{marker.MARKER_TYPE}"`' in DOC
    assert f"- `{marker.NUDGE}`" in DOC
    second = marker.NUDGE_WITH_BLOCK.removeprefix(marker.NUDGE)
    assert f"the same followed by `{second}`" in DOC
    assert marker.marker_draft(with_block=False)["display"] is False and "`display: false`" in DOC


@pytest.mark.parametrize(("with_block", "documented"), [(False, 220), (True, 310)])
def test_the_documented_size_of_a_marker_entry(with_block, documented):
    entry = {
        **marker.marker_draft(with_block=with_block),
        "id": "e589d0fd",
        "parentId": "f7ad5746",
        "timestamp": "2026-11-30T02:22:19.167Z",
    }
    size = len(jsjson.dumps(entry)) + 1
    assert "about 220 bytes in the session file (310 with the second sentence)" in FLAT
    assert abs(size - documented) <= 0.05 * documented, (
        f"a marker line is {size} bytes, the doc says {documented}"
    )


def test_the_block_tool_as_documented():
    assert f"Description: `{loop.BLOCK_DESCRIPTION}`" in FLAT
    schema = re.search(r"Parameters \(hand-written JSON Schema\): `([^`]+)`", FLAT).group(1)
    assert json.loads(schema) == loop.BLOCK_PARAMETERS
    assert f"the error result `{loop.NOT_RUNNING}`" in FLAT
    assert "`todo loop stopped until the next human message: <reason>`" in FLAT


def test_the_stop_reasons_as_documented():
    assert f"| `{state.round_cap(7).replace('7', 'N')}` |" in DOC
    assert f"| `{state.stalled(7).replace('7', 'N')}` |" in DOC
    assert f"| `{state.blocked('R').replace('R', '<reason>')}` |" in DOC
    assert "`state: running | paused | disabled (kill switch) | stopped: <reason>`" in DOC


def test_the_settings_defaults_and_message_as_documented():
    limits, problems = state.Limits.from_settings({})
    assert (limits.max_rounds, limits.max_stalls) == (state.DEFAULT_MAX_ROUNDS, 3) == (25, 3)
    assert f"| `todoLoop.maxStalls` | positive integer | `{state.DEFAULT_MAX_STALLS}` |" in DOC
    assert "| `todoLoop.maxRounds` | non-negative integer (`0`: no cap) | `25` |" in DOC
    user_file = "/home/me/.tau/agent/settings.json"
    _, problems = state.Limits.from_settings({"todoLoop": {"maxRounds": "20"}}, user_file)
    assert problems == [
        f'{user_file}: todoLoop.maxRounds must be a non-negative integer (0: no cap), got "20"; using the default 25'
    ]
    assert f"`{problems[0]}`" in FLAT


def test_the_notices_as_documented():
    from tau.bundled.todo_loop import notices
    from tau.bundled.todo_loop.tasks import Task, TaskList

    open_two = state.Observation(TaskList("pi-todo:state", None, (Task("a", "a", "pending"),) * 2), None)
    line = notices.continuing(open_two, 1, state.Limits())
    assert line == "todo-loop: continuing, 2 tasks open (round 1/25)" and f"`{line}`" in FLAT
    stop = notices.stopped(open_two, state.round_cap(25))
    assert stop == "todo-loop: stopped with 2 tasks open: round cap (25)" and f"`{stop}`" in FLAT


def test_the_new_stop_reasons_as_documented():
    for reason in (state.NOT_ACTIVE, state.HUMAN_IN_RUN, state.PAUSED):
        assert f"| `{reason}` |" in DOC, reason
    assert f"| `{state.unavailable('R').replace('R', '<reason>')}` |" in DOC
