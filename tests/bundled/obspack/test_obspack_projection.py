"""ObservationPack's context projection and obs_recall through the extension's handlers."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest
from obspack_fakes import FakeCtx, FakeSessionManager, FakeTau, text_of, tool_result

import tau.bundled.obspack as obspack
from tau.bundled.obspack.observation import THRESHOLD_BYTES, observation_of
from tau.bundled.obspack.store import ObservationStore
from tau.bundled.sol_common import runtime_root
from tau.extension import ToolError

BODY = "head line\n" + "middle line\n" * 1000 + "tail line\n"


def run(coro):
    return asyncio.run(coro)


def started(tmp_path, settings=None, mode="json", session="session-a", entries=None):
    tau = FakeTau(settings)
    obspack.extension(tau)
    ctx = FakeCtx(FakeSessionManager(str(tmp_path), session, entries), mode=mode)
    run(tau.emit("session_start", ctx, reason="startup"))
    return tau, ctx


def ledger(tmp_path, session="session-a"):
    path = tmp_path / "sol" / session / "observation-pack" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def sends(tau, ctx, messages, count):
    projected = [run(tau.context(messages, ctx)) for _ in range(count)]
    return [[text_of(m) if m["role"] == "toolResult" else None for m in each] for each in projected]


def test_nothing_is_registered_before_session_start_or_when_switched_off(tmp_path):
    tau = FakeTau()
    obspack.extension(tau)
    assert list(tau.handlers) == ["session_start"] and tau.tools == {}
    off, _ = started(tmp_path, {"sol": {"observationPack": False}})
    assert off.tools == {} and "context" not in off.handlers
    on, ctx = started(tmp_path)
    assert list(on.tools) == ["obs_recall"] and {"context", "session_shutdown"} <= set(on.handlers)
    run(on.emit("session_start", ctx, reason="startup"))  # initialisation happens once
    assert len(on.handlers["context"]) == 1


def test_two_full_sends_then_one_stable_placeholder_and_the_history_is_untouched(tmp_path):
    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    texts = [t[0] for t in sends(tau, ctx, [message], 4)]
    assert texts[0] == BODY and texts[1] == BODY
    assert texts[2] == texts[3] and texts[2].startswith("[large tool result replaced")
    assert "head line" in texts[2] and "tail line" in texts[2]
    assert text_of(message) == BODY
    content_hash = observation_of(message).content_hash
    assert (tmp_path / "sol/session-a/observation-pack/objects" / f"{content_hash}.txt").read_text() == BODY
    records = ledger(tmp_path)
    # The swap is recorded once, when it is first sent; its bytes never change afterwards.
    assert [r["event"] for r in records] == ["full", "full", "placeholder"]
    assert records[2]["sendNumber"] == 3 and records[2]["reason"] == "after its first 2 provider requests"
    assert records[0]["request"] == 1 and records[0]["originalBytes"] == len(BODY)
    assert records[2]["placeholderBytes"] == len(texts[2].encode())
    assert records[2]["removedTokens"] == records[2]["originalTokens"] - records[2]["placeholderTokens"]


def test_assistant_messages_after_a_result_count_as_sends(tmp_path):
    tau, ctx = started(tmp_path)
    assistant = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    (texts,) = sends(
        tau, ctx, [tool_result(BODY), assistant, assistant, {"role": "user", "content": "go"}], 1
    )
    assert texts[0].startswith("[large tool result replaced")
    assert ledger(tmp_path)[0]["request"] == 3


def test_the_same_observation_twice_in_one_context_counts_per_occurrence(tmp_path):
    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    (texts,) = sends(tau, ctx, [message, message, message], 1)
    assert texts[:2] == [BODY, BODY] and texts[2].startswith("[large tool result replaced")
    assert [r["event"] for r in ledger(tmp_path)] == ["full", "full", "placeholder"]


def test_send_counts_follow_the_branch(tmp_path):
    result = tool_result(BODY)
    entries = [
        {"type": "message", "id": "u1", "parentId": None, "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "t1", "parentId": "u1", "message": result},
    ]
    tau, ctx = started(tmp_path, entries=entries)
    manager = ctx.session_manager
    # retries of one request (no assistant answer in between) still count
    assert [t[0] == BODY for t in sends(tau, ctx, [result], 3)] == [True, True, False]
    # on a sibling branch the result's sends there never happened
    manager.leaf = "u1"
    manager.append({"role": "user", "content": "other"}, "u2")
    assert [t[0] == BODY for t in sends(tau, ctx, [result], 3)] == [True, True, False]
    manager.leaf = "t1"
    assert sends(tau, ctx, [result], 1)[0][0] != BODY


def test_one_ledger_append_per_context_and_none_for_an_empty_batch(tmp_path, monkeypatch):
    tau, ctx = started(tmp_path)
    appends = []
    original = ObservationStore.append_ledger
    monkeypatch.setattr(
        ObservationStore, "append_ledger", lambda self, data: appends.append(data) or original(self, data)
    )
    first, second = tool_result(BODY, "a"), tool_result(BODY.replace("head", "HEAD"), "b")
    sends(tau, ctx, [first, second], 3)
    sends(tau, ctx, [tool_result("small")], 1)
    assert len(appends) == 3 and all(chunk.count(b"\n") == 2 for chunk in appends)
    ids = [r["id"] for r in ledger(tmp_path)]
    assert ids[:2] == [observation_of(first).id, observation_of(second).id]


def test_a_failed_ledger_append_keeps_every_original_and_advances_nothing(tmp_path, monkeypatch, capsys):
    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    sends(tau, ctx, [message], 2)

    def broken(self, data):
        raise OSError("disk full")

    monkeypatch.setattr(ObservationStore, "append_ledger", broken)
    assert sends(tau, ctx, [message, tool_result(BODY, "other")], 2) == [[BODY, BODY]] * 2
    assert "[observationpack] fail-open" in capsys.readouterr().err
    monkeypatch.undo()
    assert sends(tau, ctx, [message], 1)[0][0].startswith("[large tool result replaced")


def test_a_failed_archive_leaves_only_that_message_unchanged(tmp_path, capsys):
    tau, ctx = started(tmp_path)
    good, bad = tool_result(BODY, "good"), tool_result(BODY.replace("middle", "MIDDLE"), "bad")
    bad_id = observation_of(bad).id
    objects = tmp_path / "sol/session-a/observation-pack/objects"
    objects.mkdir(parents=True)
    (objects / f"{observation_of(bad).content_hash}.txt").write_text("x" * len(text_of(bad).encode()))
    texts = sends(tau, ctx, [good, bad], 3)[2]
    assert texts[0].startswith("[large tool result replaced") and texts[1] == text_of(bad)
    err = capsys.readouterr().err
    assert (
        f"[observationpack] fail-open for tool result: Content-addressed observation hash mismatch for {bad_id}"
        in err
    )


def test_a_symlinked_objects_directory_fails_open_and_writes_nothing_through_it(tmp_path, capsys):
    tau, ctx = started(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "sol/session-a/observation-pack").mkdir(parents=True)
    os.symlink(outside, tmp_path / "sol/session-a/observation-pack/objects")
    assert sends(tau, ctx, [tool_result(BODY)], 3) == [[BODY]] * 3
    assert "not a regular directory" in capsys.readouterr().err and os.listdir(outside) == []


def test_older_placeholders_are_never_rewritten_when_new_results_arrive(tmp_path):
    tau, ctx = started(tmp_path)
    first = tool_result("first\n" + "a" * (THRESHOLD_BYTES + 100) + "\n", "first")
    second = tool_result("second\n" + "b" * (THRESHOLD_BYTES + 100) + "\n", "second")
    placeholder = sends(tau, ctx, [first], 3)[2][0]
    combined = sends(tau, ctx, [first, second], 3)
    assert [c[0] for c in combined] == [placeholder] * 3
    assert combined[0][1] == combined[1][1] == text_of(second) and combined[2][1] != text_of(second)


def test_savings_are_announced_once_and_only_in_the_interactive_mode(tmp_path):
    tau, ctx = started(tmp_path, mode="tui")
    sends(tau, ctx, [tool_result(BODY)], 4)
    assert len(ctx.ui.notices) == 1
    message, level = ctx.ui.notices[0]
    assert level == "info" and message.startswith("⚡ SoL-Pi · Observation Pack\nMoney saved · ")
    obs_id = observation_of(tool_result(BODY)).id
    assert " context tokens avoided · bash result " in message and ctx.ui.statuses[0][0] == "sol-pi-savings"
    assert message.endswith(
        f'packed (after its first 2 provider requests); obs_recall {{"id":"{obs_id}"}} returns it'
    )
    quiet, quiet_ctx = started(tmp_path / "json", mode="json")
    sends(quiet, quiet_ctx, [tool_result(BODY)], 4)
    assert quiet_ctx.ui.notices == []


def test_a_failing_notice_keeps_the_projection(tmp_path):
    tau, ctx = started(tmp_path, mode="tui")

    def broken(*args):
        raise RuntimeError("no terminal")

    ctx.ui.notify = broken
    assert sends(tau, ctx, [tool_result(BODY)], 3)[2][0].startswith("[large tool result replaced")


def test_configured_excerpt_sizes_reach_the_placeholder(tmp_path):
    settings = {"sol": {"observationPackHeadBytes": 100, "observationPackTailBytes": 64}}
    tau, ctx = started(tmp_path, settings)
    text = sends(tau, ctx, [tool_result(BODY)], 3)[2][0]
    assert (
        "[first complete lines, up to 100 bytes]" in text and "last complete lines, up to 64 bytes]" in text
    )


# -- recall -------------------------------------------------------------------------------------


def recall_all(tau, ctx, obs_id):
    recalled, offset, pages = "", 0, 0
    while True:
        result = run(tau.call("obs_recall", {"id": obs_id, "offset": offset}, ctx))
        recalled += text_of(result.to_json()).split("\n", 2)[2]
        pages += 1
        offset = result.details["nextOffset"]
        if result.details["eof"]:
            return recalled, pages


def test_recall_pages_back_the_exact_bytes_even_after_a_restart(tmp_path):
    body = "utf8: luna ☾\n" + "0123456789abcdef\n" * 1200 + "final line"
    tau, ctx = started(tmp_path)
    message = tool_result(body)
    sends(tau, ctx, [message], 3)
    obs_id = observation_of(message).id
    assert recall_all(tau, ctx, obs_id)[0] == body
    restarted, restarted_ctx = started(tmp_path)
    recalled, pages = recall_all(restarted, restarted_ctx, obs_id)
    assert recalled == body and pages > 1
    assert ledger(tmp_path)[-1]["event"] == "recall" and ledger(tmp_path)[-1]["eof"] is True


def test_recall_search_returns_matches_as_json(tmp_path):
    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    sends(tau, ctx, [message], 1)
    obs_id = observation_of(message).id
    result = run(tau.call("obs_recall", {"id": obs_id, "query": "tail line"}, ctx))
    data = json.loads(text_of(result.to_json()))
    assert data["matches"][0]["byteOffset"] == BODY.index("tail line") and data["eof"] is True
    assert data["matches"][0]["line"] == 1002 and result.details == data


def test_recall_refuses_unknown_ids_and_symlinked_objects(tmp_path):
    tau, ctx = started(tmp_path)
    with pytest.raises(ToolError, match="Unknown observation id: nope"):
        run(tau.call("obs_recall", {"id": "nope"}, ctx))
    with pytest.raises(ToolError, match="Unknown observation id: obs_0123456789abcdef01234567"):
        run(tau.call("obs_recall", {"id": "obs_0123456789abcdef01234567"}, ctx))
    message = tool_result(BODY)
    sends(tau, ctx, [message], 1)
    obs_id = observation_of(message).id
    path = tmp_path / "sol/session-a/observation-pack/objects" / f"{observation_of(message).content_hash}.txt"
    path.unlink()
    (tmp_path / "target.txt").write_text("target bytes must not be recalled")
    os.symlink(tmp_path / "target.txt", path)
    with pytest.raises(OSError) as info:
        run(tau.call("obs_recall", {"id": obs_id}, ctx))
    assert info.value.code == "ELOOP"
    fresh = tool_result(BODY + "fresh\n", "fresh")  # other bytes: the linked object is not its
    sends(tau, ctx, [fresh], 1)
    with pytest.raises(ToolError, match=f"Offset 999999 exceeds observation size {len(BODY) + 6}"):
        run(tau.call("obs_recall", {"id": observation_of(fresh).id, "offset": 999999}, ctx))


def test_sessions_are_isolated(tmp_path):
    tau, ctx_a = started(tmp_path, session="session-a")
    ctx_b = FakeCtx(FakeSessionManager(str(tmp_path), "session-b"))
    message = tool_result(BODY)
    for ctx in (ctx_a, ctx_b):
        texts = [t[0] for t in sends(tau, ctx, [message], 3)]
        assert texts[:2] == [BODY, BODY] and texts[2] != BODY
    content_hash = observation_of(message).content_hash
    for session in ("session-a", "session-b"):
        objects = tmp_path / "sol" / session / "observation-pack/objects"
        assert (objects / f"{content_hash}.txt").read_text() == BODY
    other = tool_result(BODY, "only-in-a")
    sends(tau, ctx_a, [other], 1)
    with pytest.raises(ToolError, match="Unknown observation id"):
        run(tau.call("obs_recall", {"id": observation_of(other).id}, ctx_b))


def test_session_shutdown_drops_the_counters(tmp_path):
    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    sends(tau, ctx, [message], 2)
    run(tau.emit("session_shutdown", ctx, reason="quit"))
    assert sends(tau, ctx, [message], 1)[0][0] == BODY


# -- restoration after fork and compaction ------------------------------------------------------


def forked(tmp_path, body=BODY):
    """A fork's session: the original result only in its branch entries, no object on disk."""
    message = tool_result(body, "archived-output")
    entries = [
        {"type": "message", "id": "u1", "parentId": None, "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "t1", "parentId": "u1", "message": message},
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "t1",
            "summary": "see obs_recall",
            "firstKeptEntryId": "u2",
        },
        {"type": "message", "id": "u2", "parentId": "c1", "message": {"role": "user", "content": "recheck"}},
    ]
    tau, ctx = started(tmp_path, session="fork-session", entries=entries)
    return tau, ctx, observation_of(message).id


