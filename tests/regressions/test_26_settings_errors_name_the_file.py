"""Issue 26, item 7 (settings): a settings file that cannot be used is one line naming it,
in every command.

A settings.json nested 100,000 levels gave "maximum recursion depth exceeded", one with invalid UTF-8
a bare codec error, neither naming the file, and ``tau session list`` with a malformed user settings
file said ``internal error … please report it`` (exit 3). Now each is ``<path>: <what is wrong>`` on
one line of stderr, whatever the command.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tau_process import run_tau

BOUND = 120

BROKEN = {
    "malformed": (
        b'{"defaultModel": "x",}',
        "invalid JSON at line 1, column 22: Expecting property name enclosed in double quotes",
    ),
    "deep": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "JSON nested deeper than 64 levels"),
    "unclosed": (b"[" * 100_000, "JSON nested deeper than 64 levels"),
    "invalid-utf8": (
        b'{\n"defaultModel": "\xff\xfe"}',
        "not valid UTF-8 (byte 0xff on line 2); save it as UTF-8",
    ),
    "not-an-object": (b"[1, 2]", "expected a JSON object, got list"),
}
COMMANDS = {
    "print": (["-p", "hi"], 1, "Error: "),
    "json": (["--mode", "json", "hi"], 1, "Error: "),
    "rpc": (["--mode", "rpc"], 1, "Error: "),
    "session-list": (["session", "list"], 2, "tau session list: "),
}


def _tau(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    argv = ["--model", "faux/faux-1", *args] if args[0] != "session" else list(args)
    return run_tau(argv, cwd=project, env={"TAU_AGENT_DIR": tmp_path / "agent"}, timeout=BOUND, text=False)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("broken", list(BROKEN))
def test_a_broken_user_settings_file_is_one_line_naming_it_in_every_command(tmp_path, broken, command):
    data, problem = BROKEN[broken]
    settings = tmp_path / "agent" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(data)
    args, code, prefix = COMMANDS[command]
    done = _tau(tmp_path, *args)
    assert (done.returncode, done.stdout) == (code, b"")
    assert done.stderr.decode() == f"{prefix}{settings}: {problem}\n"


def test_a_settings_file_that_is_a_named_pipe_is_refused_at_once(tmp_path):
    settings = tmp_path / "agent" / "settings.json"
    settings.parent.mkdir()
    os.mkfifo(settings)
    done = _tau(tmp_path, "session", "list")  # (a regression blocks in open() until the bound kills it)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"tau session list: {settings}: cannot be read: {settings} is a named pipe, not a regular file; "
        "tau does not open it\n"
    )


def test_a_linked_settings_file_is_followed(tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"defaultProvider": "faux", "defaultModel": "faux-1"}')
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").symlink_to(real)
    done = _tau(tmp_path, "session", "list")
    assert (done.returncode, done.stderr) == (0, b"")
