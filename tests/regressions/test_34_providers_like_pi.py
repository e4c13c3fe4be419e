"""Issue 34, checked against real pi-ai 1.6: OpenRouter's cache markers, reasoning details and billed
cost, the Chat Completions event order, Responses service tiers and ``strict``.

Each case sends the same request to pi-ai's own adapter (Node, the npm package) and to tau's, each
answered by the same scripted stream on a loopback server, and compares what went out (request
bodies), the events, and the final message. A follow-up request is built from each program's own
reply, so a reasoning round trip is pi's end to end.

Opt-in like ``test_22_streams_like_pi.py``: needs ``PI_BIN`` pointing at real pi 1.6 installed from
npm (``data/pi22/README.md``); skipped otherwise. ``tests/llm`` asserts the same outcomes always.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
pytest.importorskip("openai")

import test_openai_completions as C
import test_openai_responses as R
from loopback import BASH_TOOL, READ_TOOL, LoopbackServer, Reply, run_stream, system, user

from tau.llm.stream import StreamOptions
from tau.llm.types import Model, ModelCost

# One streamSimple call of pi-ai's adapter; prints the event types and the final message.
PI_STREAM = """
import { readFileSync } from "node:fs";
const [dist, specPath] = process.argv.slice(2);
const { api, model, context, options } = JSON.parse(readFileSync(specPath, "utf8"));
const adapter = await import(`file://${dist}/api/${api}.js`);
const stream = adapter.streamSimple(model, context, { apiKey: "sk-test", maxRetries: 0, ...options });
const types = [];
for await (const event of stream) types.push(event.type);
console.log(JSON.stringify({ types, message: await stream.result() }));
"""


def _pi_ai() -> tuple[str, Path]:
    pi_bin = os.environ.get("PI_BIN")
    if not pi_bin:
        pytest.skip("set PI_BIN to real pi 1.6 (tests/regressions/data/pi22/README.md)")
    modules = Path(pi_bin).absolute().parent.parent
    dist = modules / "@earendil-works" / "pi-ai" / "dist"
    node = modules / ".bin" / "node"
    node_path = str(node) if node.exists() else shutil.which("node")
    if not dist.is_dir() or node_path is None:
        pytest.skip(f"no pi-ai or Node beside PI_BIN={pi_bin}")
    return node_path, dist


def _pi_model(model: Model) -> dict[str, Any]:
    data = model.to_json()
    if model.compat:
        data["compat"] = model.compat
    return data


def _run_pi(tmp_path: Path, model: Model, context: dict, options: dict) -> dict:
    node, dist = _pi_ai()
    script, spec = tmp_path / "pi_stream.mjs", tmp_path / "spec.json"
    script.write_text(PI_STREAM)
    body = {"api": model.api, "model": _pi_model(model), "context": context, "options": options}
    spec.write_text(json.dumps(body))
    done = subprocess.run(
        [node, str(script), str(dist), str(spec)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _run_tau(provider, model: Model, context: dict, options: StreamOptions) -> dict:
    events, message = run_stream(provider.stream, model, copy.deepcopy(context), options)
    return {"types": [event["type"] for event in events], "message": message}


def _comparable(message: dict) -> dict:
    """What both programs decide: content, stop reason, usage; not clocks or ids of the run."""
    kept = {key: message.get(key) for key in ("content", "stopReason", "errorMessage", "responseId")}
    usage = dict(message["usage"])
    usage["cost"] = {key: round(value, 12) for key, value in usage["cost"].items()}
    usage.pop("reasoning", None)  # pi records 0 where tau leaves the field out (both mean none)
    kept["usage"] = usage
    return kept


def _both(tmp_path, provider, make_model, turns, replies, pi_options, tau_options):
    """Run ``turns`` (each: the previous reply → the next context) through pi and tau; returns
    ``(pi runs, tau runs, pi bodies, tau bodies)``."""
    runs: dict[str, list[dict]] = {"pi": [], "tau": []}
    bodies: dict[str, list[Any]] = {}
    for who in ("pi", "tau"):
        with LoopbackServer([reply() for reply in replies]) as server:
            model = make_model(server)
            previous = None
            for turn in turns:
                context = turn(previous)
                if who == "pi":
                    run = _run_pi(tmp_path, model, context, pi_options)
                else:
                    run = _run_tau(provider, model, context, tau_options)
                runs[who].append(run)
                previous = run["message"]
        bodies[who] = server.bodies
    return runs["pi"], runs["tau"], bodies["pi"], bodies["tau"]


# -- Chat Completions through OpenRouter ------------------------------------------------------------

CONTEXT = {"messages": [system("S", [BASH_TOOL, READ_TOOL]), user("list")]}


def _follow_with_results(previous: dict) -> dict:
    return {"messages": [*CONTEXT["messages"], previous, *C._results(previous, "a.txt", "A")]}


def test_openrouter_claude_round_trip_is_pi_s(tmp_path):
    """Cache markers, reasoning details into the thinking signature and back, billed cost, events."""
    pi, tau, pi_bodies, tau_bodies = _both(
        tmp_path,
        C.provider,
        lambda server: C.openrouter(server, reasoning=True),
        [lambda _: CONTEXT, _follow_with_results],
        [C.openrouter_reasoning_reply, lambda: C.text_reply("done")],
        {"reasoning": "high", "sessionId": "s-1"},
        C.opts(reasoning="high", session_id="s-1"),
    )
    assert tau_bodies == pi_bodies
    assert "cache_control" in json.dumps(pi_bodies[0]) and "reasoning_details" in json.dumps(pi_bodies[1])
    for pi_run, tau_run in zip(pi, tau, strict=True):
        assert tau_run["types"] == pi_run["types"]
        assert _comparable(tau_run["message"]) == _comparable(pi_run["message"])


def test_openrouter_encrypted_reasoning_round_trip_is_pi_s(tmp_path):
    encrypted = {
        "type": "reasoning.encrypted",
        "data": "gAAAAABpl3jd",
        "id": "rs_1",
        "format": "openai-responses-v1",
    }

    def reply() -> Reply:
        return Reply(
            pieces=[
                C.or_chunk({"reasoning": None, "reasoning_details": [encrypted]}),
                C.or_chunk({"content": "Four."}),
                C.or_chunk(
                    finish="stop",
                    usage={
                        **C.OR_USAGE,
                        "is_byok": True,
                        "cost_details": {
                            "upstream_inference_cost": None,
                            "upstream_inference_prompt_cost": 0.001,
                            "upstream_inference_completions_cost": 0.0005,
                        },
                    },
                ),
                b"data: [DONE]\n\n",
            ]
        )

    base = {"messages": [system("S"), user("2+2?")]}
    pi, tau, pi_bodies, tau_bodies = _both(
        tmp_path,
        C.provider,
        lambda server: C.openrouter(server, "openai/gpt-5", reasoning=True),
        [lambda _: base, lambda previous: {"messages": [*base["messages"], previous, user("sure?", 9)]}],
        [reply, lambda: C.text_reply("yes")],
        {"reasoning": "low"},
        C.opts(reasoning="low"),
    )
    assert tau_bodies == pi_bodies
    for pi_run, tau_run in zip(pi, tau, strict=True):
        assert tau_run["types"] == pi_run["types"]
        assert _comparable(tau_run["message"]) == _comparable(pi_run["message"])


def test_models_json_server_tools_carry_no_strict_key_like_pi(tmp_path):
    """Chat Completions and Responses models without compat settings: pi leaves ``strict`` out."""
    for provider, make, reply in (
        (C.provider, lambda s: C.model(s), lambda: C.text_reply("ok")),
        (
            R.provider,
            lambda s: R.model(s, provider="vllm", reasoning=False),
            lambda: R.text_stream("ok").reply(),
        ),
    ):
        _, _, pi_bodies, tau_bodies = _both(
            tmp_path, provider, make, [lambda _: CONTEXT], [reply], {}, C.opts()
        )
        assert tau_bodies == pi_bodies
        assert "strict" not in json.dumps(pi_bodies[0]["tools"])


# -- Responses service tiers --------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["flex", "priority", "default"])
def test_service_tier_priced_as_pi_prices_it(tier, tmp_path):
    def reply() -> Reply:
        return R.tier_stream(tier).reply()

    pi, tau, _, _ = _both(
        tmp_path,
        R.provider,
        lambda server: R.model(server, cost=ModelCost(input=1.25, output=10, cacheRead=0.125)),
        [lambda _: {"messages": [system("S"), user("hi")]}],
        [reply],
        {},
        R.opts(),
    )
    assert _comparable(tau[0]["message"])["usage"] == _comparable(pi[0]["message"])["usage"]
