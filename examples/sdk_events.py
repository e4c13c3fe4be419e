"""Stream a session's events: the reply as it is written, each tool call as it starts and ends.

The events are pi's event dicts (the ones `tau --mode json` prints). Runs offline on the faux model;
set TAU_EXAMPLE_MODEL to use a real one.
"""

import asyncio
import os
import sys

import tau

MODEL = os.environ.get("TAU_EXAMPLE_MODEL", "faux/faux-1")
SCRIPT = [{"bash": "echo hello from bash"}, {"text": "The command printed hello."}]


def show(event: dict) -> None:
    kind = event["type"]
    if kind == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
        sys.stdout.write(event["assistantMessageEvent"]["delta"])
    elif kind == "tool_execution_start":
        print(f"[{event['toolName']} {event['args']}]")
    elif kind == "tool_execution_end":
        print(f"[{event['toolName']} {'failed' if event['isError'] else 'done'}]")
    elif kind == "agent_end":
        print()


async def main() -> None:
    faux_script = SCRIPT if MODEL.startswith("faux/") else None
    async with await tau.create_agent_session(model=MODEL, faux_script=faux_script) as session:
        unsubscribe = session.subscribe(show)
        await session.prompt("Say hello with bash.")
        unsubscribe()
        print(f"last reply: {session.last_assistant_text()!r}")


asyncio.run(main())
