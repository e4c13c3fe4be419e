"""Issue 3 (`tau --list-models`) and the CLI: a reader that stops early (``tau --list-models | head -1``).

When stdout's reader has gone, tau should stop quietly, as command-line tools do: no Python
traceback on stderr. The read end of the pipe is closed before tau starts, so the test is
deterministic.
"""

from __future__ import annotations

import subprocess

import pytest

from tau_process import popen_tau


def _stderr_with_stdout_closed(args: list[str]) -> str:
    proc = popen_tau(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode(errors="replace")
    proc.wait(timeout=60)
    return err


@pytest.mark.parametrize("args", [["--list-models"], ["--version"]], ids=["list-models", "version"])
def test_a_closed_stdout_gives_no_traceback(args):
    err = _stderr_with_stdout_closed(args)
    assert "Traceback" not in err, err
