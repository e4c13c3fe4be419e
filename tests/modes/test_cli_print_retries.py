"""Retries in print mode, as real pi 1.6 shows them (issue 32's audit).

pi's print mode subscribes to no session event: while a transient error is retried nothing is
printed, and when the retries give up the last message's error is the one line on stderr (exit 1).
The terminal shows each wait and the give-up line (``interactive/test_interactive_retry.py``); JSON
mode carries them as ``auto_retry_start {delayMs}`` / ``auto_retry_end {success, finalError}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pi32 import prepare, run

PROMPT = "fail: 503 overloaded_error: Overloaded"
SETTINGS = {"retry": {"baseDelayMs": 10, "maxRetries": 2}}
# What real pi 1.6 printed for this run (PI_BIN=/work/pi-run/node_modules/.bin/pi, 2026-12-07).
PI_GOLDEN = {"code": 1, "stdout": "", "stderr": "503 overloaded_error: Overloaded\n"}


def retry_run(program: str, base: Path, pi_bin: str | None = None, mode: list[str] | None = None) -> dict:
    prepare(base)
    (base / "agent" / "settings.json").write_text(json.dumps(SETTINGS))
    done = run(program, [*(mode or ["-p"]), PROMPT], base, pi_bin=pi_bin)
    return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def test_print_mode_says_only_the_final_error_as_pi_does(tmp_path):
    assert retry_run("tau", tmp_path) == PI_GOLDEN


def test_json_mode_carries_each_wait_and_the_give_up(tmp_path):
    done = retry_run("tau", tmp_path, mode=["--mode", "json"])
    events = [json.loads(line) for line in done["stdout"].splitlines()]
    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert [(e["attempt"], e["maxAttempts"]) for e in starts] == [(1, 2), (2, 2)]
    assert all(isinstance(e["delayMs"], int) and e["delayMs"] >= 10 for e in starts)
    [end] = [e for e in events if e["type"] == "auto_retry_end"]
    assert end["success"] is False and end["attempt"] == 2
    assert end["finalError"] == "503 overloaded_error: Overloaded"


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_print_mode_retries_against_real_pi(tmp_path):
    assert retry_run("tau", tmp_path / "tau") == retry_run("pi", tmp_path / "pi", os.environ["PI_BIN"])


def _retry_events(result: dict) -> list[dict]:
    events = [json.loads(line) for line in result["stdout"].splitlines()]
    keep = ("auto_retry_start", "auto_retry_end")
    return [{k: v for k, v in e.items() if k != "delayMs"} for e in events if e["type"] in keep]


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_json_retry_events_against_real_pi(tmp_path):
    mode = ["--mode", "json"]
    ours = retry_run("tau", tmp_path / "tau", mode=mode)
    theirs = retry_run("pi", tmp_path / "pi", os.environ["PI_BIN"], mode=mode)
    assert _retry_events(ours) == _retry_events(theirs) != []
