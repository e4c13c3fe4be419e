"""Issue 4 (bad input): binary and invalid UTF-8 output from bash never crashes, end to end.

The tool-level test covers ``bash`` alone; here a model's bash call prints invalid UTF-8, NUL and
raw escape bytes through ``tau --mode json`` with a session: tau exits 0, every stdout line is JSON,
the session file is valid JSON lines that reopen, and the tool result the model reads holds the text
around the bad bytes.
"""

from __future__ import annotations

import json

from tau.session.manager import SessionManager
from tau_process import run_tau

JSON_MODE = ("--mode", "json", "show me")

COMMAND = r"printf 'before \377\376 mid \000 nul \033[2J esc\n'; head -c 300 /dev/urandom; echo; echo after"


def test_binary_bash_output_through_json_mode_and_the_session_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"bash": COMMAND}, {"text": "looked at it"}]))
    sessions = tmp_path / "sessions"
    done = run_tau(
        ["--model", "faux/faux-1", "--session-dir", str(sessions), *JSON_MODE],
        cwd=work,
        env={"TAU_FAUX_SCRIPT": str(script)},
        timeout=60,
        text=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    # JSON lines end at "\n" only: the random bytes may decode to U+0085 or U+2028, which JSON (as
    # JavaScript's JSON.stringify) leaves unescaped and str.splitlines() would split on.
    events = [json.loads(line) for line in done.stdout.decode("utf-8").split("\n") if line]
    ends = [e for e in events if e.get("type") == "tool_execution_end"]
    assert len(ends) == 1 and ends[0]["isError"] is False
    text = "".join(block.get("text", "") for block in ends[0]["result"]["content"])
    assert "before" in text and "mid" in text and "after" in text
    assert "\ufffd" in text  # invalid bytes decoded, not fatal

    (path,) = sessions.glob("*.jsonl")
    raw = path.read_bytes()
    for number, line in enumerate(raw.split(b"\n")[:-1], 1):
        assert isinstance(json.loads(line.decode("utf-8")), dict), number  # valid UTF-8 JSON
    reopened = SessionManager.open(path, read_only=True)
    roles = [e["message"]["role"] for e in reopened.get_entries() if e["type"] == "message"]
    assert roles[-3:] == ["assistant", "toolResult", "assistant"]
