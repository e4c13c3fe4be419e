"""The faux provider: scripts, streaming, factories, and pi 1.6's usage estimate on the golden requests."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

from tau.common import jsjson
from tau.llm.providers import faux
from tau.llm.providers.faux import FauxProvider, FauxScriptError, estimate_usage, load_script
from tau.llm.stream import AbortSignal, DeferredPayload, StreamOptions
from tau.llm.types import Model

FAUX = Model(id="faux-1", provider="faux", api="faux", max_tokens=16384)
SYSTEM = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "Be useful."},
    "toolsAdded": [{"name": "bash", "description": "Run", "parameters": {"type": "object"}}],
    "timestamp": 0,
}


def user(text):
    return {"role": "user", "content": text, "timestamp": 1}


async def call(provider, messages, options=None):
    stream = provider.stream(FAUX, {"messages": messages}, options)
    events = [event async for event in stream]
    return events, await stream.result()


def run(coro):
    return asyncio.run(coro)


# -- pi's usage estimate, recomputed from the recorded requests ------------------------------


def scenario_pairs(pi_fixtures):
    """(scenario, request, pi's answer) for every turn request of every scenario, in order."""
    for path in sorted((pi_fixtures / "scenarios").glob("*.requests.json")):
        name = path.name.removesuffix(".requests.json")
        requests = jsjson.loads(path.read_bytes())["requests"]
        lines = (pi_fixtures / "scenarios" / f"{name}.jsonl").read_bytes().splitlines()
        entries = [jsjson.loads(line) for line in lines if line]
        answers = iter(
            e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"
        )
        for request in requests:
            if request["kind"] == "turn":
                yield name, request, next(answers)


def test_usage_matches_pi_on_every_scenario_request(pi_fixtures):
    caches: dict[str, dict] = {}
    checked = 0
    for name, request, answer in scenario_pairs(pi_fixtures):
        usage = estimate_usage(
            request["context"]["messages"],
            answer["content"],
            session_id="session",
            prompt_cache=caches.setdefault(name, {}),
        )
        assert usage == answer["usage"], f"{name} request {request['n']}"
        checked += 1
    assert checked >= 30


def test_summary_requests_have_no_session_so_input_is_the_whole_prompt(pi_fixtures):
    scenario = pi_fixtures / "scenarios" / "d-threshold-compaction"
    requests = jsjson.loads(scenario.with_suffix(".requests.json").read_bytes())["requests"]
    (summary,) = [r for r in requests if r["kind"] == "summary"]
    entries = [jsjson.loads(line) for line in scenario.with_suffix(".jsonl").read_bytes().splitlines()]
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    reply = "## Goal\nWrite an essay about testing.\n\n## Progress\n### Done\n- [x] Read notes.txt\n- [x] Wrote the essay\n\n## Next Steps\n1. Answer follow-up questions"
    usage = estimate_usage(summary["context"]["messages"], [{"type": "text", "text": reply}])
    assert usage == compaction["usage"]


def test_cache_counts_utf16_units_and_none_retention_disables_it():
    cache: dict = {}
    first = estimate_usage([user("😀 abc")], [], session_id="s", prompt_cache=cache)
    # "user:" + 2 units for the emoji + " abc" = 11 units -> 3 tokens, all written.
    assert (first["input"], first["cacheRead"], first["cacheWrite"]) == (0, 0, 3)
    second = estimate_usage([user("😀 abc"), user("more")], [], session_id="s", prompt_cache=cache)
    assert (second["cacheRead"], second["cacheWrite"]) == (3, 3)  # 22 units -> 6 tokens
    off = estimate_usage([user("😀 abc")], [], session_id="s", cache_retention="none", prompt_cache=cache)
    assert (off["input"], off["cacheRead"], off["cacheWrite"]) == (3, 0, 0)


# -- streaming -------------------------------------------------------------------------------


def test_bash_shorthand_streams_like_pis_json_mode_golden(pi_fixtures):
    golden = [
        json.loads(line) for line in (pi_fixtures / "events" / "json-bash.jsonl").read_text().splitlines()
    ]
    expected = [
        e["assistantMessageEvent"]["delta"]
        for e in golden
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "toolcall_delta"
    ]
    provider = FauxProvider([{"bash": "echo hi from bash"}])
    events, message = run(call(provider, [SYSTEM, user("bash: echo hi from bash")]))
    assert [e["delta"] for e in events if e["type"] == "toolcall_delta"] == expected
    assert [e["type"] for e in events] == [
        "start",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    call_block = message["content"][0]
    assert call_block["name"] == "bash" and call_block["arguments"] == {"command": "echo hi from bash"}
    assert call_block["id"].startswith("call_")
    assert (message["api"], message["provider"], message["model"], message["stopReason"]) == (
        "faux",
        "faux",
        "faux-1",
        "toolUse",
    )
    assert list(message) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
        "durationMs",
    ]


def test_tool_call_ids_count_up_across_a_providers_calls():
    provider = FauxProvider(
        [{"tool": "read", "args": {"path": "a"}}, {"text": "x", "tool": "read", "args": {}}]
    )
    _, first = run(call(provider, [user("a")]))
    _, second = run(call(provider, [user("b")]))
    assert (first["content"][0]["id"], second["content"][1]["id"]) == ("call_1", "call_2")
    assert second["content"][0] == {"type": "text", "text": "x"}


def test_text_streams_in_16_character_deltas_with_usage_on_every_partial():
    provider = FauxProvider([{"text": "The quick brown fox jumps over the lazy dog"}])
    events, message = run(call(provider, [user("hi")], StreamOptions(session_id="s1")))
    assert [e["delta"] for e in events if e["type"] == "text_delta"] == [
        "The quick brown ",
        "fox jumps over t",
        "he lazy dog",
    ]
    assert message["stopReason"] == "stop"
    assert message["usage"]["cacheWrite"] == 2 and message["usage"]["output"] == 11
    assert all(e["partial"]["usage"] == message["usage"] for e in events if "partial" in e)


def test_pi_shaped_steps_keep_their_fields():
    step = {
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"}],
        "stopReason": "stop",
        "responseId": "r1",
    }
    _, message = run(call(FauxProvider([step]), [user("hi")]))
    assert message["content"] == step["content"]
    assert message["responseId"] == "r1"


def test_error_step_and_exhausted_script():
    provider = FauxProvider([{"error": '529 {"type":"error","error":{"type":"overloaded_error"}}'}])
    events, message = run(call(provider, [user("hi")]))
    assert events[-1]["type"] == "error" and message["stopReason"] == "error"
    assert message["errorMessage"].startswith("529")
    events, message = run(call(provider, [user("hi")], StreamOptions(session_id="x")))
    assert [e["type"] for e in events] == ["error"]
    assert message["errorMessage"] == "No more faux responses queued"
    assert message["content"] == [] and message["usage"]["cacheWrite"] == 2
    assert list(message)[:9] == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "errorMessage",
        "timestamp",
    ]


