"""Which tool results are packed, their identity, and the placeholder text (extensions.md §5.4)."""

from __future__ import annotations

import hashlib

from obspack_fakes import tool_result

from tau.bundled.obspack.observation import (
    THRESHOLD_BYTES,
    count_lines,
    estimate_tokens,
    is_observation_id,
    observation_of,
)
from tau.bundled.obspack.placeholder import placeholder_for

LARGE = "x" * (THRESHOLD_BYTES + 100)


def test_only_successful_text_results_over_10_kib_are_eligible():
    assert observation_of(tool_result("x" * THRESHOLD_BYTES)) is None  # strictly greater
    assert observation_of(tool_result("x" * (THRESHOLD_BYTES + 1))) is not None
    assert observation_of(tool_result("é" * 5121)) is not None  # 10,242 UTF-8 bytes, 5,121 characters
    assert observation_of(tool_result(LARGE, isError=True)) is None
    mixed = tool_result(LARGE)
    mixed["content"].append({"type": "image", "data": "AA==", "mimeType": "image/png"})
    assert observation_of(mixed) is None
    assert observation_of({"role": "user", "content": [{"type": "text", "text": LARGE}]}) is None
    assert observation_of(tool_result("", content=[])) is None


def test_reducer_receipts_pass_through_even_inside_fused_results():
    assert observation_of(tool_result(f"sol_pi_evidence_receipt_v1\n{LARGE}")) is None
    fused = tool_result("", tool="write")
    fused["content"] = [
        {"type": "text", "text": "Successfully wrote 12 bytes to target.ts"},
        {"type": "text", "text": f"[then_run:succeeded]\nsol_pi_evidence_receipt_v1\n{LARGE}"},
    ]
    assert observation_of(fused) is None
    # the marker inside a line is ordinary text
    assert observation_of(tool_result(f"see sol_pi_evidence_receipt_v1 here\n{LARGE}")) is not None


def test_the_id_hashes_tool_call_and_content_and_the_text_joins_blocks():
    message = tool_result("", call_id="toolu_1", tool="bash")
    message["content"] = [{"type": "text", "text": LARGE}, {"type": "text", "text": "tail"}]
    observation = observation_of(message)
    text = LARGE + "\ntail"
    content_hash = hashlib.sha256(text.encode()).hexdigest()
    expected = "obs_" + hashlib.sha256(f"bash\0toolu_1\0{content_hash}".encode()).hexdigest()[:24]
    assert observation.id == expected and is_observation_id(observation.id)
    assert observation.data == text.encode() and observation.content_hash == content_hash
    assert not is_observation_id("obs_" + "A" * 24) and not is_observation_id("obs_123")


def test_lines_and_tokens():
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "\n\n")] == [0, 1, 1, 2, 2]
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("😀") == 1  # two UTF-16 code units


def test_placeholder_is_stable_and_shows_whole_lines_within_the_budget():
    body = "head line\n" + "middle line\n" * 1000 + "tail line\n"
    observation = observation_of(tool_result(body))
    text = placeholder_for(observation)
    assert text == placeholder_for(observation_of(tool_result(body)))
    lines = text.split("\n")
    assert lines[:7] == [
        "[large tool result replaced after its first 2 provider requests]",
        f"id: {observation.id}",
        "tool: bash",
        f"original_bytes: {len(body)}",
        "original_lines: 1002",
        f"estimated_tokens: {-(-len(body) // 4)}",
        f'retrieve: call obs_recall with {{"id":"{observation.id}","offset":0}}; continue with returned next_offset',
    ]
    assert lines[7] == "[first complete lines, up to 512 bytes]"
    head = text.split("[first complete lines, up to 512 bytes]\n")[1].split("\n[middle omitted")[0]
    assert head.startswith("head line\nmiddle line\n") and len(head.encode()) <= 512
    assert head == body[: len(head)] and head.endswith("\n")
    tail = text.split("[middle omitted; last complete lines, up to 512 bytes]\n")[1].rsplit("\n[", 1)[0]
    assert body.endswith(tail) and tail.endswith("tail line\n") and len(tail.encode()) <= 512
    assert text.endswith(f"[{len(body)} original bytes omitted]")


def test_placeholder_sizes_are_configurable():
    body = "".join(f"line {n:05d}\n" for n in range(2000))
    text = placeholder_for(observation_of(tool_result(body)), 2048, 1536)
    assert "[first complete lines, up to 2048 bytes]" in text
    assert "[middle omitted; last complete lines, up to 1536 bytes]" in text
    head = text.split("up to 2048 bytes]\n")[1].split("\n[middle")[0]
    assert 2048 - 11 < len(head.encode()) <= 2048


def test_a_line_longer_than_the_budget_is_cut_on_a_code_point_boundary():
    one_line = "HEAD-MARKER" + "-pad" * 5000 + "TAIL-MARKER"
    text = placeholder_for(observation_of(tool_result(one_line)))
    head, tail = text.split("\n")[8], text.split("\n")[10]
    assert head.startswith("HEAD-MARKER") and len(head.encode()) == 512
    assert tail.endswith("TAIL-MARKER") and len(tail.encode()) == 512
    assert "[no complete line fits; first 512 bytes]" in text
    assert "[middle omitted; no complete line fits; last 512 bytes]" in text
    moons = placeholder_for(observation_of(tool_result("☾" * 20000)))
    for excerpt in (moons.split("\n")[8], moons.split("\n")[10]):
        assert excerpt and set(excerpt) == {"☾"} and len(excerpt.encode()) <= 512
