"""The reducer's two tiers, the automatic cheap model, and the rule that a receipt must pay.

- the extractor tier is on in the default settings and makes no model call;
- an unknown format falls through: left alone, or to the model tier when it is on;
- the model tier calls the cheapest priced model of the session's provider unless one is configured,
  journals which (``route``), and calls only where the call pays; a passing command's small log gets
  no call; every decision carries its figures.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from reducer_fakes import FakeCtx, FakeRegistry, FakeTau, bash_event, failure_receipt

from tau.bundled.reducer.reducer import Reducer
from tau.bundled.sol_common import SolSettings
from tau.llm.types import ModelCost

CORPUS = Path(__file__).parent / "corpus"
EXIT_1 = "\n\nCommand exited with code 1"
DEPLOY = "".join(f"[deploy] step {n:04d}: syncing asset bundle {n * 7919 % 10007:05d}\n" for n in range(900))
DEPLOY_FAILURE = "[deploy] error: rollout failed: 3 of 5 replicas unhealthy"


@dataclass(frozen=True)
class PricedModel:
    provider: str
    id: str
    cost: ModelCost = field(default_factory=ModelCost)
    input: tuple[str, ...] = ("text",)
    max_tokens: int = 16_384


SONNET = PricedModel("anthropic", "claude-sonnet-5-5", ModelCost(3, 15))
HAIKU = PricedModel("anthropic", "claude-haiku-5-5", ModelCost(1, 5))
OPUS = PricedModel("anthropic", "claude-opus-5-5", ModelCost(15, 75))
OTHER = PricedModel("openai", "gpt-nano", ModelCost(0.1, 0.4))


class PricedRegistry(FakeRegistry):
    def get_available(self) -> list[Any]:
        return list(self.models)


def _run(reducer: Reducer, event: Any, ctx: Any) -> Any:
    return asyncio.run(reducer.on_tool_result(event, ctx))


def _text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


def test_the_default_settings_reduce_a_known_log_without_a_model_call(tmp_path):
    log = (CORPUS / "pytest-many.log").read_text(encoding="utf-8")
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    reducer = Reducer(tau, SolSettings())  # the default profile: extractors on, model tier off
    result = _run(reducer, bash_event("python -m pytest -q", log + EXIT_1, is_error=True), ctx)
    text = _text(result)
    assert text.startswith("sol_pi_evidence_receipt_v1\nstatus=failure\n") and text.endswith(EXIT_1)
    assert "\nextractor=pytest\nverified_evidence:\n" in text and "reducer_model=" not in text
    quotes = [json.loads(q) for q in re.findall(r' quote=(".*")$', text, re.M)]
    assert all(
        quote in log for quote in quotes
    ) and "FAILED tests/test_many.py::test_with_tax_de[59]" in "\n".join(quotes)
    assert ctx.model_registry.calls == []
    assert tau.kinds() == ["candidate", "applied"]
    applied = tau.journal()[-1]
    assert applied["tier"] == "extract" and applied["format"] == "pytest"
    decision = applied["decision"]
    assert decision["pays"] is True and decision["receiptTokens"] * 2 < decision["sourceTokens"]
    assert decision["savingUnits"] > decision["costUnits"]
    artifact = Path(re.search(r"^source_artifact=(.*)$", text, re.M).group(1))
    assert artifact.read_text(encoding="utf-8") == log  # the full log, recallable


@pytest.mark.parametrize(
    "command", ["sh ci/pytest.sh", "bash -e scripts/test", "./run_tests.sh", "cd web && scripts/ci.sh --fast"]
)
def test_a_ci_script_s_log_gets_the_extractors_receipt(tmp_path, command):
    """CI jobs run scripts whose names say nothing of the runner: the log decides (issue 25)."""
    log = (CORPUS / "pytest-many.log").read_text(encoding="utf-8")
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    result = _run(Reducer(tau, SolSettings()), bash_event(command, log + EXIT_1, is_error=True), ctx)
    assert "\nextractor=pytest\n" in _text(result)
    assert ctx.model_registry.calls == []


@pytest.mark.parametrize("command", ["cat ci/pytest.sh", "cat build.log", "python3 tool.py", "git log -p"])
def test_other_commands_never_reach_the_extractors(tmp_path, command):
    """Output that merely looks like a log (a file shown, a program's own output) stays as it is."""
    log = (CORPUS / "pytest-many.log").read_text(encoding="utf-8")
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    assert _run(Reducer(tau, SolSettings()), bash_event(command, log, is_error=False), ctx) is None
    assert tau.entries == []


def test_a_small_log_is_left_alone_without_a_journal_entry(tmp_path):
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    log = (CORPUS / "pytest-tb-line.log").read_text(encoding="utf-8")  # 3 KB
    assert (
        _run(Reducer(tau, SolSettings()), bash_event("pytest -q", log + EXIT_1, is_error=True), ctx) is None
    )
    assert tau.entries == [] and not (tmp_path / "sol").exists()


def test_an_unknown_format_is_left_alone_by_the_extractors(tmp_path):
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    event = bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True)
    assert _run(Reducer(tau, SolSettings()), event, ctx) is None
    assert tau.kinds() == ["fallback"] and tau.journal()[0]["reason"] == "unrecognised-format"
    assert ctx.model_registry.calls == []