def test_abort_mid_stream():
    async def scenario():
        signal = AbortSignal()
        provider = FauxProvider([{"text": "x" * 200}])
        stream = provider.stream(FAUX, {"messages": [user("hi")]}, StreamOptions(signal=signal))
        events = []
        async for event in stream:
            events.append(event)
            if event["type"] == "text_delta":
                signal.abort()
        return events, await stream.result()

    events, message = run(scenario())
    assert events[-1]["type"] == "error" and events[-1]["reason"] == "aborted"
    assert message["stopReason"] == "aborted" and message["errorMessage"] == "Request was aborted"
    assert len(message["content"][0]["text"]) < 200


def test_payload_hook_sees_a_chat_completions_request():
    seen = []

    def on_payload(payload, model):
        seen.append(DeferredPayload.value_of(payload))

    provider = FauxProvider([{"text": "ok"}])
    run(call(provider, [SYSTEM, user("hi")], StreamOptions(on_payload=on_payload)))
    (payload,) = seen
    assert payload["model"] == "faux-1" and payload["stream"] is True
    assert payload["messages"] == [
        {"role": "system", "content": "Be useful."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ]
    assert payload["tools"][0] == {
        "type": "function",
        "function": {"name": "bash", "description": "Run", "parameters": {"type": "object"}},
    }


def test_a_payload_hook_that_does_not_read_the_payload_costs_none(monkeypatch):
    made = []
    real = faux.chat_completions_payload
    monkeypatch.setattr(faux, "chat_completions_payload", lambda *a: made.append(1) or real(*a))
    kept = []
    provider = FauxProvider([{"text": "ok"}, {"text": "again"}])
    run(call(provider, [SYSTEM, user("hi")], StreamOptions(on_payload=lambda p, m: kept.append(p))))
    assert made == [] and isinstance(kept[0], DeferredPayload)
    run(call(provider, [SYSTEM, user("hi")], StreamOptions(on_payload=lambda p, m: None)))
    # Read after its call (the provider's memo has moved on): made from the call's messages alone.
    assert kept[0].resolve()["messages"][1] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert made == [1]


def test_payload_hook_sees_assistant_turns_as_chat_completions_messages():
    seen = []
    assistant = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Two "},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls", "n": 1.5}},
            {"type": "text", "text": "calls"},
            {"type": "toolCall", "id": "c2", "name": "read", "arguments": {}},
        ],
    }
    calls_only = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c3", "name": "x", "arguments": None}],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a"}],
    }
    provider = FauxProvider([{"text": "ok"}])
    messages = [SYSTEM, user("hi"), assistant, result, calls_only]
    run(call(provider, messages, StreamOptions(on_payload=lambda payload, model: seen.append(DeferredPayload.value_of(payload)))))
    (payload,) = seen
    assert payload["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Two \ncalls",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command":"ls","n":1.5}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "x", "arguments": "{}"}}],
        },
    ]


