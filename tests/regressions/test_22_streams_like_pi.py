"""Issue 22, items 7-9, checked against real pi-ai 1.6: the streams the provider tests replay give
tau's adapters and pi's the same message, except where tau differs on purpose (item 7).

Opt-in: needs ``PI_BIN`` pointing at real pi 1.6 installed from npm (``data/pi22/README.md``), whose
``node_modules`` holds ``@earendil-works/pi-ai`` and, in ``.bin``, Node 22. Skipped otherwise, so CI
without Node runs the tau side alone (``tests/llm``). Both programs read the same bytes from a
loopback server; the script below only imports the npm package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
pytest.importorskip("anthropic")
pytest.importorskip("openai")

import test_anthropic as anthropic_case
import test_openai_completions as completions_case
import test_openai_responses as responses_case
from loopback import LoopbackServer, Reply, run_stream

# Streams the final message of pi-ai's own adapter for one request ("hi") to the given server.
PI_STREAM = """
const [dist, api, baseUrl] = process.argv.slice(2);
const adapter = await import(`file://${dist}/api/${api}.js`);
const model = { id: "m", name: "m", api, provider: "custom", baseUrl, reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };
const stream = adapter.streamSimple(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] },
  { apiKey: "k", maxRetries: 0 });
const types = [];
for await (const event of stream) types.push(event.type);
const message = await stream.result();
console.log(JSON.stringify({ types, stopReason: message.stopReason, content: message.content }));
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


def _pi(api: str, reply: Reply, tmp_path: Path) -> dict:
    node, dist = _pi_ai()
    script = tmp_path / "pi_stream.mjs"
    script.write_text(PI_STREAM)
    with LoopbackServer([reply]) as server:
        base = server.url if api == "anthropic-messages" else f"{server.url}/v1"
        done = subprocess.run(
            [node, str(script), str(dist), api, base], capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 0, done.stderr
    return _comparable(json.loads(done.stdout))


def _tau(case, reply: Reply) -> dict:
    with LoopbackServer([reply]) as server:
        events, message = run_stream(case.provider.stream, case.model(server), case.CONTEXT, case.opts())
    types = [event["type"] for event in events]
    return _comparable({"types": types, "stopReason": message["stopReason"], "content": message["content"]})


def _comparable(run: dict) -> dict:
    """JSON parse errors quote each language's parser (kept by design): only what they received counts."""
    for block in run["content"]:
        if "argumentsError" in block:
            block["argumentsError"] = block["argumentsError"].partition("\n\nReceived arguments:\n")[2]
    return run


def _unterminated(reply: Reply) -> Reply:
    reply.pieces[-1] = reply.pieces[-1].rstrip(b"\n")
    return reply


A = anthropic_case
C = completions_case


def _max_tokens_in_tool_call(with_block_stop: bool) -> Reply:
    pieces = [
        A.message_start(),
        A.block_start(0, {"type": "tool_use", "id": "toolu_01", "name": "write", "input": {}}),
        A.delta(0, {"type": "input_json_delta", "partial_json": '{"path": "notes.md", "con'}),
        A.delta(0, {"type": "input_json_delta", "partial_json": 'tent": "# Notes\\n\\nFirst li'}),
    ]
    pieces += [A.block_stop(0)] if with_block_stop else []
    return Reply(pieces=[*pieces, A.message_delta("max_tokens"), A.message_stop()])


SAME = {
    "8: max_tokens in a tool call, no content_block_stop": (A, lambda: _max_tokens_in_tool_call(False)),
    "8: max_tokens in a tool call, content_block_stop": (A, lambda: _max_tokens_in_tool_call(True)),
    "9: anthropic, last event unterminated": (A, lambda: _unterminated(A.text_reply("Hello"))),
    "9: responses, last event unterminated": (
        responses_case,
        lambda: _unterminated(responses_case.text_stream("Hi").reply()),
    ),
    "9: completions, last chunk unterminated": (
        C,
        lambda: Reply(
            pieces=[C.chunk({"role": "assistant", "content": "hello"}), C.chunk(finish="stop")[:-2]]
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_tau_reads_the_stream_as_pi_does(name, tmp_path):
    case, reply = SAME[name]
    pi = _pi(_api(case), reply(), tmp_path)
    assert _tau(case, reply()) == pi


def test_calls_sharing_an_index_stay_separate_unlike_pi(tmp_path):
    """Item 7, a deliberate difference: pi 1.6 merges Ollama's index-0 parallel calls into one."""
    first, second = '{"path":"a.txt"}', '{"path":"b.txt"}'

    def reply() -> Reply:
        calls = [C._call("call_1", "read", first), C._call("call_2", "read", second)]
        pieces = [C._ollama_chunk({"role": "assistant", "content": "", "tool_calls": [c]}) for c in calls]
        return Reply(
            pieces=[*pieces, C._ollama_chunk({"content": ""}, finish="tool_calls"), b"data: [DONE]\n\n"]
        )

    pi = _pi("openai-completions", reply(), tmp_path)
    assert [(b["id"], b["arguments"], b["argumentsError"]) for b in pi["content"]] == [
        ("call_1", {}, first + second)
    ]
    tau = _tau(C, reply())
    assert [(b["id"], b["arguments"]) for b in tau["content"]] == [
        ("call_1", {"path": "a.txt"}),
        ("call_2", {"path": "b.txt"}),
    ]
    assert tau["stopReason"] == pi["stopReason"] == "toolUse"


def _api(case) -> str:
    return {A: "anthropic-messages", C: "openai-completions", responses_case: "openai-responses"}[case]
