"""Calling a built-in tool from a synchronous test (imported by the tool tests as ``tool_helpers``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.tools import ToolContext, ToolResult, builtin_tool


def call(name: str, params: dict[str, Any], ctx: ToolContext, **kwargs: Any) -> ToolResult:
    """Run the built-in tool ``name`` to completion (raises what the tool raises)."""
    tool = builtin_tool(name)
    return asyncio.run(tool.execute("call_1", params, kwargs.get("signal"), kwargs.get("on_update"), ctx))


def error_of(name: str, params: dict[str, Any], ctx: ToolContext) -> str:
    """The message a failing call raises (what the model reads)."""
    with pytest.raises(Exception) as info:
        call(name, params, ctx)
    return str(info.value)


def text_of(result: ToolResult) -> str:
    assert [block["type"] for block in result.content][:1] == ["text"]
    return result.content[0]["text"]
