"""Faux task files for the ``tau batch`` tests, and readers of what a batch leaves behind."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[3]

# Ray is an optional extra of its own (decisions.md), not part of [test]; .ci/run installs it.
NO_RAY = "Ray is not installed: it is the optional extra `ray` (pip install -e '.[ray]'; .ci/run installs it)"
requires_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason=NO_RAY)


def _documented_fields() -> list[str]:
    """The result fields, in order, as the table of docs/batch.md's "Results" lists them."""
    text = (ROOT / "docs" / "batch.md").read_text(encoding="utf-8")
    table = text.split("\n## Results\n", 1)[1].split("\n\n", 2)[1]
    rows = [line.split("|")[1] for line in table.splitlines()[2:]]
    return [name for row in rows for name in re.findall(r"`([a-z_]+)`", row)]


RESULT_FIELDS = _documented_fields()


def faux_task(task_id: str, **extra: Any) -> dict[str, Any]:
    """A task that runs one bash command in its directory and answers ``done <id>``."""
    steps = [{"bash": f"cat seed.txt 2>/dev/null; echo {task_id} > out.txt"}, {"text": f"done {task_id}"}]
    return {
        "id": task_id,
        "prompt": f"work on {task_id}",
        "model": "faux/faux-1",
        "faux_script": steps,
        **extra,
    }


def eight_tasks(root: Path) -> list[dict[str, Any]]:
    """Four tasks in a prepared ``cwd``, four that ``setup`` a fresh directory; one has two prompts."""
    tasks = []
    for number in range(4):
        folder = root / f"repo{number}"
        folder.mkdir(parents=True, exist_ok=True)
        tasks.append(faux_task(f"cwd-{number}", cwd=str(folder)))
    for number in range(4):
        tasks.append(faux_task(f"setup-{number}", setup=f"printf 'seed {number}\\n' > seed.txt"))
    tasks[-1]["prompt"] = ["first", "second"]
    tasks[-1]["faux_script"] = [{"text": "one"}, {"bash": "cat seed.txt"}, {"text": "two"}]
    return tasks


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks), encoding="utf-8")
    return path


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_batch_output(out: Path, ids: list[str]) -> None:
    """Every task ``ok`` with its figures, a session file that ``tau session check`` accepts, and
    ``tau savings`` reading the sessions directory."""
    found = results(out)
    assert set(ids) <= set(found)
    for task_id, record in ((task_id, found[task_id]) for task_id in ids):
        assert list(record) == RESULT_FIELDS
        assert (record["status"], record["exit_reason"]) == ("ok", "stop"), record
        assert record["session"] == f"sessions/{task_id}.jsonl"
        assert record["requests"] >= 2 and record["output_tokens"] > 0 and record["cache_write_tokens"] > 0
        assert record["duration_s"] > 0
        assert record["final_text"] in (f"done {task_id}", "two")
        code, _, err = cli(["session", "check", str(out / record["session"])])
        assert code == 0, err
        assert (
            _tools(out / record["session"]) >= BUNDLED_TOOLS
        )  # the runtime of tau -p, bundled extensions on
    code, stdout, err = cli(["savings", "--json", str(out / "sessions")])
    assert code == 0, err
    reported = {Path(json.loads(line)["file"]).name for line in stdout.splitlines()}
    assert {f"{task_id}.jsonl" for task_id in ids} <= reported


BUNDLED_TOOLS = {"todo", "todo_loop_block", "obs_recall"}


def _tools(session: Path) -> set[str]:
    """The tools the session's first system message declared (``toolsAdded``; a tool without a
    prompt line, as ``obs_recall`` and ``todo_loop_block`` are since issue 25, is not in the prompt's
    ``tools`` section) and those its ``tools`` section lists (``- name: description``)."""
    for entry in map(json.loads, session.read_text(encoding="utf-8").splitlines()):
        message = entry.get("message") or {}
        if message.get("role") == "system":
            listed = set(re.findall(r"^- ([a-z_]+):", message["sections"]["tools"], flags=re.MULTILINE))
            return listed | {tool.get("name") for tool in message.get("toolsAdded") or []}
    return set()


def packed_task(task_id: str) -> dict[str, Any]:
    """A task whose first bash output (over 10 KiB) ObservationPack archives and packs on the 4th request."""
    steps = [{"bash": "seq 1 1000 | sed s/$/-padding-padding-padding/"}]
    steps += [{"bash": f"echo {word}"} for word in ("two", "three", "four")] + [{"text": "packed"}]
    return {"id": task_id, "prompt": "make a long output", "model": "faux/faux-1", "faux_script": steps}


def assert_recall_works(out: Path, task_id: str) -> None:
    """The task's archived observation is under ``DIR/sessions/sol/`` and ``obs_recall`` in a
    continued session returns its bytes."""
    import tau

    objects = sorted((out / "sessions" / "sol").glob("*/observation-pack/objects/*.txt"))
    assert len(objects) == 1, objects
    assert objects[0].read_text().startswith("1-padding-padding-padding\n")
    # objects are named by their content's SHA-256; the ledger names the observation (issue 33)
    ledger = objects[0].parent.parent / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    (object_id,) = {r["id"] for r in records if r.get("contentHash") == objects[0].stem}
    recall = [{"tool": "obs_recall", "args": {"id": object_id, "offset": 0}}, {"text": "recalled"}]
    result = tau.run("recall it", session=out / "sessions" / f"{task_id}.jsonl", faux_script=recall)
    page = [m for m in result.messages if m["role"] == "toolResult"][-1]
    text = page["content"][0]["text"]
    assert page["isError"] is False, text
    assert f"[obs_recall id={object_id} offset=0" in text and "\n1-padding-padding-padding\n2-padding" in text


def interrupt_when(process: subprocess.Popen, ready: Callable[[], bool], timeout: float) -> str:
    """Send SIGINT to ``process`` once ``ready()`` holds (it must still be running then); its stderr.

    A process left running by a failed assertion is killed.
    """
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the long tasks did not start"
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=timeout)[1]
    finally:
        if process.poll() is None:
            process.kill()
