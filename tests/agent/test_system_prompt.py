"""The structured system prompt matches pi 1.6's sections (tau's own preamble and docs aside)."""

from __future__ import annotations

import json

from tau.agent.system_prompt import (
    DEFAULT_PREAMBLE,
    PromptOptions,
    build_sections,
    diff_sections,
    render_prompt,
)

GUIDELINES = {
    "read": ["Use read to examine files instead of cat or sed."],
    "bash": ["You can inspect PI_* environment variables for current model and session details."],
    "edit": [
        "Use edit for targeted changes. Batch changes to one file in a single call.",
        "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and "
        "non-overlapping; merge nearby changes without including large unchanged regions.",
    ],
    "write": ["Use write only for new files or complete rewrites."],
}
SNIPPETS = {
    "read": "Read file contents",
    "bash": "Execute bash commands (ls, grep, find, etc.)",
    "edit": "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
    "write": "Create or overwrite files",
}


def pi_system_message(pi_fixtures):
    for line in (pi_fixtures / "scenarios" / "a-plain-text.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message" and entry["message"]["role"] == "system":
            return entry["message"]
    raise AssertionError("no system message in the fixture")


def test_sections_match_pi_apart_from_preamble_and_docs(pi_fixtures):
    pi = pi_system_message(pi_fixtures)["sections"]
    ours = build_sections(PromptOptions(cwd="/tmp/proj", tool_snippets=SNIPPETS, tool_guidelines=GUIDELINES))
    assert list(ours) == list(pi)
    for name in ("tools", "rules", "cwd"):
        assert ours[name] == pi[name], name
    assert ours["preamble"] == DEFAULT_PREAMBLE
    assert ours["docs"].startswith("<docs>\ntau documentation")


def test_custom_prompt_keeps_only_the_preamble_and_optional_sections():
    sections = build_sections(PromptOptions(cwd="C:\\w", custom_prompt="Be brief.", append_prompt="Extra."))
    assert sections == {
        "preamble": "Be brief.",
        "addendum": "<addendum>\nExtra.\n</addendum>",
        "cwd": "<cwd>\nC:/w\n</cwd>",
    }


def test_diff_and_render():
    old = {"preamble": "p", "tools": "<tools>\nt\n</tools>"}
    new = {"preamble": "p", "cwd": "<cwd>\n/x\n</cwd>"}
    assert diff_sections(old, new) == {"cwd": "<cwd>\n/x\n</cwd>", "tools": None}
    assert diff_sections(new, new) is None
    assert render_prompt("", {"a": "A", "b": None, "c": "C"}) == "A\n\nC"
