"""A session runs in the directory it belongs to, as in pi 1.6 (issue 32's audit).

pi resumes ``--session`` and ``-r`` sessions "in their working directory": that directory's context
files, settings and trust, whatever directory pi was started from. An id that only another
directory's sessions match is offered as a fork into this directory instead (pi asks
``Fork this session into current directory? [y/N]``; the terminal side is in
``interactive/test_interactive_sessions_elsewhere_pty.py``). A session whose directory is gone stops
the non-interactive modes with pi's error.
"""

from __future__ import annotations

import json

from cli_run import faux, messages, records, session_files, tau


def _user_texts(path) -> list[str]:
    return [m["content"][0]["text"] for m in messages(path) if m["role"] == "user"]


def _two_projects(tmp_path, isolated_agent_dir):
    """``a/`` with one session (id ``abc-1``) and its own AGENTS.md; ``b/`` with another AGENTS.md."""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, rules in ((a, "Rules of project A"), (b, "Rules of project B")):
        folder.mkdir()
        (folder / "AGENTS.md").write_text(rules)
    done = tau(["-p", "--session-id", "abc-1", *faux(tmp_path, [{"text": "re: first"}]), "first"], a)
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    return a, b, path


def test_a_session_of_another_directory_runs_in_its_own(tmp_path, isolated_agent_dir):
    """Opened by path from ``b/``: the model still gets ``a/``'s context files, and commands run in ``a/``."""
    a, b, path = _two_projects(tmp_path, isolated_agent_dir)
    script = faux(tmp_path, [{"bash": "pwd"}, {"text": "done"}], name="second.json")
    done = tau(["-p", "--session", str(path), *script, "again"], b)
    assert done.returncode == 0 and done.stdout == "done\n", done
    text = path.read_text(encoding="utf-8")
    assert "Rules of project B" not in text  # before: the system prompt switched to b/'s AGENTS.md
    [result] = [m for m in messages(path) if m["role"] == "toolResult"]
    assert result["content"][0]["text"].strip() == str(a.resolve())
    assert _user_texts(path) == ["first", "again"]
    assert len(session_files(isolated_agent_dir)) == 1


def test_an_id_of_another_directory_is_not_opened_without_asking(tmp_path, isolated_agent_dir):
    """pi offers to fork it here; with no terminal to ask on, tau says what to run and writes nothing."""
    _, b, path = _two_projects(tmp_path, isolated_agent_dir)
    before = path.read_bytes()
    done = tau(["-p", "--session", "abc", *faux(tmp_path, [{"text": "never"}], name="n.json"), "more"], b)
    assert done.returncode == 1, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == f"Session found in different project: {(tmp_path / 'a').resolve()}"
    assert lines[1].startswith("Error: cannot ask whether to fork it into this directory")
    assert "tau --fork abc" in done.stderr and f"tau --session {path}" in done.stderr
    assert path.read_bytes() == before and session_files(isolated_agent_dir) == [path]


def test_fork_of_an_id_of_another_directory_runs_here(tmp_path, isolated_agent_dir):
    """What the error suggests works: ``--fork ID`` copies it into ``b/`` and runs there."""
    _a, b, path = _two_projects(tmp_path, isolated_agent_dir)
    script = faux(tmp_path, [{"bash": "pwd"}, {"text": "forked"}], name="f.json")
    done = tau(["-p", "--fork", "abc", *script, "go on"], b)
    assert done.returncode == 0 and done.stdout == "forked\n", done
    [copy] = [p for p in session_files(isolated_agent_dir) if p != path]
    header = records(copy)[0]
    assert header["cwd"] == str(b.resolve()) and header["parentSession"] == str(path)
    [result] = [m for m in messages(copy) if m["role"] == "toolResult"]
    assert result["content"][0]["text"].strip() == str(b.resolve())
    assert "Rules of project B" in copy.read_text(encoding="utf-8")


def test_a_session_whose_directory_is_gone_stops_with_pis_error(tmp_path, isolated_agent_dir):
    a, b, path = _two_projects(tmp_path, isolated_agent_dir)
    (a / "AGENTS.md").unlink()
    a.rmdir()
    before = path.read_bytes()
    for mode in (["-p"], ["--mode", "json"]):
        done = tau([*mode, "--session", str(path), *faux(tmp_path, [], name="g.json"), "more"], b)
        assert done.returncode == 1, done
        assert done.stderr.splitlines() == [
            f"Stored session working directory does not exist: {a.resolve()}",
            f"Session file: {path}",
            f"Current working directory: {b.resolve()}",
        ], done.stderr
    assert path.read_bytes() == before


def test_the_rpc_mode_never_reads_an_answer_from_its_commands(tmp_path, isolated_agent_dir):
    _, b, path = _two_projects(tmp_path, isolated_agent_dir)
    line = json.dumps({"id": "1", "type": "get_state"})
    done = tau(
        ["--mode", "rpc", "--session", "abc", *faux(tmp_path, [], name="r.json")], b, stdin=line + "\n"
    )
    assert done.returncode == 1 and "Error: cannot ask whether to fork" in done.stderr, done
    assert session_files(isolated_agent_dir) == [path]
