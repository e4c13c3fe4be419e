"""The issue-22 scenarios, run the same way through real pi 1.6 (to make goldens) and through tau.

Each scenario is a CLI run: arguments, files in the project folder, optional piped stdin, and for
``--mode rpc`` a list of steps (``("send", line)``, or ``("wait", key)`` for an output line whose
``type`` is ``key``, or a ``response`` whose id is ``key[9:]`` when ``key`` is ``"response:<id>"``).
The n-th wait for a key is satisfied by the n-th such line, read before or after it. After the steps stdin is closed and stdout read to the
end. The golden of a scenario (``data/pi22/<name>.jsonl``) is ``{"stdout": [lines], "session":
[entries]}`` as one JSON document per line (``stdout`` lines first, then ``session`` lines).

Regenerate the goldens (needs real pi 1.6, see ``data/pi22/README.md``)::

    PI_BIN=/work/pi-run/node_modules/.bin/pi python tests/regressions/pi22_runs.py

Both programs answer with the same scripted model: ``data/pi22/faux-ext.ts`` for pi, and the faux
factory in ``pi22_faux.py`` for tau.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: the shared test helpers live in tests/
    sys.path.insert(0, str(HERE.parent))

from piped_process import start_piped  # noqa: E402
from tau_process import tau_command, tau_env  # noqa: E402

DATA = HERE / "data" / "pi22"
REPO = HERE.parents[1]
FAUX_EXT = DATA / "faux-ext.ts"
FAUX_FACTORY = f"{HERE / 'pi22_faux.py'}:respond"
TIMEOUT = 60.0
PLACE = "/tmp/pi22"  # where the goldens say they ran


@dataclass
class Scenario:
    """One CLI run of both programs."""

    name: str
    args: list[str]
    steps: list[tuple[str, str]] = field(default_factory=list)  # ("send", line) / ("wait", key)
    stdin: bytes | None = None
    files: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # the user settings.json of both programs
    reasoning: bool = False  # faux-1 and faux-2 are reasoning models

    @property
    def rpc(self) -> bool:
        return "rpc" in self.args


Step = tuple[str, str]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _send(**command: Any) -> Step:
    return ("send", _json(command))


def _wait(key: str) -> Step:
    return ("wait", key)


def _ask(request_id: str, kind: str, **fields: Any) -> list[Step]:
    """Send a command and wait for its response."""
    return [_send(id=request_id, type=kind, **fields), _wait(f"response:{request_id}")]


def _prompt_and_settle(message: str) -> list[Step]:
    return [_send(type="prompt", message=message), _wait("agent_settled")]


RPC = ["--mode", "rpc"]
_EDITS_AS_STRING = _json({"path": "notes.txt", "edits": _json([{"oldText": "alpha", "newText": "beta"}])})

SCENARIOS = {
    s.name: s
    for s in [
        # 1: an abort while bash runs; the next request is never made, a later prompt is answered.
        # The sleep outlasts TIMEOUT, so the abort arrives while bash runs, whatever the machine's load.
        Scenario(
            "abort-during-bash",
            RPC,
            [
                _send(type="prompt", message="bash: sleep 300"),
                _wait("tool_execution_start"),
                *_ask("a1", "abort"),
                _wait("agent_settled"),
                *_ask("p2", "prompt", message="hello again"),
                _wait("agent_settled"),
            ],
        ),
        # 2: set_model keeps the current thinking level when defaultThinkingLevel is unset.
        Scenario(
            "set-model-keeps-level",
            RPC,
            [
                *_ask("s0", "get_state"),
                *_ask("t1", "set_thinking_level", level="high"),
                *_ask("m1", "set_model", provider="faux", modelId="faux-2"),
                *_ask("s1", "get_state"),
            ],
            reasoning=True,
        ),
        # 3: piped stdin is trimmed and joined to the positional prompt without a separator.
        Scenario(
            "piped-stdin",
            ["--mode", "json", "--no-session", "positional"],
            stdin=b"  piped text\r\nwith crlf\n\n",
        ),
        # 4: a failed manual compaction; compaction_end has no result.
        Scenario("compact-fails", RPC, [*_prompt_and_settle("hello"), *_ask("c1", "compact")]),
        # 5: abort_retry: auto_retry_end comes before the command's response. The retry must still be
        # waiting when abort_retry arrives, whatever the machine's load: a long delay.
        Scenario(
            "abort-retry",
            RPC,
            [
                _send(type="prompt", message="fail: 503 overloaded_error: Overloaded"),
                _wait("auto_retry_start"),
                *_ask("r1", "abort_retry"),
                _wait("agent_settled"),
            ],
            settings={"retry": {"baseDelayMs": 60_000}},
        ),
        # 6: stdout and stderr chunks stream as separate updates (tool call and RPC bash).
        Scenario(
            "bash-streams",
            RPC,
            [
                *_prompt_and_settle("bash: echo out; echo err >&2"),
                *_ask("b1", "bash", command="echo out; echo err >&2"),
            ],
        ),
        # 10: edit with `edits` as a JSON string: the live call carries the array, the file the string.
        Scenario(
            "edit-json-string",
            RPC,
            _prompt_and_settle(f"call: edit {_EDITS_AS_STRING}"),
            files={"notes.txt": "alpha\n"},
        ),
    ]
}


# -- running -------------------------------------------------------------------------------------


@dataclass
class Run:
    stdout: list[str]
    stderr: str
    code: int | None
    session: list[dict[str, Any]]


def _key(line: str) -> str | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    if record.get("type") == "response" and "id" in record:
        return f"response:{record['id']}"
    return record.get("type")


async def _drive(
    argv: list[str], scenario: Scenario, cwd: Path, env: dict[str, str]
) -> tuple[list[str], str, int]:
    proc = await start_piped(argv, cwd=cwd, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out: list[str] = []
    seen: dict[str, int] = {}  # key -> lines of that key read so far
    waited: dict[str, int] = {}  # key -> waits for it so far

    async def read_line() -> bool:
        raw = await proc.stdout.readline()
        if not raw:
            return False
        line = raw.decode().removesuffix("\n")
        out.append(line)
        key = _key(line)
        if key:
            seen[key] = seen.get(key, 0) + 1
        return True

    async def run() -> None:
        if scenario.stdin is not None:
            proc.stdin.write(scenario.stdin)
        for op, value in scenario.steps:
            if op == "send":
                proc.stdin.write(value.encode() + b"\n")
                await proc.stdin.drain()
                continue
            waited[value] = waited.get(value, 0) + 1
            while seen.get(value, 0) < waited[value]:
                if not await read_line():
                    raise AssertionError(f"{scenario.name}: ended before {value!r}; last output: {out[-3:]}")
        proc.stdin.close()
        while await read_line():
            pass

    try:
        await asyncio.wait_for(run(), TIMEOUT)
        stderr = (await proc.stderr.read()).decode()
        code = await asyncio.wait_for(proc.wait(), TIMEOUT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return out, stderr, code


def _session(sessions: Path) -> list[dict[str, Any]]:
    files = sorted(sessions.rglob("*.jsonl"))
    if not files:
        return []
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]


def _prepare(scenario: Scenario, base: Path) -> tuple[Path, Path]:
    project = base / "proj"
    project.mkdir(parents=True)
    for name, text in scenario.files.items():
        (project / name).write_text(text)
    (base / "agent").mkdir()
    if scenario.settings:
        (base / "agent" / "settings.json").write_text(json.dumps(scenario.settings))
    return project, base / "sessions"


def _session_args(scenario: Scenario, sessions: Path) -> list[str]:
    return [] if "--no-session" in scenario.args else ["--session-dir", str(sessions)]


# Where tau differs from pi 1.6 on purpose and a setting restores pi's behaviour (decisions.md,
# "Deliberate differences"), tau runs with that setting: pi's exact summary requests, and the agent
# retry's own back-off whatever retry-after a server sends.
PI_BEHAVIOUR = {"compaction": {"cacheFriendly": False}, "retry": {"honorRetryAfter": False}}


def _merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = (
            _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        )
    return out


def run_tau(scenario: Scenario, base: Path) -> Run:
    """Run the scenario with tau (``python -m tau``) in ``base``; the faux factory answers.

    tau's settings are the scenario's plus :data:`PI_BEHAVIOUR`.
    """
    project, sessions = _prepare(scenario, base)
    agent = base / "agent"
    (agent / "settings.json").write_text(json.dumps(_merged(PI_BEHAVIOUR, scenario.settings)))
    script = base / "script.json"
    script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
    if scenario.reasoning:
        # What pi's faux provider gives its models: the same fields as in pi's answers.
        shape = {
            "api": "faux",
            "baseUrl": "http://localhost:0",
            "reasoning": True,
            "input": ["text", "image"],
        }
        models = [{"id": i, "name": i, **shape} for i in ("faux-1", "faux-2")]
        (agent / "models.json").write_text(json.dumps({"providers": {"faux": {"models": models}}}))
    argv = tau_command("--offline", "-ne", "--model", "faux/faux-1")
    argv += ["--faux-script", str(script), *_session_args(scenario, sessions), *scenario.args]
    env = tau_env({"TAU_FAUX_SCRIPT": None}, home=base, agent_dir=agent)
    out, stderr, code = asyncio.run(_drive(argv, scenario, project, env))
    return _relocated(Run(out, stderr, code, _session(sessions)), base)


def run_pi(scenario: Scenario, base: Path, pi_bin: str) -> Run:
    """Run the scenario with real pi 1.6 in ``base``; ``faux-ext.ts`` answers."""
    project, sessions = _prepare(scenario, base)
    argv = [pi_bin, "--offline", "-ne", "-e", str(FAUX_EXT), "--model", "faux/faux-1"]
    argv += [*_session_args(scenario, sessions), *scenario.args]
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(base / "agent"), "HOME": str(base)}
    if scenario.reasoning:
        env["PI22_REASONING"] = "1"
    out, stderr, code = asyncio.run(_drive(argv, scenario, project, env))
    return _relocated(Run(out, stderr, code, _session(sessions)), base)


# -- comparing -----------------------------------------------------------------------------------

_VOLATILE = {"timestamp", "durationMs", "wall_time_seconds"}
_ID_KEYS = {"id", "parentId", "targetId", "firstKeptEntryId", "sessionId", "leafId"}
_ENTRY_ID = re.compile(r"^([0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def _normalize(value: Any, key: str | None = None) -> Any:
    """A record with what varies between runs (and between pi's and tau's prompt texts) masked.

    Masked: timestamps, durations, entry and session ids, the session file name, usage figures
    (faux estimates them from the prompt, whose wording differs) unless they are all zero, and the
    text of system-prompt sections (their names are kept).
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, item in value.items():
            if k in _VOLATILE:
                out[k] = "<volatile>"
            elif k in _ID_KEYS and isinstance(item, str) and _ENTRY_ID.match(item):
                out[k] = "<id>"
            elif k == "sessionFile" and isinstance(item, str):
                out[k] = "<session file>"
            elif k == "usage" and isinstance(item, dict) and item.get("totalTokens"):
                out[k] = "<usage>"
            elif k == "sections" and isinstance(item, dict):
                out[k] = sorted(item)
            else:
                out[k] = _normalize(item, k)
        return out
    if isinstance(value, list):
        return [_normalize(item, key) for item in value]
    return value


