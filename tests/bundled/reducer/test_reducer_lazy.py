"""The reducer's modules load with the first tool result: a run that calls no tool never imports them
(issue 28: a resumed session's one prompt pays for what it uses)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

SPEC = f"{Path(__file__).resolve()}:respond"
REDUCER = "tau.bundled.reducer.reducer"


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A faux factory step (in tau's process): note whether the reducer is loaded, call once, then answer."""
    with open(os.environ["TAU_TEST_LOADED"], "a") as out:
        out.write(json.dumps(REDUCER in sys.modules) + "\n")
    if request["messages"][-1]["role"] == "toolResult":
        return [{"text": "done"}]
    return [{"bash": "echo hi"}, {"factory": SPEC}]


def test_the_reducer_loads_with_the_first_tool_result(run_tau, tmp_path, isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (isolated_agent_dir / "settings.json").write_text(json.dumps({"sol": {"evidenceExtractors": True}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": SPEC}]))
    loaded = tmp_path / "loaded.jsonl"
    done = run_tau(
        ["-p", "--model", "faux/faux-1", "--faux-script", str(script), "hi"],
        env={"TAU_TEST_LOADED": str(loaded)},
    )
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    # first request: no tool result yet; second: the bash result went through the reducer's handler
    assert [json.loads(line) for line in loaded.read_text().splitlines()] == [False, True]
