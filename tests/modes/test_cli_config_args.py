"""``tau config``'s arguments and the subcommand guard's edge, as real pi 1.6 has them (issue 32's audit).

pi looks only at the first word for a subcommand: ``pi -a config`` approves the project and sends
"config" to the model as a prompt (a run of real pi 1.6 with the echo model answered ``echo: config``).
tau does the same, so the guard's hint must not tell a user to type that: it says ``tau config -a``.
``pi config`` rejects a word it does not take with two lines and exit 1; so does ``tau config``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from pi32 import prepare, run, session_records

from tau_process import run_tau

# What real pi 1.6 printed (PI_BIN=/work/pi-run/node_modules/.bin/pi, 2026-12-07), "pi" → "tau".
PI_CONFIG_ERRORS = {
    "--bogus": 'Unknown option --bogus for "config".\nUse "tau --help" or "tau config [-l] [--json] '
    '[--approve|--no-approve]".\n',
    "foo": "Unexpected argument foo.\nUsage: tau config [-l] [--json] [--approve|--no-approve]\n",
}


def tau(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_tau(args, cwd=cwd)


@pytest.mark.parametrize("word", sorted(PI_CONFIG_ERRORS))
def test_config_rejects_a_word_it_does_not_take_as_pi_does(project, isolated_agent_dir, word):
    done = tau(["config", word], project)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", PI_CONFIG_ERRORS[word])


def test_config_help_and_local(project, isolated_agent_dir):
    done = tau(["config", "--help"], project)
    assert done.returncode == 0 and done.stdout.startswith("Usage: tau config [-l]"), done
    (project / ".tau").mkdir()
    (project / ".tau" / "settings.json").write_text(json.dumps({"steeringMode": "all"}))
    refused = tau(["config", "-l"], project)
    assert refused.returncode == 1 and refused.stderr.startswith("Project is not trusted."), refused
    local = tau(["config", "-l", "-a"], project)
    assert local.returncode == 0, local
    assert local.stdout.startswith(f"project settings: {project / '.tau' / 'settings.json'} (read)")
    assert "user settings:" not in local.stdout and '"steeringMode": "all"' in local.stdout


def test_the_untrusted_hint_names_a_command_that_shows_the_project(project, isolated_agent_dir):
    (project / ".tau").mkdir()
    (project / ".tau" / "settings.json").write_text(json.dumps({"steeringMode": "all"}))
    hint = tau(["config"], project).stdout
    assert "(tau config -a shows it as trusted)" in hint
    assert "(read)" in tau(["config", "-a"], project).stdout.split("project settings:")[1].splitlines()[0]


def approve_then_config(program: str, base: Path, pi_bin: str | None = None) -> list[object]:
    done = run(program, ["-p", "-a", "config"], base, pi_bin=pi_bin)
    [records] = session_records(base)
    prompts = [r["message"]["content"] for r in records if r.get("message", {}).get("role") == "user"]
    return [done.returncode, done.stdout, prompts]


# pi 1.6's run of `pi -p -a config` (PI_BIN=…, 2026-12-07): a prompt, as any word after a flag.
PI_APPROVE_CONFIG = [0, "echo: config\n", [[{"type": "text", "text": "config"}]]]


def test_a_subcommand_word_after_a_flag_is_a_prompt_as_in_pi(tmp_path):
    prepare(tmp_path)
    assert approve_then_config("tau", tmp_path) == PI_APPROVE_CONFIG


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_a_subcommand_word_after_a_flag_live_against_pi(tmp_path):
    ours = approve_then_config("tau", tmp_path / "tau")
    assert ours == approve_then_config("pi", tmp_path / "pi", os.environ["PI_BIN"])
