"""Issue 15: a tau session compacted with cache-friendly summaries, and real pi 1.6's context of it.

``data/issue15/cache-friendly.jsonl`` was written by tau: two prompts, a threshold compaction inside
the second turn (a split turn: history and turn-prefix summaries), a third prompt and a second
threshold compaction that updates the first summary, all sent cache-friendly (their ``usage`` reads
the cache). ``data/issue15/cache-friendly.pi-context.json`` is what real pi 1.6 projects from that
file: ``convertToLlm(SessionManager.open(file).buildSessionContext().messages)``.
``test_15_cache_friendly_sessions_open_in_pi.py`` checks that tau's projection equals it.

Regenerate both (needs real pi 1.6 installed as in ``data/pi22/README.md``)::

    PI_SDK_DIR=/work/pi-bench/node_modules python tests/regressions/issue15_sessions.py
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "issue15"
SESSION = DATA / "cache-friendly.jsonl"
PI_CONTEXT = DATA / "cache-friendly.pi-context.json"
SUMMARY = "## Goal\nCount the numbers.\n\n## Progress\n### Done\n- [x] printed them\n"

PI_SCRIPT = """
import { SessionManager, convertToLlm } from "%s/@earendil-works/pi-coding-agent/dist/index.js";
const manager = SessionManager.open(process.argv[2], process.argv[3]);
process.stdout.write(JSON.stringify(convertToLlm(manager.buildSessionContext().messages)) + "\\n");
"""


def _print(n: int) -> dict[str, Any]:
    return {"bash": f"python3 -c \"print('{n}' * 2400)\""}


def write_session(directory: Path) -> Path:
    """A session compacted twice with cache-friendly summaries (faux model, small window)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' faux builder
    from faux_model import FauxModel, Summarizer
    from tau.agent.session import AgentSession
    from tau.agent.settings import Settings
    from tau.session.manager import SessionManager

    queue = [_print(1), {"text": "One."}, _print(2), _print(3), _print(4), {"text": "Four."}]
    queue += [_print(5), _print(6), _print(7), _print(8), {"text": "Eight."}]
    scripted = FauxModel([{"factory": Summarizer(queue, SUMMARY)}], model_overrides={"context_window": 5000})
    registry, model = scripted.registry, scripted.model
    settings = {"compaction": {"reserveTokens": 1600, "keepRecentTokens": 500}, "retry": {"enabled": False}}
    manager = SessionManager.create(str(directory), str(directory / "sessions"))
    session = AgentSession(manager, Settings.in_memory(settings), registry, model, cwd=str(directory))

    async def run() -> None:
        for prompt in ("print one", "print two to four", "print five to eight"):
            await session.prompt(prompt)

    asyncio.run(run())
    if queue:
        raise SystemExit(f"the scripted run stopped early: {len(queue)} answers left")
    return Path(manager.get_session_file())


def pi_context(session: Path, sdk_dir: str) -> list[dict[str, Any]]:
    """Real pi's model context of ``session``."""
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "context.mjs"
        script.write_text(PI_SCRIPT % sdk_dir)
        node = shutil.which("node", path=f"{sdk_dir}/.bin:{os.environ.get('PATH', '')}") or "node"
        done = subprocess.run(
            [node, str(script), str(session), scratch], capture_output=True, text=True, check=True
        )
    return json.loads(done.stdout)


def main() -> int:
    sdk_dir = os.environ.get("PI_SDK_DIR")
    if not sdk_dir:
        print("set PI_SDK_DIR to the node_modules of a real pi 1.6", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        written = write_session(Path(scratch))
        DATA.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(written, SESSION)
    PI_CONTEXT.write_text(json.dumps(pi_context(SESSION, sdk_dir), ensure_ascii=False) + "\n")
    print(f"wrote {SESSION} and {PI_CONTEXT}")
    return 0


if __name__ == "__main__":
    if str(HERE.parents[1] / "src") not in sys.path:
        sys.path.insert(0, str(HERE.parents[1] / "src"))
    sys.exit(main())
