"""Evidence misses in ``tau savings``: requests whose tool calls use a distinctive token that, at that
moment, only hidden content held (packed, reduced or compacted), priced as one extra request."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tau.modes.savings import savings_for_branch
from tau.modes.savings.cost_model import Prices
from tau.modes.savings.misses import MissCounter
from tau.modes.savings.report import render_table

PRICES = Prices(1_000_000.0, 5_000_000.0, "test")  # one cost unit per input token, five per output token
TOKEN = "parse_header_v2"  # distinctive: an identifier with underscores and a digit


def usage(uncached: int = 0, read: int = 0, write: int = 0, output: int = 0) -> dict:
    return {"input": uncached, "output": output, "cacheRead": read, "cacheWrite": write}


class Session:
    """A linear branch built entry by entry (a pi session unless ``tau`` adds tau's system message)."""

    def __init__(self, *, tau: bool = False) -> None:
        self.entries: list[dict] = []
        self.calls = 0
        if tau:
            self.message(role="system", content="", sections={"preamble": "You are running inside tau."})

    def add(self, entry_type: str, **fields) -> dict:
        entry = {
            "type": entry_type,
            "id": f"e{len(self.entries):07d}",
            "parentId": self.entries[-1]["id"] if self.entries else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            **fields,
        }
        self.entries.append(entry)
        return entry

    def message(self, **message) -> dict:
        return self.add("message", message={"timestamp": len(self.entries) * 1000, **message})

    def user(self, text: str) -> None:
        self.message(role="user", content=[{"type": "text", "text": text}])

    def call(
        self, name: str, args: dict, *results: str, error: bool = False, details: dict | None = None
    ) -> None:
        """One request calling ``name`` with ``args``, and its result."""
        self.calls += 1
        call_id = f"c{self.calls}"
        self.message(
            role="assistant",
            content=[{"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
            api="faux",
            provider="faux",
            model="faux-1",
            usage=usage(write=100, output=10),
            stopReason="toolUse",
        )
        fields = {"details": details} if details is not None else {}
        self.message(
            role="toolResult",
            toolCallId=call_id,
            toolName=name,
            content=[{"type": "text", "text": text} for text in results],
            isError=error,
            **fields,
        )

    def answer(self, text: str = "done") -> None:
        self.message(
            role="assistant",
            content=[{"type": "text", "text": text}],
            api="faux",
            provider="faux",
            model="faux-1",
            usage=usage(write=10, output=5),
            stopReason="stop",
        )

    def report(self, archive: Path | None = None, profile: str = "default") -> dict:
        return savings_for_branch(
            self.entries, "t.jsonl", profile=profile, override=PRICES, archive_root=archive
        )


def big_log(token: str = TOKEN) -> str:
    """A 40 KB log whose middle line names ``token`` (a placeholder's excerpts show neither)."""
    lines = [f"INFO step {n:05d}: module_{n % 97:02d} finished" for n in range(1200)]
    lines[600] = f"ERROR {token} rejected the header at offset 4096"
    return "\n".join(lines) + "\n"


def packed_log_session(use: str = TOKEN, *, visible_elsewhere: bool = False) -> Session:
    s = Session()
    s.user("why does the import fail?")
    s.call("bash", {"command": "cat build.log"}, big_log())
    for n in range(6):  # the log is packed after its first sends and ObservationPack's batching
        s.call("bash", {"command": f"ls dir{n}"}, "a.py b.py")
    if visible_elsewhere:
        s.call("bash", {"command": "grep -rn header src | head -1"}, f"src/io.py:12:def {TOKEN}(data):")
    s.call("bash", {"command": f"grep -rn {use} src"}, "src/io.py:12")
    s.answer()
    return s


def test_a_call_using_a_token_only_a_placeholder_held_is_a_miss_and_costs_a_request():
    report = packed_log_session().report()
    baseline, tau = report["baseline"], report["tau"]
    assert report["mechanisms"]["observationPack"]["placeholders"] >= 1
    assert baseline["misses"] == 0 and baseline["miss_adjusted_cost"] == baseline["cost"]
    assert tau["misses"] == 1
    assert tau["misses_per_100"] == pytest.approx(100 / tau["requests"], abs=0.01)
    # One extra request: at least the log written again (its tokens), on top of what the replay cost.
    log_tokens = -(-len(big_log()) // 4)
    assert tau["refetchedTokens"] == log_tokens
    assert tau["miss_adjusted_cost"] > tau["cost"] + 1.25 * log_tokens


def test_a_token_still_visible_elsewhere_is_no_miss():
    tau = packed_log_session(visible_elsewhere=True).report()["tau"]
    assert tau["misses"] == 0 and tau["miss_adjusted_cost"] == tau["cost"]


def test_a_token_never_seen_before_is_no_miss():
    tau = packed_log_session(use="brand_new_helper_v3").report()["tau"]
    assert tau["misses"] == 0


def test_a_token_a_stock_pi_compaction_hid_is_a_miss_of_the_baseline_too():
    def session(summary: str) -> Session:
        s = Session()
        s.user("look at the parser")
        s.call("read", {"path": "src/io.py"}, f"def {TOKEN}(data):\n    return data[4:]\n")
        kept = len(s.entries)
        s.call("bash", {"command": "ls"}, "a.py")
        s.add("compaction", summary=summary, firstKeptEntryId=f"e{kept:07d}", tokensBefore=5000)
        s.call(
            "edit", {"path": "src/io.py", "edits": [{"oldText": f"def {TOKEN}(data):", "newText": "x"}]}, "ok"
        )
        s.answer()
        return s

    hidden = session("Read src/io.py.").report()
    assert hidden["baseline"]["misses"] == 1 and hidden["tau"]["misses"] == 1
    kept = session(f"Read src/io.py: {TOKEN} strips a 4-byte header.").report()
    assert kept["baseline"]["misses"] == 0 and kept["tau"]["misses"] == 0


def test_a_token_only_the_reducers_log_held_is_a_miss_of_the_tau_session(tmp_path):
    log = "".join(f"test_{n:03d} passed\n" for n in range(300)) + f"FAILED tests/test_io.py::{TOKEN}\n"
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
            "verified_evidence:",
            '- kind=failure line=301 quote_sha256=00 quote="1 failed"',
            "readback=use bash with an explicit byte or line range on source_artifact when exact context is needed",
        ]
    )
    s = Session(tau=True)
    s.user("run the tests")
    s.call(
        "bash",
        {"command": "pytest"},
        f"{receipt}\n\nCommand exited with code 1",
        error=True,
        details={"evidencePreservingReducer": {"sourceSha256": digest}},
    )
    s.call("bash", {"command": f"pytest -k {TOKEN}"}, "1 failed")
    s.answer()
    report = s.report(archive)
    assert report["kind"] == "tau" and report["undone"]["receipts"] == 1
    assert report["tau"]["misses"] == 1  # the receipt hid the test's name
    assert report["baseline"]["misses"] == 0  # stock pi saw the whole log


def hidden_log_request(name: str, args: dict) -> tuple[list[dict], int, list[dict]]:
    """A branch whose log names ``TOKEN``, then a request calling ``name``; what it sends hides the log."""
    work = Session()
    work.user("start")
    work.call("bash", {"command": "cat a.log"}, f"{TOKEN} is broken")
    work.call(name, args, "")
    request = len(work.entries) - 2
    return work.entries, request, [work.entries[0]["message"]]


def test_a_recall_is_the_refetch_not_a_miss():
    counter = MissCounter()
    counter.request(
        *hidden_log_request("obs_recall", {"id": "obs_" + "a1" * 12, "query": TOKEN}), 100, PRICES
    )
    assert counter.misses == 0
    counter.request(*hidden_log_request("bash", {"command": f"grep -rn {TOKEN} src"}), 100, PRICES)
    assert counter.misses == 1


def test_each_miss_costs_the_context_read_and_the_hidden_message_written():
    counter = MissCounter()
    work, request, sent = hidden_log_request("bash", {"command": f"grep {TOKEN} src"})
    counter.request(work, request, sent, 5000, PRICES)
    hidden = -(-len(f"{TOKEN} is broken") // 4)
    assert (counter.misses, counter.refetched_tokens) == (1, hidden)
    assert counter.extra_cost == pytest.approx(5000 * 0.1 + hidden * 1.25)
    visible = MissCounter()
    visible.request(work, request, [e["message"] for e in work[:request]], 5000, PRICES)
    assert visible.misses == 0


def test_a_token_standing_as_a_word_in_a_longer_path_is_visible():
    work, request, _ = hidden_log_request("read", {"path": "calc.py"})
    work[2]["message"]["content"][0]["text"] = "calc.py"  # what ``cat a.log`` showed: the file name
    seen = [{"role": "user", "content": [{"type": "text", "text": "edit src/calc.py, not src/calc.pyc"}]}]
    counter = MissCounter()
    counter.request(work, request, seen, 100, PRICES)
    assert counter.misses == 0
    unseen = [{"role": "user", "content": [{"type": "text", "text": "edit recalc.py"}]}]
    counter.request(work, request, unseen, 100, PRICES)
    assert counter.misses == 1


def test_the_text_report_shows_misses_and_the_adjusted_cost():
    table = render_table(packed_log_session().report())
    assert "evidence misses: 1 (" in table and "miss-adjusted cost with output" in table
