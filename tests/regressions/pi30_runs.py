"""Issue 30: codemode scripts run the same way through real pi 1.6 (to make goldens) and through tau.

Each scenario is one ``--mode json`` CLI run with codemode enabled (``-e builtin:codemode --tools
+codemode``, the faux model of issue 22 answering ``call: codemode <json>`` with that call); a
``resume`` scenario continues the session another scenario left (``--session FILE``). Goldens live
in ``data/pi30/<name>.json`` (``{"stdout", "stderr", "code", "session"}``, as in ``data/pi22``);
``<name>.tau-session.json`` is the session tau wrote for the scenario a ``pi-resumes-tau`` golden
continued, so the committed golden shows what pi made of a tau session.

Regenerate the goldens (needs real pi 1.6 and this checkout's tau)::

    PI_BIN=/work/pi-run/node_modules/.bin/pi python tests/regressions/pi30_runs.py
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
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from pi22_runs import FAUX_EXT, FAUX_FACTORY, PI_BEHAVIOUR, Run, _drive, _merged, _normalize  # noqa: E402

from tau_process import tau_command, tau_env  # noqa: E402

DATA = HERE / "data" / "pi30"
PLACE = "/tmp/pi30"
# A 2x2 red PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="


def _call(code: str) -> str:
    return "call: codemode " + json.dumps({"code": code}, separators=(",", ":"))


@dataclass
class Scenario:
    name: str
    code: str
    files: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    resumes: str | None = None  # the scenario whose session this one continues

    @property
    def args(self) -> list[str]:
        return ["--tools", "+codemode", "--mode", "json", _call(self.code)]


_FILES = {"a.txt": "alpha\nbeta\n", "notes.md": "# Notes\nfirst\n"}

SCENARIOS = {
    s.name: s
    for s in [
        # nested calls one after another: read (structured string), bash (structured object), edit (text)
        Scenario(
            "tool-calls",
            'const a = await tools.read({ path: "a.txt" });\n'
            "const b = await tools.bash({ command: \"printf 'one\\\\ntwo\\\\n' | wc -l\" });\n"
            'const e = await tools.edit({ path: "notes.md", edits: [{ oldText: "first", newText: "second" }] });\n'
            "text(a.trim());\ntext({ output: b.output.trim(), exit_code: b.exit_code });\nreturn e;",
            files=_FILES,
        ),
        # a failing call caught by the script, then one that fails the script
        Scenario(
            "failing-tool",
            'try {\n  await tools.read({ path: "missing.txt" });\n} catch (error) {\n  text("caught: " + error.message);\n}\n'
            'const ok = await tools.read({ path: "a.txt" });\ntext(ok);\n'
            'await tools.edit({ path: "a.txt", edits: [{ oldText: "nowhere", newText: "x" }] });\ntext("not reached");',
            files=_FILES,
        ),
        # store() writes a codemode-store entry; resume-store loads it in the next call
        Scenario(
            "store",
            'store("cursor", { page: 2, ids: [1, 2, 3] });\nstore("note", "kept");\nstore("gone", 1);\nstore("gone", undefined);\n'
            'return load("cursor");',
        ),
        Scenario(
            "resume-store",
            'text(JSON.stringify({ cursor: load("cursor"), note: load("note"), gone: load("gone") ?? null }));\n'
            'store("note", "changed");',
            resumes="store",
        ),
        # a failed script keeps no store writes
        Scenario("store-failed", 'store("lost", 1);\nthrow new Error("boom");'),
        # console output goes last, in one block
        Scenario(
            "console",
            'console.log("hello", 42, { a: [1, 2] });\nconsole.error(new TypeError("bad"));\ntext("first");\n'
            'console.info(null, undefined, true);\ntext("second");\nreturn [1, "two"];',
        ),
        # an image file read through read, and an image shown from a data URL
        Scenario(
            "image",
            'const img = await tools.read({ path: "dot.png" });\ntext(img.type + " " + img.mimeType);\nimage(img);\n'
            f'image("data:image/png;base64,{PNG}");\ntext("done");',
            files={"dot.png": "base64:" + PNG},
        ),
        # a script that never ends stops at its deadline
        Scenario("timeout", '// @options: {"timeout_ms": 400}\nlet spins = 0;\nwhile (true) { spins++; }'),
        # codemode.mode "only": the built-in tools are hidden from the model and listed in codemode
        Scenario(
            "only-mode",
            'const r = await tools.bash({ command: "echo only" });\nreturn r.output.trim() + " " + r.exit_code;',
            settings={"codemode": {"mode": "only"}},
        ),
    ]
}


def _prepare(scenario: Scenario, base: Path) -> tuple[Path, Path]:
    import base64

    project = base / "proj"
    project.mkdir(parents=True)
    for name, text in scenario.files.items():
        if text.startswith("base64:"):
            (project / name).write_bytes(base64.b64decode(text[len("base64:") :]))
        else:
            (project / name).write_text(text)
    (base / "agent").mkdir()
    return project, base / "sessions"


def _session_file(sessions: Path) -> Path | None:
    files = sorted(sessions.rglob("*.jsonl"))
    return files[0] if files else None


def _read_session(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _relocated(run: Run, base: Path) -> Run:
    data = json.loads(json.dumps(run.__dict__).replace(str(base), PLACE))
    return Run(**data)


def _place_session(records: list[dict[str, Any]], base: Path) -> Path:
    """A golden's session written under ``base`` (its ``/tmp/pi30`` paths made ``base``), to resume."""
    sessions = base / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / "resumed.jsonl"
    text = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)
    path.write_text(text.replace(PLACE, str(base)))
    return path


