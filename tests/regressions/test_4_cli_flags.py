"""Issue 4 (modes and CLI): the flags no other test drives through the real command.

``--provider`` with a bare ``--model`` id, ``--offline`` (accepted; tau makes no other network calls),
``--session-dir`` (the session file is written there) and ``--disable-extension NAME`` (that bundled
extension's tool is gone, the others stay), each through ``python -m tau`` as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tau_process import run_tau


def _tau(args: list[str], cwd: Path, script: Path) -> subprocess.CompletedProcess[str]:
    return run_tau(args, cwd=cwd, env={"TAU_FAUX_SCRIPT": str(script)}, timeout=60)


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "answer one"}, {"text": "answer two"}]))
    return work, script


def test_provider_flag_with_a_bare_model_id(tmp_path):
    work, script = _setup(tmp_path)
    done = _tau(["--provider", "faux", "--model", "faux-1", "--no-session", "-p", "hi"], work, script)
    assert (done.returncode, done.stdout) == (0, "answer one\n"), done.stderr


def test_offline_and_session_dir(tmp_path):
    work, script = _setup(tmp_path)
    target = tmp_path / "my-sessions"
    args = ["--offline", "--model", "faux/faux-1", "--session-dir", str(target), "-p", "hi"]
    done = _tau(args, work, script)
    assert (done.returncode, done.stdout) == (0, "answer one\n"), done.stderr
    files = list(target.glob("*.jsonl"))
    assert len(files) == 1, sorted(str(p) for p in target.rglob("*"))
    lines = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(work)
    assert not list((Path(os.environ["TAU_AGENT_DIR"]) / "sessions").glob("**/*.jsonl"))


def _declared_tools(stdout: str) -> set[str]:
    """Tool names the system message of the JSON stream declares (its ``tools`` section)."""
    for line in stdout.splitlines():
        event = json.loads(line)
        message = event.get("message") or {}
        if event.get("type") == "message_start" and message.get("role") == "system":
            section = message.get("sections", {}).get("tools", "")
            return {row[2:].split(":", 1)[0] for row in section.splitlines() if row.startswith("- ")}
    raise AssertionError(f"no system message in the stream:\n{stdout[:2000]}")


def test_disable_extension_removes_only_that_bundled_extension(tmp_path):
    work, script = _setup(tmp_path)
    base = ["--model", "faux/faux-1", "--no-session", "--mode", "json"]
    everything = _tau([*base, "hi"], work, script)
    assert everything.returncode == 0, everything.stderr
    without_todo = _tau([*base, "--disable-extension", "todo", "hi"], work, script)
    assert without_todo.returncode == 0, without_todo.stderr
    tools, fewer = _declared_tools(everything.stdout), _declared_tools(without_todo.stdout)
    assert {"read", "bash", "edit", "write", "todo"} <= tools
    assert "todo" not in fewer and {"read", "bash", "edit", "write"} <= fewer
    assert tools - fewer == {"todo"}


def test_an_unknown_disable_extension_name_is_named_in_a_warning(tmp_path, run_tau):
    """Issue 4: ``--disable-extension`` takes bundled names; a typo is not silently ignored."""
    script = tmp_path / "s.json"
    script.write_text('[{"text": "ok"}]')
    flags = ["-p", "--no-session", "--model", "faux/faux-1", "--faux-script", str(script)]
    done = run_tau([*flags, "--disable-extension", "nope", "hi"])
    assert done.returncode == 0
    assert done.stdout.strip() == "ok"
    assert "no bundled extension named nope to disable (known: todo, todo-loop" in done.stderr