def object_path(tmp_path, obs_id, session="fork-session", body=BODY, tool_call="archived-output"):
    """Where the object of ``obs_id`` (the result ``body`` of ``tool_call``) is stored: under its
    content's SHA-256 (issue 33)."""
    observation = observation_of(tool_result(body, tool_call))
    assert observation.id == obs_id
    return tmp_path / "sol" / session / "observation-pack/objects" / f"{observation.content_hash}.txt"


def test_a_fork_restores_compacted_away_evidence_from_its_branch(tmp_path):
    body = "exact diagnostic evidence 🧪\n" * 1200
    tau, ctx, obs_id = forked(tmp_path, body)
    recalled, pages = recall_all(tau, ctx, obs_id)
    assert recalled == body and pages > 1
    assert object_path(tmp_path, obs_id, body=body).read_text() == body
    assert ctx.session_manager.branch_calls == 1


def test_an_in_memory_fork_restores_into_its_private_directory(tmp_path):
    tau, ctx, obs_id = forked(tmp_path)
    ctx.session_manager.session_dir = ""
    assert recall_all(tau, ctx, obs_id)[0] == BODY
    root = runtime_root("", "fork-session")
    stored = observation_of(tool_result(BODY, "archived-output")).content_hash
    assert os.path.exists(ObservationStore(root).object_path(stored))
    shutil.rmtree(root.base)