def run_tau(scenario: Scenario, base: Path, resume: list[dict[str, Any]] | None = None) -> Run:
    """Run ``scenario`` with tau in ``base``; ``resume`` is the session to continue."""
    project, sessions = _prepare(scenario, base)
    agent = base / "agent"
    (agent / "settings.json").write_text(json.dumps(_merged(PI_BEHAVIOUR, scenario.settings)))
    script = base / "script.json"
    script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
    argv = tau_command("--offline", "-ne", "-e", "builtin:codemode", "--model", "faux/faux-1")
    argv += ["--faux-script", str(script), "--session-dir", str(sessions)]
    if resume is not None:
        argv += ["--session", str(_place_session(resume, base))]
    argv += scenario.args
    env = tau_env({"TAU_FAUX_SCRIPT": None}, home=base, agent_dir=agent)
    out, stderr, code = asyncio.run(_drive(argv, _Driven(), project, env))
    return _relocated(Run(out, stderr, code, _read_session(_session_file(sessions))), base)


def run_pi(scenario: Scenario, base: Path, pi_bin: str, resume: list[dict[str, Any]] | None = None) -> Run:
    """Run ``scenario`` with real pi 1.6 in ``base``; ``faux-ext.ts`` of issue 22 answers."""
    project, sessions = _prepare(scenario, base)
    if scenario.settings:
        (base / "agent" / "settings.json").write_text(json.dumps(scenario.settings))
    argv = [
        pi_bin,
        "--offline",
        "-ne",
        "-e",
        "builtin:codemode",
        "-e",
        str(FAUX_EXT),
        "--model",
        "faux/faux-1",
    ]
    argv += ["--session-dir", str(sessions)]
    if resume is not None:
        argv += ["--session", str(_place_session(resume, base))]
    argv += scenario.args
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(base / "agent"), "HOME": str(base)}
    out, stderr, code = asyncio.run(_drive(argv, _Driven(), project, env))
    return _relocated(Run(out, stderr, code, _read_session(_session_file(sessions))), base)


@dataclass
class _Driven:
    """What ``pi22_runs._drive`` needs of a scenario: no stdin, no steps."""

    name: str = "pi30"
    steps: list[Any] = field(default_factory=list)
    stdin: bytes | None = None


# -- comparing -----------------------------------------------------------------------------------

_DOCS = re.compile(r"/[^\s\"`]*/docs/codemode\.md")
_WALL = re.compile(r"Wall time \d+\.\d seconds")
_OUTPUT_FILE = re.compile(r"/tmp/(?:pi|tau)-codemode-[0-9a-f]{16}\.(png|jpg|gif|webp|txt)")


# tau's bash guideline names its own TAU_* variables (decisions.md: tau's prompt wording)
_ENV = re.compile(r"\b(?:PI|TAU)_\* environment variables")


def _masked_text(text: str) -> str:
    text = _DOCS.sub("<docs>/codemode.md", text)
    text = _ENV.sub("<ENV>_* environment variables", text)
    text = _WALL.sub("Wall time <s> seconds", text)
    return _OUTPUT_FILE.sub(r"<output file>.\1", text)


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return _masked_text(value)
    if isinstance(value, dict):
        if value.get("type") == "text_delta" and isinstance(value.get("delta"), str):
            # the faux model streams its echo of a result in 16-character pieces, which split wall-time
            # figures and scratch paths: the whole text is compared, masked, at text_end and message_end
            return {**value, "delta": "<delta>"}
        return {key: _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return value


def comparable(run: Run) -> dict[str, Any]:
    """The run as compared: pi22's masks (ids, times, durations, usage estimates, system-prompt
    texts) plus the docs path in the codemode description, wall-time figures and temp-file names."""
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
    """A comparable run without system messages (their events, entries, and copies in agent_end).

    A session resumed by the other program gets a system message declaring that program's prompt
    texts (pi's and tau's wording differ on purpose): the rest of a cross-resumed run must equal
    the run of the program resuming its own session.
    """

    def strip(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("type") == "agent_end":
            return {**record, "messages": [m for m in record["messages"] if m.get("role") != "system"]}
        return record

    stdout = [strip(r) for r in run["stdout"] if not _is_system(r)]
    session = [entry for entry in run["session"] if not _is_system(entry)]
    # entries now point past the dropped system entries: ids are masked, so only the count changes
    return {**run, "stdout": stdout, "session": session}


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
        with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
            resume = load_golden(scenario.resumes).session if scenario.resumes else None
            run = run_pi(scenario, Path(tmp), pi_bin, resume)
        _write(golden_path(name), run.__dict__)
        print(f"{name}: {len(run.stdout)} lines, exit {run.code}")
        if scenario.resumes:
            # pi continuing the session tau wrote for the scenario it resumes
            with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
                tau_first = run_tau(SCENARIOS[scenario.resumes], Path(tmp))
            _write(DATA / f"{scenario.resumes}.tau-session.json", tau_first.session)
            with tempfile.TemporaryDirectory(prefix="pi30-") as tmp:
                crossed = run_pi(scenario, Path(tmp), pi_bin, tau_first.session)
            _write(DATA / f"{name}.pi-resumes-tau.json", crossed.__dict__)
            print(f"{name} (pi resuming tau's session): {len(crossed.stdout)} lines, exit {crossed.code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
