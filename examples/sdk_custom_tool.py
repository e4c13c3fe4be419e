"""Give the model a tool of your own: an extension function passed to create_agent_session.

tau's own extensions (todo, todo-loop, the context economy) stay active beside it. Runs offline on
the faux model; set TAU_EXAMPLE_MODEL to use a real one.
"""

import asyncio
import os

import tau
from tau.extension import ToolDefinition, ToolResult

MODEL = os.environ.get("TAU_EXAMPLE_MODEL", "faux/faux-1")
SCRIPT = [{"tool": "word_count", "args": {"text": "the quick brown fox"}}, {"text": "It has 4 words."}]


def word_count_extension(api) -> None:
    async def count(tool_call_id, params, signal, on_update, ctx):
        words = len(params["text"].split())
        return ToolResult.text(f"{words} words", details={"words": words})

    api.register_tool(
        ToolDefinition(
            name="word_count",
            label="Word count",
            description="Count the words in a text.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text"}},
                "required": ["text"],
            },
            execute=count,
            prompt_snippet="word_count: count the words in a text",
        )
    )


async def main() -> None:
    async with await tau.create_agent_session(
        model=MODEL,
        extensions=[word_count_extension],
        faux_script=SCRIPT if MODEL.startswith("faux/") else None,
    ) as session:
        await session.prompt("How many words are in 'the quick brown fox'?")
        result = next(m for m in session.messages if m["role"] == "toolResult")
        print(f"tool said: {result['content'][0]['text']}")
        print(f"model said: {session.last_assistant_text()}")


asyncio.run(main())
