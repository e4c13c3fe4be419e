"""End to end: one ``tau -p`` run, three ``todo`` tasks done in one turn (each task's work and its
completion without a stop, as a real model works), part 2 printing four 30 KB outputs; an economical
compaction at the second completion, after which the run continues by itself and finishes every task
(faux model, ObservationPack off, ``keepRecentTokens`` 2000)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from occ_planner import FINAL, SPEC, SUMMARY, SUMMARY_ASKS

from tau_process import run_tau


def run_print(
    tmp_path: Path, agent_dir: Path, settings: dict, env: dict | None = None
) -> tuple[subprocess.CompletedProcess, list[dict], list[dict]]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": SPEC}]))
    trace = tmp_path / "trace.jsonl"
    done = run_tau(
        ["-p", "--model", "faux/faux-1", "--faux-script", str(script), "Build the three parts"],
        cwd=project,
        env={"OCC_PLANNER_TRACE": str(trace), **(env or {})},
    )
    entries = [json.loads(line) for line in session_path(agent_dir).read_text().splitlines()]
    requests = [json.loads(line) for line in trace.read_text().splitlines()]
    return done, entries, requests


def session_path(agent_dir: Path) -> Path:
    (session_file,) = [
        p for p in (agent_dir / "sessions").rglob("*.jsonl") if p.parent.name != "observation-pack"
    ]
    return session_file


SETTINGS = {
    "sol": {"onlineContextCompact": True},
    "compaction": {"keepRecentTokens": 2000},
    "disabledExtensions": ["observation-pack"],
}


def test_a_boundary_compaction_continues_by_itself_to_the_end(tmp_path, isolated_agent_dir):
    done, entries, requests = run_print(tmp_path, isolated_agent_dir, SETTINGS)
    assert (done.returncode, done.stdout) == (0, f"{FINAL}\n")
    # stderr holds only todo-loop's continuation notices (issue 19)
    assert all(line.startswith("todo-loop: continuing, ") for line in done.stderr.splitlines()), done.stderr
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    # one turn: the cut is inside it, so the summary is the split turn's (no history before the turn)
    assert compaction["summary"].startswith(
        f"No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n{SUMMARY.rstrip()}"
    )
    assert [e["message"]["role"] for e in entries if e["type"] == "message"].count("user") == 1
    reminders = [
        e
        for e in entries
        if e["type"] == "custom_message" and e["customType"] == "sol-pi-online-context-compact"
    ]
    assert [(r["content"], r["display"]) for r in reminders] == [
        (
            "Online context compaction finished. The parent task is still active. Continue the remaining work "
            "from the current plan. Preserve existing step IDs when updating progress.",
            False,
        )
    ]
    # the reminder follows the compaction (only OCC's state snapshot between them)
    index = {e["id"]: n for n, e in enumerate(entries) if "id" in e}
    # the compaction kept the boundary's plan update: the step before it is gone
    kept = next(e for e in entries[index[compaction["firstKeptEntryId"]] :] if e["type"] == "message")[
        "message"
    ]
    assert kept["role"] == "assistant" and kept["content"][0]["text"] == "Built part 2."
    between = entries[index[compaction["id"]] + 1 : index[reminders[0]["id"]]]
    assert [e.get("customType") for e in between] == ["sol-pi-online-context-state-v1"]
    # the compaction came at the second completion: part 1 and part 2 done before it, part 3 after
    states = [e for e in entries if e.get("customType") == "pi-todo:state"]
    done_before = [s for s in states if index[s["id"]] < index[compaction["id"]]][-1]["data"]["tasks"]
    assert [t["status"] for t in done_before] == ["completed", "completed", "pending"]
    assert [t["status"] for t in states[-1]["data"]["tasks"]] == ["completed"] * 3
    # the stopped run: the update's result, the aborted request, then the compaction
    messages = [e for e in entries[: index[compaction["id"]]] if e["type"] == "message"]
    assert messages[-2]["message"]["role"] == "toolResult" and messages[-2]["message"]["toolName"] == "todo"
    assert (messages[-1]["message"]["stopReason"], messages[-1]["message"]["content"]) == ("aborted", [])
    # the compaction's cache debt is recorded, and paid back by the requests after it
    (recorded,) = [e["data"] for e in between]
    assert recorded["nativeCompactionCount"] == 1 and recorded["epoch"] == 1
    assert recorded["cacheDebtTokens"] > 0 and recorded["cacheDebtRepaymentTokens"] >= 1000
    final_state = [e["data"] for e in entries if e.get("customType") == "sol-pi-online-context-state-v1"][-1]
    assert final_state["cacheDebtTokens"] < recorded["cacheDebtTokens"]
    # the summarizer got the progress of part 2 as untrusted evidence
    summarizers = [r for r in requests if any(ask in json.dumps(r["messages"][-1]) for ask in SUMMARY_ASKS)]
    (summarizer,) = summarizers  # one turn: only the turn prefix is summarized
    prompt = json.dumps(summarizer["messages"][-1])
    assert "untrusted-progress-evidence" in prompt and "part 2 step 4" in prompt
    # cache-friendly: the request the agent sent last, the messages since and the instruction, with
    # the agent's system prompt and tools; nearly all of it read from the cache
    before = requests[: requests.index(summarizer)]
    assert (
        summarizer["systemPrompt"] == before[-1]["systemPrompt"]
        and summarizer["tools"] == before[-1]["tools"]
    )
    assert summarizer["messages"][: len(before[-1]["messages"])] == before[-1]["messages"]
    usage = compaction["usage"]
    assert usage["cacheRead"] >= 0.9 * (usage["input"] + usage["cacheRead"] + usage["cacheWrite"])
    # after the compaction the model no longer sees part 2's output
    after = requests[requests.index(summarizer) + 1 :]
    assert "1" * 30_000 in json.dumps(before[-1]["messages"])
    assert after and all("1" * 1000 not in json.dumps(r["messages"]) for r in after)
    # both boundaries are recorded with their figures, and `tau session info` shows them
    decisions = [e["data"] for e in entries if e.get("customType") == "sol-pi-online-context-decision-v1"]
    assert [(d["compact"], d["reason"]) for d in decisions] == [
        (False, "non_positive_saving"),  # part 1: one echo
        (True, "economic"),  # part 2: four 30 KB outputs
        (False, "non_positive_saving"),  # part 3: one echo since the compaction
    ]
    assert decisions[1]["archiveTokens"] > 30_000
    info = run_tau(["session", "info", str(session_path(isolated_agent_dir))], check=True).stdout
    assert f"online compact  {len(decisions)} boundaries, 1 compacted" in info
    assert "  2. compact (economic): W " in info and "  1. keep (non_positive_saving): W " in info


def test_without_online_compact_the_same_run_never_compacts(tmp_path, isolated_agent_dir):
    done, entries, _ = run_print(tmp_path, isolated_agent_dir, {**SETTINGS, "sol": {}})
    assert (done.returncode, done.stdout) == (0, f"{FINAL}\n")
    assert [e for e in entries if e["type"] == "compaction"] == []


def test_a_turn_prefix_summary_at_its_token_cap_is_a_skip(tmp_path, isolated_agent_dir):
    """Issue 33, item 3 (seed 003): pi's incomplete-summary token-cap error resumes the task as a
    skip, for the turn prefix's summary too (one turn: it is the only summary call)."""
    done, entries, _ = run_print(tmp_path, isolated_agent_dir, SETTINGS, {"OCC_PLANNER_SUMMARY_CAPPED": "1"})
    assert (done.returncode, done.stdout) == (0, f"{FINAL}\n")
    assert "extension error" not in done.stderr.lower() and "did not complete" not in done.stderr
    assert [e for e in entries if e["type"] == "compaction"] == []
    skips = [e["data"] for e in entries if e.get("customType") == "sol-pi-online-context-compact-skipped"]
    # the first boundary that compacts: its only summary is the turn prefix's; a later one (with
    # history before its turn by then) stops at the history summary's cap
    assert skips[0] == {
        "reason": "Turn prefix summarization failed: generation hit the token cap and the summary is incomplete"
    }
    cap = "failed: generation hit the token cap and the summary is incomplete"
    assert all(skip["reason"].endswith(cap) for skip in skips)
    reminders = [
        e["content"]
        for e in entries
        if e["type"] == "custom_message" and e["customType"] == "sol-pi-online-context-compact"
    ]
    assert reminders == [
        "Online context compaction was skipped. The existing context is still available. Continue the "
        "remaining work from the current plan."
    ] * len(skips)
    states = [e for e in entries if e.get("customType") == "pi-todo:state"]
    assert [t["status"] for t in states[-1]["data"]["tasks"]] == ["completed"] * 3
