"""tau writes what pi writes: each pi scenario replayed through tau's append API gives pi's file.

Every entry of a golden session (written by pi 1.6) is appended again through ``SessionManager``
in file order, on the same parent. tau's file must then equal pi's byte for byte, once tau's ids,
session id and times are renamed to pi's (those are random or the clock's). This covers the field
order of every entry type in the goldens: model and thinking changes, messages, compactions with
their replayed system message, branch summaries, custom entries and messages, context edits,
labels (set and cleared) and session names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.session import SessionManager
from tau.session.jsonl import encode

SCENARIOS = [
    "../rpc/rpc-session.session",
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
]
ID_KEYS = ("id", "parentId", "targetId", "firstKeptEntryId", "fromId")


def replay(manager: SessionManager, entry: dict, ids: dict[str, str]) -> str:
    """Append ``entry`` (a pi entry) through tau's API on the tau twin of its parent; returns tau's id."""
    kind = entry["type"]
    mapped = lambda key: ids[entry[key]]  # noqa: E731
    if kind == "branch_summary":
        manager.branch(ids[entry["fromId"]]) if entry["fromId"] != "root" else manager.reset_leaf()
        parent = ids[entry["parentId"]] if entry["parentId"] is not None else None
        return manager.branch_with_summary(
            parent, entry["summary"], entry.get("details"), entry.get("fromHook"), entry.get("usage")
        )
    if entry["parentId"] is None:
        manager.reset_leaf()
    else:
        manager.branch(mapped("parentId"))
    if kind == "model_change":
        return manager.append_model_change(entry["provider"], entry["modelId"])
    if kind == "thinking_level_change":
        return manager.append_thinking_level_change(entry["thinkingLevel"])
    if kind == "message":
        return manager.append_message(entry["message"])
    if kind == "custom":
        return manager.append_custom_entry(entry["customType"], entry.get("data"))
    if kind == "custom_message":
        return manager.append_custom_message_entry(
            entry["customType"], entry["content"], entry["display"], entry.get("details")
        )
    if kind == "context_edit":
        return manager.append_context_edit(mapped("targetId"), entry["replacement"])
    if kind == "label":
        return manager.append_label_change(mapped("targetId"), entry.get("label"))
    if kind == "session_info":
        return manager.append_session_info(entry["name"])
    if kind == "compaction":
        own = entry["firstKeptEntryId"] == entry["id"]
        return manager.append_compaction(
            entry["summary"],
            None if own else mapped("firstKeptEntryId"),
            entry["tokensBefore"],
            entry.get("details"),
            entry.get("fromHook"),
            entry.get("usage"),
        )
    raise AssertionError(f"no replay for {kind}")


def renamed(line: dict, twin: dict, pi_of: dict[str, str]) -> dict:
    """tau's ``line`` with pi's ids and times (taken from pi's ``twin`` line)."""
    out = dict(line)
    for key in ID_KEYS:
        if isinstance(out.get(key), str) and out[key] in pi_of:
            out[key] = pi_of[out[key]]
    out["timestamp"] = twin["timestamp"]
    if "systemMessage" in out:
        out["systemMessage"] = {**out["systemMessage"], "timestamp": twin["systemMessage"]["timestamp"]}
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_replayed_scenario_is_written_as_pi_wrote_it(pi_fixtures, tmp_path, name):
    pi_lines = (pi_fixtures / "scenarios" / f"{name}.jsonl").read_bytes().splitlines()
    pi_entries = [json.loads(line) for line in pi_lines]
    manager = SessionManager.create(pi_entries[0]["cwd"], tmp_path)
    ids: dict[str, str] = {}
    for entry in pi_entries[1:]:
        ids[entry["id"]] = replay(manager, entry, ids)
    manager.close()
    ours = Path(manager.get_session_file()).read_bytes().splitlines()
    assert len(ours) == len(pi_lines)
    header = json.loads(ours[0])
    assert (
        encode({**header, "id": pi_entries[0]["id"], "timestamp": pi_entries[0]["timestamp"]}) == pi_lines[0]
    )
    pi_of = {tau: pi for pi, tau in ids.items()}
    for number, (mine, theirs, twin) in enumerate(
        zip(ours[1:], pi_lines[1:], pi_entries[1:], strict=True), 2
    ):
        assert encode(renamed(json.loads(mine), twin, pi_of)) == theirs, f"{name}.jsonl line {number}"
