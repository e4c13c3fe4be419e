"""Every context golden made by pi 1.6 is reproduced exactly by tau's projection.

A golden (``*.context*.json``) holds ``messages`` = ``convertToLlm(buildSessionContext().messages)``
at ``leafId``, and ``projection`` = which entry produced which agent messages. For ``real/``
sessions the goldens were made from the migrated ``*.v3.jsonl`` files (their ids).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from conftest import fixtures_dir
from tau.common import jsjson
from tau.session.projection import build_session_projection, convert_to_llm

FIXTURES = fixtures_dir()
GOLDENS = sorted(FIXTURES.glob("*/*.context*.json")) if FIXTURES else []


def golden_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def session_file(golden_path: Path, golden: dict) -> Path:
    source = FIXTURES / golden["source"]
    if source.parent.name == "real" and not source.name.endswith(".v3.jsonl"):
        source = source.with_name(source.name.removesuffix(".jsonl") + ".v3.jsonl")
    return source


def read_entries(path: Path) -> list[dict]:
    """Entries of a v3 session file (header dropped), parsed as pi does: blank and bad lines skipped."""
    entries = []
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            try:
                entries.append(jsjson.loads(line))
            except ValueError:
                continue
    assert entries and entries[0].get("type") == "session", f"{path} is not a session file"
    return entries[1:]


def branch_at(entries: list[dict], leaf_id: str) -> list[dict]:
    by_id = {entry["id"]: entry for entry in entries}
    branch, current = [], by_id[leaf_id]
    while current is not None:
        branch.append(current)
        current = by_id.get(current.get("parentId"))
    return branch[::-1]


@pytest.fixture(scope="module")
def sessions() -> dict[Path, list[dict]]:
    return {}


def load_golden(golden_path: Path, sessions: dict) -> tuple[dict, list[dict]]:
    golden = orjson.loads(golden_path.read_bytes())
    source = session_file(golden_path, golden)
    if source not in sessions:
        sessions[source] = read_entries(source)
    return golden, branch_at(sessions[source], golden["leafId"])


@pytest.mark.parametrize("golden_path", GOLDENS, ids=golden_id)
def test_messages_match_golden(golden_path, sessions):
    golden, branch = load_golden(golden_path, sessions)

    projection = build_session_projection(branch)
    messages = convert_to_llm(projection["messages"])

    assert messages == golden["messages"]
    assert jsjson.dumps(messages) == jsjson.dumps(golden["messages"])
    assert len(projection["messages"]) == golden["agentMessageCount"]
    assert projection["thinkingLevel"] == golden["thinkingLevel"]
    assert projection["model"] == golden["model"]


@pytest.mark.parametrize("golden_path", GOLDENS, ids=golden_id)
def test_projection_map_matches_golden(golden_path, sessions):
    golden, branch = load_golden(golden_path, sessions)

    projection = build_session_projection(branch)

    assert [
        {
            "entryId": item["sourceEntry"]["id"],
            "type": item["sourceEntry"]["type"],
            "roles": [message["role"] for message in item["messages"]],
        }
        for item in projection["entries"]
    ] == golden["projection"]
    assert len(branch) == golden["branchLength"]


def test_every_fixture_golden_is_covered(pi_fixtures):
    """The parametrization above must not silently shrink: 25 context goldens ship with the fixtures."""
    assert len(GOLDENS) >= 25
