"""``tau -p``: the final answer on stdout, failures on stderr with exit code 1, no model → how to pick one."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from tau.modes.print_mode import run_text
from tau.modes.run import build_runtime, parse_args
from tau_process import popen_tau


def _script(tmp_path: Path, steps: list) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps))
    return path


def _print(argv: list[str], prompts: list[str]) -> tuple[int, str, str]:
    async def main() -> tuple[int, str, str]:
        args = parse_args(["-p", "-ne", *argv, *prompts])
        runtime = await build_runtime(args, "print")
        out, err = io.StringIO(), io.StringIO()
        code = await run_text(runtime.session, prompts[0], prompts[1:], out=out, err=err)
        runtime.session.session_manager.close()
        return code, out.getvalue(), err.getvalue()

    return asyncio.run(main())


def test_prints_the_final_text_blocks(project, tmp_path):
    script = _script(
        tmp_path,
        [{"bash": "echo hi"}, {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
    )
    code, out, err = _print(["--model", "faux/faux-1", "--faux-script", str(script)], ["go"])
    assert (code, out, err) == (0, "a\nb\n", "")


def test_error_goes_to_stderr_with_exit_1(project, tmp_path):
    script = _script(tmp_path, [])
    code, out, err = _print(["--model", "faux/faux-1", "--faux-script", str(script)], ["go"])
    assert (code, out, err) == (1, "", "No more faux responses queued\n")


def test_length_stop_prints_then_fails(project, tmp_path, isolated_agent_dir):
    # With compaction on, a length stop below maxTokens is an overflow-recovery attempt (pi does the same).
    isolated_agent_dir.mkdir(parents=True, exist_ok=True)
    (isolated_agent_dir / "settings.json").write_text('{"compaction": {"enabled": false}}')
    script = _script(tmp_path, [{"content": [{"type": "text", "text": "partial"}], "stopReason": "length"}])
    code, out, err = _print(["--model", "faux/faux-1", "--faux-script", str(script)], ["go"])
    assert (code, out) == (1, "partial\n")
    assert err == "Response was truncated: the model reached its output token limit.\n"


def test_several_messages_run_in_order_and_are_saved(project, tmp_path, isolated_agent_dir):
    script = _script(tmp_path, [{"text": "one"}, {"text": "two"}])
    code, out, _ = _print(["--model", "faux/faux-1", "--faux-script", str(script), "-n", "demo"], ["a", "b"])
    assert (code, out) == (0, "two\n")
    files = list((isolated_agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    types = [json.loads(line)["type"] for line in files[0].read_text().splitlines()]
    # pi names the session before recording the model and thinking level
    assert types[:4] == ["session", "session_info", "model_change", "thinking_level_change"]


def test_continue_resumes_the_latest_session(project, tmp_path, isolated_agent_dir):
    script = _script(tmp_path, [{"text": "one"}])
    _print(["--model", "faux/faux-1", "--faux-script", str(script)], ["first"])
    code, out, _ = _print(["-c", "--faux-script", str(_script(tmp_path, [{"text": "two"}]))], ["second"])
    assert (code, out) == (0, "two\n")
    files = list((isolated_agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    users = [
        json.loads(line)["message"]["content"][0]["text"]
        for line in files[0].read_text().splitlines()
        if '"role":"user"' in line
    ]
    assert users == ["first", "second"]


def test_tools_allowlist_and_modifiers(project, tmp_path):
    script = _script(tmp_path, [{"text": "x"}])

    async def tools(argv: list[str]) -> list[str]:
        args = parse_args(["-p", "-ne", "--no-session", "--model", "faux/faux-1", *argv])
        runtime = await build_runtime(args, "print")
        return runtime.session.get_active_tool_names()

    os.environ["TAU_FAUX_SCRIPT"] = str(script)
    try:
        assert asyncio.run(tools(["--tools", "read,bash"])) == ["read", "bash"]
        assert asyncio.run(tools(["--tools", "-edit,-write"])) == ["read", "bash"]
        assert asyncio.run(tools(["--tools", "b*"])) == ["bash"]
        assert asyncio.run(tools(["--no-tools"])) == []
    finally:
        del os.environ["TAU_FAUX_SCRIPT"]


def test_cli_without_a_model_says_how_to_configure_one(project, run_tau):
    done = run_tau(["-p", "-ne", "--no-session", "hello"], cwd=project, timeout=60)
    assert done.returncode == 1
    assert "--model faux/faux-1 --faux-script FILE" in done.stderr
    assert done.stdout == ""


def test_cli_print_subprocess(project, tmp_path, run_tau):
    script = _script(tmp_path, [{"text": "héllo from faux"}])
    done = run_tau(
        ["-p", "-ne", "--model", "faux/faux-1", "--faux-script", str(script), "hi"], cwd=project, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "héllo from faux\n", "")


def test_a_profiled_run_ends_normally_so_the_profile_is_written(project, tmp_path, run_tau):
    """tau's own process skips the interpreter's teardown after a print run, unless something watches
    it: ``python -m cProfile`` (or coverage) writes its results as the interpreter ends."""
    script = _script(tmp_path, [{"text": "profiled"}])
    profile = tmp_path / "run.prof"
    faux = ["-p", "-ne", "--model", "faux/faux-1", "--faux-script", str(script), "hi"]
    done = run_tau(["-o", str(profile), "-m", "tau", *faux], module="cProfile", cwd=project, timeout=60)
    assert (done.returncode, done.stdout) == (0, "profiled\n"), done.stderr
    assert profile.is_file() and profile.stat().st_size > 0


def test_ctrl_c_during_bash_aborts_and_leaves_a_clean_session(project, tmp_path, isolated_agent_dir):
    """SIGINT while a bash call runs: the run ends aborted, exit 130, the file checks clean."""
    import signal
    import time

    script = _script(tmp_path, [{"bash": "sleep 30"}, {"text": "never"}])
    command = ["--mode", "json", "-ne", "--model", "faux/faux-1"]
    process = popen_tau(
        [*command, "--faux-script", str(script), "go"],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines = []
    deadline = time.monotonic() + 60
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(json.loads(line))
        if lines[-1]["type"] == "tool_execution_start":
            process.send_signal(signal.SIGINT)
            break
    out, err = process.communicate(timeout=60)
    lines += [json.loads(line) for line in out.splitlines() if line.strip()]
    assert process.returncode == 130, err.decode()
    assert lines[-1] == {"type": "agent_settled", "aborted": True}
    ends = [event for event in lines if event["type"] == "tool_execution_end"]
    assert ends and ends[0]["isError"] is True
    files = list((isolated_agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    from tau.modes.inspect import main as inspect_main

    assert inspect_main(["check", str(files[0])]) == 0


def test_api_key_flag_wins_for_the_selected_provider(project):
    async def main():
        args = parse_args(
            ["-p", "-ne", "--no-session", "--model", "anthropic/claude-sonnet-4-5", "--api-key", "sk-x"]
        )
        runtime = await build_runtime(args, "print")
        return runtime.session.model, runtime.session.model_registry.api_key("anthropic")

    model, key = asyncio.run(main())
    assert (model.provider, model.id) == ("anthropic", "claude-sonnet-4-5")
    assert key == ("sk-x", "--api-key")


def test_project_settings_load_only_when_trusted(project):
    (project / ".tau").mkdir()
    (project / ".tau" / "settings.json").write_text('{"defaultTools": ["read"]}')

    async def tools(extra: list[str]) -> list[str]:
        args = parse_args(["-p", "-ne", "--no-session", "--model", "faux/faux-1", *extra])
        runtime = await build_runtime(args, "print")
        return runtime.session.get_active_tool_names()

    assert asyncio.run(tools([])) == ["read", "bash", "edit", "write"]
    assert asyncio.run(tools(["--approve"])) == ["read"]


def test_session_by_id_prefix_and_by_path(project, tmp_path, isolated_agent_dir):
    def script(text: str) -> str:  # each run is given its own script, as separate processes would be
        return str(_script(tmp_path, [{"text": text}]))

    _print(["--model", "faux/faux-1", "--faux-script", script("one"), "--session-id", "abc123"], ["first"])
    code, out, _ = _print(["--session", "abc", "--faux-script", script("two")], ["second"])
    assert (code, out) == (0, "two\n")
    path = next((isolated_agent_dir / "sessions").rglob("*.jsonl"))
    code, out, _ = _print(["--session", str(path), "--faux-script", script("three")], ["third"])
    assert (code, out) == (0, "three\n")
    assert sum('"role":"user"' in line for line in path.read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="No session found matching 'zzz'"):
        _print(["--session", "zzz"], ["x"])