# -- scripts and factories -------------------------------------------------------------------


def test_factory_sees_the_request_and_can_answer_every_call(tmp_path):
    (tmp_path / "echo.py").write_text(
        textwrap.dedent("""
        SEEN = []

        def answer(request):
            SEEN.append(request)
            last = request["messages"][-1]
            return [{"text": "echo: " + last["content"]}, {"factory": "echo.py:answer"}]
    """)
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"factory": "echo.py:answer"}]))
    provider = FauxProvider.from_file(script)
    _, first = run(call(provider, [SYSTEM, user("one")]))
    _, second = run(call(provider, [SYSTEM, user("one"), first, user("two")]))
    assert first["content"] == [{"type": "text", "text": "echo: one"}]
    assert second["content"] == [{"type": "text", "text": "echo: two"}]
    assert provider.pending == 1
    module = next(iter(provider._modules.values()))
    request = module.SEEN[0]
    assert request["systemPrompt"] == "Be useful."
    assert [m["role"] for m in request["messages"]] == ["user"]
    assert [t["name"] for t in request["tools"]] == ["bash"]


def test_failing_factory_ends_the_call_with_an_error(tmp_path):
    (tmp_path / "bad.py").write_text("def f(request):\n    raise RuntimeError('no idea')\n")
    provider = FauxProvider([{"factory": "bad.py:f"}], script_path=tmp_path / "s.json")
    _, message = run(call(provider, [user("hi")]))
    assert message["stopReason"] == "error" and message["errorMessage"] == "no idea"


def test_each_registry_reads_the_env_script_for_itself(tmp_path, monkeypatch):
    """``$TAU_FAUX_SCRIPT`` is read by each registry when it is first asked: no registry takes another's steps."""
    from tau.llm.registry import ModelRegistry

    script = tmp_path / "s.json"
    script.write_text('[{"text": "from env"}]')
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(script))
    first, second = ModelRegistry(tmp_path), ModelRegistry(tmp_path)

    def text(registry):
        message = run(registry.complete(FAUX, {"messages": [user("hi")]}))
        return message["content"][0]["text"] if message["content"] else message["errorMessage"]

    assert text(first) == "from env"
    assert text(second) == "from env"  # its own copy of the script, from the first step
    other = tmp_path / "other.json"
    other.write_text('[{"text": "other script"}]')
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(other))
    assert text(ModelRegistry(tmp_path)) == "other script"
    assert text(first) == faux.NO_MORE_RESPONSES  # its script was read once, and is used up


def test_bad_scripts_are_named(tmp_path):
    script = tmp_path / "s.json"
    script.write_text('{"text": "x"}')
    with pytest.raises(FauxScriptError, match="must be a JSON array"):
        load_script(script)
    script.write_text('[{"txt": "x"}]')
    with pytest.raises(FauxScriptError, match='step 1 has none of "content"'):
        load_script(script)
    with pytest.raises(FauxScriptError, match="faux script not found"):
        load_script(tmp_path / "missing.json")


def test_a_broken_env_script_is_the_calls_error_message(tmp_path, monkeypatch):
    from tau.llm.registry import ModelRegistry

    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(tmp_path / "missing.json"))
    message = run(ModelRegistry(tmp_path).complete(FAUX, {"messages": [user("hi")]}))
    assert message["stopReason"] == "error" and "faux script not found" in message["errorMessage"]


