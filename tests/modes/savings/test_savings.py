"""``tau savings``: the baseline is stock pi's projection of the file, counted independently here
from the raw JSON lines; the mechanisms save; the files are never written."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from tau.modes.savings import savings_for_file

REAL = ("before-compaction.v3.jsonl", "large-session.v3.jsonl")


def js_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _blocks(content, *, assistant: bool = False) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "thinking":
            parts.append(block["thinking"])
        elif block["type"] == "image":
            parts.append(f"[image:{block.get('mimeType')}:{js_len(block.get('data') or '')}]")
        elif block["type"] == "toolCall" and assistant:
            arguments = json.dumps(block["arguments"], separators=(",", ":"), ensure_ascii=False)
            parts.append(f"{block['name']}:{arguments}")
    return "\n".join(parts)


def rendered_chars(message: dict) -> int:
    """The characters of one message as the faux provider renders a request: ``role:text``."""
    role = message["role"]
    if role == "bashExecution":
        output = message.get("output")
        text = f"Ran `{message['command']}`\n" + (f"```\n{output}\n```" if output else "(no output)")
        if message.get("exitCode") not in (None, 0):
            text += f"\n\nCommand exited with code {message['exitCode']}"
        return js_len(f"user:{text}")
    if role == "compactionSummary":
        text = (
            "The conversation history before this point was compacted into the following summary:\n\n"
            f"<summary>\n{message['summary']}\n</summary>"
        )
        return js_len(f"user:{text}")
    if role == "toolResult":
        return js_len(
            "\n".join([f"toolResult:{message.get('toolName')}", *[_blocks([b]) for b in message["content"]]])
        )
    return js_len(f"{role}:{_blocks(message['content'], assistant=role == 'assistant')}")


def independent_count(path: Path) -> tuple[int, int]:
    """Requests and input tokens of a linear session file, straight from its lines.

    Every assistant message is a request; it is sent every message before it, except what a
    compaction replaced: after a compaction, the context is its summary, the messages from
    ``firstKeptEntryId`` on, and everything after it. Tokens: the request rendered as one text
    (``role:text`` per message, joined by blank lines), ceil(characters / 4).
    """
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    context: list[tuple[str, int]] = []  # (entry id, characters)
    requests = tokens = 0
    for entry in lines:
        if entry["type"] == "compaction":
            ids = [entry_id for entry_id, _ in context]
            kept = context[ids.index(entry["firstKeptEntryId"]) :] if entry["firstKeptEntryId"] in ids else []
            summary = {"role": "compactionSummary", "summary": entry["summary"]}
            context = [("summary", rendered_chars(summary)), *kept]
        if entry["type"] != "message":
            continue
        message = entry["message"]
        if message["role"] == "assistant":
            requests += 1
            chars = sum(count for _, count in context) + 2 * max(0, len(context) - 1)
            tokens += math.ceil(chars / 4)
        context.append((entry["id"], rendered_chars(message)))
    return requests, tokens


@pytest.fixture(scope="module")
def reports(request) -> dict[str, dict]:
    from fixture_paths import fixtures_dir

    found = fixtures_dir()
    if found is None:
        pytest.skip("pi golden fixtures not found: set TAU_FIXTURES")
    return {name: savings_for_file(found / "real" / name) for name in REAL}


@pytest.mark.parametrize("name", REAL)
def test_baseline_is_an_independent_count_of_requests_and_input(name, reports, pi_fixtures):
    requests, tokens = independent_count(pi_fixtures / "real" / name)
    report = reports[name]
    assert (report["requests"], report["baseline"]["inputTokens"]) == (requests, tokens)
    baseline = report["baseline"]
    assert baseline["cacheRead"] + baseline["cacheWrite"] == baseline["inputTokens"]


@pytest.mark.parametrize("name", REAL)
def test_the_default_profile_saves_and_keeps_every_replaced_byte_recallable(name, reports):
    report = reports[name]
    baseline, tau, mechanisms = report["baseline"], report["tau"], report["mechanisms"]
    assert tau["cost"] < min(mechanisms["actionFusion"]["cost"], mechanisms["observationPack"]["cost"])
    assert mechanisms["actionFusion"]["cost"] < baseline["cost"]
    assert mechanisms["observationPack"]["cost"] < baseline["cost"]
    fusion = mechanisms["actionFusion"]
    assert fusion["requests"] == baseline["requests"] - fusion["merged"] and fusion["merged"] > 0
    pack = mechanisms["observationPack"]
    assert pack["placeholders"] > 0 and pack["recallable"] == pack["placeholders"]
    assert pack["requests"] == baseline["requests"]


def test_json_has_one_object_per_file_and_the_files_are_not_written(tmp_path, pi_fixtures, run_tau):
    legacy = tmp_path / "sessions" / "legacy.jsonl"
    legacy.parent.mkdir()
    legacy.write_bytes((pi_fixtures / "real" / "large-session.jsonl").read_bytes())  # version 1
    before = hashlib.sha256(legacy.read_bytes()).hexdigest(), legacy.stat().st_mtime_ns
    done = run_tau(["--json", str(legacy.parent)], module="tau.modes.savings")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    report = json.loads(line)
    assert report["file"] == str(legacy) and report["requests"] == 453
    for side in ("baseline", "tau"):
        assert set(report[side]) >= {"inputTokens", "cacheRead", "cacheWrite", "outputTokens", "cost"}
    assert set(report["mechanisms"]) == {"actionFusion", "observationPack"}
    assert report["recorded"]["requests"] == 453 and round(report["recorded"]["cost"], 2) == 30.33
    assert (hashlib.sha256(legacy.read_bytes()).hexdigest(), legacy.stat().st_mtime_ns) == before
    assert sorted(p.name for p in legacy.parent.iterdir()) == ["legacy.jsonl"]


def test_a_missing_file_is_named_with_the_fix(tmp_path, run_tau):
    done = run_tau([str(tmp_path / "nope.jsonl")], module="tau.modes.savings", timeout=60)
    assert done.returncode == 2
    assert "no such file or directory" in done.stderr and "nope.jsonl" in done.stderr


@pytest.mark.parametrize("name", REAL)
def test_the_full_profile_adds_online_context_compact_and_names_what_it_cannot_measure(
    name, reports, pi_fixtures
):
    full = savings_for_file(pi_fixtures / "real" / name, profile="full")
    default = reports[name]
    assert full["baseline"] == default["baseline"]
    assert full["mechanisms"]["evidencePreservingReducer"]["measured"] is False
    occ = full["mechanisms"]["onlineContextCompact"]
    if not occ["measured"]:
        pytest.skip(f"Online Context Compact not measured: {occ['reason']}")
    assert occ["boundaries"] == "run ends" and occ["compactions"] > 0
    # one summary call per compaction, two for a split turn with history, each cache-friendly
    calls = occ["summaryCalls"]
    assert occ["compactions"] <= calls["requests"] <= 2 * occ["compactions"]
    assert calls["uncachedInput"] == 0 and calls["cacheRead"] > 10 * calls["cacheWrite"]
    assert sum(occ["decisions"].values()) >= occ["compactions"]
    assert full["tau"]["inputCost"] < default["tau"]["inputCost"] < default["baseline"]["inputCost"]
    extra = full["summaries"]["tau"]["requests"] - full["summaries"]["baseline"]["requests"]
    combined = full["combined"]["onlineContextCompact"]
    assert extra == combined["summaryCalls"]["requests"] >= combined["compactions"] > 0
    assert (
        full["combined"]["observationPack"]["recallable"]
        == full["combined"]["observationPack"]["placeholders"]
    )


@pytest.mark.parametrize("name", ["before-compaction", "large-session"])
def test_a_request_carries_what_pi_estimates_for_the_same_point_of_the_file(name, pi_fixtures):
    """pi 1.6's own ``estimateTokens`` per message (the context goldens) at every golden leaf."""
    from tau.modes.savings.replay import context_tokens
    from tau.session import SessionManager

    manager = SessionManager.open(pi_fixtures / "real" / f"{name}.v3.jsonl", read_only=True)
    goldens = sorted((pi_fixtures / "real").glob(f"{name}.context.*.json"))
    assert goldens
    for golden in goldens:
        data = json.loads(golden.read_text())
        branch = manager.get_branch(data["leafId"])
        expected = sum(item["tokens"] for item in data["tokenEstimates"]["perMessage"])
        assert context_tokens(branch) == expected, golden.name
    manager.close()


def test_a_pi_session_with_plan_completions_gets_occ_boundaries_from_them(pi_fixtures):
    # pi 1.6 with the rpiv-todo extension: one task goes from in_progress to completed
    report = savings_for_file(pi_fixtures / "scenarios" / "j-rpiv-todo.jsonl", profile="full")
    occ = report["mechanisms"]["onlineContextCompact"]
    assert (occ["boundaries"], occ["boundaryCount"]) == ("plan", 1)
    assert sum(occ["decisions"].values()) == 1  # the boundary was decided (too small to compact)
    assert occ["compactions"] == 0 and occ["summaryCalls"]["requests"] == 0
