"""Issue 26, item 4: closed or vanishing standard streams end tau quietly, never with a traceback.

``tau … -p hi <&-`` ended in ``AttributeError: 'NoneType' object has no attribute 'isatty'``, ``>&-`` in
a traceback from ``out.flush()``, and ``tau --mode json … | head -1`` printed ``[Errno 32] Broken
pipe`` and exited 1. Now a closed stdin reads as empty, a closed stderr swallows what is written to
it, a closed stdout is refused in one line before anything runs, and a reader that goes away ends
tau with 141 (128 + SIGPIPE) and nothing on stderr, the run aborted.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tau_process import tau_command, tau_env

BOUND = 120
CLOSED_STDOUT = (
    b"tau: standard output is closed (>&-): nothing tau prints could be read; "
    b"send it to /dev/null to discard it (tau \xe2\x80\xa6 >/dev/null)\n"
)


@pytest.fixture
def tau(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    env = tau_env(agent_dir=tmp_path / "agent")

    def command(*args: str, script: list | None = None) -> list[str]:
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script if script is not None else [{"text": "hello"}]))
        return tau_command("-ne", "--model", "faux/faux-1", "--faux-script", path, *args)

    def run(redirect: str, *args: str, script: list | None = None, **kwargs) -> subprocess.CompletedProcess:
        """``args`` through ``bash -c 'exec "$@" <redirect>'``, as a shell user writes it."""
        argv = ["bash", "-c", f'exec "$@" {redirect}', "bash", *command(*args, script=script)]
        if "input" not in kwargs:
            kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.run(argv, cwd=project, env=env, timeout=BOUND, **kwargs)

    run.project = project  # type: ignore[attr-defined]
    run.agent = tmp_path / "agent"  # type: ignore[attr-defined]
    return run


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_a_closed_stdin_reads_as_empty(tau, mode):
    done = tau("<&-", *mode, "hi")
    assert (done.returncode, done.stderr) == (0, b"")
    if mode == ["-p"]:
        assert done.stdout == b"hello\n"
    else:
        assert json.loads(done.stdout.splitlines()[-1])["type"] == "agent_settled"


def test_a_closed_stdin_in_rpc_mode_is_the_end_of_input(tau):
    done = tau("<&-", "--mode", "rpc")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    "mode", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"], ["session", "list"]]
)
def test_a_closed_stdout_is_refused_in_one_line_before_anything_runs(tau, mode):
    done = tau(">&-", *mode, stdout=None, stderr=subprocess.PIPE)
    assert (done.returncode, done.stderr) == (1, CLOSED_STDOUT)
    assert not tau.agent.exists()  # no session was started


def test_a_closed_stderr_swallows_what_is_written_to_it(tau):
    done = tau("2>&-", "-p", "hi", "--tools", "no_such_tool", stderr=None, stdout=subprocess.PIPE)
    assert (done.returncode, done.stdout) == (0, b"hello\n")


def _reader_gone() -> int:
    """The write end of a pipe whose read end is already closed: every write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("mode", [["-p", "hi"], ["--mode", "json", "hi"]])
def test_a_reader_that_went_away_ends_tau_quietly_with_141(tau, mode):
    write = _reader_gone()
    try:
        done = tau("", *mode, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")


def test_the_json_stream_losing_its_reader_mid_answer_aborts_the_run(tau):
    marker = tau.project / "ran"
    step = {"text": "x" * 200_000, "bash": f"touch {marker}"}
    write = _reader_gone()
    try:
        done = tau(
            "", "--mode", "json", "go", script=[step, {"text": "never"}], stdout=write, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")
    assert not marker.exists()  # the tool call of the aborted answer never ran


def test_an_rpc_client_that_stops_reading_ends_tau_quietly(tau):
    write = _reader_gone()
    try:
        done = tau(
            "",
            "--mode",
            "rpc",
            input=b'{"id":"s","type":"get_state"}\n',
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")
