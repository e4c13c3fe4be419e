"""Issue 32: the SDK's errors name its keywords, not the command line's flags."""

from __future__ import annotations

import asyncio
import re

import pytest

import tau

FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _run(coroutine):
    return asyncio.run(coroutine)


def test_an_unknown_model_names_the_keyword(project):
    with pytest.raises(ValueError) as caught:
        _run(tau.create_agent_session(model="no-such-model-anywhere", extensions=False))
    assert not FLAG.search(str(caught.value)), str(caught.value)
    assert "ModelRegistry().get_all()" in str(caught.value)


def test_a_missing_key_and_no_model_name_keywords(project, monkeypatch):
    async def missing_key() -> str:
        async with await tau.create_agent_session(
            model="anthropic/claude-sonnet-4-6", extensions=False
        ) as session:
            with pytest.raises(RuntimeError) as caught:
                await session.prompt("hi")
            return str(caught.value)

    message = _run(missing_key())
    assert "pass api_key=" in message and not FLAG.search(message), message

    async def no_model() -> str:
        async with await tau.create_agent_session(extensions=False) as session:
            with pytest.raises(RuntimeError) as caught:
                await session.prompt("hi")
            return str(caught.value)

    message = _run(no_model())
    assert 'model="provider/id"' in message and not FLAG.search(message), message


def test_a_bad_tools_list_names_the_keyword(project):
    with pytest.raises(ValueError) as caught:
        _run(tau.create_agent_session(tools=["read", "-bash"], extensions=False))
    assert str(caught.value).startswith("Invalid tools=:"), str(caught.value)
