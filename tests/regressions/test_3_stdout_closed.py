"""Issue 3 (`tau --list-models`) and the CLI: a reader that stops early (``tau --list-models | head -1``).

When stdout's reader has gone, tau should stop quietly, as command-line tools do: no Python
traceback on stderr. The read end of the pipe is closed before tau starts, so the test is
deterministic.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _stderr_with_stdout_closed(args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tau", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdout.close()
    err = proc.stderr.read().decode(errors="replace")
    proc.wait(timeout=60)
    return err


@pytest.mark.parametrize("args", [["--list-models"], ["--version"]], ids=["list-models", "version"])
def test_a_closed_stdout_gives_no_traceback(args):
    err = _stderr_with_stdout_closed(args)
    assert "Traceback" not in err, err
