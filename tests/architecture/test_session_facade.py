"""The run-time session is a thin façade over its collaborators (issue 28): no mixins in the agent
package, and ``AgentSession`` stays within 400 lines (a part that grows belongs in a collaborator)."""

from __future__ import annotations

import ast
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "src" / "tau" / "agent"
LIMIT = 400


def classes(path: Path) -> list[ast.ClassDef]:
    return [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)]


def test_the_agent_package_has_no_mixins():
    mixins = [
        f"{path.relative_to(AGENT)}:{node.lineno} {node.name}"
        for path in sorted(AGENT.rglob("*.py"))
        for node in classes(path)
        if node.name.endswith("Mixin")
    ]
    assert mixins == []


def test_agent_session_is_a_facade_of_at_most_400_lines():
    (session,) = [node for node in classes(AGENT / "session" / "agent_session.py") if node.name == "AgentSession"]
    assert session.end_lineno is not None
    lines = session.end_lineno - session.lineno + 1
    assert 50 < lines <= LIMIT, f"AgentSession is {lines} lines: move the new part into a collaborator"
