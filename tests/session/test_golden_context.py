"""Every context golden made by pi 1.6 is reproduced exactly by tau's projection.

A golden (``*.context*.json``) holds ``messages`` = ``convertToLlm(buildSessionContext().messages)``
at ``leafId``, and ``projection`` = which entry produced which agent messages. For ``real/``
sessions the goldens were made from the migrated ``*.v3.jsonl`` files (their ids).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from fixture_paths import fixtures_dir
from tau.common import jsjson
from tau.session import SessionManager
from tau.session.projection import build_session_context, build_session_projection, convert_to_llm

FIXTURES = fixtures_dir()
GOLDENS = sorted(FIXTURES.glob("*/*.context*.json")) if FIXTURES else []


def golden_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def session_file(golden: dict) -> Path:
    source = FIXTURES / golden["source"]
    if source.parent.name == "real" and not source.name.endswith(".v3.jsonl"):
        source = source.with_name(source.name.removesuffix(".jsonl") + ".v3.jsonl")
    return source


@pytest.fixture(scope="module")
def sessions() -> dict[Path, SessionManager]:
    return {}


def load_golden(golden_path: Path, sessions: dict) -> tuple[dict, list[dict]]:
    golden = orjson.loads(golden_path.read_bytes())
    source = session_file(golden)
    if source not in sessions:
        sessions[source] = SessionManager.open(source, read_only=True)
    return golden, sessions[source].get_branch(golden["leafId"])


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
    context = build_session_context(branch)
    assert jsjson.dumps(convert_to_llm(context["messages"])) == jsjson.dumps(golden["messages"])
    assert (context["thinkingLevel"], context["model"]) == (golden["thinkingLevel"], golden["model"])


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


def projection_shape(projection: dict) -> list[tuple[str, list[str]]]:
    return [
        (item["sourceEntry"]["type"], [m["role"] for m in item["messages"]]) for item in projection["entries"]
    ]


@pytest.mark.parametrize("name", ["before-compaction", "large-session"])
def test_v1_file_migrated_in_memory_projects_like_pi(name, pi_fixtures):
    """The legacy v1 files get fresh random ids on migration; their context must not change."""
    path = pi_fixtures / "real" / f"{name}.jsonl"
    before = path.read_bytes()
    golden = orjson.loads((pi_fixtures / "real" / f"{name}.context.json").read_bytes())

    session = SessionManager.open(path, read_only=True)
    projection = session.build_session_projection()

    assert jsjson.dumps(convert_to_llm(projection["messages"])) == jsjson.dumps(golden["messages"])
    assert projection_shape(projection) == [(item["type"], item["roles"]) for item in golden["projection"]]
    assert path.read_bytes() == before
