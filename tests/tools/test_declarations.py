"""The built-in tools declare themselves to the model exactly as pi 1.6 does (Appendix A.0)."""

from __future__ import annotations

from tau.common import jsjson
from tau.tools import DEFAULT_ACTIVE_TOOLS, ToolResult, builtin_tools, tool_declaration


def first_system_message(pi_fixtures):
    for line in (pi_fixtures / "scenarios" / "a-plain-text.jsonl").read_bytes().split(b"\n"):
        if line:
            entry = jsjson.loads(line)
            if entry["type"] == "message" and entry["message"]["role"] == "system":
                return entry["message"]
    raise AssertionError("no system message in the fixture")


def test_declarations_are_byte_identical_to_pi_tools_added(pi_fixtures):
    expected = jsjson.dumps(first_system_message(pi_fixtures)["toolsAdded"])
    assert jsjson.dumps([tool_declaration(tool) for tool in builtin_tools()]) == expected


def test_default_active_set_and_order():
    assert DEFAULT_ACTIVE_TOOLS == ("read", "bash", "edit", "write")
    assert [tool.name for tool in builtin_tools()] == ["read", "bash", "edit", "write"]


def test_prompt_snippets_match_pi_tools_section(pi_fixtures):
    section = first_system_message(pi_fixtures)["sections"]["tools"]
    listed = [line for line in section.split("\n") if line.startswith("- ")]
    assert listed == [f"- {tool.name}: {tool.prompt_snippet}" for tool in builtin_tools()]


def test_prompt_guidelines_match_pi_rules_with_tau_names(pi_fixtures):
    rules = first_system_message(pi_fixtures)["sections"]["rules"].split("\n")
    ours = [f"- {line}" for tool in builtin_tools() for line in tool.prompt_guidelines]
    pi_lines = [line.replace("PI_*", "TAU_*") for line in rules]
    assert all(line in pi_lines for line in ours)
    assert rules.index("- Use read to examine files instead of cat or sed.") < rules.index(
        "- Use write only for new files or complete rewrites."
    )


def test_declaration_is_a_copy():
    tool = builtin_tools()[0]
    declaration = tool_declaration(tool)
    declaration["parameters"]["properties"]["path"]["description"] = "changed"
    assert tool.parameters["properties"]["path"]["description"] != "changed"


def test_tool_result_wire_shape():
    result = ToolResult.error("boom", details={"a": 1}, structured_content={"x": 2})
    assert jsjson.dumps(result.to_json()) == (
        b'{"content":[{"type":"text","text":"boom"}],"details":{"a":1},"structuredContent":{"x":2},"isError":true}'
    )
    assert ToolResult.from_error("nope").to_json() == {
        "content": [{"type": "text", "text": "nope"}],
        "details": {},
    }
    assert ToolResult.text("ok").to_json() == {"content": [{"type": "text", "text": "ok"}]}
    assert ToolResult.from_json(result.to_json()) == result
