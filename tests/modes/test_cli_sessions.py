"""Issue 32: sessions named on the command line as pi 1.6 names them (``--session-id`` reopens,
``--fork`` copies), ids everywhere a session is named, and an ambiguous id prefix is an error."""

from __future__ import annotations

import json
import os

import pytest
from cli_run import faux, messages, records, session_files, tau
from pi32 import golden, session_id_run


def test_session_id_creates_then_reopens_as_pi_does(tmp_path):
    """Against the golden real pi 1.6 made: a warning on the first run, one file with both prompts."""
    assert session_id_run("tau", tmp_path) == golden("session-id")


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_session_id_against_real_pi(tmp_path):
    assert session_id_run("tau", tmp_path / "tau") == session_id_run(
        "pi", tmp_path / "pi", os.environ["PI_BIN"]
    )


def _make(project, tmp_path, session_id: str, prompt: str) -> None:
    done = tau(
        ["-p", "--session-id", session_id, *faux(tmp_path, [{"text": f"re: {prompt}"}]), prompt], project
    )
    assert done.returncode == 0, done


def test_an_ambiguous_id_prefix_lists_the_candidates_and_opens_nothing(project, tmp_path, isolated_agent_dir):
    _make(project, tmp_path, "01a24d3-one", "first task")
    _make(project, tmp_path, "01a24d3-two", "second task")
    before = {path: path.read_bytes() for path in session_files(isolated_agent_dir)}

    done = tau(["-p", "--session", "01a24d3", *faux(tmp_path, [{"text": "appended"}]), "more"], project)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == "Error: Session id '01a24d3' matches 2 sessions; give more of the id:"
    assert sorted(line.split()[0] for line in lines[1:]) == ["01a24d3-one", "01a24d3-two"]
    assert any("first task" in line for line in lines[1:])
    assert {path: path.read_bytes() for path in session_files(isolated_agent_dir)} == before

    done = tau(["-p", "--session", "01a24d3-t", *faux(tmp_path, [{"text": "appended"}]), "more"], project)
    assert done.returncode == 0 and done.stdout == "appended\n", done
    [two] = [p for p in session_files(isolated_agent_dir) if "01a24d3-two" in p.name]
    assert [m["content"][0]["text"] for m in messages(two) if m["role"] == "user"] == ["second task", "more"]


def test_session_commands_take_an_id(project, tmp_path, isolated_agent_dir):
    _make(project, tmp_path, "feed-1", "one")
    _make(project, tmp_path, "feed-2", "two")
    done = tau(["session", "info", "feed-1"], project)
    assert done.returncode == 0, done
    assert "feed-1" in done.stdout
    done = tau(["session", "check", "feed-2"], project)
    assert done.returncode == 0 and ": ok," in done.stdout, done
    context = json.loads(tau(["session", "context", "feed-2"], project).stdout)
    assert [m["content"][0]["text"] for m in context if m["role"] == "user"] == ["two"]
    done = tau(["session", "info", "feed"], project)
    assert done.returncode == 2
    assert done.stderr.startswith("tau session info: Session id 'feed' matches 2 sessions")
    done = tau(["session", "check", "nothing-like-it"], project)
    assert done.returncode == 2 and "no such file or session id: 'nothing-like-it'" in done.stderr


def test_fork_copies_a_session_into_a_new_one(project, tmp_path, isolated_agent_dir):
    _make(project, tmp_path, "origin-1", "the original")
    [source] = session_files(isolated_agent_dir)
    done = tau(
        ["-p", "--fork", "origin", "--session-id", "copy-1", *faux(tmp_path, [{"text": "forked"}]), "go on"],
        project,
    )
    assert done.returncode == 0, done
    [copy] = [p for p in session_files(isolated_agent_dir) if "copy-1" in p.name]
    header = records(copy)[0]
    assert header["id"] == "copy-1" and header["parentSession"] == str(source)
    assert [m["content"][0]["text"] for m in messages(copy) if m["role"] == "user"] == [
        "the original",
        "go on",
    ]
    assert [m["content"][0]["text"] for m in messages(source) if m["role"] == "user"] == ["the original"]
    again = tau(["-p", "--fork", "origin", "--session-id", "copy-1", *faux(tmp_path, []), "x"], project)
    assert again.returncode == 1 and again.stderr == "Error: Session already exists with id 'copy-1'\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fork", "x", "-c"], "Error: --fork cannot be combined with --continue"),
        (
            ["--fork", "x", "--no-session", "--session", "y"],
            "Error: --fork cannot be combined with --session, --no-session",
        ),
        (["--session-id", "a", "--session", "b"], "Error: --session-id cannot be combined with --session"),
        (["--session-id", "-bad"], "Error: invalid session id '-bad'"),
    ],
)
def test_session_flags_that_exclude_each_other(project, tmp_path, isolated_agent_dir, argv, message):
    done = tau(["-p", *argv, *faux(tmp_path, [{"text": "no"}]), "hi"], project)
    assert done.returncode == 1
    assert done.stderr.startswith(message), done.stderr
    assert session_files(isolated_agent_dir) == []


def test_resume_needs_a_terminal(project, tmp_path, isolated_agent_dir):
    done = tau(["-r", *faux(tmp_path, [{"text": "no"}]), "hi"], project)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "Error: --resume picks a session in the terminal; here, name one with --session ID"
    )
