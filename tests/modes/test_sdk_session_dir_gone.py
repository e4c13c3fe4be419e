"""A session whose directory is gone: the SDK continues it where it is called; the command line refuses.

pi 1.6 checks a stored session's directory only when its command line starts; its SDK runs the session
in the directory it is given. A ``tau batch`` task's session, made in a scratch directory that no longer
exists, is continued this way (``tau.run(session=…)``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import tau
from tau.cli import main as cli_main


def _session_made_in(gone, tmp_path):
    gone.mkdir()
    path = str(tmp_path / "made.jsonl")
    result = tau.run("first", model="faux/faux-1", cwd=str(gone), faux_script=[{"text": "one"}], session=path)
    assert result.session_file == path
    shutil.rmtree(gone)
    return path


def test_the_sdk_continues_a_session_whose_directory_is_gone_in_its_own(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    path = _session_made_in(tmp_path / "scratch", tmp_path)
    result = tau.run(
        "again", model="faux/faux-1", cwd=str(here), session=path, faux_script=[{"bash": "pwd"}, {"text": "two"}]
    )
    pwd = [m for m in result.messages if m["role"] == "toolResult"][-1]["content"][0]["text"]
    assert pwd.strip() == str(here.resolve())
    prompts = [m["content"] for m in result.messages if m["role"] == "user"]
    assert [p if isinstance(p, str) else p[0]["text"] for p in prompts] == ["first", "again"]
    # continuing here is not stored: the header still names the directory it was made in (pi asks again)
    header = json.loads(Path(path).read_text().splitlines()[0])
    assert header["cwd"] == str((tmp_path / "scratch").resolve())


def test_the_command_line_still_refuses_it_as_pi_does(tmp_path, monkeypatch, capsys):
    here = tmp_path / "here"
    here.mkdir()
    path = _session_made_in(tmp_path / "scratch", tmp_path)
    monkeypatch.chdir(here)
    before = Path(path).read_bytes()
    code = cli_main(["--provider", "faux", "--session", str(path), "-p", "again"])
    assert code != 0
    assert "Stored session working directory does not exist" in capsys.readouterr().err
    assert Path(path).read_bytes() == before
