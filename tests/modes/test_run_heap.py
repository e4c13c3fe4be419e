"""In tau's own process the loaded heap is frozen and the collector's young generation scales with it
(issue 28: a resumed session's first request builds about as many lasting objects as were loaded,
and young passes over them found nothing)."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path
from typing import Any

from tau.modes.run import run_thresholds

SPEC = f"{Path(__file__).resolve()}:record_heap"


def record_heap(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A faux factory step (it runs in tau's process): the collector's state, then a reply."""
    state = {"threshold": gc.get_threshold(), "frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}
    Path(os.environ["TAU_TEST_HEAP"]).write_text(json.dumps(state))
    return [{"text": "ok"}]


def test_the_young_generation_holds_twice_the_loaded_heap():
    assert run_thresholds(0) == (10_000, 10, 100)  # a floor for an empty heap
    assert run_thresholds(400_000) == (800_000, 10, 100)


def test_a_print_run_freezes_the_loaded_heap_and_scales_the_young_threshold(run_tau, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": SPEC}]))
    out = tmp_path / "heap.json"
    done = run_tau(
        ["-p", "--model", "faux/faux-1", "--faux-script", str(script), "hi"], env={"TAU_TEST_HEAP": str(out)}
    )
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    state = json.loads(out.read_text())
    assert state["enabled"] and state["frozen"] > 10_000
    # (frozen objects freed since the freeze leave the count: it only shrinks)
    young, middle, old = state["threshold"]
    assert (middle, old) == (10, 100) and young >= 2 * state["frozen"]
