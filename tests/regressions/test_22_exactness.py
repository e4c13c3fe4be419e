"""Issue 22 (Exactness II): tau's CLI runs equal real pi 1.6's on the same scripted model.

Each scenario of ``pi22_runs.py`` was run through pi 1.6 (``data/pi22/<name>.json``, made with the
command in ``data/pi22/README.md``); tau runs it the same way and the two runs are compared whole,
modulo ids, timestamps, durations, usage estimates and system-prompt texts (``pi22_runs.comparable``).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from pi22_runs import PI_BEHAVIOUR, SCENARIOS, comparable, load_golden, run_tau

_RUNS: dict[str, dict] = {}


def _tau(name: str, tmp_path_factory) -> dict:
    if name not in _RUNS:
        _RUNS[name] = comparable(run_tau(SCENARIOS[name], tmp_path_factory.mktemp(name)))
    return _RUNS[name]


def _records(run: dict, kind: str) -> list[dict]:
    return [record for record in run["stdout"] if record.get("type") == kind]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_run_equals_pi(name, tmp_path_factory):
    tau, pi = _tau(name, tmp_path_factory), comparable(load_golden(name))
    assert tau == pi
    assert json.dumps(tau) == json.dumps(pi)  # the fields in pi's order too, as the lines carry them


def test_comparison_notices_a_changed_record():
    """Not vacuous: two events swapped, a missing event or one extra key is a difference."""
    golden = load_golden("abort-retry")
    lines = golden.stdout
    end = next(i for i, line in enumerate(lines) if '"auto_retry_end"' in line)
    swapped = [*lines[:end], lines[end + 1], lines[end], *lines[end + 2 :]]
    for changed in (swapped, lines[:-1]):
        assert comparable(dataclasses.replace(golden, stdout=changed)) != comparable(golden)
    compaction = load_golden("compact-fails")
    extra = [
        line.replace('"reason":"manual",', '"reason":"manual","result":null,') for line in compaction.stdout
    ]
    assert extra != compaction.stdout
    assert comparable(dataclasses.replace(compaction, stdout=extra)) != comparable(compaction)


def test_tau_runs_with_the_settings_that_restore_pi():
    """Where tau differs from pi on purpose, the differential runs use pi's behaviour (decisions.md)."""
    from tau.agent.compaction import CompactionSettings
    from tau.agent.session.retry import retry_policy
    from tau.agent.settings import Settings

    assert CompactionSettings.from_settings({}).cache_friendly is True
    assert CompactionSettings.from_settings(PI_BEHAVIOUR).cache_friendly is False
    assert retry_policy(Settings.in_memory()).honor_retry_after is True
    assert retry_policy(Settings.in_memory(PI_BEHAVIOUR)).honor_retry_after is False


# -- what each scenario pins, stated on pi's golden (so a regenerated golden is checked too) ----


def test_pi_never_calls_the_model_after_an_abort():
    """1: the request after an aborted bash call is never sent: zero usage, pi's DOMException text."""
    run = comparable(load_golden("abort-during-bash"))
    aborted = [
        r["message"] for r in _records(run, "message_end") if r["message"].get("stopReason") == "aborted"
    ]
    assert len(aborted) == 1
    assert aborted[0]["content"] == [] and aborted[0]["errorMessage"] == "This operation was aborted"
    assert aborted[0]["usage"]["totalTokens"] == 0


def test_pi_keeps_the_thinking_level_on_set_model():
    run = comparable(load_golden("set-model-keeps-level"))
    assert [r["level"] for r in _records(run, "thinking_level_changed")] == ["high"]
    states = [r["data"]["thinkingLevel"] for r in _records(run, "response") if r["command"] == "get_state"]
    assert states == ["medium", "high"]


def test_pi_trims_piped_stdin_and_joins_without_separator():
    run = comparable(load_golden("piped-stdin"))
    (user,) = [r["message"] for r in _records(run, "message_end") if r["message"]["role"] == "user"]
    assert user["content"] == [{"type": "text", "text": "piped text\r\nwith crlfpositional"}]


def test_pi_omits_result_of_a_failed_compaction():
    (end,) = _records(comparable(load_golden("compact-fails")), "compaction_end")
    assert "result" not in end and end["errorMessage"].startswith("Compaction failed: ")


def test_pi_ends_the_retry_before_answering_abort_retry():
    run = comparable(load_golden("abort-retry"))
    kinds = [r.get("command") or r["type"] for r in run["stdout"]]
    assert kinds[kinds.index("auto_retry_end") + 1] == "abort_retry"


def test_pi_streams_stdout_and_stderr_as_separate_updates():
    run = comparable(load_golden("bash-streams"))
    assert [r["delta"] for r in _records(run, "bash_execution_update")] == ["out\n", "err\n"]
    texts = [
        "".join(block["text"] for block in r["partialResult"]["content"])
        for r in _records(run, "tool_execution_update")
    ]
    assert texts == ["", "out\n", "out\nerr\n"]


def test_pi_parses_an_edits_string_into_the_live_call_only():
    run = comparable(load_golden("edit-json-string"))
    (start,) = _records(run, "tool_execution_start")
    assert isinstance(start["args"]["edits"], str)
    (turn_end, _) = _records(run, "turn_end")
    assert turn_end["message"]["content"][0]["arguments"]["edits"] == [
        {"oldText": "alpha", "newText": "beta"}
    ]
    stored = [
        e["message"] for e in run["session"] if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert isinstance(stored[0]["content"][0]["arguments"]["edits"], str)
    assert '"edits":[{' in stored[1]["content"][0]["text"]  # what the next request carried
