"""The reducer on the real run-time session with the scripted faux model (opt-in ``sol`` setting).

A failing ``pytest`` prints about 30 KB; the faux reducer model answers with quotes taken from the
log, and the transcript gets the receipt instead of the log. An answer that invents a quote leaves
the original output in place, and the journal says why.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from faux_model import FauxModel

session_module = pytest.importorskip("tau.agent.session", reason="the run-time session has not landed yet")

from tau.agent.settings import Settings  # noqa: E402
from tau.extension import load_extensions  # noqa: E402
from tau.session.manager import SessionManager  # noqa: E402

TEST_FILE = """\
def test_big_log():
    for n in range(700):
        print(f"line {n:04d} " + "x" * 35)
    assert 41 == 42
"""
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider test_big.py"
REDUCER_PREFIX = "You are a lossless test/build output reducer."


def text_of(message: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text")


def reducer_answer(request: dict[str, Any], invent: bool) -> str:
    prompt = text_of(request["messages"][0])
    digest = re.search(r"^source_sha256=([0-9a-f]{64})$", prompt, re.MULTILINE).group(1)
    log = prompt.split("<untrusted_log>\n", 1)[1].rsplit("\n</untrusted_log>", 1)[0]
    failing = [line for line in log.splitlines() if "assert 41 == 42" in line or line.startswith("FAILED")]
    evidence = [{"kind": "failure", "quote": line} for line in failing]
    if invent:
        evidence.append({"kind": "failure", "quote": "E       AssertionError: assert 40 == 42"})
    evidence.append({"kind": "summary", "quote": "line 0699 " + "x" * 35})
    answer = {
        "schema": "sol-pi-evidence-receipt/1",
        "source_sha256": digest,
        "status": "failure",
        "uncertain": False,
        "evidence": evidence,
    }
    return json.dumps(answer)


def script(invent: bool) -> list[dict[str, Any]]:
    def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
        if request["systemPrompt"].startswith(REDUCER_PREFIX):
            step: dict[str, Any] = {"text": reducer_answer(request, invent)}
        elif request["messages"][-1]["role"] == "user":
            step = {"bash": PYTEST}
        else:
            step = {"text": "The test fails: 41 is not 42."}
        return [step, {"factory": respond}]

    return [{"factory": respond}]


MODEL_TIER = {"sol": {"evidencePreservingReducer": True, "evidenceExtractors": False}}


def run_session(
    tmp_path: Path, invent: bool, settings: dict[str, Any] | None = None
) -> tuple[SessionManager, dict[str, Any]]:
    (tmp_path / "test_big.py").write_text(TEST_FILE)
    scripted = FauxModel(script(invent), record=None)
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    session = session_module.AgentSession(
        manager,
        Settings.in_memory(MODEL_TIER if settings is None else settings),
        scripted.registry,
        scripted.model,
        cwd=str(tmp_path),
    )

    async def scenario():
        await load_extensions(session, cwd=str(tmp_path), mode="json")
        await session.start()
        await session.prompt("run the tests")

    asyncio.run(scenario())
    (result,) = [
        e["message"]
        for e in manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    return manager, result


def journal(manager: SessionManager) -> list[dict[str, Any]]:
    return [
        e["data"]
        for e in manager.get_entries()
        if e["type"] == "custom" and e["customType"] == "sol-pi-evidence-preserving-reducer-v1"
    ]


def test_a_failing_30_kb_pytest_log_becomes_a_receipt_of_verbatim_quotes(tmp_path):
    manager, result = run_session(tmp_path, invent=False)
    receipt = text_of(result)
    assert result["isError"] is True and receipt.startswith("sol_pi_evidence_receipt_v1\nstatus=failure\n")
    assert receipt.endswith("\n\nCommand exited with code 1")
    artifact = Path(re.search(r"^source_artifact=(.*)$", receipt, re.MULTILINE).group(1))
    log = artifact.read_text()
    assert 30_000 <= len(log.encode()) <= 40_000 and "line 0350 " in log
    assert artifact.is_relative_to(tmp_path / "sessions" / "sol" / manager.get_session_id())
    quotes = [json.loads(q) for q in re.findall(r" quote=(\".*\")$", receipt, re.MULTILINE)]
    assert len(quotes) >= 3 and all(quote in log for quote in quotes)
    assert any("assert 41 == 42" in quote for quote in quotes)
    assert len(receipt.encode()) < 2_000
    assert "reducer_provider=faux\nreducer_model=faux-mini-20261206\n" in receipt  # the cheapest faux model
    assert [d["kind"] for d in journal(manager)] == ["candidate", "route", "provider_response", "applied"]
    assert result["details"]["evidencePreservingReducer"]["sourceBytes"] == len(log.encode())
    # the session file on disk holds the receipt, not the log
    on_disk = Path(manager.get_session_file()).read_text()
    assert "sol_pi_evidence_receipt_v1" in on_disk and "line 0350 " not in on_disk


def test_an_invented_quote_leaves_the_original_output(tmp_path):
    manager, result = run_session(tmp_path, invent=True)
    output = text_of(result)
    assert "line 0350 " + "x" * 35 in output and "sol_pi_evidence_receipt_v1" not in output
    assert output.endswith("Command exited with code 1")
    assert "evidencePreservingReducer" not in (result.get("details") or {})
    assert [d["kind"] for d in journal(manager)] == ["candidate", "route", "provider_response", "fallback"]
    assert journal(manager)[-1]["reason"] == "unverifiable-quote"


def test_the_default_profile_reduces_the_log_without_a_reducer_request(tmp_path):
    from tau.modes.inspect import info_lines, summarize

    manager, result = run_session(tmp_path, invent=True, settings={})  # an answer would be rejected
    receipt = text_of(result)
    assert (
        receipt.startswith("sol_pi_evidence_receipt_v1\nstatus=failure\n")
        and "\nextractor=pytest\n" in receipt
    )
    quotes = [json.loads(q) for q in re.findall(r" quote=(\".*\")$", receipt, re.MULTILINE)]
    assert (
        "E       assert 41 == 42" in quotes and "FAILED test_big.py::test_big_log - assert 41 == 42" in quotes
    )
    assert [d["kind"] for d in journal(manager)] == ["candidate", "applied"]  # no provider_response: no call
    lines = info_lines(summarize(manager, manager.get_session_file()))
    assert (
        "evidence reducer  1 receipt: 1 extracted (pytest 1), 0 by a reducer model; 0 left in full" in lines
    )


def test_session_info_names_the_automatic_reducer_model(tmp_path):
    from tau.modes.inspect import info_lines, summarize

    manager, result = run_session(tmp_path, invent=False)
    assert "reducer_model=faux-mini-20261206" in text_of(result)
    lines = info_lines(summarize(manager, manager.get_session_file()))
    assert (
        "  reducer model faux/faux-mini-20261206 (the cheapest faux model, chosen automatically; "
        "session model faux/faux-1)"
    ) in lines
