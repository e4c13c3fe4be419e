"""``--models`` (and the setting ``enabledModels``): pi 1.6's model scope (issue 32's audit).

The scope's patterns are globs (``faux/*``, ``*-2``), ids, ``provider/id`` or parts of ids, each with
an optional ``:level``. Without ``--model``, a new session starts with the default model when it is in
the scope, else with the scope's first; Ctrl+P and RPC ``cycle_model`` go through it. The terminal side
is ``interactive/test_interactive_models_scope_pty.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_run import records, session_files, tau

from tau.llm.model_scope import resolve_scope
from tau.llm.types import Model
from tau_process import REPO, tau_command, tau_env

FAUX_EXT = REPO / "tests" / "regressions" / "data" / "pi22" / "faux-ext.ts"
FAUX_FACTORY = f"{REPO / 'tests' / 'regressions' / 'pi22_faux.py'}:respond"
SHAPE = {"api": "faux", "baseUrl": "http://localhost:0", "reasoning": True, "input": ["text", "image"]}


def _model(provider: str, model_id: str, name: str | None = None) -> Model:
    return Model(
        id=model_id, name=name or model_id, api="faux", provider=provider, base_url="", reasoning=True
    )


MODELS = [
    _model("anthropic", "claude-sonnet-4-5"),
    _model("anthropic", "claude-haiku-4-5"),
    _model("openai", "gpt-5"),
    _model("openai", "gpt-5-mini"),
    _model("openrouter", "anthropic/claude-sonnet-4-5"),
]


def _names(scoped) -> list[tuple[str, str | None]]:
    return [(f"{s.model.provider}/{s.model.id}", s.thinking_level) for s in scoped]


def test_patterns_resolve_as_pis_model_scope():
    scoped, warnings = resolve_scope(["openai/*:high", "haiku", "nothing-*", "gpt-5-mini:bogus"], MODELS)
    assert _names(scoped) == [
        ("openai/gpt-5", "high"),
        ("openai/gpt-5-mini", "high"),
        ("anthropic/claude-haiku-4-5", None),
    ]
    assert warnings == [
        'No models match pattern "nothing-*"',
        'Invalid thinking level "bogus" in pattern "gpt-5-mini:bogus". Using default instead.',
    ]
    # minimatch's rules (checked with the minimatch pi 1.6 ships): `*` stays inside one part of
    # provider/id (`anthropic*` names nothing, `*sonnet*` misses openrouter's anthropic/… id); `**` does not
    scoped, warnings = resolve_scope(["anthropic*", "*sonnet*", "openrouter/**"], MODELS)
    assert _names(scoped) == [
        ("anthropic/claude-sonnet-4-5", None),
        ("openrouter/anthropic/claude-sonnet-4-5", None),
    ]
    assert warnings == ['No models match pattern "anthropic*"']
    scoped, warnings = resolve_scope(["claude-sonnet-4-5"], MODELS)
    assert [name for name, _ in _names(scoped)] == ["anthropic/claude-sonnet-4-5"] and warnings == []


def _two_models(agent: Path) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    models = [{"id": i, "name": i, **SHAPE} for i in ("faux-1", "faux-2")]
    (agent / "models.json").write_text(json.dumps({"providers": {"faux": {"models": models}}}))


def _answered_by(path: Path) -> list[str]:
    return [
        r["message"]["model"]
        for r in records(path)
        if r.get("type") == "message" and r["message"]["role"] == "assistant"
    ]


def test_a_new_session_starts_with_the_scope(project, tmp_path, isolated_agent_dir):
    _two_models(isolated_agent_dir)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
    flags = ["-p", "--faux-script", str(script)]
    done = tau([*flags, "--models", "*-2:high", "--session-id", "one", "hi"], project)
    assert done.returncode == 0 and done.stdout == "echo: hi\n", done
    [first] = session_files(isolated_agent_dir)
    assert _answered_by(first) == ["faux-2"]
    assert [r["thinkingLevel"] for r in records(first) if r["type"] == "thinking_level_change"][-1:] == [
        "high"
    ]

    # the default model wins when the scope holds it
    (isolated_agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "faux", "defaultModel": "faux-1", "enabledModels": ["faux/*"]})
    )
    assert tau([*flags, "--session-id", "two", "hi"], project).returncode == 0
    # a session with messages keeps its own model
    assert tau([*flags, "--models", "faux-1", "--session", "one", "again"], project).returncode == 0
    files = {path.name.split("_", 1)[1]: path for path in session_files(isolated_agent_dir)}
    assert _answered_by(files["two.jsonl"]) == ["faux-1"]
    assert _answered_by(files["one.jsonl"]) == ["faux-2", "faux-2"]

    done = tau([*flags, "--models", "nothing-like-it", "--no-session", "hi"], project)
    assert 'Warning: No models match pattern "nothing-like-it"' in done.stderr, done


def test_rpc_cycle_model_goes_through_the_scope(project, tmp_path, isolated_agent_dir):
    _two_models(isolated_agent_dir)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
    lines = [json.dumps({"id": f"c{i}", "type": "cycle_model"}) for i in range(3)]
    done = tau(
        ["--mode", "rpc", "--no-session", "--faux-script", str(script), "--models", "faux-2,faux-1:low"],
        project,
        stdin="\n".join(lines) + "\n",
    )
    responses = [json.loads(line) for line in done.stdout.splitlines() if '"cycle_model"' in line]
    assert [
        (r["data"]["model"]["id"], r["data"]["thinkingLevel"], r["data"]["isScoped"]) for r in responses
    ] == [
        ("faux-1", "low", True),
        ("faux-2", "low", True),  # a scoped model without a level keeps the session's
        ("faux-1", "low", True),
    ]


def _run(
    program: str, base: Path, args: list[str], pi_bin: str | None = None
) -> subprocess.CompletedProcess[str]:
    project, agent, sessions = base / "proj", base / "agent", base / "sessions"
    for folder in (project, agent, sessions):
        folder.mkdir(parents=True, exist_ok=True)
    common = ["--offline", "-ne", "--session-dir", str(sessions)]
    if program == "pi":
        argv = [pi_bin, *common, "-e", str(FAUX_EXT), *args]
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(base), "PI22_REASONING": "1"}
        env["PATH"] = f"{Path(pi_bin).parent}{os.pathsep}{env.get('PATH', '')}"
    else:
        _two_models(agent)
        script = base / "script.json"
        script.write_text(json.dumps([{"factory": FAUX_FACTORY}]))
        argv = tau_command(*common, "--faux-script", script, *args)
        env = tau_env(agent_dir=agent, home=base)
    return subprocess.run(
        argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )


def _observed(program: str, base: Path, pi_bin: str | None = None) -> dict:
    """``-p --models`` runs: the answer, and the model and level each session recorded."""
    seen = {}
    for name, args in {
        "glob": ["--models", "faux/*-2:high"],
        "first": ["--models", "faux-2,faux-1"],
        "cli-model-wins": ["--models", "faux-2", "--model", "faux/faux-1"],
    }.items():
        done = _run(program, base / name, ["-p", *args, "hi"], pi_bin)
        [path] = sorted((base / name / "sessions").glob("*.jsonl"))
        entries = records(path)
        seen[name] = {
            "code": done.returncode,
            "stdout": done.stdout,
            "answered_by": _answered_by(path),
            "levels": [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"],
        }
    return seen


EXPECTED = {  # what real pi 1.6 recorded (PI_BIN=/work/pi-run/node_modules/.bin/pi, 2026-12-07)
    "glob": {"code": 0, "stdout": "echo: hi\n", "answered_by": ["faux-2"], "levels": ["high"]},
    "first": {"code": 0, "stdout": "echo: hi\n", "answered_by": ["faux-2"], "levels": ["medium"]},
    "cli-model-wins": {"code": 0, "stdout": "echo: hi\n", "answered_by": ["faux-1"], "levels": ["medium"]},
}


def test_models_runs_as_pi_recorded_them(tmp_path):
    assert _observed("tau", tmp_path) == EXPECTED


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_models_against_real_pi(tmp_path):
    assert _observed("tau", tmp_path / "tau") == _observed("pi", tmp_path / "pi", os.environ["PI_BIN"])
