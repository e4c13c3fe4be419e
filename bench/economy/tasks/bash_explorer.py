"""bash-explorer: 39 small commands (0.5–4 KB each) exploring a repository, then an answer.

Like a mini-SWE-agent trajectory: ``ls``, ``grep``, ``sed -n`` ranges, ``git log``. The answer
quotes two values found early on (step 5 and step 12); when those outputs are no longer visible in
full, the model recalls them (a placeholder) or greps again.

Personas: ``rerun`` runs the command that showed a value again instead of recalling it;
``early-facts`` also uses a line number from its fifth command (where ``read_24`` is defined, from
``grep -rn 'def '``): it prints that function with ``sed -n`` before answering and names the line in
its answer. Finished: the answer gives the right values (and the right line).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from policy import View

from tasks.base import Task, write_files

MODULES = ("loader", "env", "schema", "merge", "cli", "paths", "cache", "report")
COMMANDS: tuple[str, ...] = (
    "ls -la",
    "ls -la app config docs",
    "cat README.md",
    "git log --oneline | head -20",
    "sed -n '1,80p' config/defaults.py",
    "grep -rn 'def ' config | head -60",
    *(f"sed -n '1,70p' app/{m}.py" for m in MODULES[:4]),
    "grep -rn 'environ' app config | head -40",
    "sed -n '1,80p' config/env.py",
    *(f"grep -n 'override' app/{m}.py" for m in MODULES),
    *(f"sed -n '70,140p' app/{m}.py" for m in MODULES[:6]),
    "wc -l app/*.py config/*.py",
    *(f"cat docs/{name}.md" for name in ("overview", "config", "env", "cli")),
    "grep -rn 'TODO' app config docs | head -40",
    *(f"sed -n '1,60p' app/{m}.py" for m in MODULES[4:]),
    "git log --stat --oneline | head -60",
    "grep -rn 'ENV_PREFIX' app config",
    "ls -la config",
)
FACTS = (("DEFAULT_TIMEOUT", 4, r"DEFAULT_TIMEOUT = (\d+)"), ("ENV_PREFIX", 11, r"ENV_PREFIX = '(\w+)'"))
LAST_READER = re.compile(r"config/env\.py:(\d+):def read_24\(")
LAST_READER_STEP = 5
EXPECTED = {"DEFAULT_TIMEOUT": "37", "ENV_PREFIX": "SHOPAPP_", "read_24": "config/env.py:103"}


def _module(name: str) -> str:
    lines = [f'"""app.{name}: part of the configuration pipeline."""', "", "import os", ""]
    for n in range(24):
        lines += [
            f"def {name}_stage_{n}(settings, override=None):",
            f'    """Stage {n}: apply ``override`` to the {name} settings when given."""',
            "    value = os.environ.get(f'SHOPAPP_{n}', settings.get('key_%d' % " + str(n) + "))",
            "    return override if override is not None else value",
            "",
        ]
    return "\n".join(lines) + "\n"


def setup(repo: Path) -> None:
    files = {f"app/{name}.py": _module(name) for name in MODULES}
    files["config/defaults.py"] = (
        '"""Default settings."""\n\n'
        + "".join(f"SETTING_{n:02d} = {n * 3}  # used by stage {n}\n" for n in range(30))
        + "DEFAULT_TIMEOUT = 37\n"
        + "".join(f"LIMIT_{n:02d} = {n * 11}\n" for n in range(20))
    )
    files["config/env.py"] = (
        '"""Environment overrides."""\n\nimport os\n\n'
        + "ENV_PREFIX = 'SHOPAPP_'\n\n"
        + "".join(
            f"def read_{n}():\n    return os.environ.get(ENV_PREFIX + 'KEY_{n}', '')\n\n\n" for n in range(25)
        )
    )
    files["config/__init__.py"] = ""
    files["app/__init__.py"] = ""
    for name in ("overview", "config", "env", "cli"):
        files[f"docs/{name}.md"] = f"# {name}\n\n" + "".join(
            f"- The {name} layer handles case {n}: settings are read, overridden, then validated.\n"
            for n in range(20)
        )
    files["README.md"] = "# shopapp\n\nConfiguration is read from config/, overridden from the environment.\n"
    write_files(repo, files)


def _value(view: View, name: str, step: int, pattern: str) -> str | None:
    """The value when some visible output shows it (in full, an excerpt, a recall, a new grep)."""
    for call in view.calls:
        shown = call.shown()
        if shown is not None and (found := re.search(pattern, shown.excerpts())):
            return found.group(1)
    found = re.search(pattern, view.summaries())
    return found.group(1) if found else None


def _last_reader(view: View) -> tuple[int | None, dict[str, Any] | None]:
    """The line of ``read_24`` as the early ``grep -rn 'def '`` showed it, or the step that finds it again."""
    run = view.runs_of(COMMANDS[LAST_READER_STEP])[-1]
    found = LAST_READER.search(view.sees(run))
    if found is not None:
        return int(found.group(1)), None
    return None, view.bring_back(
        run, "def read_24", {"text": "Looking further.", "bash": COMMANDS[LAST_READER_STEP]}
    )


def decide(view: View) -> dict[str, Any]:
    for command in COMMANDS:
        if not view.runs_of(command):
            return {"text": "Looking further.", "bash": command}
    line = None
    if view.early:
        line, step = _last_reader(view)
        if step is not None:
            return step
        command = f"sed -n '{line},{line + 1}p' config/env.py"
        if not view.runs_of(command):
            return {"text": "Looking at the last reader.", "bash": command}
    values, lookups = [], []
    for name, step, pattern in FACTS:
        value = _value(view, name, step, pattern)
        if value is not None:
            values.append(f"{name} is {value}")
            continue
        again = COMMANDS[step] if view.persona == "rerun" else f"grep -rn {name} config"
        lookup = view.bring_back(view.runs_of(COMMANDS[step])[-1], name, {"tool": "bash", "command": again})
        lookups.append(lookup["args"] | {"tool": "obs_recall"} if "args" in lookup else lookup)
    if lookups:  # every value still missing is looked up in one request, as parallel calls
        calls = [{"type": "toolCall", "name": lookup.pop("tool"), "arguments": lookup} for lookup in lookups]
        return {"content": [{"type": "text", "text": "Looking the values up again."}, *calls]}
    if line is not None:
        values.append(f"the last reader, read_24, is at config/env.py:{line}")
    return {"text": "Environment overrides are applied by config/env.py (" + "; ".join(values) + ")."}


def facts(text: str) -> list[str]:
    return [found.group(0) for _, _, pattern in FACTS if (found := re.search(pattern, text))]


def check(repo: Path, answer: str) -> str | None:
    for name in ("DEFAULT_TIMEOUT", "ENV_PREFIX"):
        if f"{name} is {EXPECTED[name]}" not in answer:
            return f"the answer does not give {name} = {EXPECTED[name]}: {answer[:120]!r}"
    if "read_24" in answer and f"is at {EXPECTED['read_24']}" not in answer:
        return f"the answer gives the wrong line for read_24: {answer[:160]!r}"
    return None


TASK = Task(
    name="bash-explorer",
    description="39 small commands (0.5-4 KB) exploring a repository, then an answer quoting two early values",
    prompts=(
        "Explore this repository and tell me how environment overrides are applied to the configuration, "
        "including the default timeout and the environment variable prefix.",
    ),
    setup=setup,
    decide=decide,
    facts=facts,
    check=check,
)
