"""Issue 32: ``tau savings`` on a short session says why tau may cost more, and sums a folder."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tau_process import run_tau


def _tau(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_tau(args, cwd=cwd, timeout=180)


def test_a_short_session_explains_the_extra_cost_and_a_folder_is_totalled(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello there"}]))
    for prompt in ("first", "second"):
        done = _tau(
            [
                "-p",
                "--model",
                "faux/faux-1",
                "--faux-script",
                str(script),
                "--session-dir",
                "sessions",
                prompt,
            ],
            tmp_path,
        )
        assert done.returncode == 0, done
    done = _tau(["savings", "--price", "anthropic/claude-sonnet-4-6", "sessions"], tmp_path)
    assert done.returncode == 0, done
    why = [line for line in done.stdout.splitlines() if line.startswith("why tau costs more here: ")]
    assert len(why) == 2, done.stdout
    assert "more context tokens per request (the bundled extensions' tools and instructions)" in why[0]
    assert "they grow with the session" in why[0]
    total = done.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"total over 2 sessions: tau \$[\d.]+ \(2 requests\) instead of \$[\d.]+ for stock pi \(2 requests\) \(\d+\.\d\dx\)",
        total,
    ), total

    # one file: no total line
    [one, _] = sorted((tmp_path / "sessions").glob("*.jsonl"))
    done = _tau(["savings", "--price", "anthropic/claude-sonnet-4-6", str(one)], tmp_path)
    assert "total over" not in done.stdout