def test_an_unknown_format_goes_to_the_model_tier_when_it_is_on(tmp_path):
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path), FakeRegistry(replies=[failure_receipt(DEPLOY_FAILURE)]))
    event = bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True)
    result = _run(Reducer(tau, SolSettings(evidence_preserving_reducer=True)), event, ctx)
    assert "reducer_model=faux-1" in _text(result) and len(ctx.model_registry.calls) == 1


def test_a_receipt_that_would_keep_most_of_the_log_does_not_pay(tmp_path):
    blocks = "".join(
        f"{'=' * 70}\nFAIL: test_{n:02d} (tests.test_x.T{n}.test_{n:02d})\n{'-' * 70}\n"
        f'Traceback (most recent call last):\n  File "/w/tests/test_x.py", line {n}, in test_{n:02d}\n'
        f"AssertionError: case {n} failed with {'q' * n}\n\n"
        for n in range(20)
    )
    log = f"{blocks}{'-' * 70}\nRan 20 tests in 0.010s\n\nFAILED (failures=20)\n"
    assert len(log) > 4096
    tau, ctx = FakeTau(), FakeCtx(str(tmp_path))
    assert (
        _run(Reducer(tau, SolSettings()), bash_event("python -m unittest", log + EXIT_1, is_error=True), ctx)
        is None
    )
    (fallback,) = tau.journal()
    assert fallback["reason"] == "does-not-pay" and fallback["format"] == "unittest"
    assert fallback["decision"]["pays"] is False and fallback["decision"]["reason"] == "receipt-too-large"
    assert not (tmp_path / "sol").exists()  # nothing archived for a receipt never used


def _priced(tmp_path: Path, *replies: Any, settings: SolSettings | None = None, current: Any = SONNET):
    tau = FakeTau()
    registry = PricedRegistry(SONNET, HAIKU, OPUS, OTHER, replies=list(replies))
    ctx = FakeCtx(str(tmp_path), registry, model=current)
    settings = settings or SolSettings(evidence_preserving_reducer=True, evidence_extractors=False)
    return tau, ctx, Reducer(tau, settings)


def test_without_a_configured_model_the_cheapest_of_the_provider_reduces(tmp_path):
    tau, ctx, reducer = _priced(tmp_path, failure_receipt(DEPLOY_FAILURE))
    event = bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True)
    result = _run(reducer, event, ctx)
    assert ctx.model_registry.calls[0][0] is HAIKU
    assert "reducer_provider=anthropic\nreducer_model=claude-haiku-5-5\n" in _text(result)
    route = next(entry for entry in tau.journal() if entry["kind"] == "route")
    assert route == {
        **route,
        "provider": "anthropic",
        "model": "claude-haiku-5-5",
        "source": "cheapest",
        "sessionModel": "claude-sonnet-5-5",
    }
    response = next(entry for entry in tau.journal() if entry["kind"] == "provider_response")
    assert response["model"] == "claude-haiku-5-5"  # what tau savings prices the call at
    decision = tau.journal()[-1]["decision"]
    assert decision["tier"] == "model" and decision["priceRatio"] == round(1 / 3, 4) and decision["pays"]


