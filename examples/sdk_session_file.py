"""Keep a conversation in a session file, continue it later, and read it back.

The file is a pi 1.6 session: `tau session context FILE` and `tau savings FILE` read it, and so does
pi. Runs offline on the faux model; set TAU_EXAMPLE_MODEL to use a real one.
"""

import os
import sys
import tempfile
from pathlib import Path

import tau

MODEL = os.environ.get("TAU_EXAMPLE_MODEL", "faux/faux-1")
FAUX = MODEL.startswith("faux/")
path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "notes.jsonl"

first = tau.run(
    "Remember the number 42.",
    model=MODEL,
    session=path,
    faux_script=[{"text": "Noted: 42."}] if FAUX else None,
)
# The model is restored from the file; the conversation goes on where it stopped.
second = tau.run(
    "Which number did I give you?", session=path, faux_script=[{"text": "You gave me 42."}] if FAUX else None
)
print(f"session file: {second.session_file}")
print(f"answer: {second.text}")

manager = tau.SessionManager.open(path, read_only=True)  # read it back, without writing or locking
try:
    prompts = [
        entry["message"]["content"][0]["text"]
        for entry in manager.get_branch()
        if entry["type"] == "message" and entry["message"]["role"] == "user"
    ]
finally:
    manager.close()
print(f"prompts in the file: {prompts}")
# usage() counts the whole conversation in the file: both runs.
print(
    f"requests: {second.usage.requests} (first run: {first.usage.requests}), cost: ${second.usage.cost:.4f}"
)