def comparable(run: Run) -> dict[str, Any]:
    """The run as compared with pi's: stdout records and session entries normalized, exit code, stderr."""
    return {
        "stdout": [_normalize(json.loads(line)) for line in run.stdout],
        "session": [_normalize(entry) for entry in run.session],
        "stderr": run.stderr,
        "code": run.code,
    }


# -- goldens -------------------------------------------------------------------------------------


def golden_path(name: str) -> Path:
    return DATA / f"{name}.json"


def load_golden(name: str) -> Run:
    return Run(**json.loads(golden_path(name).read_text()))


def _relocated(run: Run, base: Path) -> Run:
    """The run as if made in ``/tmp/pi22``: the scratch folder is its only machine-specific text."""
    data = json.loads(json.dumps(run.__dict__).replace(str(base), PLACE))
    return Run(**data)


def _write_golden(name: str, run: Run) -> None:
    golden_path(name).write_text(json.dumps(run.__dict__, indent=1) + "\n")


def main() -> int:
    pi_bin = os.environ.get("PI_BIN") or shutil.which("pi")
    if not pi_bin:
        print("set PI_BIN to real pi 1.6 (see tests/regressions/data/pi22/README.md)", file=sys.stderr)
        return 2
    names = sys.argv[1:] or list(SCENARIOS)
    for name in names:
        with tempfile.TemporaryDirectory(prefix="pi22-") as tmp:
            base = Path(tmp)
            run = run_pi(SCENARIOS[name], base, pi_bin)
            _write_golden(name, run)
            print(f"{name}: {len(run.stdout)} lines, exit {run.code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
