"""Issue 19 (the first hour): what a newcomer meets on the command line, through ``python -m tau``.

Help that lists every subcommand, hints that point at things that exist, and starts that say
what is missing instead of failing cryptically or silently.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tau.cli import SUBCOMMANDS
from tau.modes.inspect import build_parser as session_parser
from tau_process import run_tau

ROOT = Path(__file__).resolve().parents[2]
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def tau(
    args: list[str], cwd: Path, *, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return run_tau(args, cwd=cwd, env=env, stdin=stdin)


def script(tmp_path: Path, steps: list[dict]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps))
    return path


def session_commands() -> list[str]:
    action = next(a for a in session_parser()._actions if a.dest == "command")
    return list(action.choices)


def test_help_and_docs_name_every_subcommand(tmp_path):
    shown = tau(["--help"], tmp_path)
    assert shown.returncode == 0
    for name in SUBCOMMANDS:
        assert re.search(rf"^  (tau \S+ \| )*tau {name}\b", shown.stdout, re.M), (
            f"tau --help does not mention {name}"
        )
        assert f"| `tau {name}" in CLI_DOC, f"docs/cli.md lists no `tau {name}`"
    for command in session_commands():
        assert re.search(rf"\| `tau session {command}\b", CLI_DOC), (
            f"docs/cli.md lists no `tau session {command}`"
        )
        assert command in shown.stdout


def test_the_no_model_hint_names_a_listed_model(tmp_path):
    refused = tau(["-p", "hi"], tmp_path)
    assert refused.returncode == 1
    [suggested] = re.findall(r"--model (\w+/[\w.-]+)\)", refused.stderr)
    provider, model = suggested.split("/")
    listed = tau(["--list-models", model], tmp_path).stdout
    assert re.search(rf"^{provider}\s+{re.escape(model)}\s", listed, re.M), listed


def test_an_unknown_session_points_at_session_list_which_lists_its_ids(tmp_path):
    steps = script(tmp_path, [{"text": "first answer"}, {"text": "second answer"}])
    work = tmp_path / "work"
    work.mkdir()
    missing = tau(["--model", "faux/faux-1", "--session", "deadbeef", "-p", "hi"], work)
    assert missing.returncode == 1 and "`tau session list`" in missing.stderr

    empty = tau(["session", "list"], work)
    assert empty.returncode == 0 and empty.stdout.startswith("No sessions for ")
    assert (
        tau(
            ["--model", "faux/faux-1", "-p", "remember the plan"], work, TAU_FAUX_SCRIPT=str(steps)
        ).returncode
        == 0
    )
    listed = tau(["session", "list"], work)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    session_id = line.split()[0]
    assert line.endswith(" messages  remember the plan"), line
    count = int(re.search(r"(\d+) messages", line).group(1))
    resumed = tau(
        ["--model", "faux/faux-1", "--session", session_id, "-p", "go on"], work, TAU_FAUX_SCRIPT=str(steps)
    )
    assert (resumed.returncode, resumed.stdout) == (0, "first answer\n"), resumed.stderr
    assert f"  {count + 2} messages  " in tau(["session", "list"], work).stdout
    everywhere = tau(["session", "list", "--all"], tmp_path)
    assert f"  {work}  " in everywhere.stdout


def test_faux_without_a_script_says_how_to_give_one(tmp_path):
    done = tau(["--model", "faux/faux-1", "--no-session", "-p", "hi"], tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "The faux model needs a script: --faux-script FILE or TAU_FAUX_SCRIPT=FILE "
        "(a JSON array of steps, see docs/models.md)\n"
    )


def test_a_script_that_runs_out_keeps_pis_message(tmp_path):
    done = tau(
        ["--model", "faux/faux-1", "--no-session", "--faux-script", str(script(tmp_path, [])), "-p", "hi"],
        tmp_path,
    )
    assert (done.returncode, done.stderr) == (1, "No more faux responses queued\n")


@pytest.mark.parametrize("stdin", [None, "", "  \n"])
def test_print_mode_without_a_prompt_exits_non_zero_with_one_line(tmp_path, isolated_agent_dir, stdin):
    done = tau(
        ["--model", "faux/faux-1", "-p"],
        tmp_path,
        stdin=stdin,
        TAU_FAUX_SCRIPT=str(script(tmp_path, [{"text": "x"}])),
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("tau: no prompt"), done.stderr
    assert not list(isolated_agent_dir.glob("sessions/**/*.jsonl"))  # nothing ran, nothing written


def test_an_unknown_tool_name_is_warned_about_and_the_run_goes_on(tmp_path):
    steps = script(tmp_path, [{"text": "done"}])
    faux = ["--model", "faux/faux-1", "--no-session", "--faux-script", str(steps)]
    done = tau([*faux, "--tools", "read,nosuch", "-p", "hi"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    [warning] = done.stderr.splitlines()
    assert warning.startswith(
        'Warning: --tools: no tool named "nosuch"; the tools are bash, codemode, edit, '
    )
    quiet = tau([*faux, "--tools", "read,obs_*", "-p", "hi"], tmp_path)
    assert (quiet.returncode, quiet.stderr) == (0, "")
