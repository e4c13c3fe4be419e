"""Token estimates equal pi 1.6's on every golden context, and the threshold and settings behave as pi's."""

from __future__ import annotations

import pytest
from compaction_goldens import branch_of, read_json

from tau.agent.compaction import (
    BranchSummarySettings,
    CompactionSettings,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)
from tau.session.projection import build_session_projection

GOLDEN_CONTEXTS = [
    "real/before-compaction.context.json",
    "real/before-compaction.context.29100146.json",
    "real/before-compaction.context.417adb5c.json",
    "real/before-compaction.context.47f17ec8.json",
    "real/before-compaction.context.e80c2c30.json",
    "real/before-compaction.context.f90a389f.json",
    "real/large-session.context.json",
    "real/large-session.context.1e4b0d5e.json",
    "real/large-session.context.4c95b7cc.json",
    "real/large-session.context.5c36a3ef.json",
    "real/large-session.context.5d7ab417.json",
    "real/large-session.context.fe00178e.json",
    *(
        f"scenarios/{name}.context.json"
        for name in (
            "a-plain-text",
            "b-parallel-tools",
            "c-turn-end-continue",
            "d-threshold-compaction",
            "d2-compaction-split-turn-update",
            "e-tree-branch-summary",
            "f-labels-session-info",
            "g-custom-entries",
            "h-retry",
            "i-edit-write",
            "j-rpiv-todo",
        )
    ),
    "scenarios/e-tree-branch-summary.context.3249d4bb.json",
]


@pytest.mark.parametrize("golden", GOLDEN_CONTEXTS)
def test_estimates_match_pi_on_golden_context(pi_fixtures, golden):
    expected = read_json(pi_fixtures / golden)
    branch = branch_of(pi_fixtures / expected["source"], expected["leafId"])
    projection = build_session_projection(branch)
    estimates = expected["tokenEstimates"]

    per_message = [{"role": m["role"], "tokens": estimate_tokens(m)} for m in projection["messages"]]
    assert per_message == estimates["perMessage"]
    assert estimate_context_tokens(projection["messages"]) == estimates["estimateContextTokens"]
    assert (
        estimate_projected_context_tokens(projection, branch) == estimates["estimateProjectedContextTokens"]
    )


def _assistant(content, *, usage_total=0, stop="stop"):
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage_total, "cost": {}}
    return {"role": "assistant", "content": content, "usage": usage, "stopReason": stop}


def test_characters_are_utf16_units_and_images_count_4800():
    # "😀" is two UTF-16 code units, as JavaScript's length counts it: 2 + 1 characters → 1 token.
    assert estimate_tokens({"role": "user", "content": "😀a"}) == 1
    assert estimate_tokens({"role": "user", "content": "😀😀a"}) == 2
    image = {"type": "image", "data": "x" * 100_000, "mimeType": "image/png"}
    assert (
        estimate_tokens({"role": "toolResult", "content": [image, {"type": "text", "text": "abcd"}]}) == 1201
    )
    assert estimate_tokens({"role": "custom", "content": [image]}) == 1200


def test_assistant_counts_text_thinking_and_tool_calls_as_json():
    message = _assistant(
        [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "ok"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}},
        ]
    )
    # 3 + 2 + len("read") + len('{"path":"a.txt"}') = 5 + 4 + 16 = 25 → 7 tokens
    assert estimate_tokens(message) == 7


def test_other_roles():
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "a\nb"}) == 2
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 9}) == 3
    assert estimate_tokens({"role": "branchSummary", "summary": ""}) == 0
    system = {"role": "system", "content": "abcd", "sections": {"a": "efgh", "b": None}, "toolsAdded": []}
    assert estimate_tokens(system) == 3  # 4 + 4 + len("[]")
    assert estimate_tokens({"role": "mystery", "content": "long text"}) == 0


def test_context_estimate_skips_error_and_zero_usage():
    messages = [
        {"role": "user", "content": "a" * 40},
        _assistant([{"type": "text", "text": "b" * 8}], usage_total=500),
        {"role": "user", "content": "c" * 8},
        _assistant([{"type": "text", "text": "d" * 8}], usage_total=900, stop="error"),
        _assistant([{"type": "text", "text": "e" * 8}], usage_total=0),
    ]
    assert estimate_context_tokens(messages) == {
        "tokens": 506,
        "usageTokens": 500,
        "trailingTokens": 6,
        "lastUsageIndex": 1,
    }
    assert estimate_context_tokens(messages[:1]) == {
        "tokens": 10,
        "usageTokens": 0,
        "trailingTokens": 10,
        "lastUsageIndex": None,
    }


def test_last_assistant_usage_from_entries():
    entries = [
        {"type": "message", "message": _assistant([], usage_total=7)},
        {"type": "message", "message": _assistant([], usage_total=9, stop="aborted")},
        {"type": "label", "label": "x"},
    ]
    assert get_last_assistant_usage(entries)["totalTokens"] == 7
    assert get_last_assistant_usage(entries[1:]) is None


def test_threshold_is_strictly_above_window_minus_reserve():
    settings = CompactionSettings(reserve_tokens=500)
    assert not should_compact(1500, 2000, settings)
    assert should_compact(1501, 2000, settings)
    assert not should_compact(10**6, 2000, CompactionSettings(enabled=False))


def test_settings_defaults_and_model_overrides():
    assert CompactionSettings() == CompactionSettings(
        enabled=True, reserve_tokens=16384, keep_recent_tokens=20000
    )
    assert BranchSummarySettings() == BranchSummarySettings(reserve_tokens=16384, skip_prompt=False)
    raw = {
        "compaction": {
            "enabled": False,
            "reserveTokens": 1000,
            "modelOverrides": {"faux/faux-1": {"keepRecentTokens": 250}},
        },
        "branchSummary": {"skipPrompt": True},
    }
    assert CompactionSettings.from_settings(raw, "faux/faux-1") == CompactionSettings(False, 1000, 250)
    assert CompactionSettings.from_settings(raw, "other/model") == CompactionSettings(False, 1000, 20000)
    assert CompactionSettings.from_settings({}) == CompactionSettings()
    assert BranchSummarySettings.from_settings(raw) == BranchSummarySettings(16384, True)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"compaction": {"reserveTokens": -1}}, "Invalid compaction.reserveTokens setting: -1."),
        ({"compaction": {"keepRecentTokens": 1.5}}, "Invalid compaction.keepRecentTokens setting: 1.5."),
        (
            {"compaction": {"modelOverrides": {"p/m": 3}}},
            'Invalid compaction.modelOverrides["p/m"] setting: 3.',
        ),
        (
            {"compaction": {"modelOverrides": {"p/m": {"reserveTokens": "9"}}}},
            'Invalid compaction.modelOverrides["p/m"].reserveTokens setting: 9.',
        ),
    ],
)
def test_invalid_token_settings_name_the_setting(raw, message):
    with pytest.raises(ValueError) as error:
        CompactionSettings.from_settings(raw, "p/m")
    assert str(error.value).startswith(message)
