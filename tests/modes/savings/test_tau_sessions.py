"""``tau savings`` on tau's own sessions: what was billed, against stock pi with every mechanism undone.

Hand-made branches pin each rule (and each error the economy issue found); the end-to-end tests at
the bottom run benchmark tasks live and compare ``tau savings`` with the faux provider's bill.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import pytest

from tau.bundled.fusion.replay import fuse_branch
from tau.modes.savings import savings_for_branch
from tau.modes.savings.cost_model import Prices
from tau.modes.savings.report import render_table
from tau.modes.savings.undo import undo_branch

PRICES = Prices(1_000_000.0, 5_000_000.0, "test")  # one cost unit per input token, five per output token
BENCH = Path(__file__).resolve().parents[3] / "bench" / "economy"


def usage(uncached: int = 0, read: int = 0, write: int = 0, output: int = 0) -> dict:
    return {
        "input": uncached,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": uncached + read + write + output,
    }


class Branch:
    """Builds a linear branch entry by entry."""

    def __init__(self) -> None:
        self.entries: list[dict] = []
        self.system()

    def add(self, entry_type: str, **fields) -> dict:
        n = len(self.entries)
        entry = {
            "type": entry_type,
            "id": f"e{n:07d}",
            "parentId": self.entries[-1]["id"] if self.entries else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            **fields,
        }
        self.entries.append(entry)
        return entry

    def message(self, **message) -> dict:
        return self.add("message", message={"timestamp": len(self.entries) * 1000, **message})

    def system(self) -> None:
        tools = [
            {"name": "bash", "description": "Run", "parameters": {"type": "object", "properties": {}}},
            {
                "name": "edit",
                "description": "Edit",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "then_run": {"type": "object", "description": "x" * 400},
                    },
                },
            },
            {"name": "obs_recall", "description": "Recall " + "y" * 400, "parameters": {"type": "object"}},
        ]
        self.message(
            role="system", content="", sections={"preamble": "You are running inside tau."}, toolsAdded=tools
        )

    def user(self, text: str) -> None:
        self.message(role="user", content=[{"type": "text", "text": text}])

    def assistant(self, *calls, text: str | None = None, spent: dict | None = None, stop: str | None = None):
        content = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls
        ]
        self.message(
            role="assistant",
            content=content,
            api="faux",
            provider="faux",
            model="faux-1",
            usage=spent or usage(write=1000, output=10),
            stopReason=stop or ("toolUse" if calls else "stop"),
        )

    def result(self, call_id: str, name: str, *texts: str, error: bool = False, details: dict | None = None):
        fields = {"details": details} if details is not None else {}
        self.message(
            role="toolResult",
            toolCallId=call_id,
            toolName=name,
            content=[{"type": "text", "text": t} for t in texts],
            isError=error,
            **fields,
        )


def report_of(branch: Branch, archive: Path | None = None) -> dict:
    return savings_for_branch(branch.entries, "t.jsonl", override=PRICES, archive_root=archive)


# -- what was billed ---------------------------------------------------------------------------


def test_tau_cost_is_the_billed_total_of_agent_reducer_and_summary_calls():
    b = Branch()
    b.user("go")
    b.assistant(("c1", "bash", {"command": "pytest"}), spent=usage(read=100, write=900, output=20))
    b.add(
        "custom",
        customType="sol-pi-evidence-preserving-reducer-v1",
        data={
            "kind": "provider_response",
            "provider": "faux",
            "model": "faux-1",
            "usage": usage(uncached=4000, output=300),
        },
    )
    b.result("c1", "bash", "1 failed")
    b.add(
        "compaction",
        summary="s",
        firstKeptEntryId="e0000001",
        tokensBefore=5000,
        usage=usage(uncached=6000, output=200),
    )
    b.assistant(text="done", spent=usage(read=1000, write=50, output=5))
    report = report_of(b)
    assert report["kind"] == "tau"
    tau = report["tau"]
    assert tau["measured"] is True
    parts = tau["parts"]
    assert parts["requests"]["cost"] == pytest.approx(
        100 * 0.1 + 900 * 1.25 + 20 * 5 + 1000 * 0.1 + 50 * 1.25 + 25
    )
    assert parts["reducer"]["cost"] == pytest.approx(4000 + 300 * 5)  # counted: it was billed
    assert parts["summaries"]["cost"] == pytest.approx(6000 + 200 * 5)  # its recorded usage, not an estimate
    assert tau["cost"] == pytest.approx(sum(part["cost"] for part in parts.values()))
    assert tau["requests"] == 4 and report["requests"] == 2


def test_an_aborted_request_costs_what_its_usage_says():
    b = Branch()
    b.user("go")
    b.assistant(text="", spent=usage(), stop="aborted")  # the provider was never called
    b.user("again")
    b.assistant(text="", spent=usage(write=700, output=3), stop="aborted")  # aborted mid-stream
    parts = report_of(b)["tau"]["parts"]
    assert parts["requests"]["requests"] == 2
    assert parts["requests"]["cost"] == pytest.approx(700 * 1.25 + 15)


# -- the baseline: every mechanism undone ------------------------------------------------------


def _fused_session() -> Branch:
    b = Branch()
    b.user("fix it")
    edit = {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}], "then_run": {"command": "make test"}}
    b.assistant(("c1", "edit", edit))
    b.result(
        "c1",
        "edit",
        "Successfully replaced 1 block(s) in a.py.",
        "[then_run:failed]\n2 failed\n\nCommand exited with code 1",
        error=True,
    )
    b.assistant(("c2", "bash", {"command": "make test"}))
    b.result("c2", "bash", "ok")
    b.assistant(text="done")
    return b


def test_a_fused_call_is_split_into_the_edit_and_a_command_request_in_the_baseline():
    undone = undo_branch(_fused_session().entries, ["actionFusion"])
    messages = [e["message"] for e in undone.branch if e["type"] == "message"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert "then_run" not in messages[2]["content"][0]["arguments"]
    assert messages[3]["isError"] is False
    assert [b["text"] for b in messages[3]["content"]] == ["Successfully replaced 1 block(s) in a.py."]
    assert messages[4]["content"][0]["arguments"] == {"command": "make test"}
    assert messages[5]["isError"] is True
    assert messages[5]["content"][0]["text"] == "2 failed\n\nCommand exited with code 1"
    assert undone.unfused == 1
    assert "then_run" not in json.dumps(messages[0]["toolsAdded"])


def test_an_edit_that_already_carries_then_run_is_not_fused_again():
    assert fuse_branch(_fused_session().entries).merged == []


def test_the_baseline_costs_the_extra_request_a_fused_command_saved():
    report = report_of(_fused_session())
    assert report["baseline"]["requests"] == report["tau"]["requests"] + 1
    assert report["mechanisms"]["actionFusion"]["used"] is True
    assert report["undone"]["unfused"] == 1


def test_a_receipt_is_restored_from_the_archive_and_the_reducer_calls_stay_out_of_the_baseline(tmp_path):
    log = "E   assert 41 == 42\n" * 400
    digest = hashlib.sha256(log.encode()).hexdigest()
    archive = tmp_path / "sol" / "sid"
    objects = archive / "evidence-preserving-reducer" / "objects" / digest[:2]
    objects.mkdir(parents=True)
    (objects / f"{digest}.txt").write_text(log)
    receipt = "\n".join(
        [
            "sol_pi_evidence_receipt_v1",
            "status=failure",
            f"source_sha256={digest}",
            f"source_artifact={tmp_path / 'moved-away.txt'}",
            "verified_evidence:",
            '- kind=failure line=1 quote_sha256=00 quote="E   assert 41 == 42"',
            "readback=use bash with an explicit byte or line range on source_artifact when exact context is needed",
        ]
    )
    b = Branch()
    b.user("test")
    b.assistant(("c1", "bash", {"command": "pytest"}))
    b.add(
        "custom",
        customType="sol-pi-evidence-preserving-reducer-v1",
        data={
            "kind": "provider_response",
            "provider": "faux",
            "model": "faux-1",
            "usage": usage(uncached=2500),
        },
    )
    b.result(
        "c1",
        "bash",
        f"{receipt}\n\nCommand exited with code 1",
        error=True,
        details={"evidencePreservingReducer": {"sourceSha256": digest}},
    )
    b.assistant(text="found it")
    undone = undo_branch(b.entries, ["evidencePreservingReducer"], archive_root=archive)
    restored = [e["message"] for e in undone.branch if e["type"] == "message"][-2]
    assert restored["content"][0]["text"] == f"{log}\n\nCommand exited with code 1"
    assert "evidencePreservingReducer" not in restored["details"]
    report = report_of(b, archive)
    assert report["undone"]["receipts"] == 1 and report["undone"]["unrestored"] == 0
    assert report["baseline"]["cost"] > report["tau"]["parts"]["requests"]["cost"]
    assert "reducer" not in report["baseline"]["parts"]
    # Without the archive the receipt stays, and the report says so.
    kept = report_of(b)
    assert kept["undone"]["unrestored"] == 1 and kept["undone"]["notes"]


def test_an_online_compaction_is_not_charged_to_the_baseline_but_a_threshold_one_is():
    b = Branch()
    b.user("plan")
    b.assistant(("c1", "bash", {"command": "echo " + "x" * 4000}))
    b.result("c1", "bash", "x" * 4000)
    b.add(
        "compaction",
        summary="occ summary",
        firstKeptEntryId="e0000002",
        tokensBefore=9000,
        usage=usage(uncached=3000, output=100),
    )
    b.add(
        "custom_message",
        customType="sol-pi-online-context-compact",
        content="Online context compaction finished.",
        display=False,
    )
    b.assistant(("c2", "bash", {"command": "ls"}))
    b.result("c2", "bash", "a b")
    b.add(
        "compaction",
        summary="threshold summary",
        firstKeptEntryId="e0000006",
        tokensBefore=9500,
        usage=usage(uncached=3500, output=120),
    )
    b.assistant(text="done")
    report = report_of(b)
    assert report["undone"]["occCompactions"] == 1
    assert report["summaries"]["tau"]["requests"] == 2
    assert report["summaries"]["baseline"]["requests"] == 1
    assert report["summaries"]["baseline"]["cost"] == pytest.approx(3500 + 120 * 5)
    assert report["mechanisms"]["onlineContextCompact"]["used"] is True


def test_recalls_are_removed_from_the_baseline_and_obs_recall_from_its_tools():
    b = Branch()
    b.user("look")
    b.assistant(("c1", "obs_recall", {"id": "obs_" + "0" * 24, "query": "FAIL"}))
    b.result("c1", "obs_recall", '{"matches":[]}')
    b.assistant(("c2", "bash", {"command": "ls"}), ("c3", "obs_recall", {"id": "obs_" + "1" * 24}))
    b.result("c2", "bash", "a")
    b.result("c3", "obs_recall", "page")
    b.assistant(text="done")
    undone = undo_branch(b.entries, ["observationPack"])
    messages = [e["message"] for e in undone.branch if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert [c["name"] for c in messages[2]["content"] if c["type"] == "toolCall"] == ["bash"]
    assert [t["name"] for t in messages[0]["toolsAdded"]] == ["bash", "edit"]
    assert undone.recalls == 2


def test_the_table_says_which_figures_are_measured_and_which_are_estimates():
    table = render_table(report_of(_fused_session()))
    assert "tau (measured)" in table and "stock pi (estimate)" in table
    assert "Action Fusion" in table and "estimates" in table


# -- live: the benchmark's bill and tau savings agree ------------------------------------------


def _bench():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    import harness
    import tasks

    return harness, tasks


def _js_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.slow
def test_the_faux_bill_is_an_honest_count_of_every_request_it_received(tmp_path):
    """Each call is billed on the request as received (system prompt, tools, messages): the longest
    prefix shared with the same session's previous request is a cache read, the rest a write;
    a request without caching (the reducer's, the summaries') is all uncached input."""
    harness, tasks = _bench()
    run = harness.run_task(
        tasks.load("fix-the-tests"),
        "full",
        tmp_path,
        extra_env={"TAU_FAUX_BILL_PROMPTS": "1"},
        sol={"evidenceExtractors": False},  # the unittest logs go to the reducer model, uncached
    )
    assert run.exit_code == 0, run.stderr
    previous: dict[str, str] = {}
    side = 0
    for line in run.bill.lines:
        text = "\n\n".join(line["prompt"])
        spent = line["usage"]
        prompt_tokens = math.ceil(_js_len(text) / 4)
        assert spent["input"] + spent["cacheRead"] + spent["cacheWrite"] == prompt_tokens
        if line["cacheRetention"] == "none":
            side += 1
            assert (spent["cacheRead"], spent["cacheWrite"]) == (0, 0)
            continue
        shared = ""
        if line["sessionId"] in previous:
            before = previous[line["sessionId"]]
            size = 0
            while size < min(len(before), len(text)) and before[size] == text[size]:
                size += 1
            shared = text[:size]
        assert spent["cacheRead"] == math.ceil(_js_len(shared) / 4)
        previous[line["sessionId"]] = text
    first = run.bill.lines[0]["prompt"]
    assert first[0].startswith("system:")
    for tool in ("read", "bash", "edit", "write", "todo", "obs_recall"):
        assert f'tool+:{{"name":"{tool}"' in first[0]
    assert side == 3  # the reducer's three receipts
    reducer_lines = [line for line in run.bill.lines if line["cacheRetention"] == "none"]
    assert {line["model"] for line in reducer_lines} == {"faux-mini-20261206"}  # the cheapest faux model


@pytest.mark.slow
@pytest.mark.parametrize(("task", "profile"), [("fix-the-tests", "full"), ("three-prompts", "default")])
def test_tau_savings_reports_the_cost_the_benchmark_billed(tmp_path, task, profile):
    harness, tasks = _bench()
    run = harness.run_task(tasks.load(task), profile, tmp_path)
    assert run.exit_code == 0, run.stderr
    billed = run.result()["cost_units"]
    measured, report = harness.savings_units(run.session)
    assert measured == pytest.approx(billed, rel=0.02)
    assert report["kind"] == "tau"
    assert report["baseline"]["cost"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("task", ["bash-explorer", "read-and-refactor"])
def test_tau_savings_replays_the_pack_the_live_run_sent(tmp_path, task):
    """ObservationPack's swaps (stale packing, batches) replayed from the session file are the ones
    the live run made: the replay of the run as it ran costs what was billed, cache breaks included."""
    harness, tasks = _bench()
    run = harness.run_task(tasks.load(task), "default", tmp_path)
    assert run.exit_code == 0, run.stderr
    _, report = harness.savings_units(run.session)
    requests = report["tau"]["parts"]["requests"]
    assert report["replayed"]["cacheBreaks"] == requests["cacheBreaks"] > 0
    assert report["replayed"]["cost"] == pytest.approx(report["tau"]["cost"], rel=1e-6)
    assert report["mechanisms"]["observationPack"]["placeholders"] > 0
