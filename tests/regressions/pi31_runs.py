"""The issue-31 scenarios (skills, prompt templates, grep/find/ls), run through real pi 1.6 and tau.

Each scenario is a CLI run over files laid out in a scratch folder: ``proj/`` (the cwd), ``agent/``
(``PI_CODING_AGENT_DIR`` / ``TAU_AGENT_DIR``) and the rest of ``HOME``. ``{CFG}`` in a file name is
the project config folder: ``.pi`` for pi, ``.tau`` for tau (decisions.md: pi's names are kept under
tau's own folders). A golden (``data/pi31/<name>.json``) holds pi's stdout lines, session file,
and the messages of every model request (the contexts). The comparison masks what pi22's does
(ids, times, usage estimates, the preamble and docs sections' wording) and nothing else: the
``skills``, ``tools`` and ``rules`` sections, every event, entry and context are compared whole.

Regenerate the goldens (real pi 1.6, ``rg`` and ``fd`` on PATH: see ``data/pi31/README.md``)::

    PI_BIN=/work/pi-run/node_modules/.bin/pi python tests/regressions/pi31_runs.py [NAME...]
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
for extra in (HERE, HERE.parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from pi22_runs import PI_BEHAVIOUR, Scenario, _drive, _merged, _normalize, _send, _wait  # noqa: E402

from tau_process import tau_command, tau_env  # noqa: E402

DATA = HERE / "data" / "pi31"
REPO = HERE.parents[1]
FAUX_EXT = DATA / "faux-ext.ts"
FAUX_FACTORY = f"{HERE / 'pi31_faux.py'}:respond"
PLACE = "/tmp/pi31"
MASKED_SECTIONS = {"preamble", "docs"}  # tau's own wording (decisions.md); every other section is compared


@dataclass
class Layout:
    """The files of a scenario: ``proj/...``, ``agent/...`` or other paths under HOME."""

    files: dict[str, str | bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)


def _skill(name: str, description: str | None, body: str, **extra: str) -> str:
    lines = ["---"]
    if name:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    lines += [f"{key}: {value}" for key, value in extra.items()]
    lines += ["---", "", body, ""]
    return "\n".join(lines)


SKILLS = {
    "agent/skills/pdf-tools/SKILL.md": _skill(
        "pdf-tools",
        "Extract text & tables from <PDF> files. Use when reading PDFs.",
        "# PDF tools\n\nRun `scripts/x.sh`.",
    ),
    "agent/skills/Bad_Name/SKILL.md": _skill("Bad_Name", "Loads despite its name.", "bad name body"),
    "agent/skills/no-desc/SKILL.md": _skill("no-desc", None, "never listed"),
    "agent/skills/manual-only/SKILL.md": _skill(
        "manual-only",
        "Only through /skill:manual-only.",
        "manual body",
        **{"disable-model-invocation": "true"},
    ),
    "agent/skills/dupe-a/SKILL.md": _skill("twin", "The first twin.", "first twin"),
    "agent/skills/dupe-b/SKILL.md": _skill("twin", "The second twin.", "second twin"),
    "agent/skills/notes.md": _skill("", "A root-level Markdown skill.", "notes body"),
    "agent/skills/nested/deeper/SKILL.md": _skill("", "Named after its folder.", "deeper body"),
}

PROJECT_SKILL = {
    "proj/{CFG}/skills/local-skill/SKILL.md": _skill("local-skill", "A project skill.", "Project body."),
    "proj/{CFG}/prompts/local.md": "Project template: $1\n",
}

TEMPLATES = {
    "agent/prompts/review.md": '---\ndescription: Review staged git changes\nargument-hint: "[focus]"\n---\n'
    "Review the staged changes. Focus on ${1:-correctness}.\n",
    "agent/prompts/all.md": "one=$1 two=$2 ten=$10 all=$@ args=$ARGUMENTS from2=${@:2} mid=${@:2:1} "
    "d=${2:-none} dall=${@:-nothing} dargs=${ARGUMENTS:-empty} zero=${@:0}\n",
    "agent/prompts/nodesc.md": "\n\nFirst line is the description because this template has no frontmatter at all\n",
}


def _search_tree() -> dict[str, bytes]:
    sys.path.insert(0, str(REPO / "tests" / "tools"))
    from search_tree import FILES

    return {f"proj/{name}": data for name, data in FILES.items()}


def _call(tool: str, **args: Any) -> list:
    return [_send(type="prompt", message=f"call: {tool} {json.dumps(args)}"), _wait("agent_settled")]


def _prompt(message: str) -> list:
    return [_send(type="prompt", message=message), _wait("agent_settled")]


RPC = ["--mode", "rpc"]

SCENARIOS: dict[str, tuple[Scenario, Layout]] = {
    name: (scenario, layout)
    for name, scenario, layout in [
        (
            "skills-user",
            Scenario(
                "skills-user",
                RPC,
                [
                    *_prompt("/skill:pdf-tools extract report.pdf"),
                    *_prompt("/skill:manual-only"),
                    *_prompt("/skill:twin  spaced   args "),
                    *_prompt("/skill:unknown stays as typed"),
                    _send(id="c1", type="get_commands"),
                    _wait("response:c1"),
                ],
            ),
            Layout(SKILLS),
        ),
        (
            "skills-project-trusted",
            Scenario(
                "skills-project-trusted",
                [*RPC, "--approve"],
                [
                    *_prompt("/skill:local-skill go"),
                    *_prompt("/local x"),
                    _send(id="c1", type="get_commands"),
                    _wait("response:c1"),
                ],
            ),
            Layout(
                {
                    **PROJECT_SKILL,
                    "agent/skills/pdf-tools/SKILL.md": SKILLS["agent/skills/pdf-tools/SKILL.md"],
                }
            ),
        ),
        (
            "skills-project-untrusted",
            Scenario(
                "skills-project-untrusted",
                [*RPC, "--no-approve"],
                [
                    *_prompt("/skill:local-skill go"),
                    *_prompt("/local x"),
                    _send(id="c1", type="get_commands"),
                    _wait("response:c1"),
                ],
            ),
            Layout(
                {
                    **PROJECT_SKILL,
                    "agent/skills/pdf-tools/SKILL.md": SKILLS["agent/skills/pdf-tools/SKILL.md"],
                }
            ),
        ),
        (
            "skills-flags",
            Scenario(
                "skills-flags",
                [
                    *RPC,
                    "--no-skills",
                    "--skill",
                    "../extra/one-skill",
                    "--no-prompt-templates",
                    "--prompt-template",
                    "../extra/t.md",
                ],
                [
                    *_prompt("/skill:extra-skill now"),
                    *_prompt("/skill:pdf-tools x"),
                    *_prompt("/t a b"),
                    *_prompt("/review y"),
                ],
            ),
            Layout(
                {
                    "agent/skills/pdf-tools/SKILL.md": SKILLS["agent/skills/pdf-tools/SKILL.md"],
                    "agent/prompts/review.md": TEMPLATES["agent/prompts/review.md"],
                    "extra/one-skill/SKILL.md": _skill("extra-skill", "From --skill.", "extra body"),
                    "extra/t.md": "---\ndescription: From --prompt-template\n---\nT: $2 then $1\n",
                }
            ),
        ),
        (
            "templates",
            Scenario(
                "templates",
                RPC,
                [
                    *_prompt("/review"),
                    *_prompt("/review concurrency"),
                    *_prompt("/all \"a b\" c 'd e' f"),
                    *_prompt("/all"),
                    *_prompt('/all don\'t "say \\"hi\\"" "unclosed'),
                    *_prompt("/all 1 2 3 4 5 6 7 8 9 ten"),
                    *_prompt("/nodesc"),
                    _send(id="c1", type="get_commands"),
                    _wait("response:c1"),
                ],
            ),
            Layout(TEMPLATES),
        ),
        (
            "search-tools",
            Scenario(
                "search-tools",
                [*RPC, "--tools", "read,grep,find,ls"],
                [
                    *_call("grep", pattern="TODO"),
                    *_call("grep", pattern="TODO", path="src", context=1, limit=2),
                    *_call("grep", pattern="LONGMARK"),
                    *_call("grep", pattern="BINMARK"),
                    *_call("grep", pattern="hides|ignored"),
                    *_call("grep", pattern="WIDE", limit=1000),
                    *_call("find", pattern="*.txt"),
                    *_call("find", pattern="src/*.py"),
                    *_call("find", pattern=".*"),
                    *_call("ls"),
                    *_call("ls", path="sub", limit=1),
                ],
            ),
            Layout(_search_tree()),
        ),
        (
            # A plain --tools list activates the tools in the order listed, not registration order:
            # the session's toolsAdded, the prompt's tool list and each request's declarations follow it.
            "tools-order",
            Scenario("tools-order", [*RPC, "--tools", "ls,bash,read"], [*_call("ls"), *_prompt("hi")]),
            Layout({"proj/a.txt": "a\n"}),
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
    contexts: list[Any]


def _lay_out(layout: Layout, base: Path, config: str) -> Path:
    for name, data in layout.files.items():
        path = base / name.replace("{CFG}", config)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    (base / "proj").mkdir(exist_ok=True)
    (base / "agent").mkdir(exist_ok=True)
    return base / "proj"


def _session(sessions: Path) -> list[dict[str, Any]]:
    files = sorted(sessions.rglob("*.jsonl"))
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()] if files else []


def _contexts(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _relocated(run: Run, base: Path, config: str) -> Run:
    """As if run in ``/tmp/pi31``, with pi's ``.pi`` folder named as tau names it.

    Each content block's streamed deltas are merged first: pi's 16-character chunks cut the scratch
    folder's name, which would then escape the renaming (chunking is never compared anyway).
    """
    merged = _merged_deltas([json.loads(line) if line.startswith("{") else line for line in run.stdout])
    run = Run(
        [
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) if isinstance(r, dict) else r
            for r in merged
        ],
        run.stderr,
        run.code,
        run.session,
        run.contexts,
    )
    text = json.dumps(run.__dict__).replace(str(base), PLACE)
    text = re.sub(rf"{re.escape(PLACE)}/proj/{re.escape(config)}(?=[/\\\"])", f"{PLACE}/proj/.tau", text)
    return Run(**json.loads(text))


def run_tau(name: str, base: Path) -> Run:
    scenario, layout = SCENARIOS[name]
    project = _lay_out(layout, base, ".tau")
    agent = base / "agent"
    settings_path = agent / "settings.json"
    (settings_path).write_text(json.dumps(_merged(PI_BEHAVIOUR, scenario.settings)))
    script = base / "script.json"
    script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
    argv = tau_command("--offline", "-ne", "--model", "faux/faux-1")
    argv += ["--faux-script", str(script), "--session-dir", str(base / "sessions"), *scenario.args]
    contexts = base / "contexts.jsonl"
    extra = {"TAU31_CONTEXTS": str(contexts), "TAU_FAUX_SCRIPT": None, "XDG_CONFIG_HOME": None}
    env = tau_env(extra, home=base, agent_dir=agent, path=[HERE, HERE.parent])
    out, stderr, code = asyncio.run(_drive(argv, scenario, project, env))
    run = Run(out, stderr, code, _session(base / "sessions"), _contexts(contexts))
    return _relocated(run, base, ".tau")


def _search_binaries(base: Path) -> Path:
    """pi's rg and fd: the ripgrep wheel's rg asked for path order (as tau asks it), and fd."""
    from tau.tools.binaries import find_ripgrep

    binaries = base / "bin"
    binaries.mkdir()
    rg, fd = find_ripgrep(), shutil.which("fd") or shutil.which("fdfind")
    if rg:
        (binaries / "rg").write_text(f'#!/bin/sh\nexec "{rg}" --sort path "$@"\n')
    if fd:
        (binaries / "fd").write_text(f'#!/bin/sh\nexec "{fd}" "$@"\n')
    for tool in binaries.iterdir():
        tool.chmod(0o755)
    return binaries


def run_pi(name: str, base: Path, pi_bin: str) -> Run:
    scenario, layout = SCENARIOS[name]
    project = _lay_out(layout, base, ".pi")
    if scenario.settings:
        (base / "agent" / "settings.json").write_text(json.dumps(scenario.settings))
    argv = [pi_bin, "--offline", "-ne", "-e", str(FAUX_EXT), "--model", "faux/faux-1"]
    argv += ["--session-dir", str(base / "sessions"), *scenario.args]
    contexts = base / "contexts.jsonl"
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(base / "agent"),
        "HOME": str(base),
        "PI31_CONTEXTS": str(contexts),
    }
    env["PATH"] = f"{_search_binaries(base)}{os.pathsep}{env['PATH']}"
    env.pop("XDG_CONFIG_HOME", None)
    out, stderr, code = asyncio.run(_drive(argv, scenario, project, env))
    run = Run(out, stderr, code, _session(base / "sessions"), _contexts(contexts))
    return _relocated(run, base, ".pi")


# -- comparing -----------------------------------------------------------------------------------


def _sections(value: Any) -> Any:
    """System messages' sections under another key, so that pi22's normalization (which keeps only
    section names) leaves their texts alone; the masked ones lose their text here."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "sections" and isinstance(item, dict):
                out["sections~"] = {
                    n: ("<masked>" if n in MASKED_SECTIONS else _tau_names(t)) for n, t in item.items()
                }
            else:
                out[key] = _sections(item)
        return out
    if isinstance(value, list):
        return [_sections(item) for item in value]
    return value


