"""Model registry: catalogue, models.json, credentials order, --model patterns, dispatch, --list-models."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re

import pytest

from tau.llm.auth import AuthStore, clear_command_cache, resolve_config_value
from tau.llm.catalog import BUILTIN_MODELS
from tau.llm.cost import calculate_cost
from tau.llm.model_list import print_models
from tau.llm.models_json import ModelsConfigError, load_models_json
from tau.llm.providers import faux
from tau.llm.registry import (
    MissingCredentialsError,
    ModelNotFoundError,
    ModelRegistry,
    clamp_thinking_level,
    stream,
    supported_thinking_levels,
)
from tau.llm.stream import StreamOptions
from tau.llm.types import empty_usage


def write_models(agent_dir, providers):
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))


def test_builtin_catalogue_has_current_models_with_prices():
    registry = ModelRegistry(env={})
    opus = registry.find("anthropic", "claude-opus-5-5")
    assert (opus.api, opus.context_window, opus.max_tokens) == ("anthropic-messages", 1_000_000, 128_000)
    assert (opus.cost.input, opus.cost.output, opus.cost.cacheRead, opus.cost.cacheWrite) == (4, 20, 0.2, 5)
    assert registry.find("openai", "gpt-6.2-sol").api == "openai-responses"
    assert registry.find("faux", "faux-1").to_json()["contextWindow"] == 128_000
    assert len({(m.provider, m.id) for m in BUILTIN_MODELS}) == len(BUILTIN_MODELS) >= 13


def test_cost_uses_tiers_above_their_threshold():
    haiku = ModelRegistry(env={}).find("anthropic", "claude-haiku-5-5")
    usage = empty_usage()
    usage.update(input=1_000_000, output=1_000_000)
    assert calculate_cost(haiku, usage)["total"] == pytest.approx(0.5 + 2.5)
    usage.update(input=50_000, output=1_000_000)
    assert calculate_cost(haiku, usage)["total"] == pytest.approx(0.005 + 0.5)


def test_available_models_follow_credentials(isolated_agent_dir):
    registry = ModelRegistry(isolated_agent_dir, env={})
    assert {m.provider for m in registry.get_available()} == {"faux"}
    registry = ModelRegistry(isolated_agent_dir, env={"OPENAI_API_KEY": "sk-env"})
    assert {m.provider for m in registry.get_available()} == {"faux", "openai"}


def test_credential_order(isolated_agent_dir, monkeypatch):
    monkeypatch.setenv("MY_KEY", "from-models-json")
    write_models(isolated_agent_dir, {"anthropic": {"apiKey": "$MY_KEY"}})
    env = {"ANTHROPIC_API_KEY": "from-env"}
    registry = ModelRegistry(isolated_agent_dir, env=env)
    assert registry.api_key("anthropic") == (
        "from-models-json",
        f"{isolated_agent_dir / 'models.json'} (apiKey)",
    )
    AuthStore(isolated_agent_dir / "auth.json").set_api_key("anthropic", "from-auth-json")
    assert registry.api_key("anthropic")[0] == "from-auth-json"
    registry.set_runtime_api_key("anthropic", "from-cli")
    assert registry.api_key("anthropic") == ("from-cli", "--api-key")
    assert ModelRegistry(isolated_agent_dir / "other", env=env).api_key("anthropic") == (
        "from-env",
        "ANTHROPIC_API_KEY",
    )
    assert oct(os.stat(isolated_agent_dir / "auth.json").st_mode & 0o777) == "0o600"


def test_missing_key_is_an_error_message_not_an_exception(isolated_agent_dir):
    registry = ModelRegistry(isolated_agent_dir, env={})
    model = registry.find("anthropic", "claude-sonnet-5-5")
    with pytest.raises(MissingCredentialsError, match=r"set ANTHROPIC_API_KEY, pass --api-key"):
        registry.request_auth(model)
    assert registry.get_api_key_and_headers(model)["ok"] is False
    assert registry.get_api_key_for_provider("anthropic") is None
    registry.set_runtime_api_key("anthropic", "sk-cli")
    assert registry.get_api_key_and_headers(model) == {"ok": True, "apiKey": "sk-cli"}
    registry = ModelRegistry(isolated_agent_dir, env={})

    async def call():
        return await registry.complete(model, {"messages": []})

    message = asyncio.run(call())
    assert message["stopReason"] == "error" and 'No API key found for "anthropic"' in message["errorMessage"]


def test_models_json_adds_a_provider_and_overrides_builtins(isolated_agent_dir):
    write_models(
        isolated_agent_dir,
        {
            "local": {
                "baseUrl": "http://127.0.0.1:8080/v1",
                "api": "openai-completions",
                "compat": {"mergeUserMessages": True},
                "headers": {"X-Team": "tau"},
                "models": [
                    {
                        "id": "qwen",
                        "contextWindow": 32768,
                        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            },
            "anthropic": {
                "baseUrl": "http://127.0.0.1:9/anthropic",
                "modelOverrides": {"claude-opus-5-5": {"contextWindow": 200000, "cost": {"input": 3}}},
            },
            "faux": {"modelOverrides": {"faux-1": {"contextWindow": 4000}}},
        },
    )
    registry = ModelRegistry(isolated_agent_dir, env={})
    assert registry.error is None
    qwen = registry.find("local", "qwen")
    assert (qwen.api, qwen.base_url, qwen.context_window, qwen.max_tokens, qwen.name) == (
        "openai-completions",
        "http://127.0.0.1:8080/v1",
        32768,
        16384,
        "qwen",
    )
    assert qwen.compat["mergeUserMessages"] is True
    assert registry.request_auth(qwen).headers == {"X-Team": "tau"}
    assert registry.has_configured_auth(qwen)  # a keyless local server
    opus = registry.find("anthropic", "claude-opus-5-5")
    assert (opus.context_window, opus.cost.input, opus.cost.output) == (200000, 3, 20)
    assert opus.base_url == "http://127.0.0.1:9/anthropic"
    assert registry.find("anthropic", "claude-sonnet-5-5").base_url == "http://127.0.0.1:9/anthropic"
    assert registry.find("faux", "faux-1").context_window == 4000


def test_models_json_is_hot_reloaded(isolated_agent_dir):
    registry = ModelRegistry(isolated_agent_dir, env={})
    assert registry.find("local", "m") is None
    write_models(
        isolated_agent_dir,
        {"local": {"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "m"}]}},
    )
    assert registry.find("local", "m") is not None


@pytest.mark.parametrize(
    ("providers", "message"),
    [
        (
            {"local": {"models": [{"id": "m", "contextWindow": 0}]}},
            "providers.local.models.0.contextWindow: must be a number greater than 0",
        ),
        ({"local": {"models": [{"name": "x"}]}}, "providers.local.models.0.id: is required"),
        (
            {"local": {"models": [{"id": "m", "cost": {"input": 1}}]}},
            'providers.local.models.0.cost: needs "output"',
        ),
        ({"local": {"apiKey": 5}}, "providers.local.apiKey: must be a non-empty string"),
        ({"local": {"headers": {"A": 1}}}, "providers.local.headers: must be an object of strings"),
    ],
)
def test_models_json_schema_errors_name_the_file_and_field(isolated_agent_dir, providers, message):
    write_models(isolated_agent_dir, providers)
    with pytest.raises(ModelsConfigError) as caught:
        load_models_json(isolated_agent_dir / "models.json")
    assert message in str(caught.value)
    assert str(isolated_agent_dir / "models.json") in str(caught.value)
    registry = ModelRegistry(isolated_agent_dir, env={})
    assert message in registry.error
    assert registry.find("anthropic", "claude-opus-5-5") is not None  # built-ins survive


@pytest.mark.parametrize(
    ("providers", "message"),
    [
        (
            {"local": {"baseUrl": "http://x", "models": [{"id": "m"}]}},
            'Provider local, model m: no "api" specified',
        ),
        (
            {"local": {"api": "openai-completions", "models": [{"id": "m"}]}},
            'Provider local: "baseUrl" is required',
        ),
        (
            {"local": {"baseUrl": "http://x", "api": "openai-completions"}},
            'Provider local: a new provider needs "models"',
        ),
    ],
)
def test_models_json_composition_errors(isolated_agent_dir, providers, message):
    write_models(isolated_agent_dir, providers)
    registry = ModelRegistry(isolated_agent_dir, env={})
    assert message in registry.error and "models.json" in registry.error
    assert registry.find("local", "m") is None


def test_models_json_parse_error_and_comments(isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True)
    path = isolated_agent_dir / "models.json"
    path.write_text('{"providers": {"faux": {"modelOverrides": {"faux-1": {"maxTokens": 10}}}},}')
    with pytest.raises(ModelsConfigError, match=r"Failed to parse models\.json"):
        load_models_json(path)
    path.write_text(
        '// mine\n{"providers": {/* faux */ "faux": {"modelOverrides": {"faux-1": {"maxTokens": 10}}}}}'
    )
    assert ModelRegistry(isolated_agent_dir, env={}).find("faux", "faux-1").max_tokens == 10


def test_config_values(monkeypatch):
    monkeypatch.setenv("TAU_TEST_A", "aa")
    clear_command_cache()
    assert resolve_config_value("literal") == "literal"
    assert resolve_config_value("$TAU_TEST_A") == "aa"
    assert resolve_config_value("x-${TAU_TEST_A}-y") == "x-aa-y"
    assert resolve_config_value("$$TAU_TEST_A") == "$TAU_TEST_A"
    assert resolve_config_value("$TAU_TEST_MISSING") is None
    assert resolve_config_value("!echo from-command") == "from-command"
    assert resolve_config_value("!exit 3") is None


@pytest.mark.parametrize(
    ("pattern", "provider", "expected", "level"),
    [
        ("claude-opus-5-5", None, ("anthropic", "claude-opus-5-5"), None),
        ("anthropic/claude-opus-5-5", None, ("anthropic", "claude-opus-5-5"), None),
        ("claude-opus-5-5:high", None, ("anthropic", "claude-opus-5-5"), "high"),
        ("opus", None, ("anthropic", "claude-opus-5-5"), None),
        ("sonnet:low", None, ("anthropic", "claude-sonnet-5-5"), "low"),
        ("faux/faux-1", None, ("faux", "faux-1"), None),
        ("gpt-5.5", "openai", ("openai", "gpt-5.5"), None),
        ("GPT-6.2-SOL", None, ("openai", "gpt-6.2-sol"), None),
    ],
)
def test_model_patterns(pattern, provider, expected, level):
    choice = ModelRegistry(env={}).resolve(pattern, provider)
    assert (choice.model.provider, choice.model.id) == expected
    assert choice.thinking_level == level


def test_unknown_id_under_a_known_provider_is_a_custom_model_with_a_warning():
    choice = ModelRegistry(env={}).resolve("anthropic/claude-next:high")
    assert (choice.model.provider, choice.model.id, choice.thinking_level) == (
        "anthropic",
        "claude-next",
        "high",
    )
    assert choice.model.api == "anthropic-messages"
    assert choice.warning == 'Model "claude-next" not found for provider "anthropic". Using custom model id.'


def test_unknown_models_and_providers_fail_with_pis_messages():
    registry = ModelRegistry(env={})
    with pytest.raises(ModelNotFoundError, match=r'Model "zzz" not found\. Use --list-models'):
        registry.resolve("zzz")
    with pytest.raises(ModelNotFoundError, match=r'Unknown provider "nope"'):
        registry.resolve("x", "nope")


def test_ambiguous_ids_across_providers(isolated_agent_dir):
    write_models(
        isolated_agent_dir,
        {
            "proxy": {
                "baseUrl": "http://x",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "gpt-5.5"}],
            }
        },
    )
    registry = ModelRegistry(isolated_agent_dir, env={"OPENAI_API_KEY": "k"})
    with pytest.raises(
        ModelNotFoundError, match=re.escape("ambiguous across providers: openai/gpt-5.5, proxy/gpt-5.5")
    ):
        registry.resolve("gpt-5.5")
    assert registry.resolve("proxy/gpt-5.5").model.provider == "proxy"


def test_thinking_levels_follow_the_model():
    registry = ModelRegistry(env={})
    assert supported_thinking_levels(registry.find("faux", "faux-1")) == ["off"]
    opus = registry.find("anthropic", "claude-opus-5-5")
    assert supported_thinking_levels(opus) == ["low", "medium", "high", "xhigh", "max"]
    assert clamp_thinking_level(opus, "minimal") == "low"
    gpt = registry.find("openai", "gpt-5.4-mini")
    assert clamp_thinking_level(gpt, "max") == "xhigh"


def test_dispatch_by_api_reaches_faux_and_reports_unknown_apis():
    async def scenario():
        registry = ModelRegistry(env={}, faux=faux.provider_for([{"text": "dispatched"}]))
        model = registry.find("faux", "faux-1")
        message = await registry.complete(model, {"systemPrompt": "s", "messages": [], "tools": []}, StreamOptions())
        from dataclasses import replace

        unknown = await stream(replace(model, api="martian"), {"messages": []}).result()
        scriptless = await stream(model, {"messages": []}).result()  # no registry, no provider: no script
        return message, unknown, scriptless

    message, unknown, scriptless = asyncio.run(scenario())
    assert message["content"] == [{"type": "text", "text": "dispatched"}]
    assert unknown["errorMessage"] == "No API provider registered for api: martian"
    assert scriptless["stopReason"] == "error" and scriptless["errorMessage"] == faux.NO_PROVIDER


def test_print_models_table_and_filter(isolated_agent_dir):
    out = io.StringIO()
    assert print_models("opus", ModelRegistry(isolated_agent_dir, env={}), out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:4] == ["provider", "model", "context", "max-out"]
    assert {line.split()[1] for line in lines[1:]} == {"claude-opus-5-5", "claude-opus-5", "claude-opus-4-8"}
    assert "claude-opus-5-5  1M       128K" in out.getvalue()
    out = io.StringIO()
    assert print_models("no-such-model", ModelRegistry(isolated_agent_dir, env={}), out) == 1
    assert out.getvalue() == 'No models matching "no-such-model"\n'


def test_registry_call_through_a_models_json_server_carries_key_and_headers(isolated_agent_dir, monkeypatch):
    """models.json → credentials → dispatch → the Chat Completions adapter → a loopback server."""
    from loopback import LoopbackServer, sse, sse_reply

    def chunk(delta=None, finish=None, usage=None):
        body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "qwen"}
        body["choices"] = [] if usage else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
        if usage:
            body["usage"] = usage
        return sse(body)

    reply = sse_reply(
        [
            chunk({"role": "assistant", "content": "Hi from "}),
            chunk({"content": "loopback"}),
            chunk(finish="stop"),
            chunk(usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
            b"data: [DONE]\n\n",
        ]
    )
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with LoopbackServer([reply]) as server:
        write_models(
            isolated_agent_dir,
            {
                "local": {
                    "baseUrl": server.url + "/v1",
                    "api": "openai-completions",
                    "apiKey": "$LOCAL_KEY",
                    "headers": {"X-Team": "tau"},
                    "models": [
                        {"id": "qwen", "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}
                    ],
                }
            },
        )
        registry = ModelRegistry(isolated_agent_dir, env={})
        model = registry.resolve("local/qwen").model
        context = {
            "systemPrompt": "Be brief.",
            "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
        }
        message = asyncio.run(asyncio.wait_for(registry.complete(model, context), 60))
        (request,) = server.captured
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert message["content"] == [{"type": "text", "text": "Hi from loopback"}]
    assert (message["provider"], message["model"]) == ("local", "qwen")
    assert request.headers["authorization"] == "Bearer sk-local"
    assert request.headers["x-team"] == "tau"
    assert request.body["model"] == "qwen"
    assert request.body["messages"][0]["content"] == "Be brief."