def test_concurrent_first_recalls_share_one_restoration(tmp_path, monkeypatch):
    tau, ctx, obs_id = forked(tmp_path)
    original = ObservationStore.ensure_stored
    calls = []

    def slow_store(self, *args):
        calls.append(args[0])
        import time

        time.sleep(0.05)
        return original(self, *args)

    monkeypatch.setattr(ObservationStore, "ensure_stored", slow_store)

    async def scenario():
        return await asyncio.gather(
            *(tau.call("obs_recall", {"id": obs_id, "offset": 32 * n}, ctx) for n in range(12))
        )

    results = run(scenario())
    assert len(calls) == 1 and ctx.session_manager.branch_calls == 1
    data = BODY.encode()
    for n, result in enumerate(results):
        chunk = text_of(result.to_json()).split("\n", 2)[2].encode()
        assert chunk == data[32 * n : 32 * n + result.details["bytes"]]


def test_a_queued_recall_retries_after_a_failed_restoration(tmp_path, monkeypatch):
    tau, ctx, obs_id = forked(tmp_path)
    original = ObservationStore.ensure_stored
    failures = iter([OSError("restore write failed")])

    def flaky(self, *args):
        error = next(failures, None)
        if error is not None:
            raise error
        return original(self, *args)

    monkeypatch.setattr(ObservationStore, "ensure_stored", flaky)

    async def scenario():
        return await asyncio.gather(
            tau.call("obs_recall", {"id": obs_id}, ctx),
            tau.call("obs_recall", {"id": obs_id}, ctx),
            return_exceptions=True,
        )

    # The two recalls restore in worker threads: either may be the one that meets the failure.
    results = run(scenario())
    failed = [r for r in results if isinstance(r, BaseException)]
    recalled = [r for r in results if not isinstance(r, BaseException)]
    assert len(failed) == 1 and isinstance(failed[0], OSError) and "restore write failed" in str(failed[0])
    assert len(recalled) == 1 and recalled[0].details["offset"] == 0


