"""Issue 30: codemode in tau runs the scripts real pi 1.6 runs, with the same events, session files
and contexts, and sessions resume in both directions.

Each scenario of ``pi30_runs.py`` was run through pi 1.6 (``data/pi30/<name>.json``); tau runs it the
same way and the two runs are compared whole, modulo ids, times, durations, usage estimates,
system-prompt texts, wall-time figures, temp-file names and the docs path the codemode description
names (``pi30_runs.comparable``). ``PI_BIN=/work/pi-run/node_modules/.bin/pi`` also re-runs pi: on
each scenario and on a session tau just wrote.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path

import pytest
from pi30_runs import (
    DATA,
    SCENARIOS,
    comparable,
    load_golden,
    run_pi,
    run_tau,
    without_system,
)

pytest.importorskip("quickjs")

_RUNS: dict[str, dict] = {}
FIRST_RUNS = sorted(name for name, scenario in SCENARIOS.items() if scenario.resumes is None)
PI_BIN = os.environ.get("PI_BIN")


def _tau(name: str, resume: list | None = None, of: str = "") -> dict:
    """tau's run of ``name``, continuing ``resume`` (the session ``of`` names) when given."""
    key = f"{name}:{of}"
    if key not in _RUNS:
        # A scratch folder named like the goldens' (/tmp/pi30-XXXXXXXX): texts keep their lengths.
        with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
            _RUNS[key] = dataclasses.asdict(run_tau(SCENARIOS[name], Path(tmp), resume))
    return comparable(_as_run(_RUNS[key]))


def _as_run(data: dict):
    from pi22_runs import Run

    return Run(**data)


def _records(run: dict, kind: str) -> list[dict]:
    return [record for record in run["stdout"] if record.get("type") == kind]


@pytest.mark.parametrize("name", FIRST_RUNS)
def test_run_equals_pi(name):
    tau, pi = _tau(name), comparable(load_golden(name))
    assert tau == pi
    assert json.dumps(tau) == json.dumps(pi)  # fields in pi's order too


def test_tau_resumes_its_session_as_pi_resumes_its_own():
    """``store`` then ``resume-store`` in tau equals the same in pi: load() sees the stored values."""
    first = _tau("store")
    assert first == comparable(load_golden("store"))
    tau_session = _RUNS["store:"]["session"]
    assert _tau("resume-store", tau_session, of="tau") == comparable(load_golden("resume-store"))


def test_tau_resumes_a_pi_session():
    """tau continues pi's session: the same events and entries as pi continuing it, but for the
    system message declaring tau's own prompt texts."""
    resumed = _tau("resume-store", load_golden("store").session, of="pi")
    expected = comparable(load_golden("resume-store"))
    assert without_system(resumed) == without_system(expected)
    systems = [r["message"] for r in _records(resumed, "message_end") if r["message"]["role"] == "system"]
    assert len(systems) == 1  # tau's sections; the codemode declaration names tau's docs


def test_pi_resumed_a_tau_session():
    """The committed golden of pi continuing a session tau wrote: the same as pi continuing its own,
    but for pi's system message; and tau still writes that session."""
    crossed = comparable(load_golden("resume-store.pi-resumes-tau"))
    expected = comparable(load_golden("resume-store"))
    assert without_system(crossed) == without_system(expected)
    written = json.loads((DATA / "store.tau-session.json").read_text())
    assert (
        _tau("store")["session"]
        == comparable(dataclasses.replace(load_golden("store"), session=written))["session"]
    )


def test_the_loaded_values_are_the_stored_ones():
    """What the resumed script printed, on pi's golden: the stored cursor and note, not the deleted key."""
    run = comparable(load_golden("resume-store"))
    (end,) = [r for r in _records(run, "tool_execution_end") if r["toolName"] == "codemode"]
    text = "".join(block["text"] for block in end["result"]["content"])
    assert '{"cursor":{"page":2,"ids":[1,2,3]},"note":"kept","gone":null}' in text
    stores = [e["data"] for e in run["session"] if e.get("customType") == "codemode-store"]
    assert stores == [
        {"set": {"cursor": {"page": 2, "ids": [1, 2, 3]}, "note": "kept"}, "delete": ["gone"]},
        {"set": {"note": "changed"}, "delete": []},
    ]


def test_the_comparison_notices_a_changed_record():
    golden = load_golden("console")
    changed = [line.replace("<console_output>", "<console>") for line in golden.stdout]
    assert comparable(dataclasses.replace(golden, stdout=changed)) != comparable(golden)
    assert comparable(dataclasses.replace(golden, stdout=golden.stdout[:-1])) != comparable(golden)


# -- with real pi (PI_BIN) ------------------------------------------------------------------------


@pytest.mark.skipif(not PI_BIN, reason="set PI_BIN to real pi 1.6 to re-run it")
@pytest.mark.parametrize("name", FIRST_RUNS)
def test_pi_still_runs_the_scenario_as_the_golden(name):
    with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
        run = run_pi(SCENARIOS[name], Path(tmp), PI_BIN)
    assert comparable(run) == comparable(load_golden(name))


@pytest.mark.skipif(not PI_BIN, reason="set PI_BIN to real pi 1.6 to re-run it")
def test_pi_resumes_the_session_tau_writes_now():
    _tau("store")
    with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
        crossed = run_pi(SCENARIOS["resume-store"], Path(tmp), PI_BIN, _RUNS["store:"]["session"])
    assert without_system(comparable(crossed)) == without_system(comparable(load_golden("resume-store")))
