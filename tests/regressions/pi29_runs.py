"""Issue 29: MCP servers run the same way through real pi 1.6 (to make goldens) and through tau.

Each scenario is one ``--mode json`` CLI run with pi's built-in MCP and tool-search extensions
(``-ne -e builtin:mcp -e builtin:tool-search``) and the issue-29 faux model (``data/pi29/faux-ext.ts``
for pi, ``pi22_faux.py`` for tau: ``call: <tool> <json>`` makes that call, a tool result is echoed).
Both connect to the same server, ``data/pi29/server.py`` (the SDK's own server library), over stdio
or over streamable HTTP on loopback, configured by the same ``mcp.json`` (``<agentDir>/mcp.json``,
and ``.pi/mcp.json`` / ``.tau/mcp.json`` for a project). A ``resumes`` scenario continues the
session another scenario left. Goldens are ``data/pi29/<name>.json`` (``{"stdout", "stderr",
"code", "session"}``); ``<name>.tau-session.json`` is the session tau wrote for a scenario that a
``pi-resumes-tau`` golden continued.

Regenerate the goldens (needs real pi 1.6, see ``data/pi22/README.md``, and this checkout's tau)::

    PATH=/work/pi-run/node_modules/.bin:$PATH PI_BIN=/work/pi-run/node_modules/.bin/pi \\
        python tests/regressions/pi29_runs.py
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from pi22_runs import FAUX_FACTORY, PI_BEHAVIOUR, Run, _drive, _merged, _normalize  # noqa: E402
from pi30_runs import _masked_text as _codemode_masked  # noqa: E402

from tau_process import tau_command, tau_env  # noqa: E402

DATA = HERE / "data" / "pi29"
FAUX_EXT = DATA / "faux-ext.ts"
SERVER = DATA / "server.py"
PLACE = "/tmp/pi29"
MCP_ARGS = ["-ne", "-e", "builtin:mcp", "-e", "builtin:tool-search"]
# Generous: a loaded machine takes seconds to import the SDK in the server (pi waits 10 s at most).
STARTUP_WAIT = "120"


def _call(tool: str, arguments: dict[str, Any] | None = None) -> str:
    return f"call: {tool} " + json.dumps(arguments or {}, separators=(",", ":"))


def _script(code: str) -> str:
    return "call: codemode " + json.dumps({"code": code}, separators=(",", ":"))


def _stdio(**extra: Any) -> dict[str, Any]:
    return {"command": "{python}", "args": ["{server}"], **extra}


@dataclass
class Scenario:
    name: str
    prompts: list[str]
    servers: dict[str, Any]  # the global mcp.json's mcpServers ({python}, {server}, {url} filled in)
    project: dict[str, Any] | None = None  # the project's mcp.json's mcpServers
    approve: bool | None = None
    http: bool = False
    resumes: str | None = None  # the scenario whose session this one continues
    codemode: bool = False  # load the bundled codemode extension too
    settings: dict[str, Any] = field(default_factory=dict)  # the user settings.json of both programs

    @property
    def args(self) -> list[str]:
        trust = [] if self.approve is None else ["--approve" if self.approve else "--no-approve"]
        return [*trust, "--mode", "json", *self.prompts]

    @property
    def extensions(self) -> list[str]:
        return [*MCP_ARGS, *(["-e", "builtin:codemode"] if self.codemode else [])]


SCENARIOS = {
    s.name: s
    for s in [
        # direct tools: a call, an error result, an image, a 30 KB result cut in the middle and spilled
        Scenario(
            "direct-calls",
            [
                _call("mcp__demo__add", {"a": 2, "b": 3}),
                _call("mcp__demo__fail", {"reason": "bad input"}),
                _call("mcp__demo__picture"),
                _call("mcp__demo__big", {"size": 30000}),
            ],
            {"demo": _stdio(exposure="direct")},
        ),
        # the resource tools, a template read, an unknown server
        Scenario(
            "resources",
            [
                _call("list_mcp_resources"),
                _call("list_mcp_resource_templates", {"server": "demo"}),
                _call("read_mcp_resource", {"server": "demo", "uri": "docs://readme"}),
                _call("read_mcp_resource", {"server": "demo", "uri": "docs://pages/intro"}),
                _call("read_mcp_resource", {"server": "nope", "uri": "docs://readme"}),
            ],
            {"demo": _stdio(exposure="direct")},
        ),
        # deferred tools listed in the mcp_servers section, loaded by tool_search, then called
        Scenario(
            "deferred-search",
            [
                _call("tool_search", {"query": "add numbers"}),
                _call("mcp__demo__add", {"a": 40, "b": 2}),
                _call("tool_search", {"query": "xyzzy"}),
                _call("mcp__demo__hang"),
            ],
            {"demo": _stdio(exposure="deferred", toolExposure={"echo": "direct", "h*": "hidden"})},
        ),
        # a server that crashes mid-call, then reconnects on the next call
        Scenario(
            "crash",
            [_call("mcp__demo__crash"), _call("mcp__demo__echo", {"text": "back again"})],
            {"demo": _stdio(exposure="direct")},
        ),
        # a server that never answers: pi's timeout (seconds in mcp.json)
        Scenario("timeout", [_call("mcp__demo__hang")], {"demo": _stdio(exposure="direct", timeout=30)}),
        # default exposure (codemode) without codemode: listed in the section, not callable directly
        Scenario("codemode-unreachable", [_call("mcp__demo__add", {"a": 1, "b": 1})], {"demo": _stdio()}),
        # streamable HTTP on loopback
        Scenario(
            "http-calls",
            [
                _call("mcp__web__echo", {"text": "over http"}),
                _call("read_mcp_resource", {"server": "web", "uri": "docs://readme"}),
            ],
            {"web": {"url": "{url}", "exposure": "direct"}},
            http=True,
        ),
        # a trusted project's override changes only exposure and toolExposure; an untrusted one is ignored
        Scenario(
            "project-override",
            [_call("mcp__demo__add", {"a": 1, "b": 2}), _call("mcp__demo__echo", {"text": "hidden?"})],
            {"demo": _stdio(exposure="direct")},
            project={"demo": {"exposure": "deferred", "toolExposure": {"add": "direct"}}},
            approve=True,
        ),
        Scenario(
            "project-untrusted",
            [_call("mcp__demo__echo", {"text": "still direct"})],
            {"demo": _stdio(exposure="direct")},
            project={"demo": {"exposure": "hidden"}},
            approve=False,
        ),
        # codemode scripts call MCP tools of codemode servers (codemode is activated for them)
        Scenario(
            "codemode-calls",
            [
                _script(
                    "const sum = await tools.mcp__demo__add({ a: 2, b: 3 });\n"
                    'const failed = await tools.mcp__demo__fail({ reason: "in a script" });\n'
                    "text(JSON.stringify({ sum: sum.structuredContent, failed: failed.isError }));\n"
                    'return (await tools.mcp__demo__echo({ text: "from codemode" })).content[0].text;'
                ),
            ],
            {"demo": _stdio()},
            codemode=True,
        ),
        # direct MCP tools while codemode is active: their declarations as codemode presents them
        Scenario(
            "codemode-direct",
            [_call("mcp__demo__add", {"a": 5, "b": 6})],
            {
                "demo": _stdio(
                    exposure="direct", toolExposure={"big": "hidden", "crash": "hidden", "hang": "hidden"}
                )
            },
            codemode=True,
            settings={"defaultTools": ["+codemode"]},
        ),
        # a session with MCP tool calls, continued: the restored loadout declares the MCP tools again
        Scenario(
            "resume-calls",
            [_call("mcp__demo__echo", {"text": "resumed"})],
            {"demo": _stdio(exposure="direct")},
            resumes="direct-calls",
        ),
    ]
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """The issue-29 server over streamable HTTP on a free loopback port; its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None:
                raise RuntimeError("the HTTP MCP server exited")
            time.sleep(0.1)
        else:
            raise RuntimeError("the HTTP MCP server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _fill(value: Any, url: str) -> Any:
    text = json.dumps(value).replace("{python}", sys.executable).replace("{server}", str(SERVER))
    return json.loads(text.replace("{url}", url))


def _prepare(scenario: Scenario, base: Path, config_dir: str, url: str) -> tuple[Path, Path, Path]:
    project = base / "proj"
    project.mkdir(parents=True)
    agent = base / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": _fill(scenario.servers, url)}, indent=2))
    if scenario.project is not None:
        (project / config_dir).mkdir()
        (project / config_dir / "mcp.json").write_text(json.dumps({"mcpServers": scenario.project}, indent=2))
    return project, agent, base / "sessions"


def _session_file(sessions: Path) -> Path | None:
    files = sorted(sessions.rglob("*.jsonl"))
    return files[0] if files else None


def _read_session(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _relocated(run: Run, base: Path) -> Run:
    return Run(**json.loads(json.dumps(run.__dict__).replace(str(base), PLACE)))


def _place_session(records: list[dict[str, Any]], base: Path) -> Path:
    sessions = base / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / "resumed.jsonl"
    text = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)
    path.write_text(text.replace(PLACE, str(base)))
    return path


@dataclass
class _Driven:
    name: str = "pi29"
    steps: list[Any] = field(default_factory=list)
    stdin: bytes | None = None


def _run(argv: list[str], env: dict[str, str], project: Path) -> tuple[list[str], str, int]:
    return asyncio.run(_drive(argv, _Driven(), project, env))


def run_tau(scenario: Scenario, base: Path, resume: list[dict[str, Any]] | None = None) -> Run:
    """Run ``scenario`` with tau (``python -m tau``) in ``base``; ``resume`` is the session to continue."""
    with http_server() if scenario.http else contextlib.nullcontext("") as url:
        project, agent, sessions = _prepare(scenario, base, ".tau", url)
        (agent / "settings.json").write_text(json.dumps(_merged(PI_BEHAVIOUR, scenario.settings)))
        script = base / "script.json"
        script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
        argv = tau_command("--offline", *scenario.extensions, "--model", "faux/faux-1")
        argv += ["--faux-script", str(script), "--session-dir", str(sessions)]
        if resume is not None:
            argv += ["--session", str(_place_session(resume, base))]
        argv += scenario.args
        extra = {"TAU_MCP_STARTUP_WAIT": STARTUP_WAIT, "TAU_FAUX_SCRIPT": None}
        env = tau_env(extra, home=base, agent_dir=agent)
        out, stderr, code = _run(argv, env, project)
        return _relocated(Run(out, stderr, code, _read_session(_session_file(sessions))), base)


def run_pi(scenario: Scenario, base: Path, pi_bin: str, resume: list[dict[str, Any]] | None = None) -> Run:
    """Run ``scenario`` with real pi 1.6 in ``base``."""
    with http_server() if scenario.http else contextlib.nullcontext("") as url:
        project, agent, sessions = _prepare(scenario, base, ".pi", url)
        if scenario.settings:
            (agent / "settings.json").write_text(json.dumps(scenario.settings))
        argv = [pi_bin, "--offline", *scenario.extensions, "-e", str(FAUX_EXT), "--model", "faux/faux-1"]
        argv += ["--session-dir", str(sessions)]
        if resume is not None:
            argv += ["--session", str(_place_session(resume, base))]
        argv += scenario.args
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(base)}
        out, stderr, code = _run(argv, env, project)
        return _relocated(Run(out, stderr, code, _read_session(_session_file(sessions))), base)


