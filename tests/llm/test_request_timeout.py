"""A request that runs past ``StreamOptions.timeout_ms`` ends with pi's text, in every adapter.

The loopback server never answers (or stops mid-stream), so the SDK's own timeout fires however
slow the machine is; the text is then pi's ``Request timed out.``, not the transport's cancellation
("Cancelled via cancel scope 7faf…; reason: deadline exceeded") nor a host name (issue 34).
"""

from __future__ import annotations

import pytest
import test_anthropic
import test_openai_completions
import test_openai_responses
from loopback import LoopbackServer, Reply, run_stream

from tau.llm.retry import is_retryable

pytest.importorskip("anthropic")
pytest.importorskip("openai")

CASES = {
    "anthropic": (test_anthropic, test_anthropic.message_start()),
    "completions": (test_openai_completions, test_openai_completions.chunk({"content": "Hi"})),
    "responses": (test_openai_responses, test_openai_responses.Events().created().pieces[0]),
}


@pytest.mark.parametrize("phase", ["before the response", "mid-stream"])
@pytest.mark.parametrize("api", sorted(CASES))
def test_a_timeout_says_request_timed_out(api, phase):
    case, first_piece = CASES[api]
    reply = Reply(stall=True) if phase == "before the response" else Reply(pieces=[first_piece], hang=True)
    with LoopbackServer([reply]) as server:
        _, message = run_stream(
            case.provider.stream, case.model(server), case.CONTEXT, case.opts(timeout_ms=200)
        )
    assert (message["stopReason"], message["errorMessage"]) == ("error", "Request timed out.")
    assert is_retryable(message)
