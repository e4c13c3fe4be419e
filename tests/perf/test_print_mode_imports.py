"""A faux ``tau -p`` turn imports only what it uses: no provider SDK, no terminal UI, no schema validator.

Start-up time is mostly import time, so a stray top-level import of a heavy package is a regression a
user notices on every ``tau -p`` run (bench/faux_turn.py measures it; this guards the cause). The child
process reports ``sys.modules`` after the turn, with the bundled extensions loaded (the default) and
without them (``-ne``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tau_process import tau_env

# Loaded by a turn that calls a provider, renders a TUI, or validates a tool call; never by a faux text reply.
HEAVY = (
    "anthropic",
    "openai",
    "httpx",
    "jsonschema",
    "rich",
    "prompt_toolkit",
    "email",
    "importlib.metadata",
    "detect_secrets",
    "requests",
    "mcp",
    "webbrowser",
)

# Runs tau's CLI in-process, then prints which of HEAVY ended up in sys.modules.
CHILD = """
import json, sys
from tau.cli import main
heavy = json.loads(sys.argv[1])
code = main(sys.argv[2:])
sys.stdout.flush()
loaded = sorted(name for name in heavy if name in sys.modules)
sys.stderr.write("LOADED " + json.dumps(loaded) + "\\n")
sys.exit(code)
"""


def _faux_turn(tmp_path: Path, *extra: str) -> tuple[str, list[str]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello from faux"}]))
    env = tau_env()
    command = [sys.executable, "-c", CHILD, json.dumps(HEAVY), "-p", "--model", "faux/faux-1"]
    command += ["--faux-script", str(script), *extra, "hello"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    marker = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    assert marker, done.stderr
    return done.stdout, json.loads(marker[-1].removeprefix("LOADED "))


@pytest.mark.parametrize("extra", [(), ("-ne",)], ids=["bundled-extensions", "no-extensions"])
def test_a_faux_print_turn_imports_no_heavy_package(tmp_path, extra):
    stdout, loaded = _faux_turn(tmp_path, *extra)
    assert stdout == "hello from faux\n"
    assert loaded == [], f"tau -p (faux) imported {loaded}: import them where they are used"