# -- comparing -----------------------------------------------------------------------------------

_OUTPUT_FILE = re.compile(r"/tmp/(?:pi|tau)-mcp-[0-9a-f]{16}\.txt")
# tau's bash guideline names its own TAU_* variables (decisions.md: tau's prompt wording)
_MCP_SECTION = "mcp_servers"


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        # codemode's masks too: its docs path, wall times, its own output files
        return _codemode_masked(_OUTPUT_FILE.sub("<output file>.txt", value))
    if isinstance(value, dict):
        if value.get("type") == "text_delta" and isinstance(value.get("delta"), str):
            # streamed in 16-character pieces that split the spill path: compared whole at text_end
            return {**value, "delta": "<delta>"}
        out = {}
        for key, item in value.items():
            if key == "sections" and isinstance(item, dict):
                if not item:
                    continue  # pi sometimes records an empty patch next to tool changes; it changes nothing
                # the MCP section is pi's wording in both; the others name their program
                out["mcpSection"] = item.get(_MCP_SECTION)
            out[key] = _mask(item)
        return out
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return value


def comparable(run: Run) -> dict[str, Any]:
    """The run as compared: pi22's masks (ids, times, durations, usage, section texts) plus spill paths."""
    return {
        "stdout": [_normalize(_mask(json.loads(line))) for line in run.stdout],
        "session": [_normalize(_mask(entry)) for entry in run.session],
        "stderr": run.stderr,
        "code": run.code,
    }