def _tau_names(text: Any) -> Any:
    """tau's prompt names its own environment variables (decisions.md: ``TAU_*`` for ``PI_*``)."""
    return text.replace("PI_* environment", "TAU_* environment") if isinstance(text, str) else text


def _masked(value: Any) -> Any:
    return _normalize(_sections(value))


def _merged_deltas(records: list[Any]) -> list[Any]:
    """Adjacent streamed deltas of one content block as one (decisions.md: chunking is not compared;
    the temporary folder's name, part of streamed text, changes where pi's 16-character chunks fall)."""
    out: list[Any] = []
    for record in records:
        event = record.get("assistantMessageEvent") if record.get("type") == "message_update" else None
        previous = (
            out[-1].get("assistantMessageEvent") if out and out[-1].get("type") == "message_update" else None
        )
        if (
            event is not None
            and previous is not None
            and event.get("type", "").endswith("_delta")
            and event.get("type") == previous.get("type")
            and event.get("contentIndex") == previous.get("contentIndex")
        ):
            previous["delta"] = previous.get("delta", "") + event.get("delta", "")
            continue
        out.append(record)
    return out


def comparable(run: Run) -> dict[str, Any]:
    """What must equal between pi and tau: stdout records, session entries, contexts, the exit code.

    stderr is left out: tau prints skill and template warnings there in every mode, pi only in its
    terminal (docs/skills.md).
    """
    return {
        "stdout": _merged_deltas(
            [_masked(json.loads(line)) for line in run.stdout]
        ),  # goldens' are merged already
        "session": [_masked(entry) for entry in run.session],
        "contexts": [_masked(messages) for messages in run.contexts],
        "code": run.code,
    }


# -- goldens -------------------------------------------------------------------------------------


def golden_path(name: str) -> Path:
    return DATA / f"{name}.json"


def load_golden(name: str) -> Run:
    return Run(**json.loads(golden_path(name).read_text()))


def main() -> int:
    pi_bin = os.environ.get("PI_BIN") or shutil.which("pi")
    if not pi_bin:
        print("set PI_BIN to real pi 1.6 (see tests/regressions/data/pi31/README.md)", file=sys.stderr)
        return 2
    for name in sys.argv[1:] or list(SCENARIOS):
        with tempfile.TemporaryDirectory(prefix="pi31-") as tmp:
            run = run_pi(name, Path(tmp), pi_bin)
        golden_path(name).write_text(json.dumps(run.__dict__, indent=1, ensure_ascii=False) + "\n")
        print(f"{name}: {len(run.stdout)} lines, {len(run.contexts)} requests, exit {run.code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