def test_a_configured_model_always_wins(tmp_path):
    settings = SolSettings(
        evidence_preserving_reducer=True,
        evidence_extractors=False,
        reducer_provider="openai",
        reducer_model="gpt-nano",
    )
    tau, ctx, reducer = _priced(tmp_path, failure_receipt(DEPLOY_FAILURE), settings=settings)
    _run(reducer, bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True), ctx)
    assert ctx.model_registry.calls[0][0] is OTHER  # not the cheapest anthropic model
    assert next(e for e in tau.journal() if e["kind"] == "route")["source"] == "configured"


def test_a_call_that_costs_more_than_it_saves_is_not_made(tmp_path):
    settings = SolSettings(
        evidence_preserving_reducer=True,
        evidence_extractors=False,
        reducer_provider="anthropic",
        reducer_model="claude-opus-5-5",
    )
    tau, ctx, reducer = _priced(tmp_path, failure_receipt(DEPLOY_FAILURE), settings=settings)
    assert (
        _run(reducer, bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True), ctx) is None
    )
    assert ctx.model_registry.calls == []
    fallback = tau.journal()[-1]
    assert fallback["reason"] == "does-not-pay" and fallback["decision"]["reason"] == "call-costs-more"
    assert fallback["decision"]["costUnits"] >= fallback["decision"]["savingUnits"]
    assert (fallback["provider"], fallback["model"], fallback["source"]) == (
        "anthropic",
        "claude-opus-5-5",
        "configured",
    )


def test_no_model_call_for_a_command_that_passed_unless_its_log_is_large(tmp_path):
    tau, ctx, reducer = _priced(tmp_path, failure_receipt("[deploy] step 0001"))
    small = bash_event("make deploy", DEPLOY[:20_000], is_error=False, structured_content={"exit_code": 0})
    assert _run(reducer, small, ctx) is None and ctx.model_registry.calls == []
    assert tau.journal()[-1]["decision"]["reason"] == "passing-command"
    large = bash_event("make deploy", DEPLOY * 2, is_error=False, structured_content={"exit_code": 0})
    ctx.model_registry.replies = [_success_receipt("[deploy] step 0001")]
    assert _run(reducer, large, ctx) is not None and len(ctx.model_registry.calls) == 1


def _success_receipt(quote: str):
    respond = failure_receipt(quote)

    def success(context: dict[str, Any]) -> dict[str, Any]:
        answer = respond(context)
        receipt = json.loads(answer["content"][0]["text"])
        receipt.update(status="success", evidence=[{"kind": "summary", "quote": quote}])
        answer["content"][0]["text"] = json.dumps(receipt)
        return answer

    return success


def test_tau_savings_prices_the_reducer_call_at_the_cheap_model_s_prices(tmp_path):
    from tau.llm.registry import ModelRegistry
    from tau.modes.savings.billed import billed_parts
    from tau.modes.savings.cost_model import PriceBook

    tau, ctx, reducer = _priced(tmp_path, failure_receipt(DEPLOY_FAILURE))
    _run(reducer, bash_event("make deploy", DEPLOY + DEPLOY_FAILURE + EXIT_1, is_error=True), ctx)
    branch = [{"type": "custom", "customType": kind, "data": data} for kind, data in tau.entries]
    book = PriceBook(lookup=ModelRegistry(env={}).find)
    reducer_part = billed_parts(branch, book)["reducer"]
    usage = next(d for d in tau.journal() if d["kind"] == "provider_response")["usage"]
    haiku = ModelRegistry(env={}).find("anthropic", "claude-haiku-5-5").cost
    expected = (usage["input"] * haiku.input + usage["output"] * haiku.output) / 1_000_000
    assert reducer_part["requests"] == 1 and abs(reducer_part["cost"] - expected) < 1e-12