def test_abandoned_sibling_branches_are_not_restored(tmp_path):
    result = tool_result(BODY, "only-sibling-a")
    entries = [
        {"type": "message", "id": "u1", "parentId": None, "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "t1", "parentId": "u1", "message": result},
        {"type": "message", "id": "u2", "parentId": "u1", "message": {"role": "user", "content": "B"}},
    ]
    tau, ctx = started(tmp_path, session="sibling", entries=entries)
    obs_id = observation_of(result).id
    with pytest.raises(ToolError, match=f"Unknown observation id: {obs_id}"):
        run(tau.call("obs_recall", {"id": obs_id}, ctx))
    assert not object_path(tmp_path, obs_id, "sibling", tool_call="only-sibling-a").exists()


@pytest.mark.parametrize("name", ["content", "legacy"])
@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_an_unsafe_existing_path_is_refused(tmp_path, kind, name):
    """At the object's name (its content hash, known only from the branch here) or at the name an
    older archive gave it (its id: refused before the branch is read)."""
    tau, ctx, obs_id = forked(tmp_path)
    path = object_path(tmp_path, obs_id)
    if name == "legacy":
        path = path.with_name(f"{obs_id}.txt")
    path.parent.mkdir(parents=True)
    target = tmp_path / "unrelated.txt"
    target.write_text("unrelated bytes must stay unchanged")
    if kind == "symlink":
        os.symlink(target, path)
    else:
        path.mkdir()
    with pytest.raises(OSError):
        run(tau.call("obs_recall", {"id": obs_id}, ctx))
    assert target.read_text() == "unrelated bytes must stay unchanged"
    assert ctx.session_manager.branch_calls == (0 if name == "legacy" else 1)


def test_a_corrupt_object_appearing_during_restoration_is_not_overwritten(tmp_path, monkeypatch):
    tau, ctx, obs_id = forked(tmp_path)
    path = object_path(tmp_path, obs_id)
    corrupt = "x" * len(BODY.encode())
    original = ObservationStore.ensure_stored

    def racing(self, *args):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(corrupt)
        return original(self, *args)

    monkeypatch.setattr(ObservationStore, "ensure_stored", racing)
    with pytest.raises(OSError, match="hash mismatch"):
        run(tau.call("obs_recall", {"id": obs_id}, ctx))
    assert path.read_text() == corrupt


def test_a_large_fused_result_keeps_its_confirmation_and_marker_in_the_placeholder(tmp_path):
    tau, ctx = started(tmp_path)
    fused = tool_result("", "write-1", tool="write", details={"patch": "preserved"})
    fused["content"] = [
        {"type": "text", "text": "Successfully wrote to target.py"},
        {"type": "text", "text": "[then_run:succeeded]\n" + "builder output\n" * 1000},
    ]
    projected = [run(tau.context([fused], ctx))[0] for _ in range(3)][2]
    text = text_of(projected)
    assert text.startswith("[large tool result replaced") and "tool: write" in text
    head = text.split("[first complete lines, up to 512 bytes]\n")[1]
    assert head.startswith("Successfully wrote to target.py\n[then_run:succeeded]\nbuilder output\n")
    assert projected["details"] == {"patch": "preserved"} and projected["isError"] is False


def test_the_interactive_recall_row_shows_the_savings_banner(tmp_path):
    tool_rows = pytest.importorskip("tau.modes.interactive.tool_rows", reason="interactive mode not present")
    from tau.modes.interactive.model import ToolBlock

    tau, ctx = started(tmp_path)
    message = tool_result(BODY)
    sends(tau, ctx, [message], 1)
    args = {"id": observation_of(message).id, "offset": 0}
    result = run(tau.call("obs_recall", args, ctx)).to_json()
    row = tool_rows.tool_row(
        ToolBlock("c", "obs_recall", args, status="done", result=result), tau.tools["obs_recall"]
    )
    assert row.title == f"⚡ obs_recall {args['id']} from byte 0"
    assert row.body == [
        "⚡ SoL-Pi · Observation Pack",
        "Money saved · full observation replay avoided",
        f"Recalled {result['details']['bytes']} bytes across 198 lines",  # one page
    ]