def _is_system(record: dict[str, Any]) -> bool:
    message = record.get("message")
    return isinstance(message, dict) and message.get("role") == "system"


def without_system(run: dict[str, Any]) -> dict[str, Any]:
    """A comparable run without system messages: a session resumed by the other program declares that
    program's prompt texts; everything else must be the same."""

    def strip(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("type") == "agent_end":
            return {**record, "messages": [m for m in record["messages"] if m.get("role") != "system"]}
        return record

    return {
        **run,
        "stdout": [strip(r) for r in run["stdout"] if not _is_system(r)],
        "session": [entry for entry in run["session"] if not _is_system(entry)],
    }


# -- goldens -------------------------------------------------------------------------------------


def golden_path(name: str) -> Path:
    return DATA / f"{name}.json"


def load_golden(name: str) -> Run:
    return Run(**json.loads(golden_path(name).read_text()))


def _write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1) + "\n")


def main() -> int:
    pi_bin = os.environ.get("PI_BIN") or shutil.which("pi")
    if not pi_bin:
        print("set PI_BIN to real pi 1.6 (see tests/regressions/data/pi22/README.md)", file=sys.stderr)
        return 2
    names = sys.argv[1:] or list(SCENARIOS)
    for name in names:
        scenario = SCENARIOS[name]
        with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
            resume = load_golden(scenario.resumes).session if scenario.resumes else None
            run = run_pi(scenario, Path(tmp), pi_bin, resume)
        _write(golden_path(name), run.__dict__)
        print(f"{name}: {len(run.stdout)} lines, exit {run.code}")
        if scenario.resumes:
            # pi continuing the session tau wrote for the scenario it resumes
            with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
                tau_first = run_tau(SCENARIOS[scenario.resumes], Path(tmp))
            _write(DATA / f"{scenario.resumes}.tau-session.json", tau_first.session)
            with tempfile.TemporaryDirectory(prefix="pi29-") as tmp:
                crossed = run_pi(scenario, Path(tmp), pi_bin, tau_first.session)
            _write(DATA / f"{name}.pi-resumes-tau.json", crossed.__dict__)
            print(f"{name} (pi resuming tau's session): {len(crossed.stdout)} lines, exit {crossed.code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
