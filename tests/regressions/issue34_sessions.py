"""Issue 34: a tau session through OpenRouter with Claude's reasoning, and real pi 1.6 continuing it.

``data/issue34/openrouter.jsonl`` was written by the tau CLI (``tau -p --thinking high``) against a
loopback server standing in for OpenRouter (``models.json``: provider ``openrouter``, model
``anthropic/claude-sonnet-4.6``, ``openai-completions``): one prompt, a reply with reasoning
details, a ``bash`` call and its result, a second reply with reasoning details.
``data/issue34/pi-continued.json`` is what real pi 1.6 did with that file
(``pi -p --session <copy> "and now?"``): the request it sent (``request``) and the entries it added
to the file (``appended``). ``test_34_openrouter_session_opens_in_pi.py`` checks that pi sent the
reasoning details back and that tau continues the file with the same request.

Regenerate both (needs real pi 1.6 installed as in ``data/pi22/README.md``)::

    PI_BIN=/work/pi-run/node_modules/.bin/pi python tests/regressions/issue34_sessions.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "issue34"
SESSION = DATA / "openrouter.jsonl"
PI_CONTINUED = DATA / "pi-continued.json"
MODEL = "anthropic/claude-sonnet-4.6"
FOLLOW_UP = "and now?"

sys.path.insert(0, str(HERE.parent / "llm"))
if str(HERE.parent) not in sys.path:  # run as a script: the shared test helpers live in tests/
    sys.path.insert(0, str(HERE.parent))

import test_openai_completions as C  # noqa: E402
from loopback import LoopbackServer, Reply  # noqa: E402

from tau_process import tau_command, tau_env  # noqa: E402


def models_json(url: str) -> dict[str, Any]:
    """OpenRouter, as a user points it elsewhere: the same file for tau and pi."""
    model = {
        "id": MODEL,
        "name": "Claude Sonnet 4.6 (OpenRouter)",
        "reasoning": True,
        "input": ["text"],
        "contextWindow": 200000,
        "maxTokens": 8192,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    provider = {
        "baseUrl": f"{url}/v1",
        "api": "openai-completions",
        "apiKey": "sk-or-test",
        "models": [model],
    }
    return {"providers": {"openrouter": provider}}


def _reasoning_reply(thought: str, signature: str, text: str, call: dict[str, Any] | None) -> Reply:
    pieces = [
        C.or_chunk(C._thought(thought)),
        C.or_chunk(C._thought("", signature=signature)),
        C.or_chunk({"content": text}),
    ]
    if call is not None:
        pieces.append(C.or_chunk({"tool_calls": [call]}))
    finish = "tool_calls" if call is not None else "stop"
    return Reply(pieces=[*pieces, C.or_chunk(finish=finish, usage=C.OR_USAGE), b"data: [DONE]\n\n"])


def first_run_replies() -> list[Reply]:
    return [
        _reasoning_reply(
            "Run it.", "EqQBCkYIBxgCKkB", "Running.", C._call("toolu_1", "bash", '{"command":"echo hi"}')
        ),
        _reasoning_reply("It printed hi.", "EqQBCkYIBxgCKkC", "It printed hi.", None),
    ]


def text_reply(text: str) -> Reply:
    return Reply(
        pieces=[
            C.or_chunk({"content": text}),
            C.or_chunk(finish="stop", usage=C.OR_USAGE),
            b"data: [DONE]\n\n",
        ]
    )


def scratch_env(root: Path) -> dict[str, str]:
    env = tau_env({"PI_CODING_AGENT_DIR": str(root / "agent")}, home=root, agent_dir=root / "agent")
    env["PI_OFFLINE"] = "1"
    (root / "agent").mkdir(parents=True, exist_ok=True)
    (root / "work").mkdir(exist_ok=True)
    return env


def run_cli(command: list[str], root: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    env = scratch_env(root)
    (root / "agent" / "models.json").write_text(json.dumps(models_json(url)))
    argv = [*command, "--offline", "-ne", "-p", "--model", f"openrouter/{MODEL}", "--thinking", "high", *args]
    return subprocess.run(argv, cwd=root / "work", env=env, capture_output=True, text=True, timeout=300)


TAU = tau_command()


def write_session(root: Path) -> Path:
    with LoopbackServer(first_run_replies()) as server:
        done = run_cli(TAU, root, server.url, "--session-dir", str(root / "sessions"), "run echo hi")
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return next((root / "sessions").glob("*.jsonl"))


def continue_in(command: list[str], session: Path, root: Path) -> tuple[list[Any], list[dict[str, Any]]]:
    """Continue ``session`` (a copy) with :data:`FOLLOW_UP`: the requests sent and the entries added."""
    copy = root / f"continued-{len(list(root.glob('continued-*')))}.jsonl"
    shutil.copyfile(session, copy)
    # A session runs in its own directory (pi 1.6): the header names the scratch folder that wrote it,
    # gone by now, so the copy names this run's `work`, as when pi continued it for the golden.
    lines = copy.read_text().splitlines()
    header = json.loads(lines[0])
    if header.get("type") == "session":
        header["cwd"] = str(root / "work")
        lines[0] = json.dumps(header, separators=(",", ":"))
        copy.write_text("\n".join(lines) + "\n")
    before = len(copy.read_text().splitlines())
    with LoopbackServer([text_reply("OK")]) as server:
        done = run_cli(command, root, server.url, "--session", str(copy), FOLLOW_UP)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    added = [json.loads(line) for line in copy.read_text().splitlines()[before:]]
    return server.bodies, added


def main() -> int:
    pi_bin = os.environ.get("PI_BIN")
    if not pi_bin:
        print("set PI_BIN to a real pi 1.6", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        written = write_session(root)
        DATA.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(written, SESSION)
        node_bin = str(Path(pi_bin).absolute().parent)
        os.environ["PATH"] = f"{node_bin}:{os.environ.get('PATH', '')}"
        requests, appended = continue_in([pi_bin], SESSION, root)
    PI_CONTINUED.write_text(json.dumps({"request": requests[0], "appended": appended}, indent=1) + "\n")
    print(f"wrote {SESSION} and {PI_CONTINUED}")
    return 0


if __name__ == "__main__":
    if str(HERE.parents[1] / "src") not in sys.path:
        sys.path.insert(0, str(HERE.parents[1] / "src"))
    sys.exit(main())