def test_the_module_stream_has_no_script_of_the_process(tmp_path, monkeypatch):
    """Without a registry or a provider there is no script to answer from, whatever the environment says."""
    script = tmp_path / "s.json"
    script.write_text('[{"text": "from env"}]')
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(script))

    async def scenario():
        return await faux.stream(FAUX, {"messages": [user("hi")]}).result()

    message = run(scenario())
    assert message["stopReason"] == "error" and message["errorMessage"] == faux.NO_PROVIDER


def test_a_registry_with_its_own_provider_answers_from_it_alone(tmp_path, monkeypatch):
    """``ModelRegistry(faux=...)`` (``--faux-script``, the SDK's ``faux_script=``) never reads the env script."""
    from tau.llm.registry import ModelRegistry

    env_script = tmp_path / "env.json"
    env_script.write_text('[{"text": "from the env"}]')
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(env_script))
    own = ModelRegistry(tmp_path, faux=faux.provider_for([{"text": "mine"}, {"text": "mine again"}]))
    from_env = ModelRegistry(tmp_path)
    script = tmp_path / "s.json"
    script.write_text('[{"text": "from a file"}]')
    from_file = ModelRegistry(tmp_path, faux=faux.provider_for(script))

    async def texts():
        registries = (own, from_env, from_file, own)
        messages = [await r.complete(FAUX, {"messages": [user("hi")]}) for r in registries]
        return [m["content"][0]["text"] for m in messages]

    assert run(texts()) == ["mine", "from the env", "from a file", "mine again"]
    assert (own.faux.pending, from_env.faux_provider().pending, from_file.faux.pending) == (0, 0, 0)
    assert faux.provider_for(own.faux) is own.faux


def test_tool_call_ids_count_per_provider():
    """``call_<n>`` counts from 1 in each provider, so one session's ids do not depend on another's calls."""
    steps = [{"bash": "ls"}, {"tool": "read", "args": {"path": "a"}}]
    first, second = FauxProvider(steps), FauxProvider(steps)

    def ids(provider):
        return [run(call(provider, [user("go")]))[1]["content"][0]["id"] for _ in steps]

    assert ids(first) == ["call_1", "call_2"]
    assert ids(second) == ["call_1", "call_2"]


def test_the_factory_example_in_the_docs_works(tmp_path):
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    example = docs.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "echo.py").write_text(example)
    (tmp_path / "script.json").write_text('[{"factory": "echo.py:answer"}]')
    provider = FauxProvider.from_file(tmp_path / "script.json")
    _, call_message = run(call(provider, [user("bash: echo hi")]))
    assert call_message["content"][0]["arguments"] == {"command": "echo hi"}
    result = {
        "role": "toolResult",
        "toolCallId": call_message["content"][0]["id"],
        "toolName": "bash",
        "content": [{"type": "text", "text": "hi\n"}],
        "isError": False,
        "timestamp": 2,
    }
    _, reply = run(call(provider, [user("bash: echo hi"), call_message, result]))
    assert reply["content"] == [{"type": "text", "text": "tool bash returned: hi\n"}]
    _, echo = run(call(provider, [user("plain")]))
    assert echo["content"] == [{"type": "text", "text": "echo: plain"}]


def test_replayed_answers_stream_exactly_as_pi_streamed_them(pi_fixtures):
    """Each scenario answer, replayed as a script step, gives pi's message_update events one for one."""
    checked = 0
    for path in sorted((pi_fixtures / "scenarios").glob("*.events.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines() if line]
        groups, current = [], None
        for event in events:
            if event["type"] == "message_start" and event["message"]["role"] == "assistant":
                current = []
            elif event["type"] == "message_update" and current is not None:
                current.append(event["assistantMessageEvent"])
            elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
                groups.append((event["message"], current))
                current = None
        for answer, expected in groups:
            step = {key: answer[key] for key in ("content", "stopReason", "errorMessage") if key in answer}
            got, message = run(call(FauxProvider([step]), [user("x")]))
            updates = [
                {k: v for k, v in e.items() if k != "partial"}
                for e in got
                if e["type"] not in ("start", "done", "error")
            ]
            assert updates == expected, path.name
            assert message["content"] == answer["content"]
            checked += 1
    assert checked >= 25
