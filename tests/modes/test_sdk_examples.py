"""``examples/sdk_*.py`` run as a user runs them, on the faux model, and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tau_process import tau_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("sdk_*.py"))
EXPECTED = {
    "sdk_quickstart.py": ["I listed the files.", "2 requests, "],
    "sdk_events.py": [
        "[bash {'command': 'echo hello from bash'}]",
        "[bash done]",
        "The command printed hello.",
    ],
    "sdk_custom_tool.py": ["tool said: 4 words", "model said: It has 4 words."],
    "sdk_session_file.py": ["answer: You gave me 42.", "prompts in the file: ['Remember the number 42.', "],
}


def test_every_example_is_checked():
    assert sorted(path.name for path in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_example_runs_offline(example, tmp_path, isolated_agent_dir):
    env = tau_env({"TAU_EXAMPLE_MODEL": None})
    done = subprocess.run(
        [
            sys.executable,
            str(example),
            *([str(tmp_path / "notes.jsonl")] if "session_file" in example.name else []),
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for expected in EXPECTED[example.name]:
        assert expected in done.stdout, done.stdout
