"""codemode: the model writes a JavaScript script that calls the other tools (pi 1.6's built-in
``builtin:codemode``); only the script's output reaches the model.

The tool is registered inactive (``model-only`` exposure: scripts never start scripts); ``--tools
+codemode`` or ``"defaultTools": ["+codemode"]`` activates it, ``--no-extensions`` leaves it out
(``-e builtin:codemode`` loads it anyway). ``codemode.mode`` (``on``/``only``) and
``codemode.inlineBudget`` shape what the model sees (``description.py``); the sandbox is a QuickJS
VM in a worker process (``sandbox.py``, ``worker.py``). See ``docs/codemode.md``.

The script runtime loads on the first call, so tau starts as fast with codemode as without.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DOCS_PATH", "extension"]

# tau's docs/codemode.md, which the description names for the `models` API (as pi names its own).
DOCS_PATH = str(Path(__file__).resolve().parents[4] / "docs" / "codemode.md")

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["code"],
    "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
}
_SNIPPET = "Run JavaScript that calls other tools"
_GUIDELINES = [
    "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, "
    "instead of many separate calls.",
]


def _settings(tau: Any) -> dict[str, Any]:
    block = tau.get_settings().get("codemode")
    return block if isinstance(block, dict) else {}


def _mode(tau: Any) -> str:
    return "only" if _settings(tau).get("mode") == "only" else "on"


def _inline_budget(tau: Any) -> float | None:
    budget = _settings(tau).get("inlineBudget")
    if isinstance(budget, int | float) and not isinstance(budget, bool) and budget >= 0:
        return budget
    return None


def _timeout_ms(tau: Any) -> int | None:
    timeout = _settings(tau).get("timeoutMs")
    return timeout if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0 else None


def extension(tau: Any) -> None:
    from tau.bundled.codemode.description import (
        TOOL_NAME,
        codemode_description,
        prepare_loadout,
        script_reach,
    )
    from tau.bundled.codemode.render import render_codemode_call, render_codemode_result
    from tau.bundled.codemode.source import SOURCE_GRAMMAR
    from tau.extension import ToolDefinition

    def tools_info() -> list[dict[str, Any]]:
        return tau.get_all_tools()

    def namespace_of(name: str) -> dict[str, Any] | None:
        info = next((tool for tool in tools_info() if tool["name"] == name), None)
        namespace = info.get("namespace") if info else None
        if isinstance(namespace, str):
            return {"name": namespace} if namespace else None
        return namespace if isinstance(namespace, dict) and isinstance(namespace.get("name"), str) else None

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        from tau.bundled.codemode.execute import CodemodeOptions, execute_codemode

        options = CodemodeOptions(
            append_entry=tau.append_entry,
            guidelines=lambda: {
                tool["name"]: list(tool.get("promptGuidelines") or []) for tool in tools_info()
            },
            namespace_of=namespace_of,
            default_timeout_ms=lambda: _timeout_ms(tau),
        )
        return await execute_codemode(tool_call_id, params, signal, on_update, ctx, options)

    tau.register_tool(
        ToolDefinition(
            name=TOOL_NAME,
            label=TOOL_NAME,
            # Replaced with the declarations of the callable tools while the tool is active.
            description=codemode_description([], docs_path=DOCS_PATH),
            parameters=_PARAMETERS,
            execute=execute,
            prompt_snippet=_SNIPPET,
            prompt_guidelines=list(_GUIDELINES),
            exposure="model-only",
            default_active=False,
            prepare_loadout=lambda loadout: prepare_loadout(
                loadout, _mode(tau), _inline_budget(tau), DOCS_PATH
            ),
            reaches_tools=script_reach,
            # Capable models write the script as raw text instead of a JSON-escaped string.
            constrained_sampling={"type": "grammar", "variants": {"openai_lark": SOURCE_GRAMMAR}},
            # The row shows the script, the nested calls as they run, and the output (pi's).
            render_call=render_codemode_call,
            render_result=render_codemode_result,
            renders_collapsed=True,
        )
    )
