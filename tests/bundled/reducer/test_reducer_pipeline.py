"""The reducer's handler end to end on fakes: receipts, every fallback, the journal, the cache."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
from pathlib import Path

import pytest
from reducer_fakes import FakeCtx, FakeModel, FakeRegistry, FakeTau, answer, bash_event, fused_event

import tau.extension as api
from tau.bundled.reducer import reducer as reducer_module
from tau.bundled.reducer.archive import ArchiveIntegrityError
from tau.bundled.reducer.config import sha256
from tau.bundled.reducer.reducer import Reducer
from tau.bundled.sol_common import SolSettings

PASSED = "".join(f"tests/test_mod{n:03d}.py::test_case PASSED\n" for n in range(150))
FAILURE = "E   AssertionError: assert add(2, 3) == 5"
LOG = PASSED + FAILURE + "\nFAILED tests/test_calc.py::test_add\n1 failed, 150 passed in 0.42s\n"
INLINE = LOG + "\n\nCommand exited with code 1"


def source_hash(context) -> str:
    text = context["messages"][0]["content"][0]["text"]
    return re.search(r"^source_sha256=([0-9a-f]{64})$", text, re.MULTILINE).group(1)


def reply(*quotes: tuple[str, str], status: str = "failure"):
    def respond(context):
        evidence = [{"kind": kind, "quote": quote} for kind, quote in quotes]
        return json.dumps(
            {
                "schema": "sol-pi-evidence-receipt/1",
                "source_sha256": source_hash(context),
                "status": status,
                "uncertain": False,
                "evidence": evidence,
            }
        )

    return respond


GOOD = reply(("failure", FAILURE), ("target", "FAILED tests/test_calc.py::test_add"))


def make(tmp_path, *replies, settings=None, **ctx_kw):
    tau = FakeTau()
    registry = ctx_kw.pop("registry", None) or FakeRegistry(replies=list(replies))
    ctx = FakeCtx(str(tmp_path), registry, **ctx_kw)
    reducer = Reducer(
        tau, settings or SolSettings(evidence_preserving_reducer=True, evidence_extractors=False)
    )
    reducer.install()
    return tau, ctx, reducer


def run(reducer, event, ctx):
    return asyncio.run(reducer.on_tool_result(event, ctx))


def test_a_failing_log_becomes_a_verified_receipt(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD)
    result = run(reducer, bash_event("pytest -q", INLINE, is_error=True, details=None), ctx)
    text = result["content"][0]["text"]
    receipt, status = text.rsplit("\n\n", 1)
    assert status == "Command exited with code 1" and result["isError"] is True
    lines = receipt.split("\n")
    assert lines[:3] == ["sol_pi_evidence_receipt_v1", "status=failure", "uncertain=false"]
    assert f"source_sha256={sha256(LOG)}" in lines and f"source_bytes={len(LOG)}" in lines
    assert "source_lines=153" in lines and "reducer_total_tokens=321" in lines
    assert f'- kind=failure line=151 quote_sha256={sha256(FAILURE)} quote="{FAILURE}"' in lines
    artifact = next(line for line in lines if line.startswith("source_artifact="))[len("source_artifact=") :]
    assert artifact == str(
        tmp_path
        / "sol"
        / "session-a"
        / "evidence-preserving-reducer"
        / "objects"
        / sha256(LOG)[:2]
        / f"{sha256(LOG)}.txt"
    )
    assert (
        Path(artifact).read_text(encoding="utf-8") == LOG and stat.S_IMODE(os.stat(artifact).st_mode) == 0o600
    )
    summary = result["details"]["evidencePreservingReducer"]
    assert summary["schema"] == "sol-pi-evidence-receipt/1" and summary["evidenceCount"] == 2
    assert summary["receiptBytes"] == len(receipt.encode()) < summary["sourceBytes"] == len(LOG)
    assert tau.kinds() == ["candidate", "route", "provider_response", "applied"]
    run_id = sha256(str(tmp_path / "sol" / "session-a"))[:16]
    assert all(
        d["schema"] == "sol-pi-evidence-preserving-reducer/1" and d["runId"] == run_id for d in tau.journal()
    )
    applied = tau.journal()[-1]
    assert applied["cacheHit"] is False and applied["usage"]["totalTokens"] == 321


def test_the_model_call(tmp_path):
    small = FakeModel(max_tokens=1000)
    _tau, ctx, reducer = make(tmp_path, model=small, registry=FakeRegistry(small, replies=[GOOD]))
    run(reducer, bash_event("pytest -q", INLINE, is_error=True), ctx)
    ((model, context, options),) = ctx.model_registry.calls
    assert (model.provider, model.id) == ("faux", "faux-1")  # the session's model by default
    assert context["systemPrompt"].startswith("You are a lossless test/build output reducer.")
    assert context["messages"][0]["content"][0]["text"].endswith(f"<untrusted_log>\n{LOG}\n</untrusted_log>")
    if getattr(api, "StreamOptions", None) is not None:
        (opts,) = options
        assert (opts.max_tokens, opts.cache_retention, opts.timeout_ms) == (1000, "none", 90_000)
        assert opts.session_id == sha256(str(tmp_path / "sol" / "session-a"))[:16]


def test_the_configured_route(tmp_path):
    luna = FakeModel("openai-codex", "gpt-5.6-luna")
    registry = FakeRegistry(FakeModel(), luna, replies=[GOOD])
    settings = SolSettings(
        evidence_preserving_reducer=True,
        evidence_extractors=False,
        reducer_provider="openai-codex",
        reducer_model="gpt-5.6-luna",
    )
    _tau, ctx, reducer = make(tmp_path, settings=settings, registry=registry)
    result = run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    assert registry.calls[0][0] is luna
    assert "reducer_provider=openai-codex\nreducer_model=gpt-5.6-luna" in result["content"][0]["text"]


def test_an_invented_quote_keeps_the_original(tmp_path):
    tau, ctx, reducer = make(tmp_path, reply(("failure", "E   AssertionError: assert 4 == 5")))
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.kinds() == ["candidate", "route", "provider_response", "fallback"]
    assert tau.journal()[-1]["reason"] == "unverifiable-quote" and tau.journal()[-1]["toolCallId"] == "call_1"


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (answer("{}", stop_reason="error"), "model-response-error"),
        (answer("", stop_reason="aborted"), "model-call-timeout"),
        (RuntimeError("socket closed"), "model-call-exception"),
        ("I think the test failed.", "invalid-json"),
    ],
)
def test_model_failures_keep_the_original(tmp_path, response, reason):
    tau, ctx, reducer = make(tmp_path, response)
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.journal()[-1]["kind"] == "fallback" and tau.journal()[-1]["reason"] == reason


def test_a_model_that_never_answers_times_out(tmp_path):
    async def never(context):
        await asyncio.sleep(30)

    tau, ctx, reducer = make(tmp_path, never)
    reducer.timeout_seconds = 0.05
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.journal()[-1]["reason"] == "model-call-timeout"


def test_an_unknown_reducer_model_makes_no_call(tmp_path):
    settings = SolSettings(
        evidence_preserving_reducer=True, evidence_extractors=False, reducer_model="missing"
    )
    tau, ctx, reducer = make(tmp_path, settings=settings)
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.journal()[-1]["reason"] == "reducer-model-unavailable" and ctx.model_registry.calls == []


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (bash_event("pytest", "3 passed\n"), "source-under-min-bytes"),
        (bash_event("pytest", LOG + "API_KEY=sk-123\n", is_error=True), "likely-secret"),
        (bash_event("pytest", INLINE, is_error=False), "exit-state-mismatch"),
        (
            bash_event("pytest", LOG, is_error=True, structured_content={"exit_code": 0}),
            "exit-state-mismatch",
        ),
    ],
)
def test_checks_before_the_archive(tmp_path, event, reason):
    tau, ctx, reducer = make(tmp_path, GOOD)
    assert run(reducer, event, ctx) is None
    assert tau.kinds() == ["fallback"] and tau.journal()[0]["reason"] == reason
    assert ctx.model_registry.calls == [] and not (tmp_path / "sol").exists()


def test_over_the_character_limit(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD)
    reducer.max_chars = 1000
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.journal()[0]["reason"] == "source-over-max-chars"


def test_small_or_non_diagnostic_output_is_left_silently(tmp_path):
    tau, ctx, reducer = make(tmp_path)
    assert run(reducer, bash_event("cat big.log", INLINE, is_error=True), ctx) is None
    assert (
        run(reducer, bash_event("pytest", INLINE, is_error=True, parent_tool_call_id="call_0"), ctx) is None
    )
    assert tau.entries == []


def test_a_receipt_that_is_not_smaller_is_refused_and_not_cached(tmp_path):
    lines = [f"E   error {n:02d} " + "x" * 350 for n in range(12)]
    small = "\n".join(lines) + "\n"
    many = reply(*[("failure", line) for line in lines])
    tau, ctx, reducer = make(tmp_path, many, many)
    for _ in range(2):
        assert (
            run(reducer, bash_event("pytest", small + "\n\nCommand exited with code 1", is_error=True), ctx)
            is None
        )
    assert [d.get("reason") for d in tau.journal() if d["kind"] == "fallback"] == ["receipt-not-smaller"] * 2
    assert len(ctx.model_registry.calls) == 2


def test_no_safe_runtime_root_means_no_call(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD, session_id="../escape")
    assert run(reducer, bash_event("pytest", INLINE, is_error=True), ctx) is None
    assert tau.entries == [] and ctx.model_registry.calls == []


def test_fused_reduction_keeps_the_confirmation_the_marker_and_the_details(tmp_path):
    _tau, ctx, reducer = make(tmp_path, GOOD)
    event = fused_event(
        "edit",
        "python -m pytest -q",
        ["Successfully replaced 1 block(s) in calc.py.", f"[then_run:failed]\n{INLINE}"],
        is_error=True,
        details={"diff": "-a\n+b", "firstChangedLine": 2},
    )
    result = run(reducer, event, ctx)
    assert result["content"][0] == {"type": "text", "text": "Successfully replaced 1 block(s) in calc.py."}
    second = result["content"][1]["text"]
    assert second.startswith("[then_run:failed]\nsol_pi_evidence_receipt_v1\n")
    assert second.endswith("\n\nCommand exited with code 1")
    assert result["details"]["diff"] == "-a\n+b" and result["details"]["firstChangedLine"] == 2


# -- the receipt cache ---------------------------------------------------------------------------


def test_three_identical_logs_make_one_call_and_hits_report_no_usage(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD)
    results = [
        run(reducer, bash_event("pytest", INLINE, is_error=True, tool_call_id=f"c{n}"), ctx) for n in range(3)
    ]
    assert len(ctx.model_registry.calls) == 1
    assert "reducer_total_tokens=321" in results[0]["content"][0]["text"]
    assert all("reducer_total_tokens=0" in r["content"][0]["text"] for r in results[1:])
    assert (
        tau.kinds()
        == ["candidate", "route", "provider_response", "applied"] + ["candidate", "cache_hit", "applied"] * 2
    )
    assert [d["cacheHit"] for d in tau.journal() if d["kind"] == "applied"] == [False, True, True]
    assert tau.journal()[-1]["usage"]["totalTokens"] == 0


def test_the_cache_key(tmp_path):
    _tau, ctx, reducer = make(tmp_path, GOOD, GOOD, GOOD)
    run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    run(reducer, bash_event("pytest -x", INLINE, is_error=True), ctx)  # another command
    assert len(ctx.model_registry.calls) == 2
    reducer.settings = SolSettings(
        evidence_preserving_reducer=True,
        evidence_extractors=False,
        reducer_model="faux-1",
        reducer_provider="faux",
    )
    run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)  # same route: a hit
    assert len(ctx.model_registry.calls) == 2


def test_changed_instructions_invalidate_the_cache(tmp_path, monkeypatch):
    _tau, ctx, reducer = make(tmp_path, GOOD, GOOD)
    run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    original = reducer_module.reducer_instructions
    monkeypatch.setattr(reducer_module, "reducer_instructions", lambda: original() + "\nBe brief.")
    run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    assert len(ctx.model_registry.calls) == 2


def test_rejected_answers_are_not_cached(tmp_path):
    bad = reply(("failure", "invented"))
    tau, ctx, reducer = make(tmp_path, bad, answer("", stop_reason="error"), GOOD)
    for _ in range(3):
        run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    assert len(ctx.model_registry.calls) == 3 and tau.kinds()[-1] == "applied"


def test_the_cache_is_per_session_and_per_instance(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD, GOOD, GOOD)
    run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    other_session = FakeCtx(str(tmp_path), ctx.model_registry, session_id="session-b")
    run(reducer, bash_event("pytest", INLINE, is_error=True), other_session)
    other_instance = Reducer(tau, reducer.settings)
    asyncio.run(other_instance.on_tool_result(bash_event("pytest", INLINE, is_error=True), ctx))
    assert len(ctx.model_registry.calls) == 3


def test_a_cache_hit_rechecks_the_archive(tmp_path):
    _tau, ctx, reducer = make(tmp_path, GOOD)
    first = run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)
    artifact = re.search(r"^source_artifact=(.*)$", first["content"][0]["text"], re.MULTILINE).group(1)
    os.chmod(artifact, 0o600)
    with open(artifact, "w") as handle:
        handle.write("tampered")
    with pytest.raises(ArchiveIntegrityError):
        run(reducer, bash_event("pytest", INLINE, is_error=True), ctx)


def test_a_fused_cache_hit_keeps_the_current_mutation(tmp_path):
    tau, ctx, reducer = make(tmp_path, GOOD)
    blocks = ["Successfully wrote 10 bytes to a.py", f"[then_run:failed]\n{INLINE}"]
    run(reducer, fused_event("write", "pytest", blocks, is_error=True, details={"n": 1}), ctx)
    later = ["Successfully replaced 2 block(s) in b.py.", f"[then_run:failed]\n{INLINE}"]
    result = run(reducer, fused_event("edit", "pytest", later, is_error=True, details={"n": 2}), ctx)
    assert tau.kinds()[-2:] == ["cache_hit", "applied"]
    assert result["content"][0]["text"] == "Successfully replaced 2 block(s) in b.py."
    assert result["details"]["n"] == 2


def test_the_cache_keeps_the_64_most_recent(tmp_path):
    _tau, ctx, reducer = make(tmp_path, *[GOOD] * 66)
    logs = [INLINE.replace("0.42s", f"{n}.00s") for n in range(66)]
    for log in logs[:65]:
        run(reducer, bash_event("pytest", log, is_error=True), ctx)
    run(reducer, bash_event("pytest", logs[64], is_error=True), ctx)  # recent: a hit
    assert len(ctx.model_registry.calls) == 65
    run(reducer, bash_event("pytest", logs[0], is_error=True), ctx)  # evicted: a call
    assert len(ctx.model_registry.calls) == 66


def test_savings_are_shown_in_the_interactive_mode_only(tmp_path):
    _tau, ctx, reducer = make(tmp_path, GOOD, GOOD, mode="tui")

    async def both():
        await reducer.on_tool_result(bash_event("pytest", INLINE, is_error=True), ctx)
        plain = FakeCtx(str(tmp_path), ctx.model_registry, session_id="session-b")
        await reducer.on_tool_result(bash_event("pytest", INLINE, is_error=True), plain)
        return plain

    plain = asyncio.run(both())
    (route, _level), (message, level) = ctx.ui.notices  # the first call also names the reducer model
    assert (
        route
        == "⚡ SoL-Pi · Evidence Reducer\nReducer model · faux/faux-1 (the session's model; set sol.reducerModel to choose)"
    )
    assert message.startswith("⚡ SoL-Pi · Evidence Reducer\nMoney saved · ") and level == "info"
    assert message.endswith("removed from future prompts") and plain.ui.notices == []


def test_an_abort_of_the_run_ends_the_call(tmp_path):
    async def never(context):
        await asyncio.sleep(30)

    signal = api.AbortSignal()
    tau, ctx, reducer = make(tmp_path, never, signal=signal)

    async def scenario():
        asyncio.get_running_loop().call_later(0.05, signal.abort)
        return await reducer.on_tool_result(bash_event("pytest", INLINE, is_error=True), ctx)

    assert asyncio.run(scenario()) is None
    assert tau.journal()[-1]["reason"] == "model-call-timeout"
