"""The shortest way to use tau from Python: one prompt, run to the end, from plain synchronous code.

Runs offline on the scripted faux model; set TAU_EXAMPLE_MODEL (e.g. anthropic/claude-sonnet-4-6)
to use a real one.
"""

import os

import tau

MODEL = os.environ.get("TAU_EXAMPLE_MODEL", "faux/faux-1")
# What the faux model answers, one step per request: a bash call, then a reply.
SCRIPT = [{"bash": "ls"}, {"text": "I listed the files."}]

result = tau.run(
    "List the files here.",
    model=MODEL,
    faux_script=SCRIPT if MODEL.startswith("faux/") else None,
)
print(result.text)
print(
    f"{result.usage.requests} requests, {result.usage.output_tokens} output tokens, stop: {result.stop_reason}"
)
