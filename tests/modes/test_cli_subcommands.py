"""Issue 32: no word of pi 1.6's subcommand set reaches a model; ``tau config`` shows the settings in effect.

Run as the ``tau`` program (``python -m tau``), with no model configured and, separately, with a
configured scripted model that would answer (and write a session file) if any word reached it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import tau

PI_WORDS = ["install", "remove", "uninstall", "update", "list", "config", "auth", "mcp", "help"]


def configured_model(home: Path, tmp_path: Path) -> dict[str, str]:
    """A default model (faux) that answers anything: a word that reaches it writes a session file."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"defaultProvider": "faux", "defaultModel": "faux-1"}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "the model answered"}] * 4))
    return {"TAU_FAUX_SCRIPT": str(script)}


def sessions(home: Path) -> list[Path]:
    return sorted(home.glob("sessions/**/*.jsonl"))


@pytest.mark.parametrize(
    ("argv", "code", "line"),
    [
        (["mcp", "list"], 0, "No MCP servers configured. Add them to "),
        (["mcp", "remove", "x"], 1, 'No global MCP server named "x" in '),
        (["install", "npm:@scope/pkg"], 1, "tau install: tau has no package manager; "),
        (["remove", "npm:@scope/pkg"], 1, "tau remove: tau has no package manager; "),
        (["uninstall", "x"], 1, "tau remove: tau has no package manager; "),
        (["update"], 1, "tau update: update tau with the tool that installed it"),
        (["auth", "login", "anthropic"], 1, "tau auth: tau has no login; "),
        (["list"], 0, "tau list: tau installs no packages; "),
        (["help"], 0, "tau help: tau --help lists the options and commands"),
    ],
)
def test_pi_subcommands_answer_in_one_line_without_a_model(project, isolated_agent_dir, argv, code, line):
    done = tau(argv, project)
    assert done.returncode == code, done
    output = (done.stdout + done.stderr).splitlines()
    assert len(output) == 1 and output[0].startswith(line), output
    assert sessions(isolated_agent_dir) == []


@pytest.mark.parametrize("word", PI_WORDS)
def test_no_pi_subcommand_word_reaches_a_configured_model(project, tmp_path, isolated_agent_dir, word):
    env = configured_model(isolated_agent_dir, tmp_path)
    done = tau([word, "something"], project, **env)
    assert "the model answered" not in done.stdout, done
    assert sessions(isolated_agent_dir) == []


def test_a_first_word_that_names_no_subcommand_is_still_a_prompt(project, tmp_path, isolated_agent_dir):
    env = configured_model(isolated_agent_dir, tmp_path)
    done = tau(["configure", "the", "build"], project, **env)
    assert done.returncode == 0, done
    assert done.stdout == "the model answered\n"
    # A subcommand word later on the line is part of a prompt too, as in pi (only the first word counts).
    done = tau(["--no-session", "mcp", "list"], project, **env)
    assert done.stdout.count("the model answered") == 1, done


def test_config_shows_the_files_in_effect_and_their_values(project, isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True)
    (isolated_agent_dir / "settings.json").write_text(
        json.dumps({"steeringMode": "all", "retry": {"maxRetries": 7}})
    )
    (project / ".tau").mkdir()
    (project / ".tau" / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))

    done = tau(["config"], project)
    assert done.returncode == 0, done
    text = done.stdout
    assert f"user settings: {isolated_agent_dir / 'settings.json'} (read)" in text
    assert (
        f"project settings: {project / '.tau' / 'settings.json'} (not read: the project is not trusted"
        in text
    )
    assert '"maxRetries": 7' in text and '"baseDelayMs": 2000' in text  # the project file is not applied

    trusted = json.loads(tau(["config", "--json", "--approve"], project).stdout)
    assert trusted["user"]["values"] == {"steeringMode": "all", "retry": {"maxRetries": 7}}
    assert trusted["project"]["values"] == {"retry": {"baseDelayMs": 10}}
    assert trusted["project"]["trusted"] is True
    assert trusted["effective"]["retry"] == {
        "enabled": True,
        "maxRetries": 7,
        "baseDelayMs": 10,
        "maxAgentDelayMs": 60000,
    }
    assert trusted["effective"]["steeringMode"] == "all"
    assert sessions(isolated_agent_dir) == []


def test_config_names_a_broken_file_and_a_wrong_value(project, isolated_agent_dir):
    isolated_agent_dir.mkdir(parents=True)
    (isolated_agent_dir / "settings.json").write_text('{"retry": {"maxRetries": "seven"}}')
    (project / ".tau").mkdir()
    (project / ".tau" / "settings.json").write_text("{not json")
    done = tau(["config", "-a"], project)
    assert done.returncode == 0, done
    assert "(cannot be used: " in done.stdout and "invalid JSON at line 1" in done.stdout
    assert "warning:" in done.stdout and "maxRetries" in done.stdout.split("warning:", 1)[1]


def test_config_without_any_file(project, isolated_agent_dir):
    done = tau(["config"], project)
    assert done.returncode == 0, done
    assert "(not found)" in done.stdout.splitlines()[0]
    assert '"defaultThinkingLevel": "medium"' in done.stdout
