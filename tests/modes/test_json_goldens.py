"""``tau --mode json`` reproduces pi 1.6's JSON event streams (``events/json-*.jsonl``).

pi made them with ``-ne -e faux-ext.ts --model faux/faux-1``; tau runs the same replies as a faux
factory (``faux_ext.py``). Compared modulo what decisions.md lists (ids, timestamps, durations,
usage, cwd, system-prompt section texts, streaming chunk counts).
"""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from faux_ext import script
from golden_compare import normalize_stream, read_jsonl

from tau.modes.json_mode import run_json
from tau.modes.run import build_runtime, parse_args

PROMPTS = {
    "json-text": "hello there",
    "json-bash": "bash: echo hi from bash",
    "json-bash-fail": "bash: echo out; exit 2",
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    work = tmp_path / "proj"
    work.mkdir()
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script()))
    monkeypatch.chdir(work)
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(script_file))  # each run's registry reads it afresh
    return script_file


def _golden(pi_fixtures, name: str) -> list[dict]:
    return read_jsonl((pi_fixtures / "events" / f"{name}.jsonl").read_bytes())


async def _run_in_process(prompt: str) -> bytes:
    args = parse_args(["--mode", "json", "--no-session", "-ne", "--model", "faux/faux-1", prompt])
    runtime = await build_runtime(args, "json")
    out = io.BytesIO()
    code = await run_json(runtime.session, prompt, [], out=out)
    assert code == 0
    return out.getvalue()


@pytest.mark.parametrize("name", ["json-text", "json-bash", "json-bash-fail"])
def test_json_stream_matches_pi(pi_fixtures, project, name):
    produced = read_jsonl(asyncio.run(_run_in_process(PROMPTS[name])))
    assert normalize_stream(produced) == normalize_stream(_golden(pi_fixtures, name))


def test_header_line_comes_first_even_without_a_session(project):
    lines = asyncio.run(_run_in_process("hello there")).split(b"\n")
    header = json.loads(lines[0])
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["type"] == "session" and header["version"] == 3
    assert json.loads(lines[1]) == {"type": "agent_start"}


def test_cli_subprocess_json_text(pi_fixtures, project, tmp_path, run_tau):
    command = ["--mode", "json", "--no-session", "-ne", "--model", "faux/faux-1"]
    done = run_tau(
        [*command, "--faux-script", str(project), "hello there"],
        cwd=tmp_path / "proj",
        timeout=60,
        text=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    # Byte-level JSON.stringify format: no spaces after separators, raw UTF-8.
    assert b'{"type":"agent_settled","aborted":false}\n' in done.stdout
    assert normalize_stream(read_jsonl(done.stdout)) == normalize_stream(_golden(pi_fixtures, "json-text"))


def test_a_failed_run_exits_0_with_the_failure_in_the_stream_as_pi(project, tmp_path, monkeypatch):
    """pi 1.6's JSON mode checks the last message only in text mode: a failed run exits 0 (issue 16)."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    monkeypatch.setenv("TAU_FAUX_SCRIPT", str(empty))

    async def main() -> tuple[int, bytes, str]:
        args = parse_args(["--mode", "json", "--no-session", "-ne", "--model", "faux/faux-1", "hi"])
        runtime = await build_runtime(args, "json")
        out, err = io.BytesIO(), io.StringIO()
        code = await run_json(runtime.session, "hi", [], out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    code, out, err = asyncio.run(main())
    ends = [e for e in read_jsonl(out) if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert (code, err) == (0, "")
    assert ends[-1]["message"]["stopReason"] == "error"
    assert ends[-1]["message"]["errorMessage"] == "No more faux responses queued"
