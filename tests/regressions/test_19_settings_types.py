"""Issue 19 (the first hour): a wrong-typed setting is one warning naming the file, the key and the
type, never a Python error (``{"retry": 5}`` gave ``'int' object has no attribute 'get'``).

Every key documented in docs/settings.md is tried with a value of the wrong type.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tau.agent.settings import Settings
from tau.agent.settings_schema import SCHEMA, Expect
from tau_process import run_tau

DOC = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text(encoding="utf-8")
EXTENSION_BLOCKS = {"todoLoop", "sol"}  # their inside is checked by the bundled extensions


def documented_keys() -> list[str]:
    """The dotted keys of the "Keys and defaults" table (``retry.enabled`` / ``maxRetries`` → both)."""
    table = DOC[DOC.index("## Keys and defaults") :]
    keys = []
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        names = [name.removesuffix(".*") for name in re.findall(r"`([\w.*]+)`", line.split("|")[1])]
        parent = names[0].rpartition(".")[0]
        for name in names:
            keys.append(name if "." in name or not parent else f"{parent}.{name}")
    return keys


def schema_keys(fields=SCHEMA, prefix="") -> list[str]:
    keys = []
    for key, expect in fields.items():
        if expect.fields:
            keys.extend(schema_keys(expect.fields, f"{prefix}{key}."))
        else:
            keys.append(prefix + key)
    return keys


def expect_of(dotted: str) -> Expect:
    fields, expect = SCHEMA, None
    for part in dotted.split("."):
        expect = fields[part]
        fields = expect.fields
    assert expect is not None
    return expect


def wrong_value(expect: Expect):
    """A value someone could plausibly write that is not of the expected type."""
    for value in (5, "yes", "x", ["read"], {"a": 1}):
        if not expect.check(value):
            return value
    raise AssertionError(expect.name)


def nested(dotted: str, value):
    for part in reversed(dotted.split(".")):
        value = {part: value}
    return value


def test_the_documented_keys_are_the_checked_keys():
    assert sorted(documented_keys()) == sorted(schema_keys())


@pytest.mark.parametrize("dotted", documented_keys())
def test_a_wrong_type_is_one_line_naming_file_key_and_type(tmp_path, dotted):
    expect = expect_of(dotted)
    value = wrong_value(expect)
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(nested(dotted, value)))
    before = path.read_bytes()
    settings = Settings.load(tmp_path, project_trusted=False, directory=tmp_path)
    assert len(settings.problems) == 1, settings.problems
    [problem] = settings.problems
    assert problem.startswith(f"{path}: {dotted} must be {expect.name}, got {json.dumps(value)}; ")
    assert "\n" not in problem
    assert settings.get(dotted) == Settings.in_memory().get(dotted)  # the default applies
    assert path.read_bytes() == before  # nothing saved is lost


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("compaction.modelOverrides", {"a/b": {"reserveTokens": "many"}}),
        ("modelThinkingLevels", {"a/b": "huge"}),
    ],
)
def test_a_wrong_entry_of_a_map_names_its_model(tmp_path, key, value):
    (tmp_path / "settings.json").write_text(json.dumps(nested(key, value)))
    [problem] = Settings.load(tmp_path, project_trusted=False, directory=tmp_path).problems
    assert f'{key}["a/b"]' in problem


def test_the_project_file_is_named_for_its_own_values(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "project"
    (project / ".tau").mkdir(parents=True)
    agent.mkdir()
    (agent / "settings.json").write_text('{"retry": {"enabled": "no"}}')
    (project / ".tau" / "settings.json").write_text('{"images": {"blockImages": 1}}')
    problems = Settings.load(project, project_trusted=True, directory=agent).problems
    assert [p.split(": ", 1)[0] for p in problems] == [
        str(agent / "settings.json"),
        str(project / ".tau" / "settings.json"),
    ]


def test_valid_values_give_no_warning(tmp_path):
    good = {
        "defaultProvider": "openai",
        "defaultThinkingLevel": "high",
        "modelThinkingLevels": {"openai/gpt-5": "low"},
        "steeringMode": "all",
        "defaultTools": ["+grep", "-write"],
        "compaction": {"enabled": False, "modelOverrides": {"a/b": {"reserveTokens": 10}}},
        "retry": {"maxRetries": 0, "provider": {"maxRetries": 2}},
        "sol": {"actionFusion": False},
        "somethingAnExtensionReads": [1, 2],
        "shellPath": None,
    }
    (tmp_path / "settings.json").write_text(json.dumps(good))
    settings = Settings.load(tmp_path, project_trusted=False, directory=tmp_path)
    assert settings.problems == []
    assert settings.get("somethingAnExtensionReads") == [1, 2]


def run_faux_print(tmp_path: Path, agent: Path, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    """``tau -p hi`` with a faux model that answers "fine", the agent directory ``agent``, from ``cwd``."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "fine"}]))
    return run_tau(
        ["--model", "faux/faux-1", "--faux-script", str(script), *extra, "-p", "hi"],
        cwd=cwd,
        env={"TAU_AGENT_DIR": str(agent)},
    )


@pytest.mark.parametrize(
    ("written", "warning"),
    [
        ({"retry": 5}, "retry must be an object, got 5; using the defaults"),
        (
            {"retry": {"maxRetries": "x"}},
            'retry.maxRetries must be a non-negative integer, got "x"; using the default 3',
        ),
        ({"sol": 3}, "sol must be an object, got 3; using the defaults"),
        (  # checked by the bundled todo-loop, in the same words
            {"todoLoop": {"maxRounds": "x"}},
            'todoLoop.maxRounds must be a non-negative integer (0: no cap), got "x"; using the default 25',
        ),
    ],
)
def test_tau_p_warns_once_and_runs(tmp_path, written, warning):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps(written))
    result = run_faux_print(tmp_path, agent, tmp_path)
    assert (result.returncode, result.stdout) == (0, "fine\n"), result.stderr
    assert result.stderr == f"Warning: {agent / 'settings.json'}: {warning}\n"


def test_a_todo_loop_value_in_the_project_file_names_the_project_file(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "project"
    (project / ".tau").mkdir(parents=True)
    agent.mkdir()
    (project / ".tau" / "settings.json").write_text('{"todoLoop": {"maxStalls": 0}}')
    result = run_faux_print(tmp_path, agent, project, "--no-session", "--approve")
    assert (result.returncode, result.stdout) == (0, "fine\n"), result.stderr
    assert result.stderr == (
        f"Warning: {project / '.tau' / 'settings.json'}: todoLoop.maxStalls must be a positive integer, "
        "got 0; using the default 3\n"
    )


def test_a_wrong_value_inside_sol_is_one_line_not_one_per_mechanism(tmp_path):
    """The four context-economy mechanisms read the same block: its error is reported once."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"sol": {"actionFusion": "yes"}}')
    result = run_faux_print(tmp_path, agent, tmp_path)
    assert (result.returncode, result.stdout) == (0, "fine\n"), result.stderr
    [line] = result.stderr.splitlines()
    assert line.endswith(
        f'{agent / "settings.json"}: sol.actionFusion must be a boolean (true or false), got "yes"; '
        "the context-economy mechanisms (sol) are off"
    ), line
